"""Build the configured judge provider."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

from quiztui.config import Config, JudgeConfig
from quiztui.core.figures import QUIZ_KEY, TRUTH_FILE
from quiztui.core.quiz import Quiz
from quiztui.errors import ConfigError
from quiztui.providers import anthropic, gemini
from quiztui.providers.anthropic import AnthropicProvider
from quiztui.providers.base import Provider
from quiztui.providers.gemini import GeminiProvider
from quiztui.providers.openai_compat import OpenAICompatProvider
from quiztui.providers.retry import RetryPolicy

if TYPE_CHECKING:  # the simulated judge (numpy, its oracles) is imported only when it is chosen
    from quiztui.providers.simulated import SimulatedProvider

OLLAMA_URL = "http://localhost:11434/v1"
DEFAULT_BASE_URL = str(JudgeConfig.model_fields["base_url"].default)
# Where the native providers go when judge.base_url is left at its (OpenAI-compatible) default.
NATIVE_URLS = {"anthropic": anthropic.DEFAULT_BASE_URL, "gemini": gemini.DEFAULT_BASE_URL}


def probe_ollama(base_url: str = OLLAMA_URL, timeout: float = 0.4) -> str | None:
    """The first model a local Ollama lists, or None when nothing answers."""
    import httpx

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
    from quiztui.providers.simulated import SimulatedProvider
    from quiztui.simulate.vet import truth_table

    if truth is not None:
        source = "gold labels"
    elif quiz is None:
        source, truth = "its own oracles", {}
    else:
        source = TRUTH_FILE if quiz.truth else QUIZ_KEY
        truth = truth_table(quiz)
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
        raise ConfigError(f"judge.model: set a model name for the {provider} provider")
    key_field = {"anthropic": "anthropic_key_env", "gemini": "gemini_key_env"}.get(
        provider, "api_key_env"
    )
    key_env = str(getattr(judge, key_field))
    if provider in NATIVE_URLS and base_url in ("", DEFAULT_BASE_URL):
        base_url = NATIVE_URLS[provider]  # the OpenAI-compatible default means "not set"
    if provider == "openai-compat" and base_url == DEFAULT_BASE_URL:
        # The default base URL is the local server quiztui finds by itself (Ollama), over plain
        # HTTP: it gets no key. A key goes only to a base URL the user set, or to the provider's
        # own API (the native providers' defaults above).
        key_env = ""
    needs_key = not base_url.startswith(("http://localhost", "http://127.0.0.1", "http://[::1]"))
    if needs_key and key_env and not os.environ.get(key_env):
        raise ConfigError(
            f"judge.{key_field}: environment variable {key_env} is not set (needed for {base_url})"
        )
    common = {
        "base_url": base_url,
        "model": model,
        "api_key_env": key_env,
        "concurrency": judge.concurrency,
        "timeout": judge.timeout,
        "retry": RetryPolicy(max_retries=judge.max_retries),
        "stream": judge.stream,
        "adaptive": judge.adaptive,
        "quiet_seconds": judge.quiet_seconds,
    }
    if provider == "openai-compat":
        return OpenAICompatProvider(
            **common,  # type: ignore[arg-type]
            logprobs=judge.logprobs,
            system_role=judge.system_role,
            structured=judge.structured,
        )
    if judge.logprobs == "on":
        raise ConfigError(
            f'judge.logprobs: "on" needs the openai-compat provider; {provider} sends no token'
            ' logprobs (use "auto" or "off")'
        )
    native = AnthropicProvider if provider == "anthropic" else GeminiProvider
    return native(**common)  # type: ignore[arg-type]
