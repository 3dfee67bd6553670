"""Deterministic replies to the review prompts (``prompts/review_direct.md``, ``review_feedback.md``).

Used by the simulated provider and the fake server, so reviewing runs offline and in tests the way
it runs against a model. It is a stand-in reviewer for plumbing and demos, not a model of any real
judge. Each criterion starts from a few explainable text features of the question:

- grammaticality: HTML leftovers (``&quot;``, ``<br>``), no question mark (unless the stem is an
  instruction such as "Name …"), a lowercase start, ALL CAPS, a doubled word;
- appropriateness: a negatively worded stem ("not", "except"), "all/none of the above", the key
  repeated in the stem, a very short stem, a key much longer than the distractors, HTML leftovers;
- relevance: with a context, the share of the stem's and key's content words found in it; without
  one, whether the stated subject shows in the question;
- novelty: stock trivia openings ("What is the capital of …"), a stem copied from the context,
  true/false form (down); a long, specific stem (up);
- complexity: reasoning cues ("why", "how does", "compare", arithmetic, "best describes"), a
  longer stem (up); a very short stem or true/false form (down).

Each judge identity (the ``seed``) adds a wobble of −1, 0 or +1 per criterion drawn from a hash of
(seed, criterion, question), so two simulated reviewers disagree at first. Every strength and flaw
it writes names its criterion and score ("Novelty (2/5): …"). Given the other reviewer's points in
the feedback prompt, it reads those scores back and, per criterion, takes up the other's score when
it is one step away, moves one step toward it when further, or — for a hash-drawn 20 % of
(judge, criterion, question, the two scores) — stays put. So most questions converge in three or
four iterations and a few never do, deterministically. ``reply`` returns None for other prompts.
"""

from __future__ import annotations

import hashlib
import re

from quiztui.core.review import CRITERIA

_FIELD = re.compile(r"^(Question to review|Options|Keyed answer|Subject|Context):[ \t]?(.*)$", re.M)
_STRENGTHS_HEAD = "The other reviewer's latest strengths:"
_FLAWS_HEAD = "The other reviewer's latest flaws:"
_TAG = re.compile(rf"^-\s*({'|'.join(CRITERIA)})\s*\((\d)/5\)", re.I)
_NO_CONTEXT = "(none"
STUBBORN = 0.2  # P(a simulated reviewer keeps its own score against the other's), per draw

_STOP = frozenset(
    "a an the of in on at to for by with from and or is are was were be been which what who whom"
    " whose when where why how that this these those it its as into than then there their does do"
    " did has have had not no can could would should will shall may might most least".split()
)
_HTML = re.compile(r"&(?:[a-zA-Z]+|#\d+);|<\s*/?\s*[a-zA-Z][^>]*>")
_IMPERATIVE = re.compile(r"^(?:name|identify|choose|select|complete|fill|give|state|pick)\b", re.I)
_NEGATION = re.compile(r"\b(?:not|never|except|none)\b|n't\b", re.I)
_STOCK = re.compile(
    r"^(?:what is the (?:capital|largest|smallest|biggest|tallest|longest|chemical symbol|currency)"
    r"|who (?:wrote|painted|invented|discovered|directed)|what colou?r|how many (?:sides|legs|planets)"
    r"|which planet|what year did)",
    re.I,
)
_REASONING = re.compile(
    r"\b(?:why|how (?:does|do|did|would|can)|explain|compare|differ(?:s|ence)?|because|what would"
    r"|if|best (?:describes|explains)|most likely|calculate|implies|consequence|effect of)\b"
    r"|\d\s*[-+*/×x]\s*\d|square root",
    re.I,
)


