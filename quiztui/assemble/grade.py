"""Grade and benchmark runs: the grader's settings, its provider (LLM graders only) and prompts."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from quiztui.assemble.common import prompt_dir

if TYPE_CHECKING:
    from quiztui.config import Config
    from quiztui.core.grading import GradeItem
    from quiztui.pipeline.grade import GradeSettings
    from quiztui.providers.base import Provider
    from quiztui.store import Store


def settings(config: Config, grader: str | None = None) -> GradeSettings:
    from quiztui.pipeline.grade import GradeSettings

    return GradeSettings(
        grader=grader or config.grade.grader,
        concurrency=config.judge.concurrency,
        max_reasks=config.grade.max_reasks,
        temperature=config.judge.temperature,
        max_tokens=config.judge.max_tokens,
        logprobs=config.judge.logprobs != "off",
        stream=config.judge.stream,
    )


def provider_for(config: Config, grader: str) -> Provider | None:
    """The judge for an LLM grader; None for the offline graders, which need no model."""
    from quiztui.core.grading import LLM_GRADERS

    if grader not in LLM_GRADERS:
        return None
    from quiztui.assemble.common import probe_judge
    from quiztui.providers.factory import build_provider

    provider = build_provider(config)
    probe_judge(provider)
    return provider


async def grade_events(
    config: Config, store: Store, items: list[GradeItem], source: str | None, grader: str
) -> AsyncIterator[Any]:
    """One grade run's events; shared by the CLI and the TUI's Grade screen."""
    from quiztui.pipeline.grade import GradeRun

    def run(provider: Provider | None) -> Any:
        return GradeRun(
            items,
            settings(config, grader),
            provider=provider,
            store=store,
            source=source,
            prompt_dir=prompt_dir(),
        )

    async for event in _run_events(config, grader, run):
        yield event


async def benchmark_events(
    config: Config, store: Store, bench: Any, grader: str, calibration: str
) -> AsyncIterator[Any]:
    """A benchmark's events; shared by the CLI and the TUI's Benchmark screen."""
    from quiztui.pipeline.grade import BenchmarkRun

    def run(provider: Provider | None) -> Any:
        return BenchmarkRun(
            bench,
            settings(config, grader),
            calibration=calibration,
            provider=provider,
            store=store,
            prompt_dir=prompt_dir(),
        )

    async for event in _run_events(config, grader, run):
        yield event


async def _run_events(
    config: Config, grader: str, make: Callable[[Provider | None], Any]
) -> AsyncIterator[Any]:
    """Build the grader's provider (if it needs one), run, and always close the provider."""
    provider = provider_for(config, grader)
    try:
        async for event in make(provider).events():
            yield event
    finally:
        if provider is not None:
            await provider.aclose()


def calibrations_dir() -> Path:
    """Where ``--fit kfold`` saves calibrations and ``--calibration NAME`` finds them."""
    from quiztui.locations import data_dir

    return data_dir() / "calibrations"


async def kfold_events(
    config: Config,
    store: Store,
    marked: Any,
    graders: list[str],
    *,
    folds: int,
    seed: int,
    save_name: str | None = None,
) -> AsyncIterator[Any]:
    """``--benchmark FILE --fit kfold``: the graders fitted on the user's marks, judged on held-out
    folds; the calibration is saved under the data dir's ``calibrations/`` as ``save_name``
    (default: the marked file's stem)."""
    from quiztui.core.grading import LLM_GRADERS
    from quiztui.pipeline.grade_fit import KFoldRun

    llm = next((g for g in graders if g in LLM_GRADERS), None)
    provider = provider_for(config, llm) if llm is not None else None
    try:
        run = KFoldRun(
            marked,
            graders,
            settings(config, graders[0]),
            provider=provider,
            store=store,
            prompt_dir=prompt_dir(),
            folds=folds,
            seed=seed,
            save_dir=calibrations_dir(),
            save_name=save_name,
        )
        async for event in run.events():
            yield event
    finally:
        if provider is not None:
            await provider.aclose()
