"""Grade and benchmark runs: the grader's settings, its provider (LLM graders only) and prompts."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from quiztui.assemble.common import prompt_dir
from quiztui.errors import QuiztuiError

if TYPE_CHECKING:
    from quiztui.config import Config
    from quiztui.core.grading import GradeItem
    from quiztui.pipeline.grade import GradeSettings
    from quiztui.pipeline.grade_fit import Calibration
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


def answers_calibration(config: Config, value: str | None) -> Calibration | None:
    """The calibration grading answers applies: ``--calibration`` (a file or a saved name),
    else ``[grade] answers_calibration``; ``none`` (or an empty setting) applies none."""
    from quiztui.pipeline.grade_fit import NO_CALIBRATION, find_calibration

    what = "--calibration"
    if value is None:
        value, what = config.grade.answers_calibration, "[grade] answers_calibration"
    if not value or value.lower() == NO_CALIBRATION:
        return None
    return find_calibration(value, calibrations_dir(), what)


def calibration_embedder(calibration: Calibration | None) -> Any:
    """The embedder a calibration's neighbours model compares answers with (None: lexical)."""
    if calibration is None or calibration.similarity != "embedding":
        return None
    from quiztui.embed import load_embedder

    return load_embedder()


@dataclass(frozen=True)
class GradeCalibrations:
    """What the Grade screen needs for calibrated scores: the calibration applied when it opens
    (with its neighbours' embedder), the names its picker offers and how to load one; ``problem``
    says why the configured one is not applied. Both faces build it here (``grade --tui`` and the
    vet app's ``a``), so the screen maps scores the same way whichever opened it."""

    calibration: Calibration | None
    embedder: Any
    names: list[str]
    load: Callable[[str], tuple[Calibration, Any]]
    problem: str | None = None

    def grader(self, default: str) -> str:
        """The grader the screen starts with: the calibration's, since its scores are mapped."""
        return self.calibration.grader if self.calibration is not None else default


def grade_calibrations(calibration: Calibration | None) -> GradeCalibrations:
    """``calibration`` applied, and the picker over the saved calibrations (and this one, when it
    was given by a path outside the calibrations folder)."""
    from quiztui.pipeline.grade_fit import load_calibration, saved_calibrations

    saved = {c.name: c.path for c in saved_calibrations(calibrations_dir())}
    if calibration is not None:
        saved[calibration.name] = Path(calibration.path)

    def load(name: str) -> tuple[Calibration, Any]:
        """A calibration picked on the Grade screen, and its neighbours' embedder."""
        picked = load_calibration(saved[name])
        return picked, calibration_embedder(picked)

    return GradeCalibrations(calibration, calibration_embedder(calibration), list(saved), load)


def configured_calibrations(config: Config) -> GradeCalibrations:
    """The vet app's Grade screen: ``[grade] answers_calibration`` applied when set; one that
    cannot be found, read or embedded is not applied and ``problem`` says why, in one line (the
    picker still offers the saved ones)."""
    try:
        calibration = answers_calibration(config, None)
        return grade_calibrations(calibration)
    except QuiztuiError as exc:
        return replace(grade_calibrations(None), problem=str(exc))


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