def _unit(*parts: str) -> float:
    digest = hashlib.blake2b("\x00".join(parts).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def _content(text: str) -> list[str]:
    return [w for w in _words(text) if len(w) > 2 and w not in _STOP]


def _clamp(value: int) -> int:
    return max(1, min(5, value))


def parse_prompt(prompt: str) -> dict[str, str] | None:
    """The fields of a review prompt (question, options, answer, subject, context), or None."""
    fields = {m.group(1).lower(): m.group(2).strip() for m in _FIELD.finditer(prompt)}
    if "question to review" not in fields or "keyed answer" not in fields:
        return None
    return fields


def other_scores(prompt: str) -> dict[str, int]:
    """Criterion → score, read back from the criterion tags of the other reviewer's points."""
    start = prompt.find(_STRENGTHS_HEAD)
    if start < 0:
        return {}
    found: dict[str, int] = {}
    for line in prompt[start:].splitlines():
        m = _TAG.match(line.strip())
        if m is not None and 1 <= int(m.group(2)) <= 5:
            found[m.group(1).lower()] = int(m.group(2))
    return found


def features(fields: dict[str, str]) -> dict[str, tuple[int, str]]:
    """Criterion → (base score 1–5, the reason), from the question's text alone."""
    stem = fields.get("question to review", "")
    answer = fields.get("keyed answer", "")
    options = [o.strip() for o in fields.get("options", "").split(" | ") if o.strip()]
    options = [re.sub(r"^[A-Z]\)\s*", "", o) for o in options]
    context = fields.get("context", "")
    has_context = bool(context) and not context.startswith(_NO_CONTEXT)
    subject = fields.get("subject", "")
    has_subject = bool(subject) and not subject.startswith("(")
    words = _words(stem)
    boolean = sorted(o.lower() for o in options) == ["false", "true"]
    out: dict[str, tuple[int, str]] = {}

    why: list[str]
    # grammaticality
    score, why = 5, []
    if _HTML.search(stem + " " + " ".join(options)):
        score, why = score - 2, why + ["HTML leftovers in the text"]
    if not stem.rstrip().endswith("?") and not _IMPERATIVE.match(stem):
        score, why = score - 1, why + ["the stem does not end with a question mark"]
    if stem[:1].islower():
        score, why = score - 1, why + ["it starts with a lowercase letter"]
    letters = [c for c in stem if c.isalpha()]
    if len(letters) > 10 and sum(c.isupper() for c in letters) / len(letters) > 0.6:
        score, why = score - 2, why + ["written in capitals"]
    if re.search(r"\b(\w+) \1\b", stem, re.I):
        score, why = score - 1, why + ["a doubled word"]
    out["grammaticality"] = (_clamp(score), "; ".join(why) or "well formed and punctuated")

    # appropriateness
    score, why = 5, []
    if _NEGATION.search(stem):
        score, why = score - 1, why + ["a negatively worded stem"]
    if any(re.search(r"\b(?:all|none) of the above\b", o, re.I) for o in options):
        score, why = score - 1, why + ["an 'all/none of the above' option"]
    key_words = _content(answer)
    if key_words and not boolean and all(w in _content(stem) for w in key_words):
        score, why = score - 2, why + ["the stem gives the keyed answer away"]
    if len(words) < 5:
        score, why = score - 1, why + ["a very short stem may be ambiguous"]
    others = [len(o) for o in options if o != answer]
    if others and len(answer) > 2.5 * (sum(others) / len(others)) and len(answer) > 12:
        score, why = score - 1, why + ["the key is much longer than the distractors"]
    if _HTML.search(stem):
        score, why = score - 1, why + ["markup a student would see"]
    out["appropriateness"] = (_clamp(score), "; ".join(why) or "clear, fair, one defensible key")

    # relevance
    asked = list(dict.fromkeys(_content(stem) + _content(answer)))
    if has_context:
        have = set(_content(context))
        share = sum(w in have for w in asked) / len(asked) if asked else 0.0
        score = 5 if share >= 0.6 else 4 if share >= 0.4 else 3 if share >= 0.2 else 2
        score = score if share > 0 else 1
        out["relevance"] = (score, f"{share:.0%} of its content words appear in the context")
    elif has_subject:
        on_topic = any(w in asked for w in _content(subject))
        out["relevance"] = (
            5 if on_topic else 4,
            "names its subject" if on_topic else "no context given; plausibly on its subject",
        )
    else:
        out["relevance"] = (4, "no context or subject given; judged on its own topic")

    # novelty
    score, why = 3, []
    if _STOCK.search(stem):
        score, why = score - 1, why + ["a stock trivia question"]
    if has_context and _copied(stem, context):
        score, why = score - 1, why + ["lifted from the context almost word for word"]
    if boolean:
        score, why = score - 1, why + ["true/false form"]
    if len(words) >= 14:
        score, why = score + 1, why + ["a specific, detailed framing"]
    out["novelty"] = (_clamp(score), "; ".join(why) or "familiar but not a cliche")

    # complexity
    score, why = 2, []
    if _REASONING.search(stem):
        score, why = score + 1, why + ["needs reasoning, not only recall"]
    if len(words) >= 10:
        score, why = score + 1, why + ["some detail to take in"]
    if len(words) >= 18:
        score, why = score + 1, why + ["several pieces of information to connect"]
    if boolean:
        score, why = score - 1, why + ["a true/false guess"]
    if len(words) <= 5:
        score, why = score - 1, why + ["single-fact recall"]
    out["complexity"] = (_clamp(score), "; ".join(why) or "recall of one fact")
    return out


def _copied(stem: str, context: str) -> bool:
    words = _words(stem)
    grams = {" ".join(words[i : i + 4]) for i in range(len(words) - 3)}
    text = " ".join(_words(context))
    return bool(grams) and sum(g in text for g in grams) / len(grams) >= 0.5


def _wobble(seed: int, criterion: str, stem: str) -> int:
    u = _unit(str(seed), "wobble", criterion, stem)
    return -1 if u < 0.2 else 1 if u >= 0.8 else 0


def ratings(prompt: str, seed: int) -> dict[str, tuple[int, str]] | None:
    """Criterion → (score, reason) this simulated reviewer gives, or None for another prompt."""
    fields = parse_prompt(prompt)
    if fields is None:
        return None
    stem = fields["question to review"]
    seen = other_scores(prompt)
    out: dict[str, tuple[int, str]] = {}
    for criterion, (base, why) in features(fields).items():
        own = _clamp(base + _wobble(seed, criterion, stem))
        other = seen.get(criterion)
        if other is None or other == own:
            out[criterion] = (own, why)
            continue
        key = (str(seed), "stubborn", criterion, stem, str(own), str(other))
        if _unit(*key) < STUBBORN:
            out[criterion] = (own, why + "; kept my rating against the other reviewer's")
        elif abs(own - other) <= 1:
            out[criterion] = (other, why + "; took up the other reviewer's view")
        else:
            step = own + (1 if other > own else -1)
            out[criterion] = (step, why + "; moved toward the other reviewer's view")
    return out


def reply(prompt: str, seed: int = 0) -> str | None:
    rated = ratings(prompt, seed)
    if rated is None:
        return None
    lines = [f"{c.capitalize()}: {rated[c][0]}" for c in CRITERIA]
    strengths = [f"- {c.capitalize()} ({s}/5): {why}" for c, (s, why) in rated.items() if s >= 4]
    flaws = [f"- {c.capitalize()} ({s}/5): {why}" for c, (s, why) in rated.items() if s <= 3]
    lines += ["", "Strengths:", *(strengths or ["- none"]), "Flaws:", *(flaws or ["- none"])]
    return "\n".join(lines) + "\n"
