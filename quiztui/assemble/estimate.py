"""Cost for a vet run: the price, the judge profile's measured figures and the budget."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from quiztui.errors import ConfigError

if TYPE_CHECKING:
    from quiztui.config import Config
    from quiztui.core.calibration import JudgeProfile
    from quiztui.core.estimate import Estimate
    from quiztui.core.quiz import Quiz
    from quiztui.pipeline.prompts import PromptTemplate
    from quiztui.pipeline.vet import VetSettings
    from quiztui.providers.base import Provider
    from quiztui.store import Store


def judge_profile(
    store: Store, provider: Provider, prompt: PromptTemplate, settings: VetSettings
) -> JudgeProfile | None:
    """The newest profile measured for exactly this judge set-up, or None."""
    return store.profiles.match(
        provider=provider.name,
        model=provider.model,
        prompt_hash=prompt.hash,
        batch_size=settings.profile_batch_size,
        mode=settings.mode,
    )


def run_options(
    config: Config, store: Store, provider: Provider, prompt: PromptTemplate, settings: VetSettings
) -> dict[str, Any]:
    """The price, the judge profile's figures and the budget for a ``VetRun``.

    A budget without a price for the judge model is a config error (nothing to count against).
    """
    from quiztui.pipeline.estimate import measured_from_profile

    price = config.cost.price_for(provider.model)
    budget = config.vet.budget
    if budget is not None and price is None:
        raise ConfigError(
            f"a budget (${budget:g}) needs a price for model {provider.model!r}: set"
            f' [cost.models."{provider.model}"] input_per_mtok and output_per_mtok'
            " (or the [cost] defaults) in the config"
        )
    profile = judge_profile(store, provider, prompt, settings)
    measured = measured_from_profile(profile) if profile is not None else None
    return {"price": price, "measured": measured, "budget": budget}


def estimate_vet(
    config: Config, store: Store, quiz: Quiz, resume: int | None, batch_api: bool
) -> tuple[str, Estimate]:
    """The judge's label and the estimate of ``quiztui vet`` with these options; creates no run
    and sends nothing."""
    from quiztui.assemble.common import prompt_for
    from quiztui.assemble.vet import vet_settings
    from quiztui.pipeline.estimate import estimate_run
    from quiztui.pipeline.prompts import prompt_for_mode
    from quiztui.pipeline.vet import VetRun
    from quiztui.providers.factory import build_provider

    provider = build_provider(config, quiz)
    try:
        settings = vet_settings(config)
        prompt = prompt_for(prompt_for_mode(settings.mode))
        options = run_options(config, store, provider, prompt, settings)
        run = VetRun(quiz, provider, store, prompt, settings, resume_run_id=resume, **options)
        return provider.label, estimate_run(run, batch_api=batch_api)
    finally:
        aclose = getattr(provider, "aclose", None)
        if aclose is not None:
            asyncio.run(aclose())
