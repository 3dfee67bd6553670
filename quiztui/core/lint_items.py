"""Per-question lint rules, and the text helpers every rule compares with.

Options and stems are compared as ``textnorm.comparable`` keys: signs, digits, operators, logic
and maths symbols and a formula's case are content; whitespace, quote styles, sentence
punctuation and ordinary words' case are not. Near-duplicates (``near``) need the character ratio
at the threshold and, word for word, no content word swapped for a different one; two formulas,
or two texts whose numbers or symbols differ ("Mark I" / "Mark II", "T-800" / "T-888", "−23" /
"23"), are never near-duplicates. ``normalise`` (words only) measures lengths and matches the
"all of the above" patterns.

The rules here look at one question at a time: the stem (L112 empty, L113 short, L106 an
unemphasised negative), leftover HTML (L114), the options (L102 the key twice, L103
near-duplicates, L105 all/none of the above, L116 an option repeated) and the key (L101 out of range, L104 in the stem,
L107 much longer than every distractor).
"""

from __future__ import annotations

import difflib
import html
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from quiztui.core.lint_model import LintFinding, LintSettings, item_finding
from quiztui.core.quiz import Question
from quiztui.core.textnorm import (
    alike_words,
    comparable,
    is_formula,
    ratio,
    repeat_key,
    simple_form,
    skeleton,
)

# --- text helpers -----------------------------------------------------------------------------

