"""A loopback OpenAI-compatible chat server for tests and benchmarks: real sockets, real SSE.

The server answers ``POST /v1/chat/completions`` from a truth table with the same deterministic
oracle the simulated provider uses (:func:`quiztui.simulate.vet.oracle_reply`), so a judge
reached over HTTP says exactly what the simulated judge says. It serves ``GET /v1/models`` too.
The OpenAI Batch API (``/v1/files``, ``/v1/batches``) is served by
:mod:`quiztui.testing.fake_batches` through ``server.batches``.
It speaks HTTP/1.1 with keep-alive on its own asyncio loop in a background thread; latency and
stream delays are ``asyncio.sleep`` calls, so slow requests never hold up others.

Faults, injected at a seeded random rate or queued with :meth:`FakeOpenAI.inject`, apply to chat
requests only: ``429`` (with ``Retry-After``), ``500``, ``drop`` (close without a response),
``cut`` (close halfway through the body), ``malformed`` (garbage lines instead of some verdicts),
``missing`` (about a third of the ids left out) and ``refusal`` (no verdicts at all); and, only
when asked for, ``content_filter`` (an empty reply ending with ``finish_reason`` "content_filter"),
``stream_error`` (half the reply, then ``data: {"error": {...}}`` and the end of the stream, as
OpenAI-compatible servers report a failure midway; a 500 when not streamed) and ``length`` (half
the reply, ending with ``finish_reason`` "length", as at the ``max_tokens`` limit).

Robustness prompts are answered by :mod:`quiztui.simulate.robustness`: ``disagreement`` and
``refusal_rate`` set how often an answer differs from the truth and how often it is refused.

Asked for ``logprobs`` (and ``top_logprobs``), it returns OpenAI-shaped ``logprobs.content`` in
non-streamed replies and in every streamed chunk: the reply cut into word pieces, each verdict word
at the simulated judge's confidence (:func:`quiztui.simulate.logprobs.oracle_logprobs`).
``reject_logprobs=True`` answers such requests 400 instead, as servers without logprobs do.

Token counts are an approximation, not a tokenizer: ``ceil(len(text) / 4)`` for every message's
content, summed, gives ``prompt_tokens``; the same over the reply gives ``completion_tokens``.

``responder`` (a constructor argument and attribute) scripts replies: called with the last user
message of each chat request, the text it returns is the reply; when it returns None (or is
unset) the oracle answers. Faults still apply on top. It runs on the server's thread.

``slots=N`` serves at most N chat requests at once, as a local server does (llama.cpp's Python
server serves one): the others wait, and a stream running while another request waits is ended at
once with ``data: [DONE]`` and no finish reason, as that server's ``interrupt_requests`` does.
``interrupted`` counts those streams. ``usage=False`` sends no usage in streams, whatever
``stream_options`` asks (that server sends none); non-streamed replies still carry it.
``structured="json_schema"`` (OpenAI, llama.cpp's server, vLLM, LM Studio, Ollama) or
``"json_object"`` (llama-cpp-python's server: ``{"type": "json_object", "schema": ...}``) answers
a request with that ``response_format`` in the schema's JSON, and refuses the other type as those
servers do (400 naming it; llama-cpp-python's 500 quoting its validation error); ``"text"`` refuses every
``response_format`` but text with a 400 naming it; None ignores ``response_format``.
``props=True`` serves llama.cpp's ``GET /props`` with ``total_slots`` (``slots``, else 1).
``tokenize="llama.cpp"`` serves ``POST /tokenize {"content": ...}``, ``"llama-cpp-python"``
``POST /extras/tokenize {"input": ...}``; both answer ``{"tokens": [...]}``, one token per word
(a count unlike the estimate's), and llama-cpp-python's waits for a slot as a chat request does,
so with ``slots`` set it ends a running stream as that server's lock does.

The request log records whether an ``Authorization`` header was sent, never its value.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hmac
import json
import math
import random
import socket
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from http import HTTPStatus
from typing import TYPE_CHECKING, Any

from quiztui.core.assertions import parse_rendered_batch
from quiztui.core.logprobs import TokenLogprob
from quiztui.simulate.logprobs import oracle_logprobs, tokens_by_chunk
from quiztui.simulate.robustness import CONTENT_FILTERED
from quiztui.simulate.vet import oracle_reply, truth_table
from quiztui.testing.fake_batches import FakeBatches

if TYPE_CHECKING:
    from quiztui.core.quiz import Quiz

__all__ = [
    "FAULT_KINDS",
    "OPENAI_FAULT_KINDS",
    "REFUSAL_TEXT",
    "FakeOpenAI",
    "RequestRecord",
    "approx_tokens",
    "truth_from_quiz",
]

FAULT_KINDS: tuple[str, ...] = ("429", "500", "drop", "cut", "malformed", "missing", "refusal")
# Injectable but not drawn by default: an empty reply that ends with finish_reason "content_filter".
EXTRA_FAULT_KINDS: tuple[str, ...] = ("content_filter",)
# This server's own, also only when asked for: an error event in the middle of a stream.
OPENAI_FAULT_KINDS: tuple[str, ...] = FAULT_KINDS + EXTRA_FAULT_KINDS + ("stream_error", "length")
SERVER_ERROR_MESSAGE = "The server had an error while processing your request. Sorry about that!"
REFUSAL_TEXT = "I'm sorry, but I can't help with that."
CHAT_PATH = "/v1/chat/completions"
# The tokenize endpoints served by ``tokenize=``: (path, the text's field).
_TOKENIZE = {
    "llama.cpp": ("/tokenize", "content"),
    "llama-cpp-python": ("/extras/tokenize", "input"),
}
_JSON = "application/json"
_COMPACT = (",", ":")
_INVALID = "invalid_request_error"


def approx_tokens(text: str) -> int:
    """The server's token count for a text: one token per four characters, rounded up."""
    return math.ceil(len(text) / 4)


