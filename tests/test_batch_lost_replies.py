"""A batch-creating request whose reply is lost is looked up, never sent again blindly.

Against the loopback fakes: the server creates the batch (or stores the upload) and then its reply
goes missing — the client's read timeout fires, or the connection drops. Exactly one batch may
exist afterwards, and the run must still complete with every verdict.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import openai
import pytest
from pipeline_helpers import collect, make_quiz

from quiztui.core.provider_batch import custom_id, request_fingerprint
from quiztui.core.quiz import Quiz
from quiztui.pipeline.batch import BatchProvider, BatchSettings
from quiztui.pipeline.events import ProviderBatchStatus, RunSummary
from quiztui.pipeline.vet import VetSettings
from quiztui.providers.base import RequestFailed
from quiztui.providers.batch import submission_marker
from quiztui.providers.batch_anthropic import AnthropicBatchBackend
from quiztui.providers.batch_openai import METADATA_KEY, OpenAIBatchBackend
from quiztui.providers.retry import Retryable, RetryPolicy
from quiztui.store import Store
from quiztui.testing.fake_anthropic import FakeAnthropic
from quiztui.testing.fake_openai import FakeOpenAI, truth_from_quiz

APIS = ("openai", "anthropic")
QUICK = RetryPolicy(max_retries=3, base_delay=0.01, max_delay=0.02)
FAST = BatchSettings(poll_seconds=0.02, max_wait=60.0, gather_seconds=0.2)
READ_TIMEOUT = 0.5  # the client's timeout: a held reply is given up on after this long


@contextmanager
def fake_server(api: str, quiz: Quiz) -> Iterator[FakeOpenAI]:
    server_type = FakeAnthropic if api == "anthropic" else FakeOpenAI
    with server_type(truth_from_quiz(quiz)) as server:
        server.batches.hold_seconds = 30 * READ_TIMEOUT  # far past the client's patience
        yield server


def backend(
    api: str, server: FakeOpenAI, retry: RetryPolicy = QUICK
) -> OpenAIBatchBackend | AnthropicBatchBackend:
    backend_type: type[OpenAIBatchBackend | AnthropicBatchBackend]
    backend_type = AnthropicBatchBackend if api == "anthropic" else OpenAIBatchBackend
    return backend_type(
        base_url=server.base_url,
        model="fake-judge",
        api_key=None,
        timeout=READ_TIMEOUT,
        retry=retry,
    )


async def batch_run(api: str, server: FakeOpenAI, quiz: Quiz, db: Path) -> RunSummary:
    name = "anthropic" if api == "anthropic" else "openai-compat"
    provider = BatchProvider(backend(api, server), name=name, settings=FAST)
    try:
        events, summary = await collect(quiz, provider, db, settings=VetSettings(concurrency=1000))
    finally:
        await provider.aclose()
    assert [e.status for e in events if isinstance(e, ProviderBatchStatus)][-1] == "collected"
    return summary


def create_posts(server: FakeOpenAI, api: str) -> int:
    path = "/v1/messages/batches" if api == "anthropic" else "/v1/batches"
    return sum(r.method == "POST" and r.path == path for r in server.requests)


def list_gets(server: FakeOpenAI, path: str) -> int:
    return sum(r.method == "GET" and r.path == path for r in server.requests)


def stored_batch_ids(db: Path, run_id: int = 1) -> list[str]:
    with Store(db) as store:
        return [row.batch_id for row in store.provider_batches.for_run(run_id)]


@pytest.mark.parametrize("how", ["timeout", "drop"])
@pytest.mark.parametrize("api", APIS)
async def test_a_create_whose_reply_is_lost_is_found_and_not_sent_again(
    tmp_path: Path, api: str, how: str
) -> None:
    quiz = make_quiz(8, wrong_every=3)
    with fake_server(api, quiz) as server:
        server.batches.lose("create", how)
        summary = await batch_run(api, server, quiz, tmp_path / "b.db")
        made = server.batches.batches(api)
        lost = [r for r in server.requests if r.fault and r.fault.startswith("lost reply")]
        assert create_posts(server, api) == 1  # sent once: the retry was a lookup
        list_path = "/v1/messages/batches" if api == "anthropic" else "/v1/batches"
        assert list_gets(server, list_path) >= 1
    assert len(lost) == 1 and lost[0].fault == f"lost reply ({how})"
    assert server.batches.creates == {api: 1} and len(made) == 1
    assert stored_batch_ids(tmp_path / "b.db") == made  # the run collected that very batch
    assert summary.status == "finished" and summary.unjudged == 0 and summary.judged == 32


@pytest.mark.parametrize("api", APIS)
async def test_a_create_that_made_nothing_is_sent_again_after_the_lookup(
    tmp_path: Path, api: str
) -> None:
    """A 500 to the create: the client cannot know nothing was made, looks, finds none, creates."""
    quiz = make_quiz(4)
    with fake_server(api, quiz) as server:
        server.batches.lose("create", "500")
        summary = await batch_run(api, server, quiz, tmp_path / "b.db")
        posts = create_posts(server, api)
    assert posts == 2 and server.batches.creates == {api: 1}
    assert summary.status == "finished" and summary.judged == 16


@pytest.mark.parametrize("how", ["timeout", "drop"])
async def test_an_upload_whose_reply_is_lost_is_found_and_not_uploaded_again(
    tmp_path: Path, how: str
) -> None:
    quiz = make_quiz(4)
    with fake_server("openai", quiz) as server:
        server.batches.lose("upload", how)
        summary = await batch_run("openai", server, quiz, tmp_path / "b.db")
        uploads = sum(r.method == "POST" and r.path == "/v1/files" for r in server.requests)
        lookups = list_gets(server, "/v1/files")
    assert uploads == 1 and server.batches.uploads == 1 and lookups >= 1
    assert server.batches.creates == {"openai": 1}
    assert summary.status == "finished" and summary.judged == 16


def items(n: int, tag: str) -> list[tuple[str, dict[str, object]]]:
    out = []
    for i in range(n):
        body = {
            "model": "fake-judge",
            "max_tokens": 64,
            "messages": [{"role": "user", "content": f"Q: {tag} {i}? A: yes"}],
        }
        out.append((custom_id(request_fingerprint("fake-judge", body), 1), body))
    return out


@pytest.mark.parametrize("how", ["500", "drop"])
@pytest.mark.parametrize("api", APIS)
async def test_the_lookup_never_takes_a_batch_this_client_already_has(api: str, how: str) -> None:
    """Two submissions of the same size; the second one's reply is lost. The lookup must not hand
    back the first batch (Anthropic can match on size and time only): after a 500 it finds
    nothing and creates, after a drop it finds the second."""
    quiz = make_quiz(1)
    with fake_server(api, quiz) as server:
        client = backend(api, server)
        try:
            first = await client.submit(items(3, "first"))
            server.batches.lose("create", how)
            second = await client.submit(items(3, "second"))
        finally:
            await client.aclose()
        made = server.batches.batches(api)
    assert server.batches.creates == {api: 2}
    assert [first.batch_id, second.batch_id] == made


async def test_openai_batches_carry_the_submission_marker_in_their_metadata() -> None:
    """What the lookup relies on, read back with the official client: the marker in the batch's
    metadata and the uploaded file's name, both listed newest first."""
    quiz = make_quiz(1)
    submitted = items(2, "marker")
    marker = submission_marker([cid for cid, _ in submitted])
    with fake_server("openai", quiz) as server:
        client = backend("openai", server)
        try:
            poll = await client.submit(submitted)
            await client.submit(items(2, "later"))
        finally:
            await client.aclose()
        with openai.OpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0) as sdk:
            batches = list(sdk.batches.list(limit=1))  # pages through both, one per page
            files = list(sdk.files.list(purpose="batch", order="desc"))
    assert [b.id for b in batches][1] == poll.batch_id
    assert batches[1].metadata == {METADATA_KEY: marker}
    assert files[1].filename == f"{marker}.jsonl" and files[1].purpose == "batch"
    assert marker != submission_marker([cid for cid, _ in items(2, "later")])


