"""The plain-HTTP transport (``providers/plain_http.py``) against real sockets: a raw asyncio
server that writes exactly the bytes each case needs (framings, early closes, slow or garbled
answers), and the fake OpenAI server for keep-alive under a provider's concurrency."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import httpx
import pytest
from pipeline_helpers import make_quiz
from test_estimate import run_all, vet_run

from quiztui.pipeline.vet import VetSettings
from quiztui.providers._http import _data_lines, event_json, sse_data
from quiztui.providers.base import RequestFailed
from quiztui.providers.openai_compat import OpenAICompatProvider
from quiztui.providers.plain_http import (
    Answered,
    PlainHTTPSyncTransport,
    PlainHTTPTransport,
    fetch,
    request_head,
)
from quiztui.providers.probe import _transport_for
from quiztui.store import Store
from quiztui.testing.fake_openai import FakeOpenAI, truth_from_quiz

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter, bytes], Awaitable[bool]]


async def _read_request(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    return head + await reader.readexactly(length)


@asynccontextmanager
async def raw_server(handler: Handler) -> AsyncIterator[tuple[str, list[bytes], list[int]]]:
    """A server on a loopback port; ``handler`` answers each request (True: keep the connection).
    Yields the base URL, every request's bytes, and how many connections were made."""
    requests: list[bytes] = []
    connections = [0]

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections[0] += 1
        try:
            while True:
                try:
                    request = await _read_request(reader)
                except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
                    return
                requests.append(request)
                if not await handler(reader, writer, request):
                    return
        finally:
            writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}", requests, connections
    finally:
        server.close()


def answer(data: bytes, keep: bool = True) -> Handler:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, _: bytes) -> bool:
        writer.write(data)
        await writer.drain()
        return keep

    return handler


async def get(url: str, transport: PlainHTTPTransport, **kw: object) -> httpx.Response:
    """One POST through ``transport`` (a client that leaves the transport open, as a provider's
    client does between requests)."""
    client = httpx.AsyncClient(transport=transport)
    return await client.post(url + "/v1/x?y=1", content=b'{"a": 1}', **kw)  # type: ignore[arg-type]