# Assertion text → truth, from ``quiz.truth`` (question id → true option) or else the key.
truth_from_quiz = truth_table


@dataclass(frozen=True, slots=True)
class RequestRecord:
    """One request as the server saw it. ``status`` is None when the connection was dropped."""

    index: int
    time: float  # time.time() at arrival
    connection: int  # serial number of the TCP connection: equal numbers mean keep-alive
    method: str
    path: str
    model: str | None
    stream: bool
    texts: tuple[str, ...]  # assertion texts asked, in prompt order
    ids: tuple[str, ...]  # their ids (A1, A2, ...)
    status: int | None
    fault: str | None
    prompt_tokens: int
    completion_tokens: int
    had_auth: bool
    faulted_ids: tuple[str, ...] = ()  # ids left out ("missing") or garbled ("malformed")
    logprobs: bool = False  # the request asked for token logprobs
    query: str = ""  # the query string of the request target
    roles: tuple[str, ...] = ()  # the chat messages' roles, in order
    response_format: str | None = None  # the type of the response_format asked for, if any


class _Reply(Exception):
    """An error reply in OpenAI's format, raised while handling a request."""

    def __init__(
        self,
        status: int,
        message: str,
        kind: str,
        code: str | None = None,
        body: Any = None,
        **headers: str,
    ) -> None:
        super().__init__(message)
        self.status = status
        error = {"message": message, "type": kind, "param": None, "code": code}
        self.body = json.dumps({"error": error} if body is None else body).encode()
        self.headers = {k.replace("_", "-"): v for k, v in headers.items()}


