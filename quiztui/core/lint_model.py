"""The lint data model: codes, severities, settings, findings and the report.

``CODES`` names every rule by a stable code with its severity; ``LintSettings`` holds the rules'
thresholds (``[lint]`` in the config converts to it); a ``LintFinding`` is one flaw, on a question
or (question id None) on the whole quiz; a ``LintReport`` groups them. The rules themselves are in
``lint_items`` (per question) and ``lint_bank`` (across questions); ``quiztui.core.lint`` is the
public surface and re-exports everything here.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from functools import cached_property
from typing import Any

from quiztui.core.records import record
from quiztui.errors import ConfigError

SEVERITIES = ("info", "warning", "error")
SEVERITY_RANK = {name: rank for rank, name in enumerate(SEVERITIES, 1)}
FAIL_ON = ("error", "warning", "info", "never")


@record(frozen=True)
class CodeInfo:
    code: str
    severity: str
    category: str  # correctness (a fault in the question) or style (an item-writing guideline)
    name: str
    summary: str
    rationale: str  # why this severity (``quiztui lint --explain CODE``)


# Severity: error = the question cannot be judged or scored as written (a CI job should fail);
# warning = a likely flaw a person should look at (a style or statistics rule, sometimes meant);
# info = worth knowing, rarely wrong.
# Category: correctness = a fault in the question (no key, repeated or ambiguous options, an empty
# stem, a duplicate question, a key given away, markup left in the text), selected by default;
# style = an item-writing guideline (all/none of the above, unemphasised negatives, long keys,
# short stems, key-position, longest-key and True/False patterns), selected on request.
CODES: dict[str, CodeInfo] = {
    info.code: info
    for info in (
        CodeInfo(
            "L101",
            "error",
            "correctness",
            "key-out-of-range",
            "the key index names no option",
            "error: the question has no key, so no option can be scored right.",
        ),
        CodeInfo(
            "L102",
            "error",
            "correctness",
            "key-ambiguous",
            "another option is the key again once normalised",
            "error: two options say the same thing (only case, spacing, quotes or sentence"
            " punctuation differ; signs, digits, symbols and a formula's case count) and one is"
            " the key, so the same answer is keyed both right and wrong.",
        ),
        CodeInfo(
            "L103",
            "warning",
            "correctness",
            "near-duplicate-options",
            "two options are (near-)duplicates",
            "warning: one option looks like another misspelled; usually a slip, but real"
            " look-alike words exist, so a person decides.",
        ),
        CodeInfo(
            "L104",
            "warning",
            "correctness",
            "key-in-stem",
            "the key's text is in the stem (no distractor's is)",
            "warning: the stem gives the answer away to a test-wise reader; sometimes the"
            ' repetition is meant ("which of these ...").',
        ),
        CodeInfo(
            "L105",
            "warning",
            "style",
            "all-none-of-the-above",
            "an option is all/none of the above, both A and B",
            "warning: an item-writing style guideline (such options reward partial knowledge),"
            " not an error in the question.",
        ),
        CodeInfo(
            "L106",
            "warning",
            "style",
            "negative-stem",
            "a negative (not, except, least…) is not emphasised",
            "warning: a style guideline (readers miss an unemphasised NOT); contractions,"
            " quotations and example text are not counted.",
        ),
        CodeInfo(
            "L107",
            "info",
            "style",
            "long-key",
            "the key is much longer than every distractor",
            "info: a long key is a cue test-wise readers use, but precise keys are often long.",
        ),
        CodeInfo(
            "L108",
            "warning",
            "style",
            "longest-key-bias",
            "quiz: the key is the longest option too often",
            "warning: a quiz-level statistical test (p < alpha); a pattern to look at, not a"
            " faulty question.",
        ),
        CodeInfo(
            "L109",
            "warning",
            "style",
            "key-position-bias",
            "quiz: key positions are far from uniform",
            "warning: a quiz-level statistical test (p < alpha); a pattern to look at, not a"
            " faulty question.",
        ),
        CodeInfo(
            "L110",
            "warning",
            "correctness",
            "duplicate-question",
            "the stem near-duplicates an earlier one",
            "warning: a repeated question wastes a slot and may be meant (a retest), so a"
            " person decides.",
        ),
        CodeInfo(
            "L111",
            "warning",
            "correctness",
            "answered-elsewhere",
            "another question's stem gives the key away",
            "warning: a cue across questions; it only matters when both appear in one sitting.",
        ),
        CodeInfo(
            "L112",
            "error",
            "correctness",
            "empty-stem",
            "the stem has no text",
            "error: there is no question to judge.",
        ),
        CodeInfo(
            "L113",
            "warning",
            "style",
            "short-stem",
            "the stem is very short",
            'warning: a very short stem is often unclear, but some are fine ("Largest ocean?").',
        ),
        CodeInfo(
            "L114",
            "warning",
            "correctness",
            "html-leftover",
            "HTML tags or entities left in the text",
            "warning: leftover markup from a copy-paste shows as code to a reader; only real"
            " tags (void, or with a closing partner) and entities count, since <p> is also maths.",
        ),
        CodeInfo(
            "L115",
            "warning",
            "style",
            "true-false-imbalance",
            "quiz: True keyed far from half the time",
            "warning: a quiz-level statistical test (p < alpha); a pattern to look at, not a"
            " faulty question.",
        ),
        CodeInfo(
            "L116",
            "error",
            "correctness",
            "repeated-option",
            "the same option appears twice",
            "error: the question offers one option twice (only spacing, quote style or an"
            " ordinary word's case differ); if it is the key, the same answer is keyed both right"
            " and wrong, else a distractor slot is wasted. The quiz still loads and vets.",
        ),
    )
}


CATEGORIES = ("correctness", "style")
DEFAULT_SELECT = ("correctness",)
ALL_CODES = frozenset(CODES)


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


def check_selectors(selectors: Iterable[str]) -> tuple[str, ...]:
    """Rule selectors as written (a code, a category, or ``all``), canonical case, in order and
    without repeats; an unknown one raises ``LintSettingsError`` naming it."""
    out: list[str] = []
    unknown: list[str] = []
    for raw in selectors:
        word = raw.strip()
        if not word:
            continue
        if word.lower() in (*CATEGORIES, "all"):
            word = word.lower()
        elif word.upper() in CODES:
            word = word.upper()
        else:
            unknown.append(word)
            continue
        if word not in out:
            out.append(word)
    if unknown:
        raise LintSettingsError(
            f"unknown lint code or category {', '.join(repr(c) for c in unknown)}"
            f" (known: {min(CODES)}–{max(CODES)}, {', '.join(CATEGORIES)}, all)"
        )
    return tuple(out)


def split_selectors(values: Iterable[str]) -> list[str]:
    """Selector lists as a flag or a variable gives them: comma- or space-separated."""
    return [word for value in values for word in value.replace(",", " ").split()]


def codes_of(selectors: Iterable[str]) -> frozenset[str]:
    """The codes a list of selectors names (``all``: every code; a category: its codes)."""
    out: set[str] = set()
    for word in check_selectors(selectors):
        if word == "all":
            out |= ALL_CODES
        elif word in CATEGORIES:
            out |= {c for c, info in CODES.items() if info.category == word}
        else:
            out.add(word)
    return frozenset(out)


def selection_codes(
    select: Iterable[str] = DEFAULT_SELECT,
    extend_select: Iterable[str] = (),
    ignore: Iterable[str] = (),
) -> frozenset[str]:
    """The codes that run: ``select`` and ``extend_select``, less ``ignore`` (ignore wins)."""
    return (codes_of(select) | codes_of(extend_select)) - codes_of(ignore)


@record(frozen=True)
class LintSettings:
    """Which rules run and their thresholds (``[lint]`` in the config converts to this).

    ``select``: the codes that run (``selection_codes`` builds it from selectors; the core's
    default is every code, the config's is the correctness category); ``disable``: codes left
    out on top (``ignore``). A question's own ``lint_ignore`` drops its findings afterwards.
    """

    select: frozenset[str] = ALL_CODES
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
        object.__setattr__(self, "select", check_codes(self.select))
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

    @property
    def active(self) -> frozenset[str]:
        """The codes that run: selected and not disabled."""
        return self.select - self.disable

    def runs(self, code: str) -> bool:
        return code in self.select and code not in self.disable


@record(frozen=True)
class LintFinding:
    code: str
    severity: str
    question_id: str | None  # None: the finding is about the whole quiz
    message: str
    source_line: int | None = None

    @property
    def name(self) -> str:
        return CODES[self.code].name

    @property
    def category(self) -> str:
        return CODES[self.code].category

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "name": self.name,
            "severity": self.severity,
            "category": self.category,
            "question_id": self.question_id,
            "source_line": self.source_line,
            "message": self.message,
        }


@record(frozen=True)
class LintReport:
    findings: tuple[LintFinding, ...]
    questions: int  # questions linted (unjudged items included)
    disabled: frozenset[str] = frozenset()
    selected: frozenset[str] = ALL_CODES  # the codes that ran (``LintSettings.active``)
    # Findings a question's own ``lint_ignore`` accepted: not in ``findings``, kept for reports.
    suppressed: tuple[LintFinding, ...] = ()

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
        suppressed = f" ({len(self.suppressed)} suppressed in the quiz)" if self.suppressed else ""
        return (
            f"{_count(self.questions, 'question')}, {_count(len(self.findings), 'finding')}:"
            f" {_count(c['error'], 'error')}, {_count(c['warning'], 'warning')}, {c['info']} info"
            f"{suppressed}"
        )

    def selection(self) -> str:
        """The rules that ran, in words: "correctness", "correctness, style", "all but L106",
        "correctness + L105", "L102, L116"."""
        return describe_codes(self.selected)

    def statistics(self) -> list[tuple[str, int]]:
        """(code, findings) for every code found, most findings first (``lint --statistics``)."""
        counted = Counter(f.code for f in self.findings)
        return sorted(counted.items(), key=lambda item: (-item[1], item[0]))

    def to_dict(self) -> dict[str, Any]:
        return {
            "questions": self.questions,
            "counts": self.counts,
            "selected": sorted(self.selected),
            "disabled": sorted(self.disabled),
            "findings": [f.to_dict() for f in self.findings],
            "suppressed": [f.to_dict() for f in self.suppressed],
        }


def describe_codes(codes: frozenset[str]) -> str:
    """A set of codes in words, per category: "all", "correctness", "style",
    "correctness but L110", "correctness, L105", "L102, L116", "none"."""
    if not codes:
        return "none"
    if codes == ALL_CODES:
        return "all"
    parts: list[str] = []
    for category in CATEGORIES:
        members = {c for c, info in CODES.items() if info.category == category}
        chosen = members & codes
        if chosen == members:
            parts.append(category)
        elif len(chosen) > len(members) / 2:
            parts.append(f"{category} but {', '.join(sorted(members - chosen))}")
        else:
            parts += sorted(chosen)
    return ", ".join(parts)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _worst(items: Iterable[LintFinding]) -> str | None:
    ranks = [SEVERITY_RANK[f.severity] for f in items]
    return SEVERITIES[max(ranks) - 1] if ranks else None


def item_finding(code: str, item: Any, message: str) -> LintFinding:
    """A finding on one question or unjudged item, at the severity of its code."""
    return LintFinding(code, CODES[code].severity, item.id, message, item.source_line)


def quiz_finding(code: str, message: str) -> LintFinding:
    """A finding on the whole quiz, at the severity of its code."""
    return LintFinding(code, CODES[code].severity, None, message, None)
