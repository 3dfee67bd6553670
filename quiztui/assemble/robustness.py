"""Paraphrase-robustness runs (seed 002): settings, the judge, and the rewrite/answer prompts."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from quiztui.assemble.common import prompt_dir
from quiztui.errors import QuiztuiError

if TYPE_CHECKING:
    from quiztui.config import Config
    from quiztui.core.quiz import Quiz
    from quiztui.pipeline.robustness import RobustnessSettings
    from quiztui.store import Store


def settings(
    config: Config,
    *,
    variants: int | None = None,
    answer_format: str | None = None,
    match: str | None = None,
) -> RobustnessSettings:
    """The configured settings, with ``variants``/``answer_format``/``match`` where given."""
    from quiztui.pipeline.robustness import RobustnessSettings

    c = config.robustness
    variants = c.variants if variants is None else variants
    if variants < 1 or variants > 20:
        raise QuiztuiError("robustness: --variants must be from 1 to 20")
    return RobustnessSettings(
        variants=variants,
        format=answer_format or c.format,
        temperature=c.temperature,
        concurrency=config.judge.concurrency,
        max_reasks=c.max_reasks,
        max_tokens=config.judge.max_tokens,
        match=match or c.match,
        similarity=c.similarity,
        fragile_certainty=c.fragile_certainty,
    )


async def robustness_events(
    config: Config, store: Store, quiz: Quiz, run_settings: RobustnessSettings
) -> AsyncIterator[Any]:
    """One robustness run's events; shared by the CLI and the TUI's Robustness screen."""
    from quiztui.pipeline.robustness import RobustnessRun
    from quiztui.providers.factory import build_provider

    provider = build_provider(config, quiz)
    try:
        run = RobustnessRun(quiz, run_settings, provider, store=store, prompt_dir=prompt_dir())
        async for event in run.events():
            yield event
    finally:
        await provider.aclose()
