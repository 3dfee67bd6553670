"""Two vet runs of the same quiz side by side (e.g. two judges): how far do they agree?

* verdict agreement: the share of assertions (question id + option index) that *both* runs judged
  on which their verdicts are equal; an assertion either run left unjudged is not counted.
* Cohen's κ over the same pairs (:func:`quiztui.core.agreement.cohen_kappa`): agreement corrected
  for what two judges with these TRUE/FALSE rates would reach by chance. nan when undefined.
* badge agreement: the share of questions given the same badge.
* the disagreeing questions: a different verdict on some option both judged, a different badge,
  or a different suggested option — with both sides' verdicts, so a reader sees which judge said
  what.

Pure: it reads any objects with the fields of ``pipeline.events.QuestionSummary`` (see
:class:`QuestionLike`), so the caller decides where the runs come from.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from quiztui.core.agreement import cohen_kappa


class QuestionLike(Protocol):
    """The fields of one judged question that a comparison reads."""

    @property
    def question_id(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def options(self) -> tuple[str, ...]: ...
    @property
    def key(self) -> int: ...
    @property
    def badge(self) -> str: ...
    @property
    def confidence(self) -> float: ...
    @property
    def suggested_option(self) -> int | None: ...
    @property
    def verdicts(self) -> tuple[bool | None, ...]: ...


class QuizMismatch(ValueError):
    """The two runs were made on different versions of the quiz (content hashes differ)."""


@dataclass(frozen=True, slots=True)
class RunSide:
    """One run to compare: its id, judge, the quiz content hash and its questions."""

    run_id: int
    judge_label: str
    quiz_hash: str
    questions: Sequence[QuestionLike]


@dataclass(frozen=True, slots=True)
class QuestionDiff:
    """One question on which the runs differ, with both sides' verdicts per option."""

    question_id: str
    text: str
    options: tuple[str, ...]
    key: int
    badge_a: str
    badge_b: str
    confidence_a: float
    confidence_b: float
    suggested_a: int | None
    suggested_b: int | None
    verdicts_a: tuple[bool | None, ...]
    verdicts_b: tuple[bool | None, ...]
    differing_options: tuple[int, ...]  # options both judged, with different verdicts

    @property
    def badge_differs(self) -> bool:
        return self.badge_a != self.badge_b

    @property
    def suggestion_differs(self) -> bool:
        return self.suggested_a != self.suggested_b


@dataclass(frozen=True, slots=True)
class Comparison:
    run_a: int
    run_b: int
    judge_a: str
    judge_b: str
    questions: int  # questions in both runs
    assertions: int  # (question, option) pairs in both runs
    both_judged: int  # pairs with a verdict from each run
    agreed: int  # of those, pairs with the same verdict
    # Of the pairs both judged: a TRUE/b TRUE, a TRUE/b FALSE, a FALSE/b TRUE, a FALSE/b FALSE.
    tt: int
    tf: int
    ft: int
    ff: int
    kappa: float  # Cohen's κ over the pairs both judged (nan when undefined)
    badges_agreed: int  # questions with the same badge
    badge_counts_a: dict[str, int]
    badge_counts_b: dict[str, int]
    disagreements: tuple[QuestionDiff, ...]
    only_in_a: tuple[str, ...] = ()  # question ids one run has and the other lacks
    only_in_b: tuple[str, ...] = ()

    @property
    def agreement(self) -> float:
        """Share of assertions both runs judged with the same verdict (nan when none)."""
        return self.agreed / self.both_judged if self.both_judged else math.nan

    @property
    def badge_agreement(self) -> float:
        return self.badges_agreed / self.questions if self.questions else math.nan

    @property
    def unjudged_pairs(self) -> int:
        """Pairs at least one run has no verdict for (left out of agreement and κ)."""
        return self.assertions - self.both_judged


def _counts(questions: Sequence[QuestionLike]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for q in questions:
        counts[str(q.badge)] = counts.get(str(q.badge), 0) + 1
    return counts


def compare_runs(a: RunSide, b: RunSide, *, allow_other_version: bool = False) -> Comparison:
    """Compare run ``a`` with run ``b``, matching questions by id and options by index.

    Raises :class:`QuizMismatch` when the quiz hashes differ, unless ``allow_other_version``: then
    only questions present in both (with the same number of options) are compared and the rest
    are listed in ``only_in_a`` / ``only_in_b``.
    """
    if a.quiz_hash != b.quiz_hash and not allow_other_version:
        raise QuizMismatch(
            f"runs {a.run_id} and {b.run_id} were made on different versions of the quiz"
            f" (content hash {a.quiz_hash[:12]} vs {b.quiz_hash[:12]}); only runs of the same"
            " quiz can be compared"
        )
    by_id_b = {q.question_id: q for q in b.questions}
    ids_a = {q.question_id for q in a.questions}
    pairs_a: list[bool | None] = []
    pairs_b: list[bool | None] = []
    only_a: list[str] = []
    matched = badges_agreed = 0
    diffs: list[QuestionDiff] = []
    for qa in a.questions:
        qb = by_id_b.get(qa.question_id)
        if qb is None or len(qb.options) != len(qa.options):
            only_a.append(qa.question_id)
            continue
        matched += 1
        n = len(qa.options)
        va = tuple(qa.verdicts) + (None,) * (n - len(qa.verdicts))
        vb = tuple(qb.verdicts) + (None,) * (n - len(qb.verdicts))
        pairs_a.extend(va[:n])
        pairs_b.extend(vb[:n])
        differing = tuple(
            i for i in range(n) if va[i] is not None and vb[i] is not None and va[i] != vb[i]
        )
        same_badge = str(qa.badge) == str(qb.badge)
        badges_agreed += same_badge
        if differing or not same_badge or qa.suggested_option != qb.suggested_option:
            diffs.append(
                QuestionDiff(
                    question_id=qa.question_id,
                    text=qa.text,
                    options=tuple(qa.options),
                    key=qa.key,
                    badge_a=str(qa.badge),
                    badge_b=str(qb.badge),
                    confidence_a=qa.confidence,
                    confidence_b=qb.confidence,
                    suggested_a=qa.suggested_option,
                    suggested_b=qb.suggested_option,
                    verdicts_a=va[:n],
                    verdicts_b=vb[:n],
                    differing_options=differing,
                )
            )
    unmatched = ids_a.difference(by_id_b).union(only_a)
    only_b = tuple(
        q.question_id
        for q in b.questions
        if q.question_id not in ids_a or q.question_id in unmatched
    )
    both = [
        (bool(x), bool(y))
        for x, y in zip(pairs_a, pairs_b, strict=True)
        if x is not None and y is not None
    ]
    return Comparison(
        run_a=a.run_id,
        run_b=b.run_id,
        judge_a=a.judge_label,
        judge_b=b.judge_label,
        questions=matched,
        assertions=len(pairs_a),
        both_judged=len(both),
        agreed=sum(x == y for x, y in both),
        tt=sum(x and y for x, y in both),
        tf=sum(x and not y for x, y in both),
        ft=sum(not x and y for x, y in both),
        ff=sum(not x and not y for x, y in both),
        kappa=cohen_kappa(pairs_a, pairs_b),
        badges_agreed=badges_agreed,
        badge_counts_a=_counts(a.questions),
        badge_counts_b=_counts(b.questions),
        disagreements=tuple(diffs),
        only_in_a=tuple(only_a),
        only_in_b=only_b,
    )


__all__ = ["Comparison", "QuestionDiff", "QuestionLike", "QuizMismatch", "RunSide", "compare_runs"]
