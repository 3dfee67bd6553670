"""A loopback server speaking Google's Gemini API (``generateContent``), for tests and benchmarks.

``POST /v1beta/models/{model}:generateContent`` returns one ``GenerateContentResponse``;
``:streamGenerateContent`` streams them as SSE (``data: {...}`` with CRLF line ends, as
``alt=sse`` does; the query string is not checked, this fake always streams SSE there), the last
one carrying ``finishReason`` and ``usageMetadata``. Replies come from the same oracle as
:class:`FakeOpenAI`, which this class is, with Gemini's paths and shapes. ``GET /v1beta/models``
lists the models. The key is checked in ``x-goog-api-key`` (the request log records only whether
one came): none gives 403 PERMISSION_DENIED, a wrong one 400 INVALID_ARGUMENT with reason
API_KEY_INVALID, as Gemini answers. A ``system`` role in ``contents`` is a 400.

Faults: FakeOpenAI's kinds (``429`` as RESOURCE_EXHAUSTED with a ``google.rpc.RetryInfo``
``retryDelay`` of ``retry_after`` seconds and no Retry-After header, ``500`` INTERNAL, ``drop``,
``cut``, ``malformed``, ``missing``, ``refusal``) plus ``503`` (UNAVAILABLE, "model overloaded"),
``content_filter`` (no text, ``finishReason`` SAFETY) and ``blocked`` (``promptFeedback``
``blockReason`` SAFETY, no candidates).
"""

from __future__ import annotations

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
from quiztui.testing.fake_openai import EXTRA_FAULT_KINDS, FAULT_KINDS

__all__ = ["GEMINI_FAULT_KINDS", "FakeGemini"]

GEMINI_FAULT_KINDS = FAULT_KINDS + EXTRA_FAULT_KINDS + ("503", "blocked")
_FINISH = {"stop": "STOP", "length": "MAX_TOKENS", "content_filter": "SAFETY"}
_RATINGS = [{"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH"}]
_STATUS = {400: "INVALID_ARGUMENT", 403: "PERMISSION_DENIED", 404: "NOT_FOUND"}
_STATUS |= {405: "UNIMPLEMENTED", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}


def _error(code: int, message: str, details: list[dict[str, Any]] | None = None) -> NativeReply:
    error: dict[str, Any] = {"code": code, "message": message, "status": _STATUS[code]}
    if details:
        error["details"] = details
    return NativeReply(code, {"error": error})


def _parts_text(content: Any) -> str:
    parts = content.get("parts") if isinstance(content, dict) else None
    if not isinstance(parts, list):
        return ""
    return "".join(p.get("text", "") for p in parts if isinstance(p, dict))


