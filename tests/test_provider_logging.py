"""The providers log retries, limiter changes and batch lookups — and never the API key.

Every record of the run is captured (all loggers, DEBUG and up: httpx's and httpcore's too), since
whatever handler ``quiztui.log`` installs writes them all to the log file.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from pipeline_helpers import collect, make_quiz

from quiztui.core.provider_batch import custom_id, request_fingerprint
from quiztui.pipeline.vet import VetSettings
from quiztui.providers.base import ChatRequest, RequestFailed
from quiztui.providers.batch_openai import OpenAIBatchBackend
from quiztui.providers.openai_compat import OpenAICompatProvider
from quiztui.providers.retry import RetryPolicy
from quiztui.testing.fake_openai import FakeOpenAI, truth_from_quiz

SECRET = "sk-SECRET-7f3a-NEVER-LOG-THIS"
KEY_VAR = "QUIZTUI_TEST_JUDGE_KEY"
QUICK = RetryPolicy(max_retries=4, base_delay=0.01, max_delay=0.02)


def provider_records(caplog: pytest.LogCaptureFixture, name: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name.startswith(name)]


async def test_retries_limits_and_lookups_are_logged_and_the_key_never_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv(KEY_VAR, SECRET)
    quiz = make_quiz(5)
    with FakeOpenAI(truth_from_quiz(quiz), require_key="another-key", retry_after=0) as server:
        provider = OpenAICompatProvider(
            base_url=server.base_url,
            model="fake-judge",
            api_key_env=KEY_VAR,
            retry=QUICK,
            concurrency=4,
        )
        try:
            request = ChatRequest(messages=(("user", "Q: 1 + 1? A: 2"),))
            with pytest.raises(RequestFailed, match="401"):  # the key is refused: not retried
                await provider.complete(request, on_text=lambda _: None)
            server.require_key = SECRET
            server.inject("429")
            server.inject("500")
            server.inject("drop")
            _, summary = await collect(
                quiz, provider, tmp_path / "q.db", settings=VetSettings(concurrency=1)
            )
        finally:
            await provider.aclose()
        backend = OpenAIBatchBackend(
            base_url=server.base_url, model="fake-judge", api_key=SECRET, retry=QUICK
        )
        body = {"model": "fake-judge", "messages": [{"role": "user", "content": "Q: x? A: y"}]}
        try:
            server.batches.lose("create", "drop")
            await backend.submit([(custom_id(request_fingerprint("fake-judge", body), 1), body)])
        finally:
            await backend.aclose()
        assert all(r.had_auth for r in server.requests)  # the key was sent every time
    assert summary.judged == 20 and summary.retries == 3

    retries = provider_records(caplog, "quiztui.providers.retry")
    chat = "POST /v1/chat/completions"
    assert f"{chat}: HTTP 401, not retried" in retries
    # One request met all three faults in turn; the 429's Retry-After of 0 was obeyed.
    assert f"{chat}: HTTP 429; retry 1 of 4 in 0.00 s (server's hint)" in retries
    assert any(m.startswith(f"{chat}: HTTP 500; retry 2 of 4 in ") for m in retries)
    assert any(
        m.startswith(f"{chat}: stream cut (RemoteProtocolError); retry 3 of 4") for m in retries
    )
    assert any(m.startswith("POST /v1/batches: RemoteProtocolError; retry 1") for m in retries)
    limits = provider_records(caplog, "quiztui.providers.limiter")
    # The 429 halves the limit; the cut stream after it, another overload signal, again.
    assert limits == [
        "concurrency limit 4 -> 2: the server said too many requests",
        "concurrency limit 2 -> 1: the server is overloaded (stream cut (RemoteProtocolError))",
    ]
    batches = provider_records(caplog, "quiztui.providers.batch")
    assert any("reply to POST /batches was lost; looking for the batch" in m for m in batches)
    assert any("created by the lost request, not again" in m for m in batches)

    assert caplog.records
    for record in caplog.records:
        assert SECRET not in record.getMessage(), record.name
        assert SECRET not in repr(record.args), record.name
        assert SECRET not in repr(vars(record)), record.name
    assert SECRET not in caplog.text