FRAMINGS = pytest.mark.parametrize(
    ("raw", "body"),
    [
        (b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", b"hello"),
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
            b"3\r\nhel\r\n2;ext=1\r\nlo\r\n0\r\nX-Trailer: t\r\n\r\n",
            b"hello",
        ),
        (b"HTTP/1.1 204 No Content\r\n\r\n", b""),
        (b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", b"ok"),
    ],
    ids=["content-length", "chunked-with-trailer", "no-content", "interim-100"],
)


@FRAMINGS
async def test_each_framing_is_read_and_the_connection_kept(raw: bytes, body: bytes) -> None:
    async with raw_server(answer(raw)) as (url, requests, connections):
        transport = PlainHTTPTransport()
        first = await get(url, transport)
        second = await get(url, transport)
        await transport.aclose()
    assert (first.status_code, first.content) == (second.status_code, second.content)
    assert first.content == body and first.status_code in (200, 204)
    assert connections[0] == 1 and transport.opened == 1  # the second went on the first's
    sent = requests[0]
    assert sent.startswith(b"POST /v1/x?y=1 HTTP/1.1\r\n")
    assert f"host: {url.removeprefix('http://')}".encode() in sent.lower()
    assert sent.endswith(b'\r\n\r\n{"a": 1}')


async def test_a_body_to_the_connections_end_is_read_and_the_connection_not_kept() -> None:
    raw = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end"
    async with raw_server(answer(raw, keep=False)) as (url, _, connections):
        transport = PlainHTTPTransport()
        assert (await get(url, transport)).content == b"until the end"
        assert (await get(url, transport)).content == b"until the end"
        await transport.aclose()
    assert connections[0] == 2


@pytest.mark.parametrize(
    "raw",
    [
        b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok",
        b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok",
    ],
    ids=["connection-close", "http-1.0"],
)
async def test_a_server_that_says_close_gets_a_new_connection(raw: bytes) -> None:
    async with raw_server(answer(raw, keep=False)) as (url, _, connections):
        transport = PlainHTTPTransport()
        for _ in range(3):
            assert (await get(url, transport)).content == b"ok"
        await transport.aclose()
    assert connections[0] == 3


async def test_a_keep_alive_the_server_closed_while_idle_is_not_reused() -> None:
    raw = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
    async with raw_server(answer(raw, keep=False)) as (url, requests, connections):
        transport = PlainHTTPTransport()
        assert (await get(url, transport)).content == b"ok"  # kept: the server said nothing
        await asyncio.sleep(0.05)  # the server's close arrives while the connection is idle
        assert (await get(url, transport)).content == b"ok"
        await transport.aclose()
    assert connections[0] == 2 and len(requests) == 2  # each request sent once


BROKEN = pytest.mark.parametrize(
    ("raw", "error"),
    [
        (b"", httpx.RemoteProtocolError),  # closes without a word
        (b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhalf", httpx.RemoteProtocolError),
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel",
            httpx.RemoteProtocolError,
        ),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", httpx.RemoteProtocolError),
        (b"SSH-2.0-OpenSSH_9.6\r\n\r\n", httpx.RemoteProtocolError),
        (b"HTTP/1.1 200 OK\r\nBad header line\r\n\r\n", httpx.RemoteProtocolError),
    ],
    ids=["no-answer", "short-length", "cut-chunk", "bad-chunk-size", "not-http", "bad-header"],
)


@BROKEN
async def test_a_broken_answer_is_the_error_httpcore_gives(
    raw: bytes, error: type[Exception]
) -> None:
    async with raw_server(answer(raw, keep=False)) as (url, _, _c):
        transport = PlainHTTPTransport()
        with pytest.raises(error):
            await get(url, transport)
        await transport.aclose()


async def test_nothing_listening_is_a_connect_error_and_counts_as_not_sent() -> None:
    async with raw_server(answer(b"")) as (url, _, _c):
        pass  # the port is free again
    with pytest.raises(httpx.ConnectError):
        await get(url, PlainHTTPTransport())


async def test_a_silent_server_is_a_read_timeout_and_its_connection_dropped() -> None:
    async def slow(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, _: bytes) -> bool:
        await asyncio.sleep(1.0)
        return False

    async with raw_server(slow) as (url, _, _c):
        transport = PlainHTTPTransport()
        with pytest.raises(httpx.ReadTimeout):
            await get(url, transport, timeout=httpx.Timeout(5.0, read=0.05))
        assert not any(transport._idle.values())
        await transport.aclose()


async def test_a_stream_that_stalls_is_a_read_timeout_after_what_came() -> None:
    async def stall(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, _: bytes) -> bool:
        writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n")
        await writer.drain()
        await asyncio.sleep(1.0)
        return False

    async with raw_server(stall) as (url, _, _c):
        transport = PlainHTTPTransport()
        got = []
        async with httpx.AsyncClient(
            transport=transport, timeout=httpx.Timeout(5.0, read=0.1)
        ) as client:
            with pytest.raises(httpx.ReadTimeout):
                async with client.stream("POST", url + "/v1/x", content=b"{}") as response:
                    async for piece in response.aiter_raw():
                        got.append(piece)
    assert got == [b"ab"]


async def test_a_body_left_unread_closes_its_connection() -> None:
    raw = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n2\r\ncd\r\n0\r\n\r\n"
    async with raw_server(answer(raw)) as (url, _, connections):
        transport = PlainHTTPTransport()
        async with httpx.AsyncClient(transport=transport) as client:
            async with client.stream("POST", url + "/v1/x", content=b"{}") as response:
                async for piece in response.aiter_raw():
                    assert piece == b"ab"
                    break  # the rest is never read
            assert (await client.post(url + "/v1/x", content=b"{}")).content == b"abcd"
    assert connections[0] == 2


def test_https_keeps_httpxs_own_transport_and_http_gets_the_lean_one() -> None:
    plain = OpenAICompatProvider(base_url="http://127.0.0.1:9/v1", model="m")
    tls = OpenAICompatProvider(base_url="https://judge.invalid/v1", model="m")
    assert isinstance(plain._client._transport, PlainHTTPTransport)
    assert not isinstance(tls._client._transport, PlainHTTPTransport)


async def test_a_run_keeps_to_as_many_connections_as_its_concurrency(tmp_path) -> None:  # type: ignore[no-untyped-def]
    quiz = make_quiz(40)
    with FakeOpenAI(truth_from_quiz(quiz), latency=0.01) as server:
        judge = OpenAICompatProvider(base_url=server.base_url, model="fake-judge", concurrency=4)
        with Store(tmp_path / "q.db") as store:
            settings = VetSettings(batch_size=4, concurrency=4)
            _, summary = await run_all(vet_run(quiz, judge, store, settings=settings))
        transport = judge._client._transport
        await judge.aclose()
    assert (summary.judged, summary.unjudged) == (160, 0)
    assert summary.requests == 40
    assert isinstance(transport, PlainHTTPTransport) and 1 <= transport.opened <= 4


def test_the_probe_asks_a_plain_http_server_through_quiztuis_own_client() -> None:
    """The probe before a run (models, slots, tokenizer) over ``plain_http.fetch``: the same
    answers and errors as through httpx's own transport."""
    from quiztui.providers.plain_http import PlainHTTPSyncTransport
    from quiztui.providers.probe import _transport_for, check_endpoint, server_tokenizer

    quiz = make_quiz(2)
    with FakeOpenAI(truth_from_quiz(quiz), tokenize="llama.cpp") as server:
        assert isinstance(_transport_for(server.base_url, None), PlainHTTPSyncTransport)
        assert check_endpoint(server.base_url, "fake-judge") == ["fake-judge"]
        tokenizer = server_tokenizer(server.base_url)
        assert tokenizer is not None and tokenizer.server == "llama.cpp"
        with httpx.Client(transport=PlainHTTPSyncTransport()) as client:
            missing = client.get(server.base_url + "/nowhere")
        assert missing.status_code == 404 and missing.json()["error"]
    assert _transport_for("https://judge.invalid/v1", None) is None  # httpx's own, for TLS


def test_the_sync_transport_maps_refusals_and_silence_to_httpx_errors() -> None:
    import socket
    import threading

    from quiztui.providers.plain_http import PlainHTTPSyncTransport

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    accepted: list[socket.socket] = []
    thread = threading.Thread(target=lambda: accepted.append(listener.accept()[0]), daemon=True)
    thread.start()
    try:
        with httpx.Client(
            transport=PlainHTTPSyncTransport(), timeout=httpx.Timeout(5.0, read=0.1)
        ) as client:
            with pytest.raises(httpx.ReadTimeout):  # accepted, never answered
                client.get(f"http://127.0.0.1:{port}/v1/models")
    finally:
        thread.join(timeout=5)
        for sock in accepted:
            sock.close()
        listener.close()
    with httpx.Client(transport=PlainHTTPSyncTransport()) as client:
        with pytest.raises(httpx.ConnectError):  # nothing listens there now
            client.get(f"http://127.0.0.1:{port}/v1/models")


_SSE_BODY = (
    b'data: {"choices":[{"index":0,"delta":{"content":"A1: TRUE - ok\\n"},"finish_reason":null}]}\n\n'
    b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'
)
SSE_REPLY = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nSet-Cookie: sticky=1; Path=/\r\n"
    + f"Content-Length: {len(_SSE_BODY)}\r\n\r\n".encode()
    + _SSE_BODY
)