class FakeGemini(NativeFake):
    """``with FakeGemini(truth=...) as server: GeminiProvider(base_url=server.base_url)``."""

    fault_names = GEMINI_FAULT_KINDS
    key_header = "x-goog-api-key"
    filter_faults = frozenset({"content_filter", "blocked"})

    def _routes(self) -> list[tuple[str, re.Pattern[str], Handler]]:
        return [
            (
                "POST",
                re.compile(
                    r"/v1beta/models/(?P<model>[^/:]+):(?P<verb>generateContent|streamGenerateContent)"
                ),
                self._generate,
            ),
            ("GET", re.compile(r"/v1beta/models(?:/(?P<model>[^/:]+))?"), self._list_models),
        ]

    # -- errors ----------------------------------------------------------------------------

    def _auth_error(self, had_key: bool) -> NativeReply:
        if not had_key:
            message = (
                "Method doesn't allow unregistered callers (callers without established"
                " identity). Please use API Key or other form of API consumer identity."
            )
            return _error(403, message)
        info = {
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": "API_KEY_INVALID",
            "domain": "googleapis.com",
        }
        return _error(400, "API key not valid. Please pass a valid API key.", [info])

    def _not_found(self, method: str, path: str, known_path: bool) -> NativeReply:
        if known_path:
            return _error(405, f"Method {method} not allowed for {path}")
        return _error(404, f"The requested URL {path} was not found on this server.")

    def _fault_error(self, fault: str | None) -> NativeReply | None:
        if fault == "429":
            retry = self.retry_after
            delay = f"{seconds_text(retry)}s"
            details: list[dict[str, Any]] = [
                {
                    "@type": "type.googleapis.com/google.rpc.QuotaFailure",
                    "violations": [
                        {"quotaMetric": "generate_content_requests", "quotaId": "PerMinute"}
                    ],
                },
                {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay},
            ]
            message = "You exceeded your current quota, please check your plan and billing details."
            return _error(429, message, details)
        if fault == "500":
            return _error(500, "An internal error has occurred. Please retry or report it.")
        if fault == "503":
            return _error(503, "The model is overloaded. Please try again later.")
        return None

    # -- endpoints -------------------------------------------------------------------------

    def _model_card(self, name: str) -> dict[str, Any]:
        methods = ["generateContent", "streamGenerateContent"]
        return {
            "name": f"models/{name}",
            "displayName": name,
            "supportedGenerationMethods": methods,
        }

    def _models_page(self, cards: list[dict[str, Any]]) -> dict[str, Any]:
        return {"models": cards}

    def _unknown_model(self, name: str) -> NativeReply:
        return _error(404, f"models/{name} is not found for API version v1beta")

    async def _generate(self, req: Routed) -> bool:
        stream = req.match.group("verb") == "streamGenerateContent"
        return await self._serve_chat(req, self._parse(req.match.group("model"), req.body, stream))

    def _parse(self, model: str, body: bytes, stream: bool) -> ChatCall:
        payload = json_body(body)
        if payload is None:
            raise _error(400, "Invalid JSON payload received.")
        contents = payload.get("contents")
        if not isinstance(contents, list) or not contents:
            raise _error(400, "* GenerateContentRequest.contents: contents is not specified")
        for content in contents:
            role = content.get("role") if isinstance(content, dict) else None
            if role not in ("user", "model", None):
                raise _error(400, "Please use a valid role: user, model.")
        turns = [(c.get("role") in ("user", None), _parts_text(c)) for c in contents]
        return chat_call(model, _parts_text(payload.get("systemInstruction")), turns, stream)

    # -- reply shapes ----------------------------------------------------------------------

    def _response(self, reply: ChatReply, text: str | None, final: bool) -> dict[str, Any]:
        out: dict[str, Any] = {"modelVersion": reply.model, "responseId": f"fake{reply.index:08d}"}
        if reply.fault == "blocked":
            out["promptFeedback"] = {"blockReason": "SAFETY", "safetyRatings": _RATINGS}
        else:
            candidate: dict[str, Any] = {"index": 0}
            if text:
                candidate["content"] = {"parts": [{"text": text}], "role": "model"}
            if final:
                candidate["finishReason"] = _FINISH.get(reply.finish, "STOP")
                if reply.finish == "content_filter":
                    candidate["safetyRatings"] = _RATINGS
            out["candidates"] = [candidate]
        if final:
            usage = {"promptTokenCount": reply.prompt_tokens}
            if reply.fault != "blocked":
                usage["candidatesTokenCount"] = reply.completion_tokens
            usage["totalTokenCount"] = reply.prompt_tokens + reply.completion_tokens
            out["usageMetadata"] = usage
        return out

    def _reply_body(self, reply: ChatReply) -> dict[str, Any]:
        return self._response(reply, reply.content, True)

    def _stream_events(
        self, reply: ChatReply, pieces: list[str]
    ) -> tuple[list[bytes], list[bytes], list[bytes]]:
        last = len(pieces) - 1
        chunks = [self._response(reply, p, i == last) for i, p in enumerate(pieces)]
        if not chunks:
            chunks = [self._response(reply, None, True)]
        return [], [b"data: " + compact(c) + b"\r\n\r\n" for c in chunks], []
