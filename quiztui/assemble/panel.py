"""Panel runs: several judges over one quiz (different models, or repeated samples of one)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from quiztui.config import Config
    from quiztui.core.quiz import Quiz
    from quiztui.pipeline.panel import PanelRun
    from quiztui.store import Store


def split_member(spec: str) -> tuple[str, str]:
    """``MODEL@BASE_URL`` -> (model, base URL): split at the last ``@`` that a URL scheme
    follows, so a model id holding ``@`` (``google_text-unicorn@001``) stays whole."""
    at = max(spec.rfind("@http://"), spec.rfind("@https://"))
    if at < 0:
        return spec.strip(), ""
    return spec[:at].strip(), spec[at + 1 :].strip()


def member_config(config: Config, spec: str) -> Config:
    """A copy of ``config`` whose judge is the one ``spec`` names."""
    from quiztui.errors import ConfigError
    from quiztui.schema import ValidationError

    judge = config.judge.model_copy()
    sim = config.simulated.model_copy()
    if spec.startswith("simulated"):
        judge.provider = "simulated"
        _, _, params = spec.partition(":")
        for item in filter(None, params.split(",")):
            key, _, value = item.partition("=")
            if key.strip() not in ("tpr", "tnr", "seed"):
                raise ConfigError(f"--member {spec}: unknown simulated parameter '{key}'")
            try:
                setattr(sim, key.strip(), int(value) if key.strip() == "seed" else float(value))
            except ValidationError as exc:  # out of the section's bounds: its words, one line
                message = exc.errors()[0]["msg"]
                raise ConfigError(
                    f"--member {spec}: {key}: {message[:1].lower()}{message[1:]}"
                ) from None
            except ValueError as exc:
                raise ConfigError(f"--member {spec}: {key}: {exc}") from None
    else:
        model, base_url = split_member(spec)
        if not model:
            raise ConfigError(f"--member {spec}: no model name")
        judge.provider = "openai-compat"
        judge.model = model
        if base_url:
            judge.base_url = base_url
    return config.model_copy(update={"judge": judge, "simulated": sim})


@asynccontextmanager
async def panel_run(
    configs: list[Config],
    quiz: Quiz,
    store: Store,
    model: str = "difficulty",
    *,
    save_profiles: bool = False,
) -> AsyncIterator[PanelRun]:
    """A panel over ``quiz``, one member per config (the first config's prompt and settings);
    the members' providers are closed when the block ends. ``model``: the panel fit,
    "difficulty", "structured" or "dawid-skene"; ``save_profiles``: keep a usable fit's rates as judge
    profiles."""
    from quiztui.assemble.common import probe_judge, prompt_for
    from quiztui.assemble.vet import vet_settings
    from quiztui.errors import ConfigError
    from quiztui.pipeline.panel import PanelRun
    from quiztui.pipeline.prompts import prompt_for_mode
    from quiztui.providers.factory import build_provider

    providers = [build_provider(c, quiz) for c in configs]
    try:
        for i, provider in enumerate(providers):
            try:  # a dead server or a model it does not serve: one line, before any request
                probe_judge(provider)
            except ConfigError as exc:
                raise ConfigError(
                    f"panel judge {i + 1} ({configs[i].judge.model}): {exc}"
                ) from None
        settings = replace(vet_settings(configs[0]), use_cache=False)
        prompt = prompt_for(prompt_for_mode(settings.mode))
        yield PanelRun(
            quiz,
            providers,
            store,
            prompt,
            settings,
            prior=settings.prior,
            model=model,
            prior_auto=settings.prior_auto,
            save_profiles=save_profiles,
        )
    finally:
        for p in providers:
            await p.aclose()