async def test_a_streamed_request_goes_straight_to_the_transport_byte_for_byte_as_httpx_sends_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The provider skips httpx's client layers for a plain-HTTP judge (``_post_stream``): the
    server gets the very bytes the client would send (URL, headers, JSON body), the reply reads
    the same, and a cookie the server sets is neither kept nor sent back."""
    monkeypatch.setenv("QUIZ_KEY", "sk-test-123")
    body = {"model": "m", "messages": [{"role": "user", "content": 'é \u2028 "q"'}], "n": 1.5}
    async with raw_server(answer(SSE_REPLY)) as (url, requests, _):
        judge = OpenAICompatProvider(base_url=url + "/v1", model="m", api_key_env="QUIZ_KEY")
        assert judge._direct is judge._client._transport
        replies = []
        for direct in (judge._direct, judge._direct, None):  # httpx's client last: it keeps cookies
            judge._direct = direct
            async with judge._post_stream("/chat/completions", body) as response:
                replies.append((response.status_code, [p async for p in sse_data(response)]))
        await judge.aclose()
    assert len(requests) == 3 and requests[0] == requests[1] == requests[2]
    assert requests[0].startswith(b"POST /v1/chat/completions HTTP/1.1\r\n")
    assert b"authorization: Bearer sk-test-123" in requests[0].lower().replace(b"bearer", b"Bearer")
    assert b"cookie" not in requests[1].lower()  # the first reply set one: not kept
    assert replies[0] == replies[1] == replies[2] and replies[0][0] == 200


async def test_a_redirect_is_refused_on_the_straight_path_too() -> None:
    moved = b"HTTP/1.1 307 Temporary Redirect\r\nLocation: http://elsewhere.invalid/\r\nContent-Length: 0\r\n\r\n"
    async with raw_server(answer(moved)) as (url, requests, _):
        judge = OpenAICompatProvider(base_url=url + "/v1", model="m")
        with pytest.raises(RequestFailed) as refused:
            async with judge._post_stream("/chat/completions", {"model": "m"}):
                pass
        await judge.aclose()
    assert refused.value.status == 307 and not refused.value.retryable
    assert len(requests) == 1


def test_a_proxy_from_the_environment_is_honoured_for_a_plain_http_judge(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """httpx's client honours ``HTTP_PROXY`` only with its own transport: a URL a proxy applies
    to gets it (and the probe too), one ``NO_PROXY`` names gets quiztui's."""
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy", "http_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    url = "http://192.0.2.1:8080/v1"
    judge = OpenAICompatProvider(base_url=url, model="m")
    assert judge._direct is None and not isinstance(judge._client._transport, PlainHTTPTransport)
    assert _transport_for(url + "/models", None) is None  # httpx's own, which mounts the proxy
    monkeypatch.setenv("NO_PROXY", "192.0.2.1")
    judge = OpenAICompatProvider(base_url=url, model="m")
    assert isinstance(judge._direct, PlainHTTPTransport)
    assert judge._direct is judge._client._transport
    assert isinstance(_transport_for(url + "/models", None), PlainHTTPSyncTransport)


