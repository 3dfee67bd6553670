"""What the loopback fakes of native APIs (Anthropic, Gemini) share, on top of :class:`FakeOpenAI`.

They reuse FakeOpenAI's sockets, HTTP/1.1 keep-alive, fault queue and seeded fault draw, request
log, oracle replies and fault-shaped contents (``missing``, ``malformed``, ``refusal``), and differ
only in paths, request and reply shapes, error bodies and stream framing. A subclass lists its
routes (:meth:`NativeFake._routes`: method, path pattern, handler of a :class:`Routed`
request), so adding an endpoint — e.g. a batch API — is one more route and one handler; a chat
handler parses its request into a :class:`ChatCall` (:func:`chat_call`) and hands it to
:meth:`NativeFake._serve_chat`, which calls back for the provider's reply body and stream events.
The model endpoints (:meth:`NativeFake._list_models`) call back for the provider's model card,
list page and unknown-model error.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from quiztui.core.assertions import parse_rendered_batch
from quiztui.simulate.robustness import CONTENT_FILTERED
from quiztui.testing.fake_openai import (
    FakeOpenAI,
    _chunk,
    _close_gracefully,
    _head,
    _until,
    approx_tokens,
)

_JSON = "application/json"
_OWN_PHRASES = {529: "Overloaded"}  # statuses http.HTTPStatus does not know
_COMPACT = (",", ":")


@dataclass(slots=True)
class Routed:
    """A request matched to a route: its log entry so far, the path match and the raw body."""

    base: dict[str, Any]  # the request log entry, completed by the handler
    match: re.Match[str]
    body: bytes
    writer: asyncio.StreamWriter
    keep_alive: bool


Handler = Callable[[Routed], Awaitable[bool]]


class NativeReply(Exception):
    """An error reply (status, JSON body, extra headers) raised while handling a request."""

    def __init__(self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None):
        super().__init__(f"HTTP {status}")
        self.status = status
        self.body = json.dumps(body).encode()
        self.headers = headers or {}


@dataclass(frozen=True, slots=True)
class ChatCall:
    """A chat request in provider-neutral terms."""

    model: str
    prompt: str  # the last user message: the judge batch whose ids and texts are logged
    contents: tuple[str, ...]  # every message text (system included), for the token count
    stream: bool


@dataclass(slots=True)
class ChatReply:
    """What the fake says back: ``finish`` is "stop", "length" or a fault's own stop form."""

    content: str
    finish: str
    fault: str | None
    index: int
    model: str
    prompt_tokens: int
    completion_tokens: int


def json_body(body: bytes) -> dict[str, Any] | None:
    try:
        payload = json.loads(body)
    except ValueError:
        return None
    return payload if isinstance(payload, dict) else None


def compact(obj: Any) -> bytes:
    return json.dumps(obj, separators=_COMPACT).encode()


def seconds_text(value: float) -> str:
    """``retry_after`` as a header or duration shows it: ``2`` for 2.0, ``0.5`` for 0.5."""
    return str(int(value)) if float(value).is_integer() else str(value)


def chat_call(model: str, system: str, turns: list[tuple[bool, str]], stream: bool) -> ChatCall:
    """A :class:`ChatCall` from the system text and the turns as (from the user?, text)."""
    users = [text for is_user, text in turns if is_user]
    prompt = users[-1] if users else ""
    return ChatCall(model, prompt, (system, *(text for _, text in turns)), stream)


