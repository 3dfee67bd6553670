"""Offline lint: item-writing flaws a quiz shows without any model.

``lint_quiz(quiz, settings)`` returns a ``LintReport``: findings, each with a stable code
(``CODES``), a severity (error / warning / info), a category (correctness: a fault in the
question; style: an item-writing guideline), the question id (None for the whole quiz) and a
one-line message naming its evidence. ``LintSettings.select`` names the codes that run (every
code unless told; ``[lint]`` selects the correctness category by default) and a question's own
``lint_ignore`` (a GIFT ``// quiztui: ignore L106`` line, a JSON ``lint_ignore`` field) moves
its findings of those codes to ``LintReport.suppressed``.

This module is the public surface. The data model (codes, settings, findings, the report) is in
``lint_model``; the per-question rules and the text helpers they compare with (``normalise``,
``near``) are in ``lint_items``; the rules across questions (near-duplicate stems, stems that
answer other questions) and the quiz-level statistics (L108 longest key, L109 key positions, L115
True/False balance) are in ``lint_bank``, their exact p-values in ``pvalues`` (plain Python: no
scipy import, at start-up or at the end of a run).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Generator

from quiztui.core.lint_bank import (
    answered_elsewhere,
    duplicate_findings,
    index_pairs,
    key_position_bias,
    longest_key_bias,
    near_duplicate_questions,
    true_false_imbalance,
    uniformity_test,
)
from quiztui.core.lint_items import (
    QuestionTexts,
    is_boolean,
    key_in_range,
    near,
    normalise,
    question_findings,
    unjudged_findings,
)
from quiztui.core.lint_model import (
    CATEGORIES,
    CODES,
    DEFAULT_SELECT,
    FAIL_ON,
    SEVERITIES,
    CodeInfo,
    LintFinding,
    LintReport,
    LintSettings,
    LintSettingsError,
    check_codes,
    check_selectors,
    codes_of,
    describe_codes,
    selection_codes,
    split_selectors,
)
from quiztui.core.quiz import Question, Quiz, Unjudged

# --- entry point ------------------------------------------------------------------------------


def lint_quiz(quiz: Quiz, settings: LintSettings | None = None) -> LintReport:
    """Every finding of the quiz, quiz-level ones first, then in question order.

    One pass over the questions runs the per-question rules on each question's
    ``QuestionTexts`` and keeps, per question, only the texts the rules across questions need
    (the normalised and compared stem, the normalised key, the option lengths), so a text is
    normalised once and a bank of 100,000 questions holds no second copy of its questions.
    """
    steps = lint_steps(quiz, settings)
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value


def lint_steps(
    quiz: Quiz, settings: LintSettings | None = None, every: int = 8
) -> Generator[None, None, LintReport]:
    """:func:`lint_quiz` a few questions at a time: the generator yields after every ``every``
    questions and between the rules across questions, and returns the report. A headless run lints
    on its event loop while the judge is waited on, so a reply that arrives meanwhile waits for
    one step (a millisecond or two), not for the whole lint (``cli/vet.report_work``)."""
    s = settings or LintSettings()
    questions = quiz.questions
    per_question: dict[str, list[LintFinding]] = defaultdict(list)
    stems: list[str] = []  # normalised
    compared: list[str] = []  # comparable
    keys: list[str] = []  # a multiple-choice key normalised ("" for True/False, out of range)
    multiple: list[Question] = []
    lengths: list[tuple[int, ...]] = []  # of ``multiple``'s options normalised
    boolean: list[Question] = []
    for n, q in enumerate(questions, 1):
        if n % every == 0:
            yield
        texts = QuestionTexts.of(q)
        found = question_findings(q, s, texts)
        if found:
            per_question[q.id] += found
        stems.append(texts.stem)
        compared.append(texts.compared_stem)
        if not key_in_range(q):
            keys.append("")
        elif is_boolean(q, texts.options):
            boolean.append(q)
            keys.append("")  # L111 looks at multiple-choice keys only
        else:
            multiple.append(q)
            lengths.append(tuple(map(len, texts.options)))
            keys.append(texts.options[q.key])
    for item in quiz.unjudged:
        per_question[item.id] += unjudged_findings(item, s)
    yield
    if s.runs("L110"):
        pairs = near_duplicate_questions(questions, s, compared=compared, stems=stems)
    else:
        pairs = []
    del compared
    for f in duplicate_findings(questions, pairs):
        per_question[f.question_id or ""].append(f)
    if s.runs("L111"):
        yield
        duplicates = {(i, j) for i, j, _ in pairs}
        for f in answered_elsewhere(questions, s, duplicates, stems=stems, keys=keys):
            per_question[f.question_id or ""].append(f)
    del stems, keys
    quiz_level: list[LintFinding] = []
    if s.runs("L108"):
        quiz_level += longest_key_bias(multiple, s, lengths)
    if s.runs("L109"):
        quiz_level += key_position_bias(multiple, s)
    if s.runs("L115"):
        quiz_level += true_false_imbalance(boolean, s)
    ordered = quiz_level + [
        f
        for item_id in [q.id for q in questions] + [u.id for u in quiz.unjudged]
        for f in sorted(per_question.pop(item_id, []), key=lambda f: f.code)
    ]
    ignored = _ignored_codes(quiz)
    findings: list[LintFinding] = []
    suppressed: list[LintFinding] = []
    for f in ordered:
        if not s.runs(f.code):
            continue
        if f.code in ignored.get(f.question_id, ()):
            suppressed.append(f)
        else:
            findings.append(f)
    return LintReport(
        tuple(findings),
        len(questions) + len(quiz.unjudged),
        s.disable,
        s.active,
        tuple(suppressed),
    )


def _ignored_codes(quiz: Quiz) -> dict[str | None, frozenset[str]]:
    """Item id -> the codes its own ``lint_ignore`` accepts (items that have one)."""
    out: dict[str | None, frozenset[str]] = {}
    items: list[Question | Unjudged] = [*quiz.questions, *quiz.unjudged]
    for item in items:
        if item.lint_ignore:
            out[item.id] = codes_of(item.lint_ignore)
    return out


__all__ = [
    "CATEGORIES",
    "CODES",
    "DEFAULT_SELECT",
    "FAIL_ON",
    "SEVERITIES",
    "CodeInfo",
    "LintFinding",
    "LintReport",
    "LintSettings",
    "LintSettingsError",
    "check_codes",
    "check_selectors",
    "codes_of",
    "describe_codes",
    "index_pairs",
    "lint_quiz",
    "lint_steps",
    "near",
    "near_duplicate_questions",
    "normalise",
    "selection_codes",
    "split_selectors",
    "uniformity_test",
]
