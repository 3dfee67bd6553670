"""Offline lint: item-writing flaws a quiz shows without any model.

``lint_quiz(quiz, settings)`` returns a ``LintReport``: findings, each with a stable code
(``CODES``), a severity (error / warning / info), the question id (None for the whole quiz) and a
one-line message naming its evidence. Texts are compared after ``normalise`` (HTML stripped,
NFKC, case-folded, punctuation dropped). Near-duplicates (``near``) need a difflib ratio at the
threshold and, word for word, no content word swapped for a different one; two texts whose numbers
differ ("Mark I" / "Mark II", "T-800" / "T-888") are never near-duplicates.

The quiz-level statistics are tests against chance, each with at least ``min_questions``
questions and flagged below ``alpha``:

- L108, key is the longest option: over multiple-choice questions with one strictly longest
  option, the number whose key is that option is Poisson-binomial with p_i = 1/n_i under the null
  (the key is in no relation to length); questions whose longest length is tied are left out, as
  their key cannot be strictly longest. It is tested with ``binomtest`` at the mean p̄ = mean(1/n_i):
  by Hoeffding (1956, theorem 4) P(S >= c) of a Poisson-binomial sum is at most that of the
  binomial with the same mean whenever c >= mean + 1, so this one-sided p-value is conservative
  wherever it can matter (below that, p is large either way).
- L109, key positions: a goodness-of-fit test against uniform, separately for each option count
  with enough questions (positions of 4-option and 5-option questions are different categories,
  so they cannot share one table); with several option counts tested, each uses alpha / (number
  tested) (Bonferroni). The statistic is Pearson's chi-square; its p-value comes from
  ``chisquare`` when every expected count is at least 5, and otherwise exactly, by summing the
  multinomial probability of every outcome with a statistic at least as large (the chi-square
  approximation is poor for small quizzes). Five 4-option questions all keyed B give p = 0.004.
- L115, True/False balance: a two-sided ``binomtest`` of the True keys against 0.5.

scipy is imported only when a statistic is computed, so the CLI starts without it.
"""

from __future__ import annotations

import difflib
import html
import math
import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from quiztui.core.quiz import Question, Quiz
from quiztui.errors import ConfigError

SEVERITIES = ("info", "warning", "error")
SEVERITY_RANK = {name: rank for rank, name in enumerate(SEVERITIES, 1)}
FAIL_ON = ("error", "warning", "info", "never")


@dataclass(frozen=True)
class CodeInfo:
    code: str
    severity: str
    name: str
    summary: str


CODES: dict[str, CodeInfo] = {
    info.code: info
    for info in (
        CodeInfo("L101", "error", "key-out-of-range", "the key index names no option"),
        CodeInfo(
            "L102", "error", "key-ambiguous", "another option is the key again once normalised"
        ),
        CodeInfo("L103", "warning", "near-duplicate-options", "two options are (near-)duplicates"),
        CodeInfo(
            "L104", "warning", "key-in-stem", "the key's text is in the stem (no distractor's is)"
        ),
        CodeInfo(
            "L105",
            "warning",
            "all-none-of-the-above",
            "an option is all/none of the above, both A and B",
        ),
        CodeInfo(
            "L106", "warning", "negative-stem", "a negative (not, except, least…) is not emphasised"
        ),
        CodeInfo("L107", "info", "long-key", "the key is much longer than every distractor"),
        CodeInfo(
            "L108", "warning", "longest-key-bias", "quiz: the key is the longest option too often"
        ),
        CodeInfo(
            "L109", "warning", "key-position-bias", "quiz: key positions are far from uniform"
        ),
        CodeInfo(
            "L110", "warning", "duplicate-question", "the stem near-duplicates an earlier one"
        ),
        CodeInfo(
            "L111", "warning", "answered-elsewhere", "another question's stem gives the key away"
        ),
        CodeInfo("L112", "error", "empty-stem", "the stem has no text"),
        CodeInfo("L113", "warning", "short-stem", "the stem is very short"),
        CodeInfo("L114", "warning", "html-leftover", "HTML tags or entities left in the text"),
        CodeInfo(
            "L115", "warning", "true-false-imbalance", "quiz: True keyed far from half the time"
        ),
    )
}


class LintSettingsError(ConfigError):
    """An unknown lint code or an out-of-range threshold."""