def _head(status: int, headers: Mapping[str, str], keep_alive: bool) -> bytes:
    lines = [f"HTTP/1.1 {status} {HTTPStatus(status).phrase}"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    lines.append("Connection: keep-alive" if keep_alive else "Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts: [{"type": "text", "text": ...}, ...]
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def _logprob_items(tokens: Sequence[TokenLogprob]) -> list[dict[str, Any]]:
    """Tokens in OpenAI's ``logprobs.content`` shape (with ``bytes``)."""

    def entry(token: str, logprob: float) -> dict[str, Any]:
        return {"token": token, "logprob": logprob, "bytes": list(token.encode())}

    return [
        {**entry(t.token, t.logprob), "top_logprobs": [entry(a, lp) for a, lp in t.top]}
        for t in tokens
    ]


class _Encoded(str):
    """JSON text already encoded: :func:`_sse` puts it into an event as it is."""


_ENTRIES: dict[tuple[str, float], str] = {}  # (token, logprob) -> its entry's JSON, braces off


def _entry_json(token: str, logprob: float) -> str:
    body = _ENTRIES.get((token, logprob))
    if body is None:
        entry = {"token": token, "logprob": logprob, "bytes": list(token.encode())}
        body = json.dumps(entry, separators=_COMPACT)[1:-1]
        if len(_ENTRIES) < 100_000:
            _ENTRIES[(token, logprob)] = body
    return body


def _logprobs_json(tokens: Sequence[TokenLogprob]) -> _Encoded:
    """``{"content": _logprob_items(tokens), "refusal": null}`` as JSON, byte for byte what
    ``json.dumps`` makes of it, from each token's entry encoded once: the same tokens and
    confidences come back in every reply, and encoding them again was half the fake's time per
    streamed reply (3 ms), spent on the loop that sends the other replies."""
    items = [
        "{"
        + _entry_json(t.token, t.logprob)
        + ',"top_logprobs":['
        + ",".join("{" + _entry_json(a, lp) + "}" for a, lp in t.top)
        + "]}"
        for t in tokens
    ]
    return _Encoded('{"content":[' + ",".join(items) + '],"refusal":null}')


_MARK = "\x00quiztui-encoded\x00"  # stands in for encoded JSON until the event is
_MARK_JSON = json.dumps(_MARK)  # encoded (:func:`_sse`)


def _chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


_DONE = _chunk(b"data: [DONE]\n\n") + b"0\r\n\r\n"  # the last SSE event, then end of body


def _sse(obj: Any, encoded: _Encoded | None = None) -> bytes:
    """One event; ``encoded`` (JSON text) goes where ``obj`` holds the :data:`_MARK` string."""
    text = json.dumps(obj, separators=_COMPACT)
    if encoded is not None:
        text = text.replace(_MARK_JSON, encoded, 1)
    return _chunk(b"data: " + text.encode() + b"\n\n")


class FakeOpenAI:
    """An OpenAI-compatible server on 127.0.0.1 in a background thread.

    ``with FakeOpenAI(truth=...) as server: client(base_url=server.base_url)``. Port 0 picks a
    free port. Settings are plain attributes and may be changed while the server runs.
    """

    # Hooks for the native-API fakes that subclass this one (testing/fake_anthropic.py, ...):
    # the fault kinds inject() accepts, and the request header that carries the API key.
    fault_names: tuple[str, ...] = OPENAI_FAULT_KINDS
    key_header = "authorization"

    def __init__(
        self,
        truth: Mapping[str, bool] | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        models: str | Sequence[str] = "fake-judge",
        tpr: float = 1.0,
        tnr: float = 1.0,
        seed: int = 0,
        latency: float = 0.0,
        stream_delay: float = 0.0,
        chunk_lines: int = 1,
        chunk_chars: int | None = None,
        require_key: str | None = None,
        fault_rate: float = 0.0,
        fault_kinds: Sequence[str] = FAULT_KINDS,
        fault_seed: int = 0,
        retry_after: float = 1,
        reject_logprobs: bool = False,
        disagreement: float = 0.0,
        refusal_rate: float = 0.0,
        responder: Callable[[str], str | None] | None = None,
        log_limit: int | None = None,
        slots: int | None = None,
        usage: bool = True,
        structured: str | None = None,
        props: bool = False,
        tokenize: str | None = None,
    ) -> None:
        for kind in fault_kinds:
            _check_kind(kind, self.fault_names)
        if chunk_lines < 1 or (chunk_chars is not None and chunk_chars < 1):
            raise ValueError("chunk_lines and chunk_chars must be >= 1")
        self.truth: Mapping[str, bool] = dict(truth or {})
        self.host, self.port = host, port
        self.models = [models] if isinstance(models, str) else list(models)
        self.tpr, self.tnr, self.seed = tpr, tnr, seed
        self.latency, self.stream_delay = latency, stream_delay
        self.chunk_lines, self.chunk_chars = chunk_lines, chunk_chars
        self.require_key = require_key
        self.fault_rate, self.fault_kinds = fault_rate, list(fault_kinds)
        self.fault_seed = fault_seed
        self.retry_after = retry_after
        self.reject_logprobs = reject_logprobs
        # Robustness answers (core.robust_oracle): how often an answer differs from the truth,
        # and how often it is a refusal (in words, or a content-filter stop).
        self.disagreement, self.refusal_rate = disagreement, refusal_rate
        self.responder = responder  # prompt -> scripted reply, or None to let the oracle answer
        if slots is not None and slots < 1:
            raise ValueError("slots must be >= 1")
        self.slots = slots  # chat requests served at once (None: no limit)
        self.stream_usage = usage  # whether streams carry usage when asked for it
        if structured not in (None, "json_schema", "json_object", "text"):
            raise ValueError("structured must be None, 'json_schema', 'json_object' or 'text'")
        self.structured = structured  # the response_format type honoured (None: ignored)
        self.props = props  # serve llama.cpp's GET /props (total_slots: ``slots`` or 1)
        if tokenize not in (None, *_TOKENIZE):
            raise ValueError("tokenize must be None, 'llama.cpp' or 'llama-cpp-python'")
        self.tokenize = tokenize  # the server whose tokenize endpoint is served (None: none)
        self.tokenized: list[str] = []  # the texts the tokenize endpoint was asked to count
        self._slot_sem: asyncio.Semaphore | None = None
        self._waiting = 0  # chat requests waiting for a slot
        self.interrupted = 0  # streams ended early because another request waited
        self._fault_rng = random.Random(fault_seed)
        self._queued: deque[str] = deque()
        self._lock = threading.Lock()
        # The request log keeps every request unless ``log_limit`` bounds it to the newest ones
        # (a soak of 100,000 assertions must not grow the server's memory with run length);
        # ``fault_counts`` counts every fault drawn, whatever the log kept.
        self._log: deque[RequestRecord] = deque(maxlen=log_limit)
        self.fault_counts: Counter[str] = Counter()
        self._next_index = 0
        self._next_connection = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        # The batch APIs (OpenAI Batch, Anthropic Message Batches): testing/fake_batches.py.
        self.batches = FakeBatches(self)

    @classmethod
    def from_quiz(cls, quiz: Quiz, **kwargs: Any) -> FakeOpenAI:
        return cls(truth_from_quiz(quiz), **kwargs)

    # -- lifecycle -------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def start(self) -> FakeOpenAI:
        if self._thread is not None:
            raise RuntimeError("server already started")
        loop = asyncio.new_event_loop()
        self._loop = loop
        self._thread = threading.Thread(target=self._run, name="fake-openai", daemon=True)
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._open(), loop).result(timeout=10)
        return self

    def stop(self) -> None:
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(self._close(), loop).result(timeout=10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        self._loop = self._thread = self._server = None

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _run(self) -> None:
        assert self._loop is not None
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_forever()
        finally:
            self._loop.close()

    async def _open(self) -> None:
        self._server = await asyncio.start_server(
            self._serve_connection, self.host, self.port, backlog=1024, limit=1 << 22
        )
        self.port = self._server.sockets[0].getsockname()[1]
        if self.slots is not None:
            self._slot_sem = asyncio.Semaphore(self.slots)

    async def _close(self) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._server.wait_closed()

    # -- faults and the log ----------------------------------------------------------------

    def inject(self, kind: str, times: int = 1) -> None:
        """Give the next ``times`` chat requests the fault ``kind`` (before any random fault)."""
        _check_kind(kind, self.fault_names)
        with self._lock:
            self._queued.extend([kind] * times)

    def _next_fault(self) -> str | None:
        with self._lock:
            fault = None
            if self._queued:
                fault = self._queued.popleft()
            elif self.fault_rate > 0 and self._fault_rng.random() < self.fault_rate:
                fault = self._fault_rng.choice(self.fault_kinds)
            if fault is not None:
                self.fault_counts[fault] += 1
        return fault

    @property
    def requests(self) -> list[RequestRecord]:
        """A snapshot of the request log, in arrival order."""
        with self._lock:
            return sorted(self._log, key=lambda r: r.index)

    def clear_log(self) -> None:
        with self._lock:
            self._log.clear()

    def asked_texts(self, *, answered_only: bool = True) -> Counter[str]:
        """How often each assertion text was asked: in fault-free 200 replies, or in any request."""
        counts: Counter[str] = Counter()
        for r in self.requests:
            if not answered_only or (r.status == 200 and r.fault is None):
                counts.update(r.texts)
        return counts

    def _record(self, **fields: Any) -> None:
        with self._lock:
            self._log.append(RequestRecord(**fields))

    # -- HTTP ------------------------------------------------------------------------------

    async def _serve_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        connection = self._next_connection
        self._next_connection += 1
        sock = writer.get_extra_info("socket")
        if sock is not None:  # as real servers do: no Nagle delay between header and body writes
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            while await self._serve_one(reader, writer, connection):
                pass
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        except asyncio.CancelledError:
            pass  # stop() cancels open connections; the task ends here either way
        finally:
            self._tasks.discard(task)
            writer.close()

    async def _serve_one(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, connection: int
    ) -> bool:
        """Read and answer one request; returns whether to keep the connection open."""
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError:
            return False  # the client closed an idle connection
        arrived = asyncio.get_running_loop().time()
        request_line, *header_lines = head.decode("latin-1").split("\r\n")
        try:
            method, target, version = request_line.split(" ")
        except ValueError:
            writer.write(_head(400, {"Content-Length": "0"}, False))
            return False
        headers: dict[str, str] = {}
        for line in header_lines:
            name, sep, value = line.partition(":")
            if sep:
                headers[name.strip().lower()] = value.strip()
        wanted = headers.get("connection", "").lower()
        keep_alive = wanted != "close" if version == "HTTP/1.1" else wanted == "keep-alive"
        if headers.get("expect", "").lower() == "100-continue":
            writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        if "chunked" in headers.get("transfer-encoding", "").lower():
            body = await _read_chunked(reader)
        else:
            body = await reader.readexactly(int(headers.get("content-length") or 0))
        had_auth = self.key_header in headers
        key_ok = self._key_ok(headers.get(self.key_header))
        headers.pop(self.key_header, None)  # the value is never kept or logged
        path, _, query = target.partition("?")
        base: dict[str, Any] = {"connection": connection, "method": method, "path": path}
        base["query"] = query
        base["had_auth"] = had_auth
        return await self._dispatch(base, body, key_ok, writer, keep_alive, arrived)

    def _key_ok(self, authorization: str | None) -> bool:
        if self.require_key is None:
            return True
        expected = f"Bearer {self.require_key}".encode()
        return authorization is not None and hmac.compare_digest(authorization.encode(), expected)

    def _open_record(self, base: dict[str, Any]) -> None:
        """Give a request its log index and the fields every record starts with."""
        with self._lock:
            index = self._next_index
            self._next_index += 1
        base |= {"index": index, "time": time.time(), "model": None, "stream": False}
        base |= {"texts": (), "ids": ()}
        base |= {"fault": None, "prompt_tokens": 0, "completion_tokens": 0}

    async def _dispatch(
        self,
        base: dict[str, Any],
        body: bytes,
        key_ok: bool,
        writer: asyncio.StreamWriter,
        keep_alive: bool,
        arrived: float | None = None,
    ) -> bool:
        self._open_record(base)
        method, path, had_auth = base["method"], base["path"], base["had_auth"]
        try:
            if not key_ok:
                message = "Incorrect API key provided." if had_auth else "No API key provided."
                raise _Reply(401, message, _INVALID, "invalid_api_key")
            path = path.rstrip("/")
            if FakeBatches.openai_path(path):
                return await self._batch_route(base, body, writer, keep_alive)
            if path == CHAT_PATH and method == "POST":
                if self._slot_sem is None:
                    return await self._chat(base, body, writer, keep_alive, arrived)
                self._waiting += 1
                try:
                    await self._slot_sem.acquire()
                finally:
                    self._waiting -= 1
                try:
                    return await self._chat(base, body, writer, keep_alive)
                finally:
                    self._slot_sem.release()
            if (
                self.tokenize is not None
                and method == "POST"
                and path == _TOKENIZE[self.tokenize][0]
            ):
                payload = await self._tokenize(body)
            elif path.startswith("/v1/models") and method == "GET":
                payload = self._models_payload(path)
            elif path == "/props" and method == "GET" and self.props:
                payload = {"total_slots": self.slots or 1, "model_alias": self.models[0]}
            elif path == CHAT_PATH or path.startswith("/v1/models"):
                raise _Reply(405, f"Method {method} not allowed for {path}", _INVALID)
            else:
                raise _Reply(404, f"Invalid URL ({method} {path})", _INVALID)
        except _Reply as reply:
            self._record(**base, status=reply.status)
            self._send(writer, reply.status, reply.body, keep_alive, reply.headers)
            return keep_alive
        self._record(**base, status=200)
        self._send(writer, 200, json.dumps(payload).encode(), keep_alive)
        return keep_alive

    async def _tokenize(self, body: bytes) -> dict[str, Any]:
        """A tokenize request: one token per word of the text field."""
        assert self.tokenize is not None
        field = _TOKENIZE[self.tokenize][1]
        try:
            text = json.loads(body)[field]
        except (ValueError, KeyError, TypeError):
            raise _Reply(422, f"field required: {field}", _INVALID) from None
        if self.tokenize == "llama-cpp-python" and self._slot_sem is not None:
            self._waiting += 1  # the server's lock: a running stream sees a request waiting
            try:
                await self._slot_sem.acquire()
            finally:
                self._waiting -= 1
            self._slot_sem.release()
        self.tokenized.append(str(text))
        return {"tokens": list(range(len(str(text).split())))}

    async def _batch_route(
        self, base: dict[str, Any], body: bytes, writer: asyncio.StreamWriter, keep_alive: bool
    ) -> bool:
        """A batch-API request of either API (``self.batches``), with a lost reply if queued."""
        path = base["path"].rstrip("/")
        reply = self.batches.handle(base["method"], path, base["query"], body)
        if reply.lost is not None:
            self._record(**(base | {"fault": f"lost reply ({reply.lost})"}), status=None)
            if reply.lost == "timeout":
                await asyncio.sleep(self.batches.hold_seconds)
            writer.transport.abort()
            return False
        self._record(**base, status=reply.status)
        self._send(
            writer, reply.status, reply.body, keep_alive, {"Content-Type": reply.content_type}
        )
        return keep_alive

    def _models_payload(self, path: str) -> dict[str, Any]:
        def card(name: str) -> dict[str, Any]:
            return {"id": name, "object": "model", "created": 1700000000, "owned_by": "quiztui"}

        wanted = path.removeprefix("/v1/models").lstrip("/")
        if not wanted:
            return {"object": "list", "data": [card(m) for m in self.models]}
        if wanted in self.models:
            return card(wanted)
        message = f"The model '{wanted}' does not exist"
        raise _Reply(404, message, _INVALID, "model_not_found")

    def _send(
        self,
        writer: asyncio.StreamWriter,
        status: int,
        body: bytes,
        keep_alive: bool,
        extra: Mapping[str, str] | None = None,
    ) -> None:
        headers = {"Content-Type": _JSON, "Content-Length": str(len(body)), **(extra or {})}
        writer.write(_head(status, headers, keep_alive) + body)

    # -- chat completions ------------------------------------------------------------------

    async def _chat(
        self,
        base: dict[str, Any],
        body: bytes,
        writer: asyncio.StreamWriter,
        keep_alive: bool,
        arrived: float | None = None,
    ) -> bool:
        """One chat request; ``arrived``: when its head was read (the latency runs from there;
        a one-slot server's from when the slot is taken)."""
        try:
            payload = json.loads(body)
        except ValueError:
            payload = None
        if not isinstance(payload, dict):
            raise _Reply(400, "We could not parse the JSON body of your request.", _INVALID)
        messages = payload.get("messages")
        model = payload.get("model")
        if not isinstance(model, str) or not model:
            raise _Reply(400, "You must provide a model parameter.", _INVALID)
        if not isinstance(messages, list) or not messages:
            message = "Invalid value for 'messages': expected a non-empty array."
            raise _Reply(400, message, _INVALID, "invalid_value")
        contents = [_content_text(m.get("content")) for m in messages if isinstance(m, dict)]
        users = [m for m in messages if isinstance(m, dict) and m.get("role") == "user"]
        prompt = _content_text(users[-1].get("content")) if users else ""
        asked = parse_rendered_batch(prompt)
        stream = bool(payload.get("stream"))
        include_usage = stream and bool((payload.get("stream_options") or {}).get("include_usage"))
        include_usage = include_usage and self.stream_usage
        base |= {"model": model, "stream": stream, "texts": tuple(asked.values())}
        base |= {"ids": tuple(asked), "prompt_tokens": sum(map(approx_tokens, contents))}
        roles = [m.get("role") for m in messages if isinstance(m, dict)]
        base["roles"] = tuple(str(r) for r in roles)
        response_format = payload.get("response_format")
        kind = response_format.get("type") if isinstance(response_format, dict) else None
        base["response_format"] = kind if isinstance(kind, str) else None
        if kind not in (None, "text") and self.structured is not None and kind != self.structured:
            if self.structured == "json_object":  # llama-cpp-python: its validation error, as 500
                message = (
                    "1 validation error:\n  {'type': 'literal_error', 'loc': ('body',"
                    f" 'response_format', 'type'), 'msg': \"Input should be 'text' or"
                    f" 'json_object'\", 'input': '{kind}'}}"
                )
                raise _Reply(500, message, "internal_server_error")
            allowed = "text" if self.structured == "text" else f"text or {self.structured}"
            message = f"response_format type must be one of {allowed}, not {kind}"
            raise _Reply(400, message, _INVALID)
        logprobs = payload.get("logprobs") is True
        base["logprobs"] = logprobs
        top_n = payload.get("top_logprobs", 0 if logprobs else None)
        if top_n is not None and self.reject_logprobs:
            message = "Unsupported parameter: 'logprobs' is not supported with this model."
            raise _Reply(400, message, _INVALID, "unsupported_parameter")
        if top_n is not None and not (
            logprobs and isinstance(top_n, int) and not isinstance(top_n, bool) and 0 <= top_n <= 20
        ):
            message = (
                "Invalid value for 'top_logprobs': an integer from 0 to 20 with logprobs true."
            )
            raise _Reply(400, message, _INVALID, "invalid_value")

        fault = self._next_fault()
        base["fault"] = fault
        # ``latency`` is the reply's whole time, as a model server's is: the fake's own work
        # (the oracle's reply, its logprobs, the JSON of every event) is done first and the wait
        # is what is left of it, so that work is never added on top (sixteen replies of a round
        # otherwise came one after another, 3 ms apart, after their waits). It runs from the
        # request's arrival: a request read while others were being prepared (a round's sixteen
        # come together) was given its time only once its turn came, up to 20 ms late.
        now = asyncio.get_running_loop().time()
        due = (now if arrived is None else min(arrived, now)) + self.latency
        # The other requests that arrived with this one take their time now too: they are not
        # held up by this one's preparation (a model server reads them all as they come).
        await asyncio.sleep(0)
        if fault == "429":
            await _until(due)
            message = "Rate limit reached for requests. Please try again later."
            retry = self.retry_after
            retry_after = str(int(retry)) if float(retry).is_integer() else str(retry)
            raise _Reply(429, message, "requests", "rate_limit_exceeded", Retry_After=retry_after)
        if fault == "500" or (fault == "stream_error" and not stream):
            await _until(due)
            raise _Reply(500, SERVER_ERROR_MESSAGE, "server_error")
        if fault == "drop":
            await _until(due)
            self._record(**base, status=None)
            writer.transport.abort()
            return False

        await asyncio.sleep(0)  # requests that arrive meanwhile are read (and timed) first
        content, faulted = self._content(prompt, list(asked), fault, base["index"])
        if kind == self.structured and isinstance(response_format, dict) and fault is None:
            content = _structured(content, list(asked), response_format)
        finish = "stop"
        if fault == "content_filter" or content == CONTENT_FILTERED:
            content, finish = "", "content_filter"
        elif fault == "length":  # the reply stops at the token limit
            content, finish = content[: len(content) // 2], "length"
        tokens = None
        if logprobs:
            await asyncio.sleep(0)
            tokens = oracle_logprobs(prompt, content, self.truth, seed=self.seed, top_n=top_n or 0)
        base["completion_tokens"] = completion_tokens = approx_tokens(content)
        usage = {
            "prompt_tokens": base["prompt_tokens"],
            "completion_tokens": completion_tokens,
            "total_tokens": base["prompt_tokens"] + completion_tokens,
        }
        ident = f"chatcmpl-fake{base['index']:08d}"
        common = {"id": ident, "created": int(base["time"]), "model": model}
        common["system_fingerprint"] = "fp_quiztui_fake"
        if not stream:
            choice = {
                "index": 0,
                "message": {"role": "assistant", "content": content, "refusal": None},
                "logprobs": None
                if tokens is None
                else {"content": _logprob_items(tokens), "refusal": None},
                "finish_reason": finish,
            }
            obj = {**common, "object": "chat.completion", "choices": [choice], "usage": usage}
            data = json.dumps(obj).encode()
            await _until(due)
            self._record(**base, status=200, faulted_ids=faulted)
            if fault == "cut":
                head = {"Content-Type": _JSON, "Content-Length": str(len(data))}
                writer.write(_head(200, head, keep_alive) + data[: len(data) // 2])
                await _close_gracefully(writer)
                return False
            self._send(writer, 200, data, keep_alive)
            return keep_alive
        encoded = None
        if tokens is not None:  # the events' logprobs, a few pieces at a time (see _encoded)
            encoded = await _encoded(tokens_by_chunk(tokens, self._pieces(content)))
        events = self._openai_events(
            common, content, usage, include_usage, fault, tokens, finish, encoded
        )
        await _until(due)
        self._record(**base, status=200, faulted_ids=faulted)
        return await self._stream(writer, keep_alive, events, fault)

    def _content(
        self, prompt: str, ids: list[str], fault: str | None, index: int
    ) -> tuple[str, tuple[str, ...]]:
        """The reply text, and the ids a fault left out or garbled."""
        if fault == "refusal":
            return REFUSAL_TEXT, tuple(ids)
        if fault == "malformed" and not ids:  # not a judge batch: a reply with nothing to parse
            return "Hard to say; it depends on how you read it.\n", ()
        rng = random.Random(f"{self.fault_seed}:{index}")
        hit = rng.sample(ids, max(1, round(len(ids) / 3))) if ids else []
        hit.sort(key=ids.index)
        skip = frozenset(hit) if fault == "missing" else frozenset()
        reply = self.responder(prompt) if self.responder is not None else None
        if reply is None:
            reply = oracle_reply(
                prompt,
                self.truth,
                tpr=self.tpr,
                tnr=self.tnr,
                seed=self.seed,
                skip_ids=skip,
                disagreement=self.disagreement,
                refusal_rate=self.refusal_rate,
            )
        if fault == "missing":
            return reply, tuple(hit)
        if fault != "malformed":
            return reply, ()
        garbage = [
            "{ident} maybe???",
            '{{"id": "{ident}", "verdict": ',
            "{ident}: ??? hard to say",
        ]
        lines = ["<<<"]
        for line in reply.splitlines():
            ident = line.split(":", 1)[0]
            if ident in hit:
                line = garbage[hit.index(ident) % len(garbage)].format(ident=ident)
            lines.append(line)
        lines.append('{"broken": [json')
        return "\n".join(lines) + "\n", tuple(hit)

    def _pieces(self, content: str) -> list[str]:
        if self.chunk_chars is not None:
            step = self.chunk_chars
            return [content[i : i + step] for i in range(0, len(content), step)]
        lines = content.splitlines(keepends=True)
        step = self.chunk_lines
        return ["".join(lines[i : i + step]) for i in range(0, len(lines), step)]

    def _openai_events(
        self,
        common: dict[str, Any],
        content: str,
        usage: dict[str, int],
        include_usage: bool,
        fault: str | None,
        tokens: list[TokenLogprob] | None = None,
        finish: str = "stop",
        encoded: list[_Encoded] | None = None,
    ) -> list[bytes]:
        """The stream's events as they go on the wire (a fault cuts or breaks the list);
        ``encoded``: each piece's logprobs already encoded (:func:`_encoded`)."""
        chunk = {**common, "object": "chat.completion.chunk"}
        extra = {"usage": None} if include_usage else {}

        def event(delta: dict[str, Any], finish: str | None = None, logprobs: Any = None) -> bytes:
            encoded = logprobs if isinstance(logprobs, _Encoded) else None
            if encoded is not None:
                logprobs = _MARK
            choice = {"index": 0, "delta": delta, "logprobs": logprobs, "finish_reason": finish}
            return _sse({**chunk, "choices": [choice], **extra}, encoded)

        pieces = self._pieces(content)
        events = [event({"role": "assistant", "content": "", "refusal": None})]
        if tokens is None:
            events += [event({"content": piece}) for piece in pieces]
        else:
            # Each chunk carries the tokens that start in its text, so a client that has read a
            # chunk holds the logprobs of every character in it.
            if encoded is None:
                encoded = [_logprobs_json(chunk) for chunk in tokens_by_chunk(tokens, pieces)]
            for piece, logprobs in zip(pieces, encoded, strict=True):
                events.append(event({"content": piece}, None, logprobs))
        if fault == "cut":
            events = events[: 1 + len(pieces) // 2]
        elif fault == "stream_error":
            error = {
                "message": SERVER_ERROR_MESSAGE,
                "type": "server_error",
                "param": None,
                "code": None,
            }
            events = events[: 1 + len(pieces) // 2] + [_sse({"error": error})]
            events.append(b"0\r\n\r\n")  # the body ends (no [DONE]); the connection stays
        else:
            events.append(event({}, finish))
            if include_usage:
                events.append(_sse({**chunk, "choices": [], "usage": usage}))
            events.append(_DONE)
        return events

    async def _stream(
        self, writer: asyncio.StreamWriter, keep_alive: bool, events: list[bytes], fault: str | None
    ) -> bool:
        headers = {
            "Content-Type": "text/event-stream; charset=utf-8",
            "Cache-Control": "no-cache",
            "Transfer-Encoding": "chunked",
        }
        writer.write(_head(200, headers, keep_alive))
        if self._slot_sem is not None and fault is None:
            # One slot: a stream running while another request waits is ended with [DONE].
            for data in events[:-1]:
                if self._waiting:
                    self.interrupted += 1
                    writer.write(_DONE)
                    await writer.drain()
                    return keep_alive
                writer.write(data)
                await writer.drain()
                await asyncio.sleep(self.stream_delay)
            writer.write(events[-1])
            return keep_alive
        if self.stream_delay > 0:
            for data in events:
                writer.write(data)
                await writer.drain()
                await asyncio.sleep(self.stream_delay)
        else:
            writer.write(b"".join(events))
        if fault == "cut":
            await _close_gracefully(writer)
            return False
        return keep_alive


def _structured(content: str, ids: list[str], response_format: dict[str, Any]) -> str:
    """The oracle's text reply as the JSON a schema-constrained server gives (one line):
    ``{"A1": {"verdict": true, "reason": ...}, ...}`` for a batch, ``{"answer": "C", "reason":
    ...}`` for a question."""
    from quiztui.core.question_mode import parse_choice_line
    from quiztui.core.verdicts import parse_reply

    if ids:
        found = parse_reply(content, ids)
        verdicts = {
            i: {"verdict": found[i].verdict, "reason": found[i].reason} for i in ids if i in found
        }
        return json.dumps(verdicts, separators=_COMPACT)
    schema = response_format.get("schema") or (response_format.get("json_schema") or {}).get(
        "schema"
    )
    letters = (((schema or {}).get("properties") or {}).get("answer") or {}).get("enum") or []
    for line in content.splitlines():
        choice = parse_choice_line(line, len(letters))
        if choice is not None:
            answer = {"answer": letters[choice[0]], "reason": choice[1]}
            return json.dumps(answer, separators=_COMPACT)
    return content


async def _encoded(chunks: list[list[TokenLogprob]]) -> list[_Encoded]:
    """Each chunk's logprobs encoded, yielding to the loop every few chunks: a request that
    arrives while other replies fall due is prepared between their sends, not before them (the
    fake's work for one reply, a millisecond or two, held up the round's other replies)."""
    out = []
    for n, chunk in enumerate(chunks, 1):
        out.append(_logprobs_json(chunk))
        if n % 4 == 0:
            await asyncio.sleep(0)
    return out


def _check_kind(kind: str, known: Sequence[str] = FAULT_KINDS + EXTRA_FAULT_KINDS) -> None:
    if kind not in known:
        raise ValueError(f"unknown fault kind {kind!r}; choose from {', '.join(known)}")


async def _until(due: float) -> None:
    """Wait until the loop's clock reads ``due`` (at once when it is past)."""
    wait = due - asyncio.get_running_loop().time()
    if wait > 0:
        await asyncio.sleep(wait)


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    parts: list[bytes] = []
    while True:
        size = int((await reader.readuntil(b"\r\n")).split(b";")[0].strip(), 16)
        if size == 0:
            while (await reader.readuntil(b"\r\n")) != b"\r\n":  # trailers
                pass
            return b"".join(parts)
        parts.append(await reader.readexactly(size))
        await reader.readexactly(2)


async def _close_gracefully(writer: asyncio.StreamWriter) -> None:
    """Flush what was written, then close: the client sees a body that stops short."""
    with contextlib.suppress(ConnectionError):
        await writer.drain()
    writer.close()
    with contextlib.suppress(ConnectionError):
        await writer.wait_closed()


def main(argv: Sequence[str] | None = None) -> None:
    import os

    parser = argparse.ArgumentParser(
        prog="python -m quiztui.testing.fake_openai",
        description="Serve a fake OpenAI-compatible judge on loopback.",
    )
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--truth-quiz", help="a quiz file whose key (or truth file) is the truth")
    parser.add_argument("--model", action="append", help="model name to list (repeatable)")
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--stream-delay", type=float, default=0.0)
    parser.add_argument("--tpr", type=float, default=1.0)
    parser.add_argument("--tnr", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--fault-rate", type=float, default=0.0)
    parser.add_argument("--fault-kinds", default=",".join(FAULT_KINDS))
    parser.add_argument("--fault-seed", type=int, default=0)
    parser.add_argument("--retry-after", type=float, default=1)
    parser.add_argument("--reject-logprobs", action="store_true", help="answer logprobs with 400")
    parser.add_argument("--require-key-env", help="environment variable holding the required key")
    parser.add_argument(
        "--disagreement", type=float, default=0.0, help="robustness: P(an answer is not the truth)"
    )
    parser.add_argument(
        "--refusal-rate", type=float, default=0.0, help="robustness: P(an answer is refused)"
    )
    args = parser.parse_args(argv)

    truth: dict[str, bool] = {}
    if args.truth_quiz:
        from quiztui.formats import load_quiz  # lazy: formats is optional for this tool

        truth = truth_from_quiz(load_quiz(args.truth_quiz))
    require_key = None
    if args.require_key_env:
        require_key = os.environ.get(args.require_key_env)
        if not require_key:
            parser.error(f"environment variable {args.require_key_env} is not set")
    server = FakeOpenAI(
        truth,
        port=args.port,
        models=args.model or "fake-judge",
        tpr=args.tpr,
        tnr=args.tnr,
        seed=args.seed,
        latency=args.latency,
        stream_delay=args.stream_delay,
        require_key=require_key,
        fault_rate=args.fault_rate,
        fault_kinds=[k for k in args.fault_kinds.split(",") if k],
        fault_seed=args.fault_seed,
        retry_after=args.retry_after,
        reject_logprobs=args.reject_logprobs,
        disagreement=args.disagreement,
        refusal_rate=args.refusal_rate,
    )
    with server:
        print(f"fake OpenAI server at {server.base_url} ({len(truth)} known assertions)")
        print("Ctrl-C to stop", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()
        log = server.requests
        faults = Counter(r.fault for r in log if r.fault)
        print(f"served {len(log)} requests; faults: {dict(faults) or 'none'}")
        chats = [r.time for r in log if r.path.endswith(CHAT_PATH)]
        if chats:  # time.time() at the first chat request's arrival (bench/vet_throughput.py)
            print(f"first chat request at {min(chats):.6f}", flush=True)


if __name__ == "__main__":
    main()