@pytest.mark.parametrize(
    "payload",
    [
        '{"a": [1, 2.5, "x"], "b": {"c": null, "d": true}}',
        '{"logprob": NaN, "x": -Infinity}',  # the standard library's, refused by orjson
        '{"big": 123456789012345678901234567890}',
        '{"s": "\\ud800 lone"}',
        '{"a": 1, "a": 2}',
        '"text"',
    ],
)
def test_event_json_reads_every_event_as_the_standard_library_does(payload: str) -> None:
    import json
    import math

    got, want = event_json(payload), json.loads(payload)
    if "big" in payload:  # orjson reads an integer past 64 bits as a float: no event has one
        assert got == {"big": float(want["big"])}
        return
    assert repr(got) == repr(want)
    assert (
        [math.isnan(v) for v in got.values() if isinstance(v, float)]
        == [math.isnan(v) for v in want.values() if isinstance(v, float)]
        if isinstance(got, dict)
        else True
    )


@pytest.mark.parametrize("payload", ["{", "", "{'a': 1}", "[1,]", "nan"])
def test_event_json_refuses_what_is_not_json_with_a_value_error(payload: str) -> None:
    with pytest.raises(ValueError):
        event_json(payload)


class _Chunks(httpx.AsyncByteStream):
    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            yield chunk


