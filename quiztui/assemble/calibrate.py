"""Calibration runs: a judge on a gold set, one set-up or the five of a modes comparison."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from quiztui.config import Config
    from quiztui.pipeline.calibrate import CalibrationRequest, Price
    from quiztui.store import Store


def _price(config: Config, model: str) -> Price | None:
    """The judge model's [cost] price (its own entry, else the default); None when unknown."""
    from quiztui.pipeline.calibrate import Price

    price = config.cost.price_for(model)
    return None if price is None else Price(price.input_per_mtok, price.output_per_mtok)


async def calibration_events(
    config: Config, store: Store, request: CalibrationRequest
) -> AsyncIterator[Any]:
    """One calibration (or a modes comparison): SetupStarted, the vet events, ProfileMeasured.

    Shared by ``quiztui calibrate`` and the TUI's Calibrate screen. Bad gold files raise
    QuizFormatError before anything is sent.
    """
    from quiztui.assemble.common import probe_judge, prompt_for
    from quiztui.assemble.vet import vet_settings
    from quiztui.pipeline.calibrate import (
        MODE_SETUPS,
        CalibrationRun,
        SetupStarted,
        default_gold_path,
        load_gold,
    )
    from quiztui.pipeline.prompts import prompt_for_mode
    from quiztui.providers.factory import build_provider

    gold = load_gold(request.gold_path or default_gold_path(), request.n, request.sample_seed)
    setups = MODE_SETUPS if request.compare_modes else ((request.mode, request.batch_size),)
    provider = build_provider(config, gold.quiz, truth=gold.truth_by_text())
    try:
        probe_judge(provider)
        for index, (mode, batch_size) in enumerate(setups):
            prompt = prompt_for(prompt_for_mode(mode))
            settings = replace(vet_settings(config), mode=mode, batch_size=batch_size)
            yield SetupStarted(index, len(setups), mode, batch_size, gold.name, provider.label)
            run = CalibrationRun(
                gold,
                provider,
                store,
                prompt,
                settings,
                _price(config, provider.model),
                request.interval_method,
            )
            async for event in run.events():
                yield event
    finally:
        await provider.aclose()


def calibration_starter(
    config: Config, store: Store
) -> Callable[[CalibrationRequest], AsyncIterator[Any]]:
    """For the TUI: ``start(request)`` gives a fresh calibration event stream."""

    def start(request: CalibrationRequest) -> AsyncIterator[Any]:
        return calibration_events(config, store, request)

    return start