def test_only_failures_after_sending_ask_for_a_lookup() -> None:
    """A refused create (429, 503, 529) or one that never connected is sent again as it is."""
    import httpx

    for status in (429, 503, 529, 408):
        assert not Retryable.from_status(status, "x", None, rate_limited=False).sent
    for status in (500, 502, 504):
        assert Retryable.from_status(status, "x", None, rate_limited=False).sent
    request = httpx.Request("POST", "http://127.0.0.1/v1/batches")
    assert not Retryable.from_transport(httpx.ConnectError("refused", request=request)).sent
    assert Retryable.from_transport(httpx.ReadTimeout("slow", request=request)).sent
    assert Retryable.from_transport(httpx.RemoteProtocolError("gone", request=request)).sent


@pytest.mark.parametrize("api", APIS)
async def test_when_the_lookup_fails_too_the_create_is_not_sent_again(api: str) -> None:
    """The create's reply is lost and listing batches keeps failing: the submission fails with
    a reason that says so, and the batch that may exist is not doubled."""
    quiz = make_quiz(1)
    with fake_server(api, quiz) as server:
        client = backend(api, server)
        server.batches.lose("create", "drop")
        server.batches.lose("list", "500", times=QUICK.max_retries + 1)
        try:
            with pytest.raises(RequestFailed, match="looking for what it made failed") as failed:
                await client.submit(items(2, "unlucky"))
        finally:
            await client.aclose()
        posts = create_posts(server, api)
    assert posts == 1 and server.batches.creates == {api: 1}
    assert not failed.value.retryable and "gave up after" in str(failed.value)


@pytest.mark.parametrize("api", APIS)
async def test_the_last_attempt_is_looked_up_too(api: str) -> None:
    """With no retries left, a create whose reply was lost is still looked for before the
    submission fails (and so before the run asks again with a new create)."""
    quiz = make_quiz(1)
    with fake_server(api, quiz) as server:
        client = backend(api, server, retry=RetryPolicy(max_retries=0))
        server.batches.lose("create", "drop")
        try:
            poll = await client.submit(items(2, "last"))
        finally:
            await client.aclose()
        made = server.batches.batches(api)
    assert made == [poll.batch_id] and create_posts(server, api) == 1
