"""Grading a candidate answer against a reference (seeds 001 and 003): items, outcomes, parsers.

Five graders share one outcome shape:

- ``rubric10`` — seed 001's impartial-judge prompt: a rating 1–10 and an explanation;
- ``pass3`` — seed 003's prompt: pass / partially pass / fail, mapped to 2 / 1 / 0;
- ``facts`` — seed 003's fact extraction, then each fact scored 0/1 against the candidate; a fact's
  value is P(1) from the answer token's logprobs when the provider returns them, else its 0/1;
  the grade is the mean over scored facts (0–1);
- ``lexical`` — SQuAD/NQ normalised exact match and token F1 against the reference's aliases;
- ``embedding`` — cosine similarity of sentence embeddings (optional extra).

A reply that cannot be parsed never becomes a zero: the outcome is *unscored* with the reason
(JSON nested too deep or a reply too long to read included: ``replies.JSONRefused``).
Parsers read the model's reply only; nothing from the prompt is parsed back.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from quiztui.core.replies import ReplyUnparsed, json_values

GRADERS: tuple[str, ...] = ("rubric10", "pass3", "facts", "lexical", "embedding")
LLM_GRADERS: frozenset[str] = frozenset({"rubric10", "pass3", "facts"})
GRADER_HELP = {
    "rubric10": "LLM rating 1-10 with an explanation",
    "pass3": "LLM pass / partially pass / fail = 2 / 1 / 0 (Queryloop prompt)",
    "facts": "LLM fact extraction + per-fact 0/1 scoring, averaged to 0-1 (Queryloop)",
    "lexical": "offline: normalised exact match and token F1 (SQuAD/NQ)",
    "embedding": "offline: MiniLM sentence-embedding cosine (needs the embed extra)",
}
# The native range of each grader's raw score.
SCALES: dict[str, tuple[float, float]] = {
    "rubric10": (1.0, 10.0),
    "pass3": (0.0, 2.0),
    "facts": (0.0, 1.0),
    "lexical": (0.0, 1.0),
    "embedding": (-1.0, 1.0),
}
PASS3_SCORES = {"pass": 2, "partially pass": 1, "fail": 0}


@dataclass(frozen=True, slots=True)
class GradeItem:
    """One candidate answer to grade. ``aliases`` are further acceptable references."""

    id: str
    question: str
    reference: str
    candidate: str
    human: float | None = None  # a human score, on whatever scale the file uses
    aliases: tuple[str, ...] = ()
    source_line: int | None = None

    @property
    def references(self) -> tuple[str, ...]:
        return (self.reference, *self.aliases)


@dataclass(frozen=True, slots=True)
class FactScore:
    """One reference fact scored against the candidate.

    ``score`` is the 0/1 the judge wrote (None: unscored, see ``reason``); ``weight`` is the
    probability of the token it wrote, when logprobs came back; ``p_one`` is P(1) from those
    logprobs. The fact's value in the average is ``p_one`` when known, else ``score``.
    """

    fact: str
    score: int | None
    weight: float | None = None
    p_one: float | None = None
    reason: str = ""

    @property
    def value(self) -> float | None:
        if self.score is None:
            return None
        return self.p_one if self.p_one is not None else float(self.score)


@dataclass(frozen=True, slots=True)
class GradeOutcome:
    """What a grader made of one item. ``raw`` is None when the item is unscored."""

    item_id: str
    grader: str
    raw: float | None
    label: str  # "8/10", "pass", "0.67", "EM", "unscored"
    reasoning: str = ""
    unscored: str | None = None  # why no score, when raw is None
    facts: tuple[FactScore, ...] = ()
    attempts: int = 1
    tokens_in: int = 0
    tokens_out: int = 0
    reply: str = ""  # the raw reply the score was parsed from (last one for multi-call graders)

    @property
    def scored(self) -> bool:
        return self.raw is not None

    @property
    def normalised(self) -> float | None:
        """The raw score mapped linearly onto 0–1 from the grader's native range."""
        if self.raw is None:
            return None
        lo, hi = SCALES[self.grader]
        return (self.raw - lo) / (hi - lo)


def unscored(item_id: str, grader: str, reason: str, **extra: Any) -> GradeOutcome:
    return GradeOutcome(item_id, grader, None, "unscored", unscored=reason, **extra)


