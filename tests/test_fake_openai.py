"""The loopback fake OpenAI server, driven over real sockets by the official client and by httpx."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import openai
import pytest
from openai.types.chat import ChatCompletionMessageParam

from quiztui.core.assertions import decompose, render_batch
from quiztui.core.quiz import Question, Quiz
from quiztui.core.verdicts import parse_reply
from quiztui.simulate.vet import oracle_reply
from quiztui.testing import (
    FAULT_KINDS,
    REFUSAL_TEXT,
    FakeOpenAI,
    RequestRecord,
    approx_tokens,
    truth_from_quiz,
)

PROMPT_FILE = Path(__file__).resolve().parents[1] / "prompts" / "judge_assertions.md"


def _template() -> tuple[str, str]:
    text = PROMPT_FILE.read_text(encoding="utf-8")
    system = text.split("=== SYSTEM ===\n", 1)[1].split("=== USER ===\n", 1)[0].strip()
    user = text.split("=== USER ===\n", 1)[1]
    return system, user


SYSTEM, USER_TEMPLATE = _template()


@pytest.fixture
def quiz() -> Quiz:
    questions = (
        Question(
            id="q1", text="Capital of France?", options=("Paris", "Rome", "Oslo", "Bern"), key=0
        ),
        Question(id="q2", text="2 + 2 = ?", options=("3", "4", "5"), key=1),
        Question(id="q3", text="Largest planet?", options=("Mars", "Jupiter", "Venus"), key=0),
    )
    # q3's key is wrong: the truth file says Jupiter.
    return Quiz(title="tiny", questions=questions, truth={"q3": 1})


@pytest.fixture
def prompt(quiz: Quiz) -> str:
    return render_batch(USER_TEMPLATE, decompose(quiz))[0]


@pytest.fixture
def ids(quiz: Quiz) -> list[str]:
    return list(render_batch(USER_TEMPLATE, decompose(quiz))[1])


@pytest.fixture
def server(quiz: Quiz) -> Iterator[FakeOpenAI]:
    with FakeOpenAI.from_quiz(quiz, models=["judge-a", "judge-b"]) as srv:
        yield srv


def _messages(prompt: str) -> list[ChatCompletionMessageParam]:
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}]


def _body(prompt: str, **extra: object) -> dict[str, object]:
    return {"model": "judge-a", "messages": _messages(prompt), **extra}


_Factory = Callable[..., openai.OpenAI]


@pytest.fixture
def make_client() -> Iterator[_Factory]:
    """Official clients without retries, closed after the test."""
    made: list[openai.OpenAI] = []

    def make(server: FakeOpenAI, key: str = "sk-test") -> openai.OpenAI:
        made.append(openai.OpenAI(base_url=server.base_url, api_key=key, max_retries=0))
        return made[-1]

    yield make
    for client in made:
        client.close()


def _sse_events(lines: list[str]) -> list[str]:
    return [line.removeprefix("data: ") for line in lines if line.startswith("data: ")]


# -- the truth table -----------------------------------------------------------------------


def test_truth_from_quiz_prefers_the_truth_file_over_the_key(quiz: Quiz) -> None:
    truth = truth_from_quiz(quiz)
    assert truth["Q: Capital of France? A: Paris"] is True
    assert truth["Q: Capital of France? A: Rome"] is False
    assert truth["Q: 2 + 2 = ? A: 4"] is True
    assert truth["Q: Largest planet? A: Mars"] is False  # keyed, but the truth says otherwise
    assert truth["Q: Largest planet? A: Jupiter"] is True
    assert len(truth) == 10


# -- the official openai client (A13) ------------------------------------------------------


def test_openai_client_non_streaming(
    make_client: _Factory, server: FakeOpenAI, quiz: Quiz, prompt: str
) -> None:
    reply = make_client(server).chat.completions.create(model="judge-a", messages=_messages(prompt))
    content = reply.choices[0].message.content
    assert content == oracle_reply(prompt, truth_from_quiz(quiz))
    assert reply.object == "chat.completion"
    assert reply.model == "judge-a"
    assert reply.choices[0].finish_reason == "stop"
    assert reply.choices[0].message.role == "assistant"

    verdicts = parse_reply(content, [f"A{i}" for i in range(1, 11)])
    by_text = dict(zip(server.requests[0].ids, server.requests[0].texts, strict=True))
    truth = truth_from_quiz(quiz)
    assert {by_text[i]: v.verdict for i, v in verdicts.items()} == truth

    usage = reply.usage
    assert usage is not None
    assert usage.prompt_tokens == approx_tokens(SYSTEM) + approx_tokens(prompt)
    assert usage.completion_tokens == approx_tokens(content)
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens

    (record,) = server.requests
    assert record.path == "/v1/chat/completions" and record.status == 200
    assert record.model == "judge-a" and record.stream is False and record.fault is None
    assert record.had_auth is True
    assert set(record.texts) == set(truth)
    assert record.prompt_tokens == usage.prompt_tokens
    assert record.completion_tokens == usage.completion_tokens


def test_openai_client_streaming_matches_non_streaming(
    make_client: _Factory, server: FakeOpenAI, prompt: str
) -> None:
    client = make_client(server)
    whole = client.chat.completions.create(model="judge-a", messages=_messages(prompt))
    stream = client.chat.completions.create(
        model="judge-a",
        messages=_messages(prompt),
        stream=True,
        stream_options={"include_usage": True},
    )
    deltas, roles, finishes, usages = [], [], [], []
    for chunk in stream:
        assert chunk.object == "chat.completion.chunk"
        if chunk.usage is not None:
            assert chunk.choices == []
            usages.append(chunk.usage)
            continue
        choice = chunk.choices[0]
        roles.append(choice.delta.role)
        finishes.append(choice.finish_reason)
        if choice.delta.content:
            deltas.append(choice.delta.content)
    assert "".join(deltas) == whole.choices[0].message.content
    assert len(deltas) == 10  # one chunk per verdict line by default
    assert roles[0] == "assistant"
    assert finishes[-1] == "stop" and finishes[:-1] == [None] * (len(finishes) - 1)
    assert len(usages) == 1
    assert whole.usage is not None
    assert usages[0].model_dump() == whole.usage.model_dump()
    assert [r.stream for r in server.requests] == [False, True]


async def test_async_openai_client_streams(server: FakeOpenAI, prompt: str) -> None:
    client = openai.AsyncOpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0)
    try:
        stream = await client.chat.completions.create(
            model="judge-b", messages=_messages(prompt), stream=True
        )
        parts = [c.choices[0].delta.content or "" async for c in stream if c.choices]
    finally:
        await client.close()
    text = "".join(parts)
    assert len(parse_reply(text, [f"A{i}" for i in range(1, 11)])) == 10
    assert server.requests[0].model == "judge-b"


def test_openai_client_maps_500_and_429(
    make_client: _Factory, server: FakeOpenAI, prompt: str
) -> None:
    client = make_client(server)
    server.retry_after = 3
    server.inject("500")
    with pytest.raises(openai.InternalServerError) as server_error:
        client.chat.completions.create(model="judge-a", messages=_messages(prompt))
    assert server_error.value.status_code == 500
    assert server_error.value.type == "server_error"

    server.inject("429")
    with pytest.raises(openai.RateLimitError) as rate_error:
        client.chat.completions.create(model="judge-a", messages=_messages(prompt))
    assert rate_error.value.response.headers["retry-after"] == "3"
    assert rate_error.value.code == "rate_limit_exceeded"

    ok = client.chat.completions.create(model="judge-a", messages=_messages(prompt))
    assert ok.choices[0].message.content
    assert [(r.status, r.fault) for r in server.requests] == [
        (500, "500"),
        (429, "429"),
        (200, None),
    ]


def test_require_key(make_client: _Factory, quiz: Quiz, prompt: str) -> None:
    with FakeOpenAI.from_quiz(quiz, require_key="sk-right") as srv:
        with pytest.raises(openai.AuthenticationError) as err:
            make_client(srv, "sk-wrong").chat.completions.create(
                model="judge-a", messages=_messages(prompt)
            )
        assert err.value.code == "invalid_api_key"
        assert "sk-wrong" not in str(err.value)
        ok = make_client(srv, "sk-right").chat.completions.create(
            model="judge-a", messages=_messages(prompt)
        )
        assert ok.choices[0].message.content
        missing = httpx.post(f"{srv.base_url}/chat/completions", json=_body(prompt))
        assert missing.status_code == 401
        assert missing.json()["error"]["type"] == "invalid_request_error"
        assert [(r.status, r.had_auth) for r in srv.requests] == [
            (401, True),
            (200, True),
            (401, False),
        ]
        assert "sk-right" not in repr(srv.requests) and "sk-wrong" not in repr(srv.requests)


def test_models_list_and_retrieve(make_client: _Factory, server: FakeOpenAI) -> None:
    client = make_client(server)
    assert [m.id for m in client.models.list()] == ["judge-a", "judge-b"]
    assert client.models.retrieve("judge-b").id == "judge-b"
    with pytest.raises(openai.NotFoundError):
        client.models.retrieve("nope")
    assert [r.path for r in server.requests] == [
        "/v1/models",
        "/v1/models/judge-b",
        "/v1/models/nope",
    ]


# -- faults over plain httpx ---------------------------------------------------------------


def test_drop_closes_without_a_response(server: FakeOpenAI, prompt: str) -> None:
    server.inject("drop")
    with httpx.Client(base_url=server.base_url) as client:
        with pytest.raises(httpx.RemoteProtocolError):
            client.post("/chat/completions", json=_body(prompt))
        assert client.post("/chat/completions", json=_body(prompt)).status_code == 200
    drop, ok = server.requests
    assert (drop.status, drop.fault) == (None, "drop")
    assert (ok.status, ok.fault) == (200, None)


def test_cut_stream_stops_halfway_without_done(server: FakeOpenAI, prompt: str) -> None:
    server.inject("cut")
    lines: list[str] = []
    with httpx.Client(base_url=server.base_url) as client:
        with pytest.raises(httpx.RemoteProtocolError):
            with client.stream("POST", "/chat/completions", json=_body(prompt, stream=True)) as r:
                assert r.status_code == 200
                assert r.headers["content-type"].startswith("text/event-stream")
                for line in r.iter_lines():
                    lines.append(line)
    events = _sse_events(lines)
    assert "[DONE]" not in events
    chunks = [json.loads(e) for e in events]
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks)
    got = parse_reply(text, [f"A{i}" for i in range(1, 11)])
    assert 0 < len(got) < 10
    assert all(c["choices"][0]["finish_reason"] is None for c in chunks)
    assert server.requests[0].fault == "cut"


def test_stream_error_sends_half_the_reply_then_an_error_event(
    make_client: _Factory, server: FakeOpenAI, prompt: str
) -> None:
    """The official client reads the ``error`` event as the API's error, after the text so far;
    the connection stays usable."""
    client = make_client(server)
    whole = client.chat.completions.create(model="judge-a", messages=_messages(prompt))
    server.inject("stream_error")
    deltas: list[str] = []
    stream = client.chat.completions.create(
        model="judge-a", messages=_messages(prompt), stream=True
    )
    with pytest.raises(openai.APIError, match="server had an error"):
        for chunk in stream:
            deltas += [c.delta.content for c in chunk.choices if c.delta.content]
    text = whole.choices[0].message.content or ""
    assert len(deltas) == 5 and text.startswith("".join(deltas))
    server.inject("stream_error")  # not streamed: a plain 500
    with pytest.raises(openai.InternalServerError):
        client.chat.completions.create(model="judge-a", messages=_messages(prompt))
    log = server.requests
    assert [r.fault for r in log] == [None, "stream_error", "stream_error"]
    assert log[1].connection == log[0].connection  # kept alive after the error event


def test_cut_non_streaming_truncates_the_body(server: FakeOpenAI, prompt: str) -> None:
    server.inject("cut")
    with pytest.raises(httpx.RemoteProtocolError):
        httpx.post(f"{server.base_url}/chat/completions", json=_body(prompt))


def _content(server: FakeOpenAI, prompt: str) -> str:
    r = httpx.post(f"{server.base_url}/chat/completions", json=_body(prompt))
    assert r.status_code == 200
    return r.json()["choices"][0]["message"]["content"]


def test_missing_omits_about_a_third_of_the_ids(
    server: FakeOpenAI, prompt: str, ids: list[str]
) -> None:
    server.inject("missing")
    got = parse_reply(_content(server, prompt), ids)
    record = server.requests[0]
    assert record.fault == "missing"
    assert set(got) == set(ids) - set(record.faulted_ids)
    assert 2 <= len(record.faulted_ids) <= 5


def test_refusal_has_no_verdicts(server: FakeOpenAI, prompt: str, ids: list[str]) -> None:
    server.inject("refusal")
    text = _content(server, prompt)
    assert text == REFUSAL_TEXT
    assert parse_reply(text, ids) == {}


def test_malformed_keeps_valid_lines_for_the_other_ids(
    server: FakeOpenAI, prompt: str, ids: list[str]
) -> None:
    server.inject("malformed")
    text = _content(server, prompt)
    record = server.requests[0]
    assert record.faulted_ids
    assert set(parse_reply(text, ids)) == set(ids) - set(record.faulted_ids)
    assert "<<<" in text
    clean = parse_reply(_content(server, prompt), ids)
    for ident, verdict in parse_reply(text, ids).items():
        assert verdict.verdict == clean[ident].verdict


def test_malformed_stream_keeps_sse_framing_valid(
    server: FakeOpenAI, prompt: str, ids: list[str]
) -> None:
    server.inject("malformed")
    with httpx.Client(base_url=server.base_url) as client:
        with client.stream("POST", "/chat/completions", json=_body(prompt, stream=True)) as r:
            events = _sse_events(list(r.iter_lines()))
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]  # every event is valid JSON
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks)
    assert set(parse_reply(text, ids)) == set(ids) - set(server.requests[0].faulted_ids)


def test_inject_queue_precedes_and_counts(server: FakeOpenAI, prompt: str) -> None:
    server.inject("500", times=2)
    with httpx.Client(base_url=server.base_url) as client:
        codes = [client.post("/chat/completions", json=_body(prompt)).status_code for _ in range(3)]
        body = client.post("/chat/completions", json={"model": "x"}).json()
    assert codes == [500, 500, 200]
    assert body["error"]["type"] == "invalid_request_error"
    with pytest.raises(ValueError):
        server.inject("teapot")


def test_random_faults_follow_the_seed(quiz: Quiz, prompt: str) -> None:
    def run() -> list[str | None]:
        kinds = ["500", "429", "missing", "refusal"]
        with FakeOpenAI.from_quiz(quiz, fault_rate=0.3, fault_kinds=kinds, fault_seed=7) as srv:
            with httpx.Client(base_url=srv.base_url) as client:
                for _ in range(200):
                    client.post("/chat/completions", json=_body(prompt))
            return [r.fault for r in srv.requests]

    faults = run()
    counts = Counter(faults)
    assert len(faults) == 200
    assert 30 <= 200 - counts[None] <= 90
    assert all(counts[k] >= 5 for k in ("500", "429", "missing", "refusal"))
    assert run() == faults  # same seed, same sequence


# -- connection handling, latency, the log -------------------------------------------------


def test_keep_alive_reuses_one_connection(server: FakeOpenAI, prompt: str) -> None:
    with httpx.Client(base_url=server.base_url) as client:
        for _ in range(5):
            assert client.post("/chat/completions", json=_body(prompt)).status_code == 200
        assert client.get("/models").status_code == 200
    assert len({r.connection for r in server.requests}) == 1
    assert len(server.requests) == 6


async def test_latency_does_not_block_concurrent_requests(quiz: Quiz, prompt: str) -> None:
    with FakeOpenAI.from_quiz(quiz, latency=0.05, stream_delay=0.001) as srv:
        assert srv.latency == 0.05
        async with httpx.AsyncClient(base_url=srv.base_url, timeout=30) as client:
            plain = [client.post("/chat/completions", json=_body(prompt)) for _ in range(24)]
            streamed = [
                client.post("/chat/completions", json=_body(prompt, stream=True)) for _ in range(8)
            ]
            replies = await asyncio.gather(*plain, *streamed)
        assert all(r.status_code == 200 for r in replies)
        assert _sse_events(replies[-1].text.splitlines())[-1] == "[DONE]"
        assert len(srv.requests) == 32
        assert sorted(r.index for r in srv.requests) == list(range(32))


def test_authorization_value_never_reaches_the_log(server: FakeOpenAI, prompt: str) -> None:
    headers = {"Authorization": "Bearer MARKER-123"}
    httpx.post(f"{server.base_url}/chat/completions", json=_body(prompt), headers=headers)
    httpx.get(f"{server.base_url}/models", headers=headers)
    assert all(r.had_auth for r in server.requests)
    assert "MARKER-123" not in repr(server.requests)
    assert "MARKER-123" not in repr(vars(server))


def test_asked_texts_counts_answered_and_all(server: FakeOpenAI, prompt: str, quiz: Quiz) -> None:
    server.inject("500")
    server.inject("missing")
    for _ in range(3):
        httpx.post(f"{server.base_url}/chat/completions", json=_body(prompt))
    texts = set(truth_from_quiz(quiz))
    assert server.asked_texts(answered_only=False) == Counter({t: 3 for t in texts})
    assert server.asked_texts() == Counter({t: 1 for t in texts})
    assert isinstance(server.requests[0], RequestRecord)


def test_stream_split_by_characters(quiz: Quiz, prompt: str) -> None:
    with FakeOpenAI.from_quiz(quiz, chunk_chars=7) as srv:
        r = httpx.post(f"{srv.base_url}/chat/completions", json=_body(prompt, stream=True))
    chunks = [json.loads(e) for e in _sse_events(r.text.splitlines())[:-1]]
    pieces = [c["choices"][0]["delta"].get("content") for c in chunks]
    pieces = [p for p in pieces if p]
    assert max(len(p) for p in pieces) == 7
    assert "".join(pieces) == oracle_reply(prompt, truth_from_quiz(quiz))


def test_content_parts_and_chunked_request_body(server: FakeOpenAI, prompt: str) -> None:
    body = {
        "model": "judge-a",
        "messages": [{"role": "user", "content": [{"type": "text", "text": prompt}]}],
    }
    data = json.dumps(body).encode()

    def pieces() -> Iterator[bytes]:  # a generator body makes httpx send it chunked
        yield data[:100]
        yield data[100:]

    r = httpx.post(f"{server.base_url}/chat/completions", content=pieces())
    assert r.status_code == 200
    assert len(server.requests[0].texts) == 10


def test_bad_requests_get_openai_error_bodies(server: FakeOpenAI) -> None:
    with httpx.Client(base_url=server.base_url) as client:
        bad_json = client.post("/chat/completions", content=b"{not json")
        unknown = client.post("/embeddings", json={})
        wrong_method = client.get("/chat/completions")
    assert [bad_json.status_code, unknown.status_code, wrong_method.status_code] == [400, 404, 405]
    for r in (bad_json, unknown, wrong_method):
        assert set(r.json()["error"]) >= {"message", "type", "code"}


def test_constructor_rejects_unknown_fault_kinds() -> None:
    with pytest.raises(ValueError):
        FakeOpenAI(fault_kinds=["429", "gremlin"])
    assert set(FAULT_KINDS) == {"429", "500", "drop", "cut", "malformed", "missing", "refusal"}


def test_streamed_logprobs_are_encoded_as_json_dumps_encodes_them() -> None:
    """The fake encodes each token's entry once and joins them (half its time per reply went to
    encoding the same entries again): what goes on the wire is byte for byte ``json.dumps``'s,
    for non-ASCII, quotes, control characters, -inf and NaN alike, and a repeated entry too."""
    import math

    from quiztui.core.logprobs import TokenLogprob
    from quiztui.testing.fake_openai import _COMPACT, _logprob_items, _logprobs_json

    tokens = [
        TokenLogprob("A1", -0.001, (("A1", -0.001), (" the", -7.6))),
        TokenLogprob(' é"\\\n\x00', -1e-9, ()),
        TokenLogprob("日本", -math.inf, (("x", math.nan), ("日本", -math.inf))),
        TokenLogprob("A1", -0.001, (("A1", -0.001),)),
    ]
    for _ in range(2):  # the second time from the encoded entries
        expected = json.dumps(
            {"content": _logprob_items(tokens), "refusal": None}, separators=_COMPACT
        )
        assert _logprobs_json(tokens) == expected
