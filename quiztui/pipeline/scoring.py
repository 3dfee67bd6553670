"""One question's verdicts → its QuestionScored event (k, badge, posterior, suggestion, interval)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from quiztui.core.bayes import (
    DEFAULT_PRIOR,
    JudgeAccuracy,
    confidence_interval,
    question_posterior,
)
from quiztui.core.kscore import Badge, badge, k_score
from quiztui.core.quiz import Question
from quiztui.pipeline.events import QuestionScored

if TYPE_CHECKING:  # core/judges brings numpy: loaded when a run's end scores through it
    from quiztui.core.judges import Profile

ModelScore = tuple[float, int | None, float | None, tuple[float, float]]


def known_profile(provider: object) -> Profile | None:
    """A SIMULATED judge's rates are set, not estimated: known exactly, they score as a measured
    profile would (worth 1,000 true and 3,000 false assertions). None for any other judge."""
    if not getattr(provider, "simulated", False):
        return None
    from quiztui.core.judges import Profile

    tpr, tnr = getattr(provider, "tpr", None), getattr(provider, "tnr", None)
    if not isinstance(tpr, float | int) or not isinstance(tnr, float | int):
        return None
    return Profile(
        round(1000 * tpr),
        round(1000 * (1 - tpr)),
        round(3000 * tnr),
        round(3000 * (1 - tnr)),
        exact=True,
    )


def score_question(
    question: Question,
    verdicts: Sequence[bool | None],
    accuracy: JudgeAccuracy,
    *,
    prior: float = DEFAULT_PRIOR,
    unjudged: int = 0,
    pending: int = 0,
    model: ModelScore | None = None,
    graded: float | None = None,
) -> QuestionScored:
    """``verdicts`` per option (None: no verdict); ``unjudged`` gave up, ``pending`` still asked.
    ``model``: the judge model's (confidence, suggested option, its probability, interval) for
    this question (core/judges at a run's end), which replaces the independent posterior.
    ``graded``: P(key correct) from the options' P(true), when logprobs came."""
    keyed = [i == question.key for i in range(question.n)]
    k = k_score(keyed, verdicts)
    if model is not None and not pending:
        confidence, suggested, suggested_p, interval = model
        return QuestionScored(
            question_id=question.id,
            k=k,
            n=question.n,
            judged=sum(v is not None for v in verdicts),
            badge=badge(question.n, k, unjudged),
            confidence=confidence,
            suggested_option=suggested,
            suggested_p=suggested_p,
            interval=interval,
            graded=graded,
        )
    post = question_posterior(verdicts, question.key, accuracy, prior)
    return QuestionScored(
        question_id=question.id,
        k=k,
        n=question.n,
        judged=sum(v is not None for v in verdicts),
        badge=Badge.PENDING if pending else badge(question.n, k, unjudged),
        confidence=post.confidence,
        suggested_option=post.suggested,
        suggested_p=post.suggested_p,
        # None for an uncalibrated judge: no counts, so no uncertainty to propagate.
        interval=confidence_interval(verdicts, question.key, accuracy, prior),
        graded=graded,
    )