# --- JSON in replies (read by quiztui.core.replies, within its caps) -------------------------


def _objects(values: Sequence[Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for v in values:
        if isinstance(v, dict):
            out.append(v)
        elif isinstance(v, list):
            out.extend(x for x in v if isinstance(x, dict))
    return out


def _field(obj: dict[str, Any], *names: str) -> Any:
    lowered = {str(k).strip().lower(): v for k, v in obj.items()}
    for name in names:
        if name in lowered:
            return lowered[name]
    return None


# --- rubric10 ----------------------------------------------------------------------------------

_RATING = re.compile(r"\brating\b[\"']?\s*[:=]?\s*[\"']?(\d+(?:\.\d+)?)\s*(?:/\s*10)?", re.I)


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str):
        m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(?:/\s*10)?\s*", value)
        return float(m.group(1)) if m else None
    return None


def parse_rubric10(reply: str) -> tuple[float, str]:
    """(rating 1–10, explanation) from seed 001's JSON reply, or a ``Rating: 7`` line."""
    for obj in _objects(json_values(reply)):
        raw = _field(obj, "rating", "score")
        if raw is None:
            continue
        rating = _number(raw)
        if rating is None:
            raise ReplyUnparsed(f"rating {str(raw)[:20]!r} is not a number")
        return _check_rating(rating), str(_field(obj, "explanation", "reasoning") or "").strip()
    matches = _RATING.findall(reply)
    if len(set(matches)) == 1:
        explanation = _RATING.sub("", reply).strip(" \n\t:-")
        return _check_rating(float(matches[0])), explanation
    if matches:
        raise ReplyUnparsed(f"several different ratings in the reply ({', '.join(matches[:3])})")
    raise ReplyUnparsed(_missing("rating", reply))


def _check_rating(rating: float) -> float:
    if not 1 <= rating <= 10:
        raise ReplyUnparsed(f"rating {rating:g} is outside 1-10")
    return rating


# --- pass3 -------------------------------------------------------------------------------------

_VERDICT_WORDS = {
    "pass": "pass",
    "passed": "pass",
    "passes": "pass",
    "partially pass": "partially pass",
    "partially passed": "partially pass",
    "partially passes": "partially pass",
    "partial pass": "partially pass",
    "partial": "partially pass",
    "partially": "partially pass",
    "fail": "fail",
    "failed": "fail",
    "fails": "fail",
}
_VERDICT_LINE = re.compile(
    r"final[ _]verdict[\"']?\s*[:=]\s*[\"']?(partially\s+pass(?:es|ed)?|partial(?:\s+pass)?|pass(?:es|ed)?|fail(?:s|ed)?)\b",
    re.I,
)


def verdict_word(value: str) -> str | None:
    """``pass`` / ``partially pass`` / ``fail`` for a verdict as models write it, else None."""
    return _VERDICT_WORDS.get(re.sub(r"[\s_\-]+", " ", value.strip().strip(".!\"'").lower()))


def parse_pass3(reply: str) -> tuple[str, int, str]:
    """(verdict, 2/1/0, evaluation) from seed 003's ``{"evaluation", "final_verdict"}`` reply."""
    for obj in _objects(json_values(reply)):
        raw = _field(obj, "final_verdict", "final verdict", "verdict")
        if raw is None:
            continue
        word = verdict_word(str(raw))
        if word is None:
            raise ReplyUnparsed(f"final_verdict {str(raw)[:30]!r} is not pass/partially pass/fail")
        return word, PASS3_SCORES[word], str(_field(obj, "evaluation") or "").strip()
    words = {verdict_word(m) for m in _VERDICT_LINE.findall(reply)}
    words.discard(None)
    if len(words) == 1:
        word = words.pop()
        assert word is not None
        return word, PASS3_SCORES[word], _VERDICT_LINE.sub("", reply).strip()
    if words:
        raise ReplyUnparsed("several different final verdicts in the reply")
    raise ReplyUnparsed(_missing("final_verdict", reply))


# --- facts -------------------------------------------------------------------------------------


def parse_facts(reply: str) -> list[str]:
    """The list of facts from ``{"facts": [...]}`` (or a bare JSON list of strings)."""
    values = json_values(reply)
    for v in values:
        facts = _field(v, "facts") if isinstance(v, dict) else v
        if isinstance(facts, list) and all(isinstance(f, str) for f in facts):
            cleaned = [f.strip() for f in facts if f.strip()]
            if not cleaned:
                raise ReplyUnparsed("the fact list is empty")
            return list(dict.fromkeys(cleaned))
    raise ReplyUnparsed(_missing("facts list", reply))


_SCORE = re.compile(r"(?<![\w.])([01])(?![\w.])")


def parse_fact_score(reply: str) -> tuple[int, int]:
    """(score 0/1, character offset of the score) from a reply that should be just ``1`` or ``0``.

    ``Score: 1`` and ``{"score": 1}`` are read too; a reply naming both 0 and 1 is unparsed.
    """
    digits = {m.group(1) for m in _SCORE.finditer(reply)}
    if len(digits) != 1:
        if digits:
            raise ReplyUnparsed("both 0 and 1 in the reply")
        raise ReplyUnparsed(_missing("0/1 score", reply))
    m = _SCORE.search(reply)
    assert m is not None
    return int(m.group(1)), m.start(1)


def fact_token_probability(
    tokens: Sequence[Any], offset: int, said: int
) -> tuple[float | None, float | None]:
    """(weight, P(1)) at the token covering ``offset`` of the reply, from its logprobs.

    ``tokens`` are :class:`quiztui.core.logprobs.TokenLogprob` (text concatenating to the reply).
    The weight is the probability of the token written; P(1) comes from the alternatives listed
    for "1" and "0", renormalised over the two. When the other digit is not listed, its mass is
    taken as what is left (1 − P(written)).
    """
    position = 0
    for token in tokens:
        end = position + len(token.token)
        if position <= offset < end and token.token.strip() == str(said):
            weight = math.exp(token.logprob)
            p = {str(said): weight}
            for alt, lp in token.top:
                key = alt.strip()
                if key in ("0", "1") and key not in p:
                    p[key] = math.exp(lp)
            other = "0" if said == 1 else "1"
            p.setdefault(other, max(0.0, 1.0 - weight))
            total = p["0"] + p["1"]
            return weight, (p["1"] / total if total > 0 else None)
        position = end
    return None, None


def facts_outcome(item_id: str, facts: Sequence[FactScore], **extra: Any) -> GradeOutcome:
    """Mean of the scored facts' values; unscored when no fact could be scored."""
    values = [f.value for f in facts if f.value is not None]
    if not values:
        reasons = "; ".join(sorted({f.reason for f in facts if f.reason})) or "no facts"
        return unscored(
            item_id, "facts", f"no fact could be scored ({reasons})", facts=tuple(facts), **extra
        )
    mean = sum(values) / len(values)
    missing = len(facts) - len(values)
    covered = sum(1 for f in facts if f.score == 1)
    reasoning = f"{covered} of {len(facts)} facts covered"
    if missing:
        reasoning += f"; {missing} unscored, left out of the mean"
    return GradeOutcome(
        item_id, "facts", mean, f"{mean:.2f}", reasoning, facts=tuple(facts), **extra
    )


# --- helpers -----------------------------------------------------------------------------------

REFUSAL_MARKERS = (
    "i'm sorry",
    "i am sorry",
    "i can't help",
    "i cannot help",
    "i can't assist",
    "i cannot assist",
    "i won't",
    "as an ai",
)


def _missing(what: str, reply: str) -> str:
    text = reply.strip()
    if not text:
        return f"no {what}: the reply was empty"
    if any(m in text.lower()[:200] for m in REFUSAL_MARKERS):
        return f"no {what}: the judge refused ({_clip(text)})"
    return f"no {what} in the reply ({_clip(text)})"


def _clip(text: str, n: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= n else flat[: n - 1] + "…"


@dataclass(slots=True)
class GradeTally:
    """Running counts for a summary line."""

    total: int = 0
    scored: int = 0
    unscored: int = 0
    labels: dict[str, int] = field(default_factory=dict)

    def add(self, outcome: GradeOutcome) -> None:
        self.total += 1
        if outcome.scored:
            self.scored += 1
        else:
            self.unscored += 1
        self.labels[outcome.label] = self.labels.get(outcome.label, 0) + 1