def _split(data: bytes, every: int) -> list[bytes]:
    return [data[i : i + every] for i in range(0, len(data), every)] or [b""]


@pytest.mark.parametrize("every", [1, 2, 3, 7, 64, 100_000])
@pytest.mark.parametrize("charset", [None, "utf-8", "UTF_8", "iso-8859-1"])
async def test_sse_data_reads_bytes_as_httpxs_text_decoder_would(
    every: int, charset: str | None
) -> None:
    """The events of a stream split anywhere (inside a character too), with CRLF ends, a comment,
    a bad UTF-8 byte and no final newline: the same payloads through the byte path as through
    httpx's text decoder (``_data_lines`` over ``aiter_text``), and a declared non-UTF-8 charset is honoured."""
    body = (
        'data: {"a": "é日本 \u2028"}\r\n\r\n: comment\nevent: x\ndata:{"b":1}\n\n'.encode()
        + b'data: {"c": "\xff\xfe ok"}\n\ndata: [DONE]'
    )
    content_type = "text/event-stream" + (f"; charset={charset}" if charset else "")

    def response() -> httpx.Response:
        return httpx.Response(
            200, headers={"Content-Type": content_type}, stream=_Chunks(_split(body, every))
        )

    got = [p async for p in sse_data(response())]
    want = [p async for p in _data_lines(response().aiter_text(), "\n", "data:", str)]
    assert got == want and len(got) == 4 and got[-1] == "[DONE]"
    if charset != "iso-8859-1":
        assert got[0] == '{"a": "é日本 \u2028"}'.strip()


# -- fetch: the probe's requests, without httpx --------------------------------------------------

_LIMITS = {"connect": 5.0, "read": 5.0, "write": 5.0}


async def _fetch(url: str, **kw: object) -> Answered:
    """``fetch`` (blocking) from a thread, so the raw server on this loop answers it."""
    return await asyncio.to_thread(
        fetch, "POST", url + "/v1/x?y=1", headers={"Accept": "*/*"}, body=b'{"a": 1}', **kw
    )


@FRAMINGS
async def test_fetch_reads_each_framing_as_the_transport_does(raw: bytes, body: bytes) -> None:
    async with raw_server(answer(raw)) as (url, requests, _c):
        got = await _fetch(url, timeout=_LIMITS)
    assert got.content == body and got.status_code in (200, 204)
    assert requests == [
        b"POST /v1/x?y=1 HTTP/1.1\r\nHost: "
        + url.removeprefix("http://").encode()
        + b'\r\nAccept: */*\r\nContent-Length: 8\r\n\r\n{"a": 1}'
    ]


async def test_fetch_reads_a_body_to_the_connections_end() -> None:
    raw = b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{"data": []}'
    async with raw_server(answer(raw, keep=False)) as (url, _, _c):
        got = await _fetch(url, timeout=_LIMITS)
    assert got.json() == {"data": []} and got.headers[0] == (b"Content-Type", b"application/json")


@BROKEN
async def test_fetch_raises_for_a_broken_answer_what_the_transport_raises(
    raw: bytes, error: type[Exception]
) -> None:
    async with raw_server(answer(raw, keep=False)) as (url, _, _c):
        with pytest.raises(error) as raised:
            await _fetch(url, timeout=_LIMITS)
    assert str(raised.value.request.url) == url + "/v1/x?y=1"  # type: ignore[attr-defined]