def check_codes(codes: Iterable[str]) -> frozenset[str]:
    """The codes upper-cased; an unknown one raises ``LintSettingsError`` naming it."""
    out = frozenset(code.strip().upper() for code in codes if code.strip())
    unknown = sorted(out - CODES.keys())
    if unknown:
        raise LintSettingsError(
            f"unknown lint code {', '.join(repr(c) for c in unknown)}"
            f" (known: {min(CODES)}–{max(CODES)})"
        )
    return out


@dataclass(frozen=True)
class LintSettings:
    """Thresholds of the lint rules (``[lint]`` in the config converts to this)."""

    disable: frozenset[str] = frozenset()
    option_similarity: float = 0.92  # difflib ratio at/above which two options are near-duplicates
    question_similarity: float = 0.9  # the same for two stems
    prefilter_jaccard: float = 0.4  # stems compared only above this content-word Jaccard
    giveaway_min_chars: int = 4  # shorter keys are not looked for in stems (L104, L111)
    long_key_ratio: float = 2.0  # L107: key length / longest distractor length
    long_key_min_chars: int = 12  # L107: shorter keys are never "much longer"
    min_stem_words: int = 3
    min_stem_chars: int = 10
    cue_topic_words: int = 2  # L111: topic words of A that B's stem must share with A's key
    cue_topic_share: float = 0.5  # L111: ... and at least this share of A's topic words
    alpha: float = 0.01  # quiz-level tests are flagged below this p-value
    min_questions: int = 5  # quiz-level tests need at least this many questions

    def __post_init__(self) -> None:
        object.__setattr__(self, "disable", check_codes(self.disable))
        for name in (
            "option_similarity",
            "question_similarity",
            "prefilter_jaccard",
            "cue_topic_share",
            "alpha",
        ):
            value = getattr(self, name)
            if not 0.0 < value <= 1.0:
                raise LintSettingsError(f"lint: {name} must be in (0, 1] (got {value})")
        for name in ("giveaway_min_chars", "min_stem_words", "min_stem_chars", "cue_topic_words"):
            if getattr(self, name) < 0:
                raise LintSettingsError(f"lint: {name} must not be negative")
        if self.min_questions < 2:
            raise LintSettingsError("lint: min_questions must be at least 2")


@dataclass(frozen=True)
class LintFinding:
    code: str
    severity: str
    question_id: str | None  # None: the finding is about the whole quiz
    message: str
    source_line: int | None = None

    @property
    def name(self) -> str:
        return CODES[self.code].name

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "name": self.name,
            "severity": self.severity,
            "question_id": self.question_id,
            "source_line": self.source_line,
            "message": self.message,
        }