_TAG = re.compile(r"<\s*/?\s*([A-Za-z][A-Za-z0-9]*)\b[^<>]*?/?\s*>")
_ENTITY = re.compile(r"&(?:[A-Za-z][A-Za-z0-9]{1,31}|#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6});")
# Tags a copy-paste from a web page leaves behind. Inline emphasis (b, strong, em, i, u) is markup
# a quiz may mean (see L106), and a tag the stem asks about ("which tag makes text scroll?") is
# content, so neither is a leftover.
_LEFTOVER_TAGS = frozenset(
    "a abbr blockquote br center div font h1 h2 h3 h4 h5 h6 hr img li ol p pre span table tbody"
    " td th tr ul".split()
)
_VOID_TAGS = frozenset(("br", "hr", "img"))
_ABOUT_MARKUP = re.compile(r"\b(html|xml|markup|tags?|entity|entities)\b")
_SENTENCE_TOKENS = 6  # a text with a formula in it and this many tokens is a sentence (near)
_ROMAN = re.compile(r"^M{0,3}(CM|CD|D?C{0,3})(XC|XL|L?X{0,3})(IX|IV|V?I{0,3})$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
# Grammar words: swapping or adding one does not make a different question (near-duplicates).
FUNCTION_WORDS = frozenset(
    "a an the of in on at to for from by with and or but is are was were be been being which what"
    " who whom whose this that these those it its as into than then there their does did do has"
    " have had".split()
)


_APOSTROPHES = re.compile(r"['’ʼ]")
_NON_ALNUM = re.compile(r"[\W_]+")


@lru_cache(maxsize=1 << 12)
def normalise(text: str) -> str:
    """The words of a text: tags dropped, entities decoded, NFKC, case-folded, every symbol dropped.

    For lengths and word patterns only; options and stems are compared with ``comparable``.
    """
    simple = simple_form(text)
    return simple if simple is not None else _normalise(text)


def _normalise(text: str) -> str:
    if "<" in text:
        text = _TAG.sub(" ", text)
    if "&" in text:
        text = html.unescape(text)
    text = unicodedata.normalize("NFKC", text).casefold().replace("&", " and ")
    return " ".join(_NON_ALNUM.sub(" ", _APOSTROPHES.sub("", text)).split())


def _romans(raw: str) -> tuple[str, ...]:
    """The upper-case Roman numerals in a text ("II", "XIV"), in order."""
    return tuple(w for w in re.findall(r"\b[IVXLCDM]+\b", raw) if _ROMAN.match(w))


def contains(haystack: str, needle: str) -> bool:
    """Whole-word containment of normalised texts."""
    return bool(needle) and f" {needle} " in f" {haystack} "


def show(text: str, limit: int = 40) -> str:
    """Quiz text quoted for a message: one line, control characters escaped, clipped."""
    flat = " ".join(text.split())
    flat = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", flat)
    if len(flat) > limit:
        flat = flat[: limit - 1] + "…"
    return f'"{flat}"'


def similarity(a: str, b: str, threshold: float) -> float | None:
    """The ratio of two compared texts when it reaches ``threshold``, else None."""
    if a == b:
        return 1.0
    value = ratio(a, b, threshold)
    return value if value >= threshold else None


def near(raw_a: str, raw_b: str, threshold: float) -> float | None:
    """How alike two texts are (1.0: the same once compared), or None when they differ.

    Texts are compared as ``comparable`` keys (symbols, signs, digits and a formula's case are
    content). Two different formulas are never alike, nor are texts whose numbers and symbols
    ("T-800" / "T-888", "Mark I" / "Mark II", "-40" / "+40", "C++" / "C#") differ in any way or
    order. Otherwise near-duplicates need the character ratio at ``threshold`` and, word for word,
    no real difference: a changed word must be the same word misspelled (``alike_words``: the
    ratio and the same first letter, so "Melbourne" / "Melborne" but not "Depolarization" /
    "Repolarization" or "Either" / "Neither") or a grammar word ("which" / "what"); an added word
    must be a grammar word; a run of words may differ only in spacing ("Lord Genome" /
    "Lordgenome"). So "Josh DeSeno" / "John DeSeno", "George W. Bush" / "George H. W. Bush" and
    "capital of Iran" / "capital of Iraq" are different answers however close their letters.
    """
    a, b = comparable(raw_a), comparable(raw_b)
    if not a or not b:
        return None
    if a == b:
        return 1.0
    return near_keys(a, b, threshold, raw_a, raw_b)


def near_keys(a: str, b: str, threshold: float, raw_a: str, raw_b: str) -> float | None:
    """``near`` for two different, non-empty ``comparable`` keys of ``raw_a`` and ``raw_b``."""
    spacing_only = a.replace(" ", "") == b.replace(" ", "")
    if not spacing_only and 2 * min(len(a), len(b)) < (threshold - 1e-9) * (len(a) + len(b)):
        return None  # the lengths alone keep the ratio below the threshold
    value = ratio(a, b) if spacing_only else similarity(a, b, threshold)
    if value is None:  # the cheap test (C) first
        return None
    if skeleton(a) != skeleton(b) or _romans(raw_a) != _romans(raw_b):
        return None
    if is_formula(raw_a) or is_formula(raw_b):
        # A formula is never like another; a sentence with one in it ("... symbol Fe2?") may
        # be, when its short tokens (variables, symbols) match case and all.
        words_a, words_b = a.split(), b.split()
        if min(len(words_a), len(words_b)) < _SENTENCE_TOKENS:
            return None
        if [w for w in words_a if len(w) <= 2] != [w for w in words_b if len(w) <= 2]:
            return None
        a, b = a.casefold(), b.casefold()
    if spacing_only:
        return value
    words_a, words_b = a.split(), b.split()
    ops = difflib.SequenceMatcher(None, words_a, words_b, autojunk=False).get_opcodes()
    for tag, i1, i2, j1, j2 in ops:
        left, right = words_a[i1:i2], words_b[j1:j2]
        if tag == "equal" or all(w in FUNCTION_WORDS for w in left + right):
            continue
        if tag == "replace" and len(left) == len(right):
            for x, y in zip(left, right, strict=True):
                both_grammar = x in FUNCTION_WORDS and y in FUNCTION_WORDS
                if not both_grammar and not alike_words(x, y, threshold):
                    return None
        elif tag == "replace":
            if not alike_words("".join(left), "".join(right), threshold):
                return None
        else:
            return None  # a content word added or dropped
    return value


@dataclass(frozen=True, slots=True)
class QuestionTexts:
    """One question's texts in the forms the rules compare, each computed once per lint.

    ``stem`` and ``options`` are ``normalise``d (words only), ``compared_stem`` and ``compared``
    the ``comparable`` keys. ``lint_quiz`` builds one per question, passes it to every rule of
    that question, and keeps only what the rules across questions need.
    """

    stem: str
    options: tuple[str, ...]
    compared_stem: str
    compared: tuple[str, ...]

    @classmethod
    def of(cls, q: Question) -> QuestionTexts:
        stem, compared_stem = _forms(q.text)
        forms = [_forms(o) for o in q.options]
        return cls(stem, tuple(f[0] for f in forms), compared_stem, tuple(f[1] for f in forms))


def _forms(text: str) -> tuple[str, str]:
    """``normalise(text)``, ``comparable(text)``: a plain text's one form, else each."""
    simple = simple_form(text)
    return (simple, simple) if simple is not None else (normalise(text), comparable(text))


def is_boolean(q: Question, options: Sequence[str] | None = None) -> bool:
    """True/False: its kind, or two options that are True and False (``options``: normalised)."""
    if q.kind == "boolean":
        return True
    if len(q.options) != 2:
        return False
    norm = options if options is not None else [normalise(o) for o in q.options]
    return sorted(norm) == ["false", "true"]


def key_in_range(q: Question) -> bool:
    return 0 <= q.key < len(q.options)


# --- per-question rules -----------------------------------------------------------------------

_ABOVE = re.compile(
    r"^(?:(?:all|none|neither|both)(?: of)?(?: the)? (?:above|these|those|previous|preceding"
    r"|others|other options|other answers|options|answers|choices)\b"
    r"|all the above\b"
    r"|(?:both )?[a-e] and [a-e]$"
    r"|neither [a-e] nor [a-e]$)"
)
# Contractions ("don't", "isn't") are not counted: grammar exercises are full of them, and a
# question that means "NOT" writes it out.
_NEGATIVE = re.compile(r"(?<![\w'’])(not|except|least|cannot|false|incorrect|untrue)(?!\w)", re.I)
_NEGATIVE_WORDS = ("not", "except", "least", "false", "incorrect", "untrue")  # cheap tests
_NEGATIVE_ANYWHERE = re.compile("|".join(_NEGATIVE_WORDS), re.I)
# Quotations and asides: a negative inside them ("Do not pass Go") is not the stem's.
_ASIDES = re.compile(r"\"[^\"]*\"|“[^”]*”|‘[^’]*’|(?<!\w)'(?:[^']|'(?=\w))+'(?!\w)|\([^()]*\)")
# Example text: code, what follows "e.g." / "for example" / "example:" to the end of its
# sentence, and a sentence with a blank to fill ("She ___ not like it.").
_EXAMPLES = re.compile(
    r"`[^`]*`|\b(?:e\.g\.|i\.e\.|for example|for instance|examples?:)[^.?!]*"
    r"|[^.?!:]*_{2,}[^.?!]*",
    re.I,
)
# The same without the blank's sentence, for a stem with no "__": that branch cannot match there,
# and trying it from every position of a long stem was quadratic (20 ms for a 2,000-character
# passage; three fifths of the lint's time on MMLU-Redux's questions).
_EXAMPLES_NO_BLANK = re.compile(
    r"`[^`]*`|\b(?:e\.g\.|i\.e\.|for example|for instance|examples?:)[^.?!]*", re.I
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"“(])")
_EMPHASIS_TAG = re.compile(r"<\s*(b|strong|em|i|u)\s*>\s*$", re.I)
_NOT_NEGATIVE = {  # (word, words before, words after) that qualify rather than negate
    ("least", ("at",), ()),
    ("not", (), ("only",)),
    ("not", (), ("including",)),
    ("not", (), ("counting",)),
    ("not", ("or",), ()),
    ("false", ("true", "or"), ()),
}


def _stem_findings(item: Any, s: LintSettings, stem: str | None = None) -> list[LintFinding]:
    """L112 empty, L113 short (checked on questions and unjudged items alike).

    ``stem``: the item's text normalised, when the caller has it.
    """
    if stem is None:
        stem = normalise(item.text)
    if not stem:
        return [item_finding("L112", item, f"the stem has no text: {show(item.text)}")]
    words = len(stem.split())
    chars = len(" ".join(item.text.split()))
    if words < s.min_stem_words or chars < s.min_stem_chars:
        return [
            item_finding(
                "L113",
                item,
                f"the stem has {words} word{'s' * (words != 1)} and {chars} characters"
                f" (minimum {s.min_stem_words} words, {s.min_stem_chars} characters):"
                f" {show(item.text)}",
            )
        ]
    return []


def _html_leftovers(text: str) -> list[str]:
    """Real HTML: a leftover tag that is void (<br>) or has its partner (<p>…</p>), or an entity.

    A lone "<p>" is maths notation (the subgroup generated by p), not a leftover.
    """
    found = [
        m.group()
        for m in _TAG.finditer(text)
        if m.group(1).lower() in _LEFTOVER_TAGS and _real_tag(text, m)
    ]
    found += _ENTITY.findall(text)
    return list(dict.fromkeys(found))


def _real_tag(text: str, m: re.Match[str]) -> bool:
    name = m.group(1).lower()
    if name in _VOID_TAGS:
        return True
    if m.group().lstrip("< ").startswith("/"):
        before = text[: m.start()]
        return re.search(rf"<\s*{name}\b[^<>]*>", before, re.I) is not None
    return re.search(rf"<\s*/\s*{name}\s*>", text[m.end() :], re.I) is not None


def _html_finding(item: Any, options: Sequence[str]) -> list[LintFinding]:
    """L114: tags a web page leaves behind, or entities, in the stem or an option.

    Skipped when the stem is about markup ("which HTML tag ..."): there tags are the content.
    """
    if not any("<" in t or "&" in t for t in (item.text, *options)):
        return []  # no tag without "<", no entity without "&"
    if _ABOUT_MARKUP.search(item.text.lower()):
        return []
    places = [("stem", item.text)] + [(f"option {i + 1}", o) for i, o in enumerate(options)]
    parts = []
    for where, text in places:
        found = _html_leftovers(text)
        if found:
            parts.append(f"{where} {', '.join(show(x, 20) for x in found[:3])}")
    if not parts:
        return []
    return [item_finding("L114", item, "leftover HTML: " + "; ".join(parts))]


def _negative_finding(q: Question) -> list[LintFinding]:
    """L106: a negative word in the stem, written neither upper case nor marked up.

    Not counted: words before the question sentence of a stem that ends in one (a passage's
    "not" is not the question's), contractions ("don't"), words inside quotations, parentheses or
    example text
    (code, after "e.g." / "for example", a sentence with a ___ blank), "at least", "not only",
    "not including", "or not", "true or false", and "false"/"incorrect"/"untrue" in a stem that is
    not a question (a statement may call a thing false).
    """
    # Blanking asides and examples below only removes words: a stem without a negative word
    # anywhere has none to find (in ASCII, case folds within ASCII, so lower() and substrings).
    if q.text.isascii():
        lower = q.text.lower()
        if not any(word in lower for word in _NEGATIVE_WORDS):
            return []
    elif not _NEGATIVE_ANYWHERE.search(q.text):
        return []
    text = _ASIDES.sub(lambda m: " " * len(m.group()), q.text)
    examples = _EXAMPLES if "__" in text else _EXAMPLES_NO_BLANK
    text = examples.sub(lambda m: " " * len(m.group()), text)
    # In a passage followed by its question, only the question's sentence is the stem's.
    sentences = _SENTENCE_END.split(text.rstrip())
    if len(sentences) > 1 and "?" in sentences[-1]:
        text = " " * (len(text) - len(sentences[-1].lstrip())) + sentences[-1].lstrip()
    lower = text.lower()
    question_like = "?" in text or bool(
        re.match(r"\s*(which|what|who|where|when|how|why)\b", lower)
    )
    for m in _NEGATIVE.finditer(text):
        word = m.group(1)
        w = word.lower()
        before = tuple(lower[: m.start()].split()[-2:])
        after = tuple(lower[m.end() :].split()[:1])
        if any(
            w == neg and before[len(before) - len(b) :] == b and after[: len(a)] == a
            for neg, b, a in _NOT_NEGATIVE
            if len(before) >= len(b)
        ):
            continue
        if w in ("false", "incorrect", "untrue") and not question_like:
            continue
        stars = (
            m.start() > 0
            and text[m.start() - 1] in "*_"
            and text[m.end() : m.end() + 1] in ("*", "_")
        )
        if (word.isupper() and len(word) > 1) or stars or _EMPHASIS_TAG.search(text[: m.start()]):
            continue
        return [
            item_finding(
                "L106",
                q,
                f'negative "{word}" in the stem is not emphasised'
                f" (write {word.upper()}, *{word}* or <b>{word}</b>)",
            )
        ]
    return []


def _code_differs(a: str, b: str) -> bool:
    """Two options, one at least holding code or a line break (backticks and " ↵ ", as
    ``bank.plain_text`` writes ``<pre>``, ``<code>`` and an option's ``<br>``), that differ at
    all: code and layout are case-, quote- and layout-sensitive (``Main`` /
    ``main``, ``echo 'x'`` / ``echo "x"``, ``#!`` / ``!#``), so they are neither the same
    option nor near-duplicates."""
    return a != b and any(mark in a or mark in b for mark in ("`", "↵"))


def _option_findings(
    q: Question, s: LintSettings, key_ok: bool, texts: QuestionTexts
) -> list[LintFinding]:
    """L116 (an option repeated), L102 (an option the same as the key), L103 (near-duplicates),
    L105 (all/none of the above). A repeated pair is L116 only."""
    out = []
    repeats = [repeat_key(o) for o in q.options]
    keys = texts.compared
    lengths = [len(k) for k in keys]
    letters = [n - k.count(" ") for n, k in zip(lengths, keys, strict=True)]
    bound = s.option_similarity - 1e-9
    for i in range(len(q.options)):
        for j in range(i + 1, len(q.options)):
            if (
                letters[i] != letters[j]  # so not the same but for spacing (near_keys)
                and 2 * min(lengths[i], lengths[j]) < bound * (lengths[i] + lengths[j])
                and repeats[i] != repeats[j]
            ):
                continue  # no repeat, and the lengths alone keep the ratio below the threshold
            if _code_differs(q.options[i], q.options[j]):
                continue
            has_key = key_ok and q.key in (i, j)
            key_note = f" (option {q.key + 1} is the key)" if has_key else ""
            if repeats[i] and repeats[i] == repeats[j]:
                pair = f"{show(q.options[i])} / {show(q.options[j])}"
                out.append(
                    item_finding(
                        "L116",
                        q,
                        f"options {i + 1} and {j + 1} are the same option repeated{key_note}:"
                        f" {pair}",
                    )
                )
                continue
            if not keys[i] or not keys[j]:
                continue
            if keys[i] == keys[j]:
                value: float | None = 1.0
            else:
                value = near_keys(keys[i], keys[j], s.option_similarity, q.options[i], q.options[j])
            if value is None:
                continue
            pair = f"{show(q.options[i])} / {show(q.options[j])}"
            if value == 1.0 and has_key:
                other = j if q.key == i else i
                out.append(
                    item_finding(
                        "L102",
                        q,
                        f"option {other + 1} is the key (option {q.key + 1}) again once case,"
                        f" spacing and punctuation are ignored: {pair}",
                    )
                )
            else:
                what = "the same once normalised" if value == 1.0 else "near-duplicates"
                out.append(
                    item_finding(
                        "L103",
                        q,
                        f"options {i + 1} and {j + 1} are {what} (ratio {value:.2f}){key_note}:"
                        f" {pair}",
                    )
                )
    for i, option in enumerate(q.options):
        if _ABOVE.match(texts.options[i]):
            out.append(
                item_finding(
                    "L105",
                    q,
                    f"option {i + 1} {show(option)} refers to the other options"
                    " (all/none of the above, both A and B)",
                )
            )
    return out


_CHOICE_WORDS = ("or", "nor", "versus", "vs")
_LABEL_END = re.compile(r"[.:;!?—–]\s+\S")  # "Invalid. Counterexample when ...": label "Invalid"


def _naming_words(text: str) -> set[str]:
    """The words of a normalised text that can name it: three or more letters or a number, and
    not a grammar word."""
    return {w for w in text.split() if len(w) >= 3 or w.isdigit()} - FUNCTION_WORDS


def _names_the_options(q: Question, texts: QuestionTexts) -> bool:
    """The stem names the options, so the key's words in it give nothing away (L104 is not).

    Outside the key's own place in the stem, the stem mentions a distractor: all of its words
    of three or more letters or digits that are not grammar words ("Rigg and Urco" in a stem
    that lists the companies; not "Landsat 5" for the key "Landsat 6"), or its label (the words
    before a full stop or colon that starts its explanation, with a word not the key's:
    "Invalid" of "Invalid. Counterexample when ..."); or the stem offers the key as a choice
    with a distractor's word ("valid or invalid", "X versus Y").
    """
    key = texts.options[q.key]
    key_words = set(key.split())
    rest = f" {texts.stem} ".replace(f" {key} ", "  ")
    rest_words = set(rest.split())
    distractor_words: set[str] = set()
    for i, option in enumerate(texts.options):
        if i == q.key:
            continue
        words = _naming_words(option)
        if words and words <= rest_words:
            return True
        distractor_words |= words
        label = _LABEL_END.search(q.options[i])
        if label is not None:
            head = normalise(q.options[i][: label.start()])
            if _naming_words(head) - key_words and contains(rest, head):
                return True
    choice = "|".join(_CHOICE_WORDS)
    k = re.escape(key)
    stem = f" {texts.stem} "
    for m in re.finditer(rf"(?= {k} (?:{choice}) (\w+) )|(?= (\w+) (?:{choice}) {k} )", stem):
        if (m.group(1) or m.group(2)) in distractor_words - key_words:
            return True
    return False


def _key_findings(q: Question, s: LintSettings, texts: QuestionTexts) -> list[LintFinding]:
    """L104 (key in the stem) and L107 (key much longer than every distractor)."""
    out = []
    norm = texts.options
    key = norm[q.key]
    # Containment compares symbols and signs too ("-7" is not in "what is 3 + 7?").
    compared = [c.casefold() for c in texts.compared]
    stem = texts.compared_stem.casefold()
    if len(key) >= s.giveaway_min_chars and contains(stem, compared[q.key]):
        others = [o for i, o in enumerate(compared) if i != q.key and len(o) >= 2]
        if not any(contains(stem, o) for o in others) and not _names_the_options(q, texts):
            out.append(
                item_finding("L104", q, f"the key {show(q.options[q.key])} appears in the stem")
            )
    longest_other = max((len(o) for i, o in enumerate(norm) if i != q.key), default=0)
    if (
        longest_other
        and len(key) >= s.long_key_min_chars
        and len(key) >= s.long_key_ratio * longest_other
    ):
        out.append(
            item_finding(
                "L107",
                q,
                f"the key is {len(key)} characters, the longest distractor {longest_other}"
                f" (ratio {len(key) / longest_other:.1f}): {show(q.options[q.key])}",
            )
        )
    return out


def question_findings(
    q: Question, s: LintSettings, texts: QuestionTexts | None = None
) -> list[LintFinding]:
    """Every rule on one question (``texts``: its ``QuestionTexts``, when the caller has them)."""
    if texts is None:
        texts = QuestionTexts.of(q)
    out = _stem_findings(q, s, texts.stem) + _html_finding(q, q.options) + _negative_finding(q)
    key_ok = key_in_range(q)
    if not key_ok:
        out.append(
            item_finding(
                "L101",
                q,
                f"key index {q.key} names no option (the question has {len(q.options)} options)",
            )
        )
    if is_boolean(q, texts.options):
        return out
    out += _option_findings(q, s, key_ok, texts)
    if key_ok:
        out += _key_findings(q, s, texts)
    return out


def unjudged_findings(item: Any, s: LintSettings) -> list[LintFinding]:
    """The rules an unjudged item (no key to check) is held to: its stem and leftover HTML."""
    return _stem_findings(item, s) + _html_finding(item, ())
