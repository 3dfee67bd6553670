"""Provider edge cases (httpx.MockTransport where a socket adds nothing), retry policy, config."""

from __future__ import annotations

import random
from pathlib import Path

import httpx
import pytest
from pipeline_helpers import collect, make_quiz

from quiztui.config import Config, load_config
from quiztui.errors import ConfigError, StoreError
from quiztui.pipeline.vet import VetSettings
from quiztui.providers.base import ChatRequest, RequestFailed
from quiztui.providers.factory import build_provider
from quiztui.providers.openai_compat import OpenAICompatProvider
from quiztui.providers.retry import RetryPolicy, parse_retry_after
from quiztui.providers.simulated import SimulatedProvider
from quiztui.simulate.vet import truth_table


def test_backoff_grows_exponentially_with_bounded_jitter() -> None:
    policy = RetryPolicy(base_delay=1.0, max_delay=8.0, jitter=0.5)
    rng = random.Random(1)
    for attempt, raw in [(1, 1.0), (2, 2.0), (3, 4.0), (4, 8.0), (6, 8.0)]:
        d = policy.delay(attempt, rng=rng)
        assert raw * 0.5 <= d <= raw
    assert policy.delay(1, retry_after=3.0) == 3.0
    assert policy.delay(1, retry_after=10_000) == policy.max_retry_after


def test_retry_after_header_forms() -> None:
    assert parse_retry_after("2") == 2.0
    assert parse_retry_after("0.5") == 0.5
    assert parse_retry_after(None) is None
    assert parse_retry_after("soon") is None
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # a past date: no wait


async def test_client_errors_are_not_retried() -> None:
    calls = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return httpx.Response(400, json={"error": {"message": "context too long"}})

    provider = OpenAICompatProvider(
        base_url="http://judge.test/v1", model="m", transport=httpx.MockTransport(handler)
    )
    with pytest.raises(RequestFailed) as err:
        await provider.complete(ChatRequest((("user", "A1: Q: x A: y"),)))
    assert len(calls) == 1 and err.value.status == 400 and "context too long" in str(err.value)


async def test_retries_give_up_after_the_limit() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(503, json={"error": {"message": "overloaded"}})

    provider = OpenAICompatProvider(
        base_url="http://judge.test/v1",
        model="m",
        retry=RetryPolicy(max_retries=2, base_delay=0.001),
        transport=httpx.MockTransport(handler),
    )
    with pytest.raises(RequestFailed, match="gave up after 3 attempts"):
        await provider.complete(ChatRequest((("user", "hi"),)))
    assert provider.usage.retries == 2 and provider.usage.requests == 3


async def test_resume_refuses_a_different_judge(tmp_path: Path) -> None:
    quiz = make_quiz(3)
    _, first = await collect(quiz, SimulatedProvider(truth_table(quiz)), tmp_path / "q.db")
    other = SimulatedProvider(truth_table(quiz), tpr=0.7)
    with pytest.raises(StoreError, match="configure the same judge"):
        await collect(quiz, other, tmp_path / "q.db", resume=first.run_id)
    changed = make_quiz(4)
    with pytest.raises(StoreError, match="different version of this quiz"):
        await collect(
            changed, SimulatedProvider(truth_table(changed)), tmp_path / "q.db", resume=first.run_id
        )


def test_config_file_env_and_validation(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text('[judge]\nmodel = "llama3"\n[vet]\nbatch_size = 10\n')
    config = load_config(path, environ={"QUIZTUI_VET_BATCH_SIZE": "5"})
    assert config.judge.model == "llama3" and config.vet.batch_size == 5  # env beats the file
    path.write_text("[vet]\nprior = 1.5\n")
    with pytest.raises(ConfigError, match=r"c.toml: vet.prior:"):
        load_config(path, environ={})
    path.write_text("[judge\n")
    with pytest.raises(ConfigError, match="invalid TOML"):
        load_config(path, environ={})
    with pytest.raises(ConfigError, match="not found"):
        load_config(tmp_path / "missing.toml", environ={})


def test_remote_endpoint_without_its_key_variable_is_a_config_error() -> None:
    config = Config.model_validate(
        {
            "judge": {
                "provider": "openai-compat",
                "base_url": "https://api.example.test/v1",
                "model": "m",
                "api_key_env": "QUIZTUI_TEST_KEY_UNSET",
            }
        }
    )
    with pytest.raises(ConfigError, match="QUIZTUI_TEST_KEY_UNSET is not set"):
        build_provider(config, make_quiz(1))


def test_auto_provider_falls_back_to_simulated_when_nothing_answers() -> None:
    config = Config.model_validate(
        {"judge": {"provider": "auto", "base_url": "http://127.0.0.1:9/v1"}}
    )
    provider = build_provider(config, make_quiz(1))
    assert provider.simulated and "SIMULATED" in provider.label


async def test_settings_seed_is_recorded_and_reproducible(tmp_path: Path) -> None:
    quiz = make_quiz(6)
    _, a = await collect(
        quiz,
        SimulatedProvider(truth_table(quiz), tpr=0.8, tnr=0.8),
        tmp_path / "a.db",
        settings=VetSettings(seed=42),
    )
    _, b = await collect(
        quiz,
        SimulatedProvider(truth_table(quiz), tpr=0.8, tnr=0.8),
        tmp_path / "b.db",
        settings=VetSettings(seed=42),
    )
    assert a.seed == b.seed == 42
    assert [q.verdicts for q in a.questions] == [q.verdicts for q in b.questions]
