"""Calibration runs: a judge on a gold set, one set-up or the five of a modes comparison."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from quiztui.config import Config
    from quiztui.pipeline.calibrate import CalibrationRequest, GoldSet, Price
    from quiztui.store import Store


def _price(config: Config, model: str) -> Price | None:
    """The judge model's [cost] price (its own entry, else the default); None when unknown."""
    from quiztui.pipeline.calibrate import Price

    price = config.cost.price_for(model)
    return None if price is None else Price(price.input_per_mtok, price.output_per_mtok)


async def calibration_events(
    config: Config, store: Store, request: CalibrationRequest, gold: GoldSet | None = None
) -> AsyncIterator[Any]:
    """One calibration (or a modes comparison): SetupStarted, the vet events, ProfileMeasured.

    Shared by ``quiztui calibrate`` and the TUI's Calibrate screen. Bad gold files raise
    QuizFormatError before anything is sent. ``gold`` given (a review's decided questions,
    ``review_gold``) is used instead of the request's gold file.
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

    if gold is None:
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


def review_calibration(config: Config, store: Store, run_id: int) -> tuple[Config, GoldSet]:
    """``calibrate --gold-from-review RUN``: the config with the judge that made run ``run_id``
    (provider, model, base URL) and the run's decided questions as the gold set."""
    from quiztui.assemble.review_desk import review_gold

    record = store.get_run(run_id)
    gold = review_gold(store, run_id)
    judge = config.judge.model_copy(
        update={"provider": record.provider, "model": record.model, "base_url": record.base_url}
    )
    return config.model_copy(update={"judge": judge}), gold


def run_setup(store: Store, run_id: int) -> tuple[str, int]:
    """(mode, batch size) of a stored vet run: the set-up its judge profile must match."""
    record = store.get_run(run_id)
    mode = (record.summary or {}).get("mode") or "assertion"
    return str(mode), record.batch_size


def prompt_changed(store: Store, run_id: int, mode: str) -> bool:
    """The judge prompt is not the one run ``run_id`` was made with (an override was edited):
    the profile measured now will not be the one a vet run like it looks up."""
    from quiztui.assemble.common import prompt_for
    from quiztui.pipeline.prompts import prompt_for_mode

    return prompt_for(prompt_for_mode(mode)).hash != store.get_run(run_id).prompt_hash


def calibration_starter(
    config: Config, store: Store
) -> Callable[[CalibrationRequest], AsyncIterator[Any]]:
    """For the TUI: ``start(request)`` gives a fresh calibration event stream."""

    def start(request: CalibrationRequest) -> AsyncIterator[Any]:
        return calibration_events(config, store, request)

    return start