async def test_fetch_refuses_a_head_past_the_limit_and_times_out_on_silence() -> None:
    endless = b"HTTP/1.1 200 OK\r\n" + b"X-Pad: " + b"p" * 70_000 + b"\r\n\r\n"
    async with raw_server(answer(endless, keep=False)) as (url, _, _c):
        with pytest.raises(httpx.RemoteProtocolError, match="too long"):
            await _fetch(url, timeout=_LIMITS)

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, _: bytes) -> bool:
        await asyncio.sleep(1)
        return False

    async with raw_server(silent) as (url, _, _c):
        with pytest.raises(httpx.ReadTimeout):
            await _fetch(url, timeout={**_LIMITS, "read": 0.1})


def test_fetch_to_nothing_listening_is_a_connect_error_and_needs_no_http_client() -> None:
    """Refused: httpx's ``ConnectError`` (httpx imported for the error, not before it). A
    request that goes well imports neither httpx nor the standard library's HTTP client."""
    import socket
    import subprocess
    import sys

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # bound, not listening: refused
        with pytest.raises(httpx.ConnectError):
            fetch("GET", f"http://127.0.0.1:{port}/v1/models", timeout=_LIMITS)
    code = (
        "import sys, threading, http.server, socketserver\n"
        "class H(http.server.BaseHTTPRequestHandler):\n"
        "    def do_GET(self):\n"
        "        self.send_response(200); self.send_header('Content-Length', '2')\n"
        "        self.end_headers(); self.wfile.write(b'{}')\n"
        "    def log_message(self, *a): pass\n"
        "server = socketserver.TCPServer(('127.0.0.1', 0), H)\n"
        "threading.Thread(target=server.serve_forever, daemon=True).start()\n"
        "for name in ('http.client', 'http.server', 'email.parser', 'socketserver'):\n"
        "    sys.modules.pop(name, None)  # the server's own imports: forgotten\n"
        "from quiztui.providers.plain_http import fetch\n"
        "url = 'http://127.0.0.1:%d/v1/models' % server.server_address[1]\n"
        "got = fetch('GET', url, timeout={'connect': 5, 'read': 5, 'write': 5})\n"
        "print(got.json(), sorted(m for m in ('httpx', 'http.client', 'email.parser')"
        " if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "{} []", out.stderr


def test_the_straight_path_writes_the_request_httpxs_client_would(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A plain-HTTP judge's streamed request is written without httpx (``HTTPProvider._head``):
    the bytes httpx's client builds for it, for every base URL shape the straight path takes;
    the others (an IPv6 address, a query, a user, a path to escape) are built by httpx."""
    monkeypatch.setenv("QUIZ_KEY", "sk-test-%d")
    body = {"model": "m", "messages": [{"role": "user", "content": 'é \u2028 "q" %s'}], "n": 1.5}
    for base in (
        "http://127.0.0.1:8080/v1",
        "http://LocalHost:80/v1/",
        "http://judge.lan",
        "http://judge.lan:8000/proxy/v1",
        "http://10.0.0.2:11434/v1",
    ):
        judge = OpenAICompatProvider(
            base_url=base,
            model="m",
            api_key_env="QUIZ_KEY",
            headers={"X-Team": "a%b", "user-agent": "bench/1", "ACCEPT": "application/json"},
        )
        assert judge._server is not None, base
        prefix, url = judge._head("/chat/completions")
        data = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
        ours = prefix + str(len(data)).encode() + b"\r\n\r\n" + data
        built = judge._client.build_request("POST", "/chat/completions", json=body)
        assert ours == request_head(built) + built.content, base
        assert url == str(built.url)
    for base in (
        "http://[::1]:8000/v1",
        "http://127.0.0.1:8080/v1?key=1",
        "http://user:pw@127.0.0.1:8080/v1",
        "http://127.0.0.1:8080/my%20judge/v1",
    ):
        judge = OpenAICompatProvider(base_url=base, model="m")
        assert judge._direct is not None and judge._server is None, base
