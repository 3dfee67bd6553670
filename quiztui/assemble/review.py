"""Review runs (seed 004): direct ratings, or the two-judge feedback loop."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from typing import TYPE_CHECKING, Any

from quiztui.assemble.common import prompt_dir

if TYPE_CHECKING:
    from quiztui.config import Config
    from quiztui.core.quiz import Question, Quiz
    from quiztui.pipeline.review import ReviewSettings
    from quiztui.providers.base import Provider

StartReview = Callable[["Quiz", str], AsyncIterator[Any]]


def settings(config: Config, mode: str | None = None) -> ReviewSettings:
    from quiztui.pipeline.review import ReviewSettings

    r = config.review
    return ReviewSettings(
        mode=mode or r.mode,
        max_iterations=r.max_iterations,
        max_reasks=r.max_reasks,
        temperature=r.temperature,
        max_tokens=config.judge.max_tokens,
        concurrency=config.judge.concurrency,
        stream=config.judge.stream,
        low_score=r.low_score,
    )


def build_judge2(config: Config) -> Provider:
    """Judge 2 of feedback mode: the configured judge with ``[review] judge2_model`` and
    ``judge2_base_url`` applied where set; a simulated judge 2 gets the next seed (another
    simulated reviewer, so the two can disagree)."""
    from quiztui.providers.factory import build_provider

    r = config.review
    judge = config.judge.model_copy(
        update={
            "model": r.judge2_model or config.judge.model,
            "base_url": r.judge2_base_url or config.judge.base_url,
        }
    )
    sim = config.simulated.model_copy(update={"seed": config.simulated.seed + 1})
    return build_provider(config.model_copy(update={"judge": judge, "simulated": sim}))


async def review_events(
    config: Config,
    store: Any,
    quiz: Quiz,
    mode: str,
    *,
    questions: Sequence[Question] | None = None,
    humans: Any = None,
    humans_source: str | None = None,
) -> AsyncIterator[Any]:
    """One review run's events; shared by the CLI and the Review screen. The judges are built
    here and always closed."""
    from quiztui.pipeline.review import ReviewRun
    from quiztui.providers.factory import build_provider

    first = build_provider(config)
    second = None
    try:
        if mode == "feedback":
            second = build_judge2(config)
        run = ReviewRun(
            quiz,
            settings(config, mode),
            first,
            provider2=second,
            store=store,
            questions=questions,
            humans=humans,
            humans_source=humans_source,
            prompt_dir=prompt_dir(),
        )
        async for event in run.events():
            yield event
    finally:
        await first.aclose()
        if second is not None:
            await second.aclose()


def review_starter(
    config: Config,
    store: Any,
    *,
    limit: int | None = None,
    humans: Any = None,
    humans_source: str | None = None,
) -> StartReview:
    """``start(quiz, mode)`` → a fresh review run's events (what the Review screen calls on
    ``r``)."""

    def start(quiz: Quiz, mode: str) -> AsyncIterator[Any]:
        questions = quiz.questions[:limit] if limit is not None else None
        return review_events(
            config,
            store,
            quiz,
            mode,
            questions=questions,
            humans=humans,
            humans_source=humans_source,
        )

    return start
