"""Text as lint compares options and stems: symbols are content.

``comparable(text)`` is the form two options or stems are compared in. It keeps everything that
can change what a text says: signs (every minus and dash variant becomes one ``-``), digits and
decimal points, operators, brackets and logic or maths symbols (≡ ∨ ∧ ¬ ⊃ → ↔ ∀ ∃ ≤ ≥ ≠ ± × ÷ ^ ′
…), and letter case when the text is a formula (``is_formula``: it has such a symbol, a minus, or
a token mixing letters and digits). It folds only what does not: runs of whitespace, quote
styles and quotation marks, sentence punctuation, HTML tags with a closing partner and entities,
and letter case in ordinary words. So ``−23`` / ``23``, ``(3, –2)`` / ``(–3, 2)``, ``H ≡ R`` /
``H ∨ R`` and ``Sc ≡ Ej`` / ``sC ≡ eJ`` stay different, while ``Paris`` / ``paris `` and
``Canberra`` / ``canberra.`` are the same.

``repeat_key`` is the stricter form of a *repeated* option (L116): only spacing, quote style and
ordinary-word case folded. ``alike_words`` is the token check of near-duplicates: character edits
(rapidfuzz's Indel ratio, which is difflib's ratio computed exactly) at the threshold *and* the
same first letter, so a different prefix (Depolarization / Repolarization, Either / Neither,
Legal / Illegal) is a different word while a typo (Melbourne / Melborne) is not.
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Callable
from functools import lru_cache

# Every minus and dash variant: hyphen, non-breaking hyphen, figure/en/em dash, horizontal bar,
# minus sign, small and full-width hyphen-minus.
_DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d"
_SINGLE_QUOTES = "\u2018\u2019\u201a\u201b\u02bc`\u00b4"
_DOUBLE_QUOTES = "\u201c\u201d\u201e\u201f\u00ab\u00bb"
_SUPERSCRIPTS = dict(zip("⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻", ["^0", "^1", "^2", "^3", "^4", "^5", "^6", "^7", "^8", "^9", "^+", "^-"], strict=True))  # fmt: skip
_TRANSLATE = str.maketrans(
    {**{d: "-" for d in _DASHES}, **{q: "'" for q in _SINGLE_QUOTES}}
    | {q: '"' for q in _DOUBLE_QUOTES}
    | _SUPERSCRIPTS
)
# Logic and maths symbols, and ASCII operators: any of them makes a text a formula.
LOGIC_MATHS = frozenset("≡∨∧¬⊃⊂⊇⊆⊄→←↔⇒⇐⇔↦∀∃∄∈∉∋∩∪∖≤≥≠≈≅≃∼≺≻⊏⊐±∓×÷√∛∞∑∏∫∮∂∇′″‴∘⋅•∙⊕⊗⊥∥∴∵∝∅ℵ⊢⊨⊤□◇⟨⟩")
_OPERATORS = frozenset("+*=<>^_|~")
# Kept in ordinary text too: "C#" / "C", "1%" / "1", "£5" / "$5".
_ORDINARY_SYMBOLS = frozenset("#%°$€£¥@")
_DROPPED_IN_FORMULA = frozenset('"?!')
_TOKEN = re.compile(r"\d+(?:\.\d+)*|[^\W\d_]+|\S")
# Tags with a closing partner (<b>x</b>), void tags (<br>, <hr/>, <img …>), entities.
_PAIRED_TAG = re.compile(r"<\s*([A-Za-z][A-Za-z0-9]*)\b[^<>]*>(.*?)<\s*/\s*\1\s*>", re.S)
_VOID_TAG = re.compile(r"<\s*(?:br|hr|img|wbr)\b[^<>]*?/?\s*>", re.I)
_MIXED = re.compile(r"[^\W\d_]\d|\d[^\W\d_]")  # a letter next to a digit: x2, CO2, T800
_FORMULA_CHAR = re.compile("[" + re.escape("".join(sorted(LOGIC_MATHS | _OPERATORS))) + "]")
_NUMBER_SLASH = re.compile(r"\d\s*/|/\s*\d")
_LETTER_HYPHEN = re.compile(r"(?<=[^\W\d_])-(?=[^\W\d_])")
_APOSTROPHE = re.compile(r"(?<=\w)'(?=\w)")
# A one-letter function applied, primed or not: f(x), g'(t).
_FUNCTION = re.compile(r"(?<!\w)[^\W\d_]'*\s*\(")


def strip_html(text: str) -> str:
    """Tags with a closing partner and void tags removed, entities decoded.

    A lone ``<p>`` or ``<3>`` is maths notation (a generated subgroup), so it stays.
    """
    if "<" in text:
        previous = None
        while previous != text:  # nested pairs, innermost last
            previous = text
            text = _PAIRED_TAG.sub(lambda m: f" {m.group(2)} ", text)
        text = _VOID_TAG.sub(" ", text)
    return html.unescape(text) if "&" in text else text


@lru_cache(maxsize=1 << 12)
def _prepared(text: str) -> str:
    """HTML stripped, NFKC, dashes/quotes/superscripts unified (superscripts before NFKC)."""
    if text.isascii() and "<" not in text and "&" not in text:
        return text.replace("`", "'")  # NFKC and every other translation leave ASCII as it is
    return unicodedata.normalize("NFKC", strip_html(text).translate(_TRANSLATE)).translate(
        _TRANSLATE
    )


@lru_cache(maxsize=1 << 12)
def is_formula(text: str) -> bool:
    """Whether case and every symbol of ``text`` are content (a maths, logic or code formula)."""
    prepared = _prepared(text)
    return _formula(prepared)


def _formula(prepared: str) -> bool:
    if _FORMULA_CHAR.search(prepared) or _MIXED.search(prepared):
        return True
    if "-" in prepared and "-" in _LETTER_HYPHEN.sub(" ", prepared):
        return True  # a minus, not a hyphen inside a word
    if "/" in prepared and _NUMBER_SLASH.search(prepared):
        return True
    return "(" in prepared and _FUNCTION.search(prepared) is not None


# Runs of ASCII letters or of digits (never a letter next to a digit), spaces, commas, "?".
_SIMPLE = re.compile(r"[ ,?]*(?:(?:[A-Za-z]+|[0-9]+)(?:[ ,?]+|\Z))*")


def simple_form(text: str) -> str | None:
    """The one form a plain text has (None when it is not plain), computed quickly.

    Plain: ASCII letters, digits, spaces, commas and question marks only, and no letter next to
    a digit. Such a text is no formula, and ``comparable`` and ``lint_items.normalise`` both
    give its words lower-cased, the commas and question marks dropped. Most options and many
    stems are plain, so a bank of 100,000 questions skips most regular expressions.
    """
    if _SIMPLE.fullmatch(text) is None:
        return None
    return " ".join(text.replace(",", " ").replace("?", " ").lower().split())


@lru_cache(maxsize=1 << 12)
def comparable(text: str) -> str:
    """The tokens of ``text`` as compared, space-separated (see the module docstring).

    Whole-word containment (the key in a stem) folds a formula's case too: ``.casefold()``.
    """
    simple = simple_form(text)
    return simple if simple is not None else _comparable(text)


def _comparable(text: str) -> str:
    prepared = _prepared(text)
    formula = _formula(prepared)
    if not formula:
        prepared = _LETTER_HYPHEN.sub(" ", _APOSTROPHE.sub("", prepared)).replace("&", " and ")
    if not formula:
        prepared = prepared.casefold()
    tokens = _TOKEN.findall(prepared)
    while tokens and tokens[-1] in (".", "?", "!", ";", ":", ","):
        tokens.pop()  # sentence punctuation at the end
    if formula:
        kept = ["′" if t == "'" else t for t in tokens if t not in _DROPPED_IN_FORMULA]
    else:
        kept = [t for t in tokens if t[0].isalnum() or t in _ORDINARY_SYMBOLS]
    return " ".join(kept)


def repeat_key(text: str) -> str:
    """The form two options must share to be the *same option* repeated (L116).

    Spacing, quote styles and letter case of ordinary words folded; nothing else.
    """
    if _SIMPLE.fullmatch(text) is not None:  # a plain text (``simple_form``) is no formula
        return " ".join(text.split()).lower()
    return _repeat_key(text)


def _repeat_key(text: str) -> str:
    if text.isascii():  # NFKC and every translation but the backtick leave ASCII as it is
        prepared = " ".join(text.replace("`", "'").split())
    else:
        prepared = " ".join(unicodedata.normalize("NFKC", text.translate(_TRANSLATE)).split())
    return prepared if _formula(prepared) else prepared.casefold()


def skeleton(key: str) -> tuple[str, ...]:
    """The tokens of a ``comparable`` key that are not words, in order (numbers and symbols)."""
    return tuple(t for t in key.split() if not t.isalpha())


@lru_cache(maxsize=1)
def _indel_similarity() -> Callable[..., float]:
    from rapidfuzz.distance import Indel  # imported on first use: start-up stays quick

    return Indel.normalized_similarity  # type: ignore[no-any-return]


def ratio(a: str, b: str, threshold: float = 0.0) -> float:
    """difflib's ratio 2·M/T, computed exactly (rapidfuzz Indel); 0.0 below ``threshold``."""
    return float(_indel_similarity()(a, b, score_cutoff=threshold))


def alike_words(a: str, b: str, threshold: float) -> bool:
    """Two different words that are one word misspelled: ratio at ``threshold``, same first letter."""
    return bool(a) and bool(b) and a[0] == b[0] and ratio(a, b, threshold) >= threshold
