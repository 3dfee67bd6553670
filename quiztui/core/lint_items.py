"""Per-question lint rules, and the text helpers every rule compares with.

Texts are compared after ``normalise`` (HTML stripped, NFKC, case-folded, punctuation dropped).
Near-duplicates (``near``) need a difflib ratio at the threshold and, word for word, no content
word swapped for a different one; two texts whose numbers differ ("Mark I" / "Mark II",
"T-800" / "T-888") are never near-duplicates.

The rules here look at one question at a time: the stem (L112 empty, L113 short, L106 an
unemphasised negative), leftover HTML (L114), the options (L102 the key twice, L103
near-duplicates, L105 all/none of the above) and the key (L101 out of range, L104 in the stem,
L107 much longer than every distractor).
"""

from __future__ import annotations

import difflib
import html
import re
import unicodedata
from collections.abc import Sequence
from typing import Any

from quiztui.core.lint_model import LintFinding, LintSettings, item_finding
from quiztui.core.quiz import Question

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
_ABOUT_MARKUP = re.compile(r"\b(html|xml|markup|tags?|entity|entities)\b")
_ROMAN = re.compile(r"^M{0,3}(CM|CD|D?C{0,3})(XC|XL|L?X{0,3})(IX|IV|V?I{0,3})$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_INTRA_HYPHEN = re.compile(r"(?<=\w)-(?=\w)")
# Characters that change meaning ("-40" / "+40", "C++" / "C#", "1%" / "<1%"); other punctuation
# (full stops, commas, quotes, brackets) does not.
_SYMBOLS = frozenset("+-*/=<>#%^°$€£¥@~|\\×÷±√∞′″")
# Grammar words: swapping or adding one does not make a different question (near-duplicates).
FUNCTION_WORDS = frozenset(
    "a an the of in on at to for from by with and or but is are was were be been being which what"
    " who whom whose this that these those it its as into than then there their does did do has"
    " have had".split()
)


def normalise(text: str) -> str:
    """Text as compared: tags dropped, entities decoded, NFKC, case-folded, punctuation removed."""
    text = html.unescape(_TAG.sub(" ", text))
    text = unicodedata.normalize("NFKC", text).casefold().replace("&", " and ")
    text = re.sub(r"['’ʼ]", "", text)
    return " ".join("".join(ch if ch.isalnum() else " " for ch in text).split())


def _numbers(raw: str) -> tuple[str, ...]:
    """The numbers in a text: digit runs and upper-case Roman numerals ("II", "XIV")."""
    digits = re.findall(r"\d+", unicodedata.normalize("NFKC", raw))
    romans = [w for w in re.findall(r"\b[IVXLCDM]+\b", raw) if _ROMAN.match(w)]
    return tuple(sorted(digits + romans))


def _symbols(raw: str) -> tuple[str, ...]:
    text = _INTRA_HYPHEN.sub("", html.unescape(_TAG.sub(" ", raw)))
    return tuple(sorted(ch for ch in unicodedata.normalize("NFKC", text) if ch in _SYMBOLS))


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
    """difflib ratio of two normalised texts when it reaches ``threshold``, else None."""
    if a == b:
        return 1.0
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    if matcher.real_quick_ratio() < threshold or matcher.quick_ratio() < threshold:
        return None
    ratio = matcher.ratio()
    return ratio if ratio >= threshold else None


def near(raw_a: str, raw_b: str, threshold: float) -> float | None:
    """How alike two texts are (1.0: the same once normalised), or None when they differ.

    Texts the same but for spacing are alike whatever their ratio. Otherwise near-duplicates need a difflib ratio of the normalised texts at ``threshold`` and, word for
    word, no real difference: a changed word must itself be alike ("Melbourne" / "Melborne") or be
    a grammar word ("which" / "what"); an added word must be a grammar word; a run of words may
    differ only in spacing ("Lord Genome" / "Lordgenome"). So "Josh DeSeno" / "John DeSeno",
    "George W. Bush" / "George H. W. Bush" and "capital of Iran" / "capital of Iraq" are different
    answers however close their letters. Texts whose numbers ("T-800" / "T-888", "Mark I" /
    "Mark II") or meaningful symbols ("-40" / "+40", "C++" / "C#") differ are never alike.
    """
    if _numbers(raw_a) != _numbers(raw_b) or _symbols(raw_a) != _symbols(raw_b):
        return None
    a, b = normalise(raw_a), normalise(raw_b)
    if not a or not b:
        return None
    if a.replace(" ", "") == b.replace(" ", ""):
        return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()
    ratio = similarity(a, b, threshold)
    if ratio is None:
        return None
    words_a, words_b = a.split(), b.split()
    ops = difflib.SequenceMatcher(None, words_a, words_b, autojunk=False).get_opcodes()
    for tag, i1, i2, j1, j2 in ops:
        left, right = words_a[i1:i2], words_b[j1:j2]
        if tag == "equal" or all(w in FUNCTION_WORDS for w in left + right):
            continue
        if tag == "replace" and len(left) == len(right):
            for x, y in zip(left, right, strict=True):
                both_grammar = x in FUNCTION_WORDS and y in FUNCTION_WORDS
                if not both_grammar and similarity(x, y, threshold) is None:
                    return None
        elif tag == "replace":
            if similarity("".join(left), "".join(right), threshold) is None:
                return None
        else:
            return None  # a content word added or dropped
    return ratio


def is_boolean(q: Question) -> bool:
    return q.kind == "boolean" or sorted(normalise(o) for o in q.options) == ["false", "true"]


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
_NEGATIVE = re.compile(
    r"(?<![\w])(not|except|least|cannot|false|incorrect|untrue|\w+n['’]t)(?!\w)", re.I
)
# Quotations and asides: a negative inside them ("Do not pass Go") is not the stem's.
_ASIDES = re.compile(r"\"[^\"]*\"|“[^”]*”|‘[^’]*’|(?<!\w)'(?:[^']|'(?=\w))+'(?!\w)|\([^()]*\)")
_EMPHASIS_TAG = re.compile(r"<\s*(b|strong|em|i|u)\s*>\s*$", re.I)
_NOT_NEGATIVE = {  # (word, words before, words after) that qualify rather than negate
    ("least", ("at",), ()),
    ("not", (), ("only",)),
    ("not", (), ("including",)),
    ("not", (), ("counting",)),
    ("not", ("or",), ()),
    ("false", ("true", "or"), ()),
}


def _stem_findings(item: Any, s: LintSettings) -> list[LintFinding]:
    """L112 empty, L113 short (checked on questions and unjudged items alike)."""
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
    found = [m.group() for m in _TAG.finditer(text) if m.group(1).lower() in _LEFTOVER_TAGS]
    found += _ENTITY.findall(text)
    return list(dict.fromkeys(found))


def _html_finding(item: Any, options: Sequence[str]) -> list[LintFinding]:
    """L114: tags a web page leaves behind, or entities, in the stem or an option.

    Skipped when the stem is about markup ("which HTML tag ..."): there tags are the content.
    """
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

    Not counted: words inside quotations or parentheses, "at least", "not only", "not
    including", "or not", "true or false", and "false"/"incorrect"/"untrue" in a stem that is not
    a question (a statement may call a thing false).
    """
    text = _ASIDES.sub(lambda m: " " * len(m.group()), q.text)
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


def _option_findings(q: Question, s: LintSettings, key_ok: bool) -> list[LintFinding]:
    """L102 (an option the same as the key), L103 (near-duplicates), L105 (all/none of above)."""
    out = []
    for i in range(len(q.options)):
        for j in range(i + 1, len(q.options)):
            ratio = near(q.options[i], q.options[j], s.option_similarity)
            if ratio is None:
                continue
            pair = f"{show(q.options[i])} / {show(q.options[j])}"
            has_key = key_ok and q.key in (i, j)
            if ratio == 1.0 and has_key:
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
                what = "the same once normalised" if ratio == 1.0 else "near-duplicates"
                key_note = f" (option {q.key + 1} is the key)" if has_key else ""
                out.append(
                    item_finding(
                        "L103",
                        q,
                        f"options {i + 1} and {j + 1} are {what} (ratio {ratio:.2f}){key_note}:"
                        f" {pair}",
                    )
                )
    for i, option in enumerate(q.options):
        if _ABOVE.match(normalise(option)):
            out.append(
                item_finding(
                    "L105",
                    q,
                    f"option {i + 1} {show(option)} refers to the other options"
                    " (all/none of the above, both A and B)",
                )
            )
    return out


def _key_findings(q: Question, s: LintSettings) -> list[LintFinding]:
    """L104 (key in the stem) and L107 (key much longer than every distractor)."""
    out = []
    norm = [normalise(o) for o in q.options]
    key = norm[q.key]
    stem = normalise(q.text)
    if len(key) >= s.giveaway_min_chars and contains(stem, key):
        others = [o for i, o in enumerate(norm) if i != q.key and len(o) >= 2]
        if not any(contains(stem, o) for o in others):
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


def question_findings(q: Question, s: LintSettings) -> list[LintFinding]:
    out = _stem_findings(q, s) + _html_finding(q, q.options) + _negative_finding(q)
    key_ok = key_in_range(q)
    if not key_ok:
        out.append(
            item_finding(
                "L101",
                q,
                f"key index {q.key} names no option (the question has {len(q.options)} options)",
            )
        )
    if is_boolean(q):
        return out
    out += _option_findings(q, s, key_ok)
    if key_ok:
        out += _key_findings(q, s)
    return out


def unjudged_findings(item: Any, s: LintSettings) -> list[LintFinding]:
    """The rules an unjudged item (no key to check) is held to: its stem and leftover HTML."""
    return _stem_findings(item, s) + _html_finding(item, ())
