"""Build the configured judge provider."""

from __future__ import annotations

import os
from collections.abc import Mapping

import httpx

from quiztui.config import Config
from quiztui.core.quiz import Quiz
from quiztui.core.simulation import truth_table
from quiztui.errors import ConfigError
from quiztui.providers.base import Provider
from quiztui.providers.openai_compat import OpenAICompatProvider
from quiztui.providers.retry import RetryPolicy
from quiztui.providers.simulated import SimulatedProvider

OLLAMA_URL = "http://localhost:11434/v1"


def probe_ollama(base_url: str = OLLAMA_URL, timeout: float = 0.4) -> str | None:
    """The first model a local Ollama lists, or None when nothing answers."""
    try:
        response = httpx.get(f"{base_url.rstrip('/')}/models", timeout=timeout)
        models = response.json().get("data") or []
        return str(models[0]["id"]) if response.status_code == 200 and models else None
    except (httpx.HTTPError, ValueError, KeyError, IndexError, TypeError, AttributeError):
        return None


def simulated_provider(
    config: Config, quiz: Quiz | None, truth: Mapping[str, bool] | None = None
) -> SimulatedProvider:
    """``truth`` (assertion text → truth) overrides the quiz's truth file/key, e.g. gold labels.

    Without a quiz (grading, document prompts) the judge has no truth table and answers those
    prompts from their own oracles.
    """
    if truth is not None:
        source = "gold labels"
    elif quiz is None:
        source, truth = "its own oracles", {}
    else:
        source, truth = ("truth file" if quiz.truth else "the quiz key"), truth_table(quiz)
    s = config.simulated
    return SimulatedProvider(
        truth,
        tpr=s.tpr,
        tnr=s.tnr,
        latency=s.latency,
        line_delay=s.line_delay,
        seed=s.seed,
        concurrency=config.judge.concurrency,
        truth_source=source,
        disagreement=s.disagreement,
        refusal_rate=s.refusal_rate,
    )


def build_provider(
    config: Config, quiz: Quiz | None = None, truth: Mapping[str, bool] | None = None
) -> Provider:
    judge = config.judge
    provider = judge.provider
    model = judge.model
    base_url = judge.base_url
    if provider == "auto":
        if model:
            provider = "openai-compat"
        else:
            found = probe_ollama(base_url if base_url else OLLAMA_URL)
            if found:
                provider, model = "openai-compat", found
            else:
                provider = "simulated"
    if provider == "simulated":
        return simulated_provider(config, quiz, truth)
    if not model:
        raise ConfigError("judge.model: set a model name for the openai-compat provider")
    needs_key = not base_url.startswith(("http://localhost", "http://127.0.0.1", "http://[::1]"))
    if needs_key and judge.api_key_env and not os.environ.get(judge.api_key_env):
        raise ConfigError(
            f"judge.api_key_env: environment variable {judge.api_key_env} is not set"
            f" (needed for {base_url})"
        )
    return OpenAICompatProvider(
        base_url=base_url,
        model=model,
        api_key_env=judge.api_key_env,
        concurrency=judge.concurrency,
        timeout=judge.timeout,
        retry=RetryPolicy(max_retries=judge.max_retries),
        stream=judge.stream,
        logprobs=judge.logprobs,
    )