@dataclass(frozen=True)
class LintReport:
    findings: tuple[LintFinding, ...]
    questions: int  # questions linted (unjudged items included)
    disabled: frozenset[str] = frozenset()

    @cached_property
    def _by_question(self) -> dict[str | None, tuple[LintFinding, ...]]:
        grouped: dict[str | None, list[LintFinding]] = defaultdict(list)
        for finding in self.findings:
            grouped[finding.question_id].append(finding)
        return {qid: tuple(items) for qid, items in grouped.items()}

    @property
    def counts(self) -> dict[str, int]:
        """Findings per severity, every severity present (worst first)."""
        counted = Counter(f.severity for f in self.findings)
        return {s: counted.get(s, 0) for s in reversed(SEVERITIES)}

    @property
    def quiz_findings(self) -> tuple[LintFinding, ...]:
        return self._by_question.get(None, ())

    def findings_for(self, question_id: str | None) -> tuple[LintFinding, ...]:
        """The findings of one question (None: the quiz-level findings)."""
        return self._by_question.get(question_id, ())

    def worst_severity(self, question_id: str | None = None) -> str | None:
        """The worst severity of one question's findings (None when it has none)."""
        return _worst(self.findings_for(question_id))

    def worst_by_question(self) -> dict[str, str]:
        """Question id -> worst severity, for questions with at least one finding."""
        out: dict[str, str] = {}
        for qid, items in self._by_question.items():
            worst = _worst(items)
            if qid is not None and worst is not None:
                out[qid] = worst
        return out

    def label(self, question_id: str) -> str:
        """A short text for a table cell: "" / "warning L104" / "error L102 +2"."""
        items = self.findings_for(question_id)
        if not items:
            return ""
        top = max(items, key=lambda f: SEVERITY_RANK[f.severity])
        more = f" +{len(items) - 1}" if len(items) > 1 else ""
        return f"{top.severity} {top.code}{more}"

    def worst(self) -> str | None:
        return _worst(self.findings)

    def fails(self, fail_on: str) -> bool:
        """True when a finding is at or above ``fail_on`` (error/warning/info; never: False)."""
        if fail_on == "never":
            return False
        threshold = SEVERITY_RANK[fail_on]
        return any(SEVERITY_RANK[f.severity] >= threshold for f in self.findings)

    def summary(self) -> str:
        c = self.counts
        return (
            f"{_count(self.questions, 'question')}, {_count(len(self.findings), 'finding')}:"
            f" {_count(c['error'], 'error')}, {_count(c['warning'], 'warning')}, {c['info']} info"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "questions": self.questions,
            "counts": self.counts,
            "disabled": sorted(self.disabled),
            "findings": [f.to_dict() for f in self.findings],
        }


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _worst(items: Iterable[LintFinding]) -> str | None:
    ranks = [SEVERITY_RANK[f.severity] for f in items]
    return SEVERITIES[max(ranks) - 1] if ranks else None


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
_FUNCTION_WORDS = frozenset(
    "a an the of in on at to for from by with and or but is are was were be been being which what"
    " who whom whose this that these those it its as into than then there their does did do has"
    " have had".split()
)
# Words that say nothing about a question's topic (L111).
_STOPWORDS = _FUNCTION_WORDS | frozenset(
    "when where why how following called known name named first most many much also one about"
    " after before during these".split()
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


def _contains(haystack: str, needle: str) -> bool:
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
        if tag == "equal" or all(w in _FUNCTION_WORDS for w in left + right):
            continue
        if tag == "replace" and len(left) == len(right):
            for x, y in zip(left, right, strict=True):
                both_grammar = x in _FUNCTION_WORDS and y in _FUNCTION_WORDS
                if not both_grammar and similarity(x, y, threshold) is None:
                    return None
        elif tag == "replace":
            if similarity("".join(left), "".join(right), threshold) is None:
                return None
        else:
            return None  # a content word added or dropped
    return ratio


def _is_boolean(q: Question) -> bool:
    return q.kind == "boolean" or sorted(normalise(o) for o in q.options) == ["false", "true"]


def _key_ok(q: Question) -> bool:
    return 0 <= q.key < len(q.options)


def _letter(i: int) -> str:
    return chr(ord("A") + i) if i < 26 else str(i + 1)


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


def _finding(code: str, q: Any, message: str) -> LintFinding:
    return LintFinding(code, CODES[code].severity, q.id, message, q.source_line)


def _stem_findings(item: Any, s: LintSettings) -> list[LintFinding]:
    """L112 empty, L113 short (checked on questions and unjudged items alike)."""
    stem = normalise(item.text)
    if not stem:
        return [_finding("L112", item, f"the stem has no text: {show(item.text)}")]
    words = len(stem.split())
    chars = len(" ".join(item.text.split()))
    if words < s.min_stem_words or chars < s.min_stem_chars:
        return [
            _finding(
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
    return [_finding("L114", item, "leftover HTML: " + "; ".join(parts))]


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
            _finding(
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
                    _finding(
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
                    _finding(
                        "L103",
                        q,
                        f"options {i + 1} and {j + 1} are {what} (ratio {ratio:.2f}){key_note}:"
                        f" {pair}",
                    )
                )
    for i, option in enumerate(q.options):
        if _ABOVE.match(normalise(option)):
            out.append(
                _finding(
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
    if len(key) >= s.giveaway_min_chars and _contains(stem, key):
        others = [o for i, o in enumerate(norm) if i != q.key and len(o) >= 2]
        if not any(_contains(stem, o) for o in others):
            out.append(_finding("L104", q, f"the key {show(q.options[q.key])} appears in the stem"))
    longest_other = max((len(o) for i, o in enumerate(norm) if i != q.key), default=0)
    if (
        longest_other
        and len(key) >= s.long_key_min_chars
        and len(key) >= s.long_key_ratio * longest_other
    ):
        out.append(
            _finding(
                "L107",
                q,
                f"the key is {len(key)} characters, the longest distractor {longest_other}"
                f" (ratio {len(key) / longest_other:.1f}): {show(q.options[q.key])}",
            )
        )
    return out


def _question_findings(q: Question, s: LintSettings) -> list[LintFinding]:
    out = _stem_findings(q, s) + _html_finding(q, q.options) + _negative_finding(q)
    key_ok = _key_ok(q)
    if not key_ok:
        out.append(
            _finding(
                "L101",
                q,
                f"key index {q.key} names no option (the question has {len(q.options)} options)",
            )
        )
    if _is_boolean(q):
        return out
    out += _option_findings(q, s, key_ok)
    if key_ok:
        out += _key_findings(q, s)
    return out


# --- across questions -------------------------------------------------------------------------


def _content_words(text: str) -> frozenset[str]:
    words = text.split()
    content = frozenset(w for w in words if w not in _FUNCTION_WORDS)
    return content or frozenset(words)


def candidate_pairs(texts: Sequence[str], jaccard: float) -> list[tuple[int, int]]:
    """Pairs (i < j) of normalised texts whose content-word sets have Jaccard >= ``jaccard``.

    All-pairs with prefix filtering (Bayardo, Ma and Srikant, "Scaling up all pairs similarity
    search", WWW 2007): texts are visited from the fewest words up, each word set ordered rarest
    word first; two sets with Jaccard >= t share a word within the first |x| - ceil(t·|x|) + 1
    words of the one visited later and the first |y| - ceil(2t/(1+t)·|y|) + 1 of the earlier one,
    so only those prefixes are indexed, and a set smaller than t·|x| is skipped. Common words never
    make candidates, which keeps a bank of thousands of stems far from N² comparisons. Exact for
    this Jaccard; as a prefilter for ``near`` it is generous, since near-duplicates share nearly
    all their content words.
    """
    sets = [_content_words(t) for t in texts]
    df = Counter(w for s in sets for w in s)
    order = sorted((i for i in range(len(sets)) if sets[i]), key=lambda i: (len(sets[i]), i))
    index_share = 2 * jaccard / (1 + jaccard)
    index: dict[str, list[int]] = defaultdict(list)
    out: list[tuple[int, int]] = []
    for x in order:
        words = sorted(sets[x], key=lambda w: (df[w], w))
        size = len(words)
        probe = size - math.ceil(jaccard * size - 1e-9) + 1
        seen: set[int] = set()
        for w in words[:probe]:
            for y in index.get(w, ()):
                if y not in seen and len(sets[y]) >= jaccard * size - 1e-9:
                    seen.add(y)
        for y in seen:
            shared = len(sets[x] & sets[y])
            if shared >= jaccard * (size + len(sets[y]) - shared) - 1e-9:
                out.append((min(x, y), max(x, y)))
        for w in words[: size - math.ceil(index_share * size - 1e-9) + 1]:
            index[w].append(x)
    return sorted(out)


def near_duplicate_questions(
    questions: Sequence[Any], s: LintSettings
) -> list[tuple[int, int, float]]:
    """(i, j, ratio) for questions (i < j) whose stems are ``near`` at ``question_similarity``."""
    norm = [normalise(q.text) for q in questions]
    out = []
    for i, j in candidate_pairs(norm, s.prefilter_jaccard):
        ratio = near(questions[i].text, questions[j].text, s.question_similarity)
        if ratio is not None:
            out.append((i, j, ratio))
    return out


def _duplicate_findings(
    questions: Sequence[Any], pairs: Sequence[tuple[int, int, float]]
) -> list[LintFinding]:
    """L110 on the later question of each pair, naming the most alike earlier one."""
    earlier: dict[int, list[tuple[float, int]]] = defaultdict(list)
    for i, j, ratio in pairs:
        earlier[j].append((ratio, i))
    out = []
    for j in sorted(earlier):
        matches = sorted(earlier[j], key=lambda m: (-m[0], m[1]))
        ratio, i = matches[0]
        also = [questions[k].id for _, k in matches[1:4]]
        more = f" (also {', '.join(also)})" if also else ""
        out.append(
            _finding(
                "L110",
                questions[j],
                f"the stem near-duplicates {questions[i].id}'s (ratio {ratio:.2f}):"
                f" {show(questions[i].text, 60)}{more}",
            )
        )
    return out


def _answered_elsewhere(
    questions: Sequence[Question], s: LintSettings, duplicates: set[tuple[int, int]]
) -> list[LintFinding]:
    """L111: question B's stem gives away question A's key.

    Precisely: A is multiple choice with a key of at least ``giveaway_min_chars`` characters that
    is not in A's own stem; B's stem contains A's key as whole words, none of A's distractors, and
    at least ``cue_topic_words`` of A's topic words, and at least ``cue_topic_share`` of them. A
    topic word is a word of A's stem of four or
    more letters, not a stopword, not a word of the key, and rare in the quiz (in at most
    max(3, 2 % of) the stems, so "game" or "released" in a video-game bank is no topic). The
    finding is on A, naming B. Near-duplicate pairs (L110) are left out.
    """
    stems = [normalise(q.text) for q in questions]
    postings: dict[str, set[int]] = defaultdict(set)
    for b, stem in enumerate(stems):
        for word in stem.split():
            postings[word].add(b)
    rare = max(3, int(0.02 * len(stems)))
    out = []
    for a, q in enumerate(questions):
        if _is_boolean(q) or not _key_ok(q):
            continue
        norm = [normalise(o) for o in q.options]
        key = norm[q.key]
        if len(key) < s.giveaway_min_chars or _contains(stems[a], key):
            continue
        key_words = set(key.split())
        candidates = set.intersection(*(postings.get(w, set()) for w in key_words)) - {a}
        if not candidates:
            continue
        topic = {
            w
            for w in stems[a].split()
            if len(w) >= 4 and w not in _STOPWORDS and len(postings[w]) <= rare
        } - key_words
        distractors = [o for i, o in enumerate(norm) if i != q.key and len(o) >= 2]
        hits = []
        for b in sorted(candidates):
            if (min(a, b), max(a, b)) in duplicates or not _contains(stems[b], key):
                continue
            if any(_contains(stems[b], o) for o in distractors):
                continue
            shared = sorted(topic & set(stems[b].split()))
            if len(shared) >= max(s.cue_topic_words, 1) and len(shared) >= s.cue_topic_share * len(
                topic
            ):
                hits.append((b, shared))
        if hits:
            b, shared = hits[0]
            also = [questions[k].id for k, _ in hits[1:4]]
            more = f" (also {', '.join(also)})" if also else ""
            out.append(
                _finding(
                    "L111",
                    q,
                    f"{questions[b].id}'s stem contains the key {show(q.options[q.key])} with"
                    f" this question's words {', '.join(shared[:4])}{more}",
                )
            )
    return out


# --- quiz-level statistics --------------------------------------------------------------------


def _quiz_finding(code: str, message: str) -> LintFinding:
    return LintFinding(code, CODES[code].severity, None, message, None)


def _p(value: float) -> str:
    return f"{value:.2g}" if value < 0.001 else f"{value:.3f}"


def _longest_key_bias(questions: Sequence[Question], s: LintSettings) -> list[LintFinding]:
    hits = 0
    chances: list[float] = []
    for q in questions:
        lengths = [len(normalise(o)) for o in q.options]
        top = max(lengths)
        if lengths.count(top) != 1:
            continue  # tied: no option is strictly the longest
        chances.append(1.0 / len(lengths))
        hits += lengths[q.key] == top
    if len(chances) < s.min_questions:
        return []
    from scipy.stats import binomtest  # lazy: scipy.stats is slow to import

    mean = sum(chances) / len(chances)
    pvalue = float(binomtest(hits, len(chances), mean, alternative="greater").pvalue)
    if pvalue >= s.alpha:
        return []
    return [
        _quiz_finding(
            "L108",
            f"the key is the strictly longest option in {hits} of {len(chances)} multiple-choice"
            f" questions (chance: {sum(chances):.1f}; binomial p = {_p(pvalue)})",
        )
    ]


_COUNT_WORDS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}


def _key_position_bias(questions: Sequence[Question], s: LintSettings) -> list[LintFinding]:
    groups: dict[int, list[int]] = defaultdict(list)
    for q in questions:
        groups[len(q.options)].append(q.key)
    tested = {n: keys for n, keys in groups.items() if len(keys) >= s.min_questions}
    if not tested:
        return []
    out = []
    alpha = s.alpha / len(tested)
    for n, keys in sorted(tested.items()):
        counts = [keys.count(i) for i in range(n)]
        statistic, pvalue = uniformity_test(counts)
        if pvalue < alpha:
            observed = ", ".join(f"{_letter(i)} {c}" for i, c in enumerate(counts))
            what = _COUNT_WORDS.get(n, str(n))
            out.append(
                _quiz_finding(
                    "L109",
                    f"key positions of {len(keys)} {what}-option questions are not uniform:"
                    f" {observed} (chi-square {statistic:.1f}, p = {_p(pvalue)})",
                )
            )
    return out


_EXACT_LIMIT = 50_000  # outcomes enumerated at most by the exact test


def uniformity_test(counts: Sequence[int]) -> tuple[float, float]:
    """Pearson's chi-square of ``counts`` against uniform, and its p-value.

    Exact (the multinomial probability of all outcomes with a statistic at least as large) when
    an expected count is below 5 and the outcomes are few enough to enumerate; else scipy's
    chi-square approximation.
    """
    total, k = sum(counts), len(counts)
    expected = total / k
    statistic = sum((c - expected) ** 2 for c in counts) / expected if total else 0.0
    if total == 0 or k < 2:
        return statistic, 1.0
    if expected < 5 and math.comb(total + k - 1, k - 1) <= _EXACT_LIMIT:
        # The statistic orders outcomes as the sum of squared counts does.
        observed = sum(c * c for c in counts)
        log_norm = math.lgamma(total + 1) - total * math.log(k)
        pvalue = 0.0
        for outcome in _compositions(total, k):
            if sum(c * c for c in outcome) >= observed:
                pvalue += math.exp(log_norm - sum(math.lgamma(c + 1) for c in outcome))
        return statistic, min(pvalue, 1.0)
    from scipy.stats import chisquare  # lazy: scipy.stats is slow to import

    return statistic, float(chisquare(list(counts)).pvalue)


def _compositions(total: int, parts: int) -> Iterable[tuple[int, ...]]:
    if parts == 1:
        yield (total,)
        return
    for first in range(total + 1):
        for rest in _compositions(total - first, parts - 1):
            yield (first, *rest)


def _true_false_imbalance(questions: Sequence[Question], s: LintSettings) -> list[LintFinding]:
    if len(questions) < s.min_questions:
        return []
    trues = sum(normalise(q.options[q.key]) == "true" for q in questions)
    from scipy.stats import binomtest  # lazy: scipy.stats is slow to import

    pvalue = float(binomtest(trues, len(questions), 0.5).pvalue)
    if pvalue >= s.alpha:
        return []
    return [
        _quiz_finding(
            "L115",
            f"True is the key of {trues} of {len(questions)} true/false questions"
            f" (binomial p = {_p(pvalue)})",
        )
    ]


# --- entry point ------------------------------------------------------------------------------


def lint_quiz(quiz: Quiz, settings: LintSettings | None = None) -> LintReport:
    """Every finding of the quiz, quiz-level ones first, then in question order."""
    s = settings or LintSettings()
    questions = quiz.questions
    per_question: dict[str, list[LintFinding]] = defaultdict(list)
    for q in questions:
        per_question[q.id] += _question_findings(q, s)
    for item in quiz.unjudged:
        per_question[item.id] += _stem_findings(item, s) + _html_finding(item, ())
    pairs = near_duplicate_questions(questions, s) if "L110" not in s.disable else []
    for f in _duplicate_findings(questions, pairs):
        per_question[f.question_id or ""].append(f)
    if "L111" not in s.disable:
        duplicates = {(i, j) for i, j, _ in pairs}
        for f in _answered_elsewhere(questions, s, duplicates):
            per_question[f.question_id or ""].append(f)
    usable = [q for q in questions if _key_ok(q)]
    multiple = [q for q in usable if not _is_boolean(q)]
    boolean = [q for q in usable if _is_boolean(q)]
    quiz_level: list[LintFinding] = []
    if "L108" not in s.disable:
        quiz_level += _longest_key_bias(multiple, s)
    if "L109" not in s.disable:
        quiz_level += _key_position_bias(multiple, s)
    if "L115" not in s.disable:
        quiz_level += _true_false_imbalance(boolean, s)
    ordered = quiz_level + [
        f
        for item_id in [q.id for q in questions] + [u.id for u in quiz.unjudged]
        for f in sorted(per_question.pop(item_id, []), key=lambda f: f.code)
    ]
    findings = tuple(f for f in ordered if f.code not in s.disable)
    return LintReport(findings, len(questions) + len(quiz.unjudged), s.disable)


__all__ = [
    "CODES",
    "FAIL_ON",
    "SEVERITIES",
    "CodeInfo",
    "LintFinding",
    "LintReport",
    "LintSettings",
    "LintSettingsError",
    "candidate_pairs",
    "check_codes",
    "lint_quiz",
    "near",
    "near_duplicate_questions",
    "normalise",
    "uniformity_test",
]
