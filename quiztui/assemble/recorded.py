"""Runs from recorded answers (``vet --answers``, ``panel --answers``): the file read and joined
to the quiz, one :class:`~quiztui.providers.recorded.RecordedProvider` per model, the
per-question prompt and the configured prior; no model is asked."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from quiztui.errors import QuiztuiError

if TYPE_CHECKING:
    from quiztui.assemble.vet import VetRuns
    from quiztui.config import Config
    from quiztui.core.prior import PriorEstimate
    from quiztui.core.quiz import Quiz
    from quiztui.core.recorded import RecordedAnswers
    from quiztui.pipeline.events import VetEvent
    from quiztui.pipeline.recorded import RecordedPanelRun
    from quiztui.pipeline.vet import VetSettings
    from quiztui.store import Store


def read_answers(paths: Sequence[Path], quiz: Quiz, models: Sequence[str] = ()) -> RecordedAnswers:
    """The recorded answers of ``paths`` (files or folders) joined to ``quiz``."""
    from quiztui.formats.recorded import load_answers

    return load_answers(paths, quiz, models=models)


def recorded_settings(config: Config) -> VetSettings:
    """The configured vet settings, per question (a recorded answer is one per question)."""
    from quiztui.assemble.vet import vet_settings

    return replace(vet_settings(config), mode="question", use_cache=False, max_reasks=0)


def recorded_vet_runs(
    config: Config, quiz: Quiz, store: Store, answers: RecordedAnswers, model: str | None
) -> VetRuns:
    """``vet --answers FILE [--answers-model NAME]``: one model's answers as the judge."""
    from quiztui.assemble.common import prompt_for
    from quiztui.assemble.vet import VetRuns, judge_accuracy
    from quiztui.pipeline.prompts import prompt_for_mode
    from quiztui.pipeline.recorded import RecordedVetRun
    from quiztui.providers.recorded import RecordedProvider

    provider = RecordedProvider(answers.judge(model), quiz)
    settings = recorded_settings(config)
    prompt = prompt_for(prompt_for_mode(settings.mode))
    accuracy = judge_accuracy(store, provider, prompt, settings)
    made: list[RecordedVetRun] = []

    def start_run(only: Quiz | None = None) -> AsyncIterator[VetEvent]:
        current = judge_accuracy(store, provider, prompt, settings)
        if only is not None:  # an edited question: its recorded answer no longer applies
            one = settings
            estimate = made[-1].prior_estimate if made else None
            if estimate is not None:
                one = replace(settings, prior=estimate.value, prior_auto=False, fit_rates=False)
            return RecordedVetRun(only, provider, store, prompt, one, current).events()
        run = RecordedVetRun(quiz, provider, store, prompt, settings, current)
        made[-1:] = [run]
        return run.events()

    def prior_estimate() -> PriorEstimate | None:
        return made[-1].prior_estimate if made else None

    return VetRuns(provider, prompt, settings, accuracy, start_run, prior_estimate)


@asynccontextmanager
async def recorded_panel_run(
    config: Config,
    quiz: Quiz,
    store: Store,
    answers: RecordedAnswers,
    model: str = "structured",
    *,
    save_profiles: bool = False,
) -> AsyncIterator[RecordedPanelRun]:
    """``panel --answers FILE``: every recorded model of ``answers`` a member."""
    from quiztui.assemble.common import prompt_for
    from quiztui.pipeline.prompts import prompt_for_mode
    from quiztui.pipeline.recorded import RecordedPanelRun
    from quiztui.providers.recorded import RecordedProvider

    if len(answers.judges) < 2:
        names = ", ".join(j.model for j in answers.judges)
        raise QuiztuiError(f"a panel needs at least two models; the answers hold {names}")
    settings = recorded_settings(config)
    providers = [RecordedProvider(j, quiz) for j in answers.judges]
    yield RecordedPanelRun(
        quiz,
        providers,
        store,
        prompt_for(prompt_for_mode(settings.mode)),
        settings,
        prior=settings.prior,
        model=model,
        prior_auto=settings.prior_auto,
        save_profiles=save_profiles,
    )


__all__ = ["read_answers", "recorded_panel_run", "recorded_settings", "recorded_vet_runs"]
