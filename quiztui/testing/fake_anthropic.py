"""A loopback server speaking Anthropic's Messages API, for tests and benchmarks.

``POST /v1/messages`` answers from the same oracle as :class:`FakeOpenAI` (it *is* one, with
Anthropic's paths and shapes), streamed as Anthropic's SSE events (``message_start``,
``content_block_start``, ``ping``, ``content_block_delta``/``text_delta``, ``content_block_stop``,
``message_delta`` with ``stop_reason`` and usage, ``message_stop``) or as one ``message`` object.
``GET /v1/models`` lists the models. The key is checked in ``x-api-key`` (the request log records
only whether one came); a request without ``max_tokens``, or with a ``system`` role inside
``messages``, gets the 400 the real API gives.

Faults: FakeOpenAI's kinds (``429`` as ``rate_limit_error`` with ``retry-after`` and the
``anthropic-ratelimit-requests-*`` headers — ``retry_after_header=False`` leaves ``retry-after``
out so a client has only the reset time —, ``500`` as ``api_error``, ``drop``, ``cut``,
``malformed``, ``missing``, ``refusal``) plus ``529`` (``overloaded_error``), ``overloaded`` (an
``error`` event in the middle of the stream) and ``content_filter`` (no text, ``stop_reason``
``refusal``).

Routes are a table (:meth:`FakeAnthropic._routes`): another endpoint is one more entry.
Message Batches (``/v1/messages/batches``) are routed to :mod:`quiztui.testing.fake_batches`.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from quiztui.testing._fake_native import (
    ChatCall,
    ChatReply,
    Handler,
    NativeFake,
    NativeReply,
    Routed,
    chat_call,
    compact,
    json_body,
    seconds_text,
)
from quiztui.testing.fake_openai import EXTRA_FAULT_KINDS, FAULT_KINDS, _content_text

__all__ = ["ANTHROPIC_FAULT_KINDS", "FakeAnthropic"]

ANTHROPIC_FAULT_KINDS = FAULT_KINDS + EXTRA_FAULT_KINDS + ("529", "overloaded")
MESSAGES_PATH = "/v1/messages"
_STOP = {"stop": "end_turn", "length": "max_tokens", "content_filter": "refusal"}


def _error(status: int, kind: str, message: str, **headers: str) -> NativeReply:
    body = {"type": "error", "error": {"type": kind, "message": message}}
    return NativeReply(status, body, {k.replace("_", "-"): v for k, v in headers.items()})


def _invalid(message: str) -> NativeReply:
    return _error(400, "invalid_request_error", message)


def _event(obj: dict[str, Any]) -> bytes:
    return b"event: " + obj["type"].encode() + b"\ndata: " + compact(obj) + b"\n\n"


class FakeAnthropic(NativeFake):
    """``with FakeAnthropic(truth=...) as server: AnthropicProvider(base_url=server.base_url)``."""

    fault_names = ANTHROPIC_FAULT_KINDS
    key_header = "x-api-key"

    def __init__(
        self, truth: Any = None, *, retry_after_header: bool = True, **kwargs: Any
    ) -> None:
        super().__init__(truth, **kwargs)
        self.retry_after_header = retry_after_header

    def _routes(self) -> list[tuple[str, re.Pattern[str], Handler]]:
        return [
            ("POST", re.compile(re.escape(MESSAGES_PATH)), self._messages),
            ("GET", re.compile(r"/v1/models(?:/(?P<model>[^/]+))?"), self._list_models),
            ("POST", re.compile(r"/v1/messages/batches"), self._message_batches),
            ("GET", re.compile(r"/v1/messages/batches"), self._message_batches),
            ("GET", re.compile(r"/v1/messages/batches/[^/]+(?:/results)?"), self._message_batches),
        ]

    async def _message_batches(self, req: Routed) -> bool:
        """Message Batches: state and shapes live in testing/fake_batches.py (``self.batches``)."""
        return await self._batch_route(req.base, req.body, req.writer, req.keep_alive)

    # -- errors ----------------------------------------------------------------------------

    def _auth_error(self, had_key: bool) -> NativeReply:
        message = "invalid x-api-key" if had_key else "x-api-key header is required"
        return _error(401, "authentication_error", message)

    def _not_found(self, method: str, path: str, known_path: bool) -> NativeReply:
        if known_path:
            return _error(405, "invalid_request_error", f"Method {method} not allowed for {path}")
        return _error(404, "not_found_error", f"Not found: {method} {path}")

    def _fault_error(self, fault: str | None) -> NativeReply | None:
        if fault == "429":
            retry = self.retry_after
            reset = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=retry)
            headers = {
                "anthropic-ratelimit-requests-limit": "50",
                "anthropic-ratelimit-requests-remaining": "0",
                "anthropic-ratelimit-requests-reset": reset.isoformat().replace("+00:00", "Z"),
            }
            if self.retry_after_header:
                headers["retry-after"] = seconds_text(retry)
            message = "Number of request tokens has exceeded your per-minute rate limit."
            return _error(429, "rate_limit_error", message, **headers)
        if fault == "500":
            return _error(500, "api_error", "Internal server error")
        if fault == "529":
            return _error(529, "overloaded_error", "Overloaded")
        return None

    # -- endpoints -------------------------------------------------------------------------

    def _model_card(self, name: str) -> dict[str, Any]:
        created = "2025-01-01T00:00:00Z"
        return {"type": "model", "id": name, "display_name": name, "created_at": created}

    def _models_page(self, cards: list[dict[str, Any]]) -> dict[str, Any]:
        payload: dict[str, Any] = {"data": cards, "has_more": False}
        payload |= {"first_id": self.models[0] if self.models else None}
        payload |= {"last_id": self.models[-1] if self.models else None}
        return payload

    def _unknown_model(self, name: str) -> NativeReply:
        return _error(404, "not_found_error", f"model: {name}")

    async def _messages(self, req: Routed) -> bool:
        return await self._serve_chat(req, self._parse(req.body))

    def _parse(self, body: bytes) -> ChatCall:
        payload = json_body(body)
        if payload is None:
            raise _invalid("There was an issue with your request body: invalid JSON")
        model, messages = payload.get("model"), payload.get("messages")
        if not isinstance(model, str) or not model:
            raise _invalid("model: Field required")
        max_tokens = payload.get("max_tokens")
        if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
            raise _invalid("max_tokens: Field required")
        if not isinstance(messages, list) or not messages:
            raise _invalid("messages: at least one message is required")
        for i, m in enumerate(messages):
            role = m.get("role") if isinstance(m, dict) else None
            if role not in ("user", "assistant"):
                raise _invalid(
                    f"messages.{i}.role: Input should be 'user' or 'assistant'"
                    " (a system prompt goes in the top-level system field)"
                )
        turns = [(m["role"] == "user", _content_text(m.get("content"))) for m in messages]
        system = _content_text(payload.get("system"))
        return chat_call(model, system, turns, bool(payload.get("stream")))

    # -- reply shapes ----------------------------------------------------------------------

    def _message(self, reply: ChatReply, *, streaming: bool) -> dict[str, Any]:
        done = not streaming
        return {
            "id": f"msg_fake{reply.index:08d}",
            "type": "message",
            "role": "assistant",
            "model": reply.model,
            "content": [{"type": "text", "text": reply.content}] if done and reply.content else [],
            "stop_reason": _STOP.get(reply.finish, "end_turn") if done else None,
            "stop_sequence": None,
            "usage": {
                "input_tokens": reply.prompt_tokens,
                "output_tokens": reply.completion_tokens if done else 1,
            },
        }

    def _reply_body(self, reply: ChatReply) -> dict[str, Any]:
        return self._message(reply, streaming=False)

    def _stream_events(
        self, reply: ChatReply, pieces: list[str]
    ) -> tuple[list[bytes], list[bytes], list[bytes]]:
        opening = [
            _event({"type": "message_start", "message": self._message(reply, streaming=True)}),
            _event(
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {"type": "text", "text": ""},
                }
            ),
            _event({"type": "ping"}),
        ]
        middle = [
            _event(
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "text_delta", "text": piece},
                }
            )
            for piece in pieces
        ]
        if reply.fault == "overloaded":
            error = {"type": "overloaded_error", "message": "Overloaded"}
            return opening, middle[: len(middle) // 2], [_event({"type": "error", "error": error})]
        end = [
            _event({"type": "content_block_stop", "index": 0}),
            _event(
                {
                    "type": "message_delta",
                    "delta": {
                        "stop_reason": _STOP.get(reply.finish, "end_turn"),
                        "stop_sequence": None,
                    },
                    "usage": {"output_tokens": reply.completion_tokens},
                }
            ),
            _event({"type": "message_stop"}),
        ]
        return opening, middle, end