class NativeFake(FakeOpenAI):
    """Base of FakeAnthropic and FakeGemini (see the module docstring)."""

    # Faults whose reply is an empty text with the provider's own filter/refusal stop.
    filter_faults: frozenset[str] = frozenset({"content_filter"})

    @property
    def base_url(self) -> str:
        """The API root: native clients add ``/v1/...`` or ``/v1beta/...`` themselves."""
        return f"http://{self.host}:{self.port}"

    def _key_ok(self, authorization: str | None) -> bool:
        """The key header carries the bare key (no ``Bearer``)."""
        if self.require_key is None:
            return True
        expected = self.require_key.encode()
        return authorization is not None and hmac.compare_digest(authorization.encode(), expected)

    # -- what subclasses provide -----------------------------------------------------------

    def _routes(self) -> list[tuple[str, re.Pattern[str], Handler]]:
        raise NotImplementedError

    def _auth_error(self, had_key: bool) -> NativeReply:
        raise NotImplementedError

    def _not_found(self, method: str, path: str, known_path: bool) -> NativeReply:
        raise NotImplementedError

    def _fault_error(self, fault: str | None) -> NativeReply | None:
        """The error reply a fault stands for (429, 500, ...), or None."""
        raise NotImplementedError

    def _reply_body(self, reply: ChatReply) -> dict[str, Any]:
        raise NotImplementedError

    def _model_card(self, name: str) -> dict[str, Any]:
        raise NotImplementedError

    def _models_page(self, cards: list[dict[str, Any]]) -> dict[str, Any]:
        """The reply listing every model, given their cards."""
        raise NotImplementedError

    def _unknown_model(self, name: str) -> NativeReply:
        raise NotImplementedError

    def _stream_events(
        self, reply: ChatReply, pieces: list[str]
    ) -> tuple[list[bytes], list[bytes], list[bytes]]:
        """SSE events (each a whole ``data:`` block): the opening ones, one per piece, the end."""
        raise NotImplementedError

    # -- dispatch --------------------------------------------------------------------------

    async def _dispatch(
        self,
        base: dict[str, Any],
        body: bytes,
        key_ok: bool,
        writer: asyncio.StreamWriter,
        keep_alive: bool,
        arrived: float | None = None,
    ) -> bool:
        del arrived  # the latency runs from the request's parse here (the benches use FakeOpenAI)
        self._open_record(base)
        method, path = base["method"], base["path"].rstrip("/")
        try:
            if not key_ok:
                raise self._auth_error(base["had_auth"])
            known_path = False
            for verb, pattern, handler in self._routes():
                match = pattern.fullmatch(path)
                if match is None:
                    continue
                known_path = True
                if verb == method:
                    return await handler(Routed(base, match, body, writer, keep_alive))
            raise self._not_found(method, path, known_path)
        except NativeReply as reply:
            self._record(**base, status=reply.status)
            self._send(writer, reply.status, reply.body, keep_alive, reply.headers)
            return keep_alive

    def _send(
        self,
        writer: asyncio.StreamWriter,
        status: int,
        body: bytes,
        keep_alive: bool,
        extra: Mapping[str, str] | None = None,
    ) -> None:
        """As FakeOpenAI's, plus statuses outside the standard list (Anthropic's 529)."""
        if status in _OWN_PHRASES:
            headers = {"Content-Type": _JSON, "Content-Length": str(len(body)), **(extra or {})}
            head = _head(500, headers, keep_alive).replace(
                b"500 Internal Server Error", f"{status} {_OWN_PHRASES[status]}".encode(), 1
            )
            writer.write(head + body)
            return
        super()._send(writer, status, body, keep_alive, extra)

    def _json_ok(self, req: Routed, payload: Any) -> bool:
        """Answer 200 with ``payload`` and log the request (for non-chat endpoints)."""
        self._record(**req.base, status=200)
        self._send(req.writer, 200, json.dumps(payload).encode(), req.keep_alive)
        return req.keep_alive

    # -- models ----------------------------------------------------------------------------

    async def _list_models(self, req: Routed) -> bool:
        """Every model, or the one the path's ``model`` group names (404 for another)."""
        wanted = req.match.group("model")
        if wanted is None:
            return self._json_ok(req, self._models_page([self._model_card(m) for m in self.models]))
        if wanted not in self.models:
            raise self._unknown_model(wanted)
        return self._json_ok(req, self._model_card(wanted))

    # -- chat ------------------------------------------------------------------------------

    async def _serve_chat(self, req: Routed, call: ChatCall) -> bool:
        """Answer a chat request from the oracle, with this request's fault applied."""
        base, writer, keep_alive = req.base, req.writer, req.keep_alive
        asked = parse_rendered_batch(call.prompt)
        base |= {"model": call.model, "stream": call.stream, "texts": tuple(asked.values())}
        base |= {"ids": tuple(asked), "prompt_tokens": sum(map(approx_tokens, call.contents))}
        fault = self._next_fault()
        base["fault"] = fault
        # ``latency`` is the reply's whole time (as in fake_openai): the oracle's work is done
        # inside it, and the wait is what is left.
        due = asyncio.get_running_loop().time() + self.latency
        error = self._fault_error(fault)
        if error is not None:
            await _until(due)
            raise error
        if fault == "drop":
            await _until(due)
            self._record(**base, status=None)
            writer.transport.abort()
            return False
        content, faulted = self._content(call.prompt, list(asked), fault, base["index"])
        finish = "stop"
        if fault in self.filter_faults:
            content, finish = "", fault
        elif content == CONTENT_FILTERED:
            content, finish = "", "content_filter"
        base["completion_tokens"] = approx_tokens(content)
        await _until(due)
        self._record(**base, status=200, faulted_ids=faulted)
        reply = ChatReply(
            content,
            finish,
            fault,
            base["index"],
            call.model,
            base["prompt_tokens"],
            base["completion_tokens"],
        )
        if not call.stream:
            data = json.dumps(self._reply_body(reply)).encode()
            if fault == "cut":
                head = {"Content-Type": _JSON, "Content-Length": str(len(data))}
                writer.write(_head(200, head, keep_alive) + data[: len(data) // 2])
                await _close_gracefully(writer)
                return False
            self._send(writer, 200, data, keep_alive)
            return keep_alive
        return await self._write_stream(writer, keep_alive, reply)

    async def _write_stream(
        self, writer: asyncio.StreamWriter, keep_alive: bool, reply: ChatReply
    ) -> bool:
        pieces = self._pieces(reply.content) if reply.content else []
        opening, middle, end = self._stream_events(reply, pieces)
        if reply.fault == "cut":
            events = opening + middle[: len(middle) // 2]
        else:
            events = opening + middle + end
        headers = {
            "Content-Type": "text/event-stream; charset=utf-8",
            "Cache-Control": "no-cache",
            "Transfer-Encoding": "chunked",
        }
        writer.write(_head(200, headers, keep_alive))
        framed = [_chunk(e) for e in events]
        if self.stream_delay > 0:
            for data in framed:
                writer.write(data)
                await writer.drain()
                await asyncio.sleep(self.stream_delay)
        else:
            writer.write(b"".join(framed))
        if reply.fault == "cut":
            await _close_gracefully(writer)
            return False
        writer.write(b"0\r\n\r\n")  # end of the chunked body
        return keep_alive
