"""Google's Gemini API over httpx: ``generateContent`` and ``streamGenerateContent?alt=sse``.

``POST {base_url}/v1beta/models/{model}:generateContent`` (or ``:streamGenerateContent?alt=sse``
when streaming). The key goes in the ``x-goog-api-key`` header, never in the URL, which proxies and
logs keep. System messages become ``systemInstruction``; user and assistant turns become
``contents`` with roles ``user`` and ``model``; temperature and ``max_tokens`` go in
``generationConfig``.

Every streamed event is a whole ``GenerateContentResponse``: text in
``candidates[0].content.parts[].text``, ``finishReason`` on the last one (STOP → "stop",
MAX_TOKENS → "length", SAFETY, RECITATION, PROHIBITED_CONTENT, BLOCKLIST, SPII → "content_filter"),
``usageMetadata`` with ``promptTokenCount`` and ``candidatesTokenCount``. There is no ``[DONE]``:
a stream that ends before a ``finishReason`` was cut. A blocked prompt comes back as
``promptFeedback.blockReason`` without candidates and is reported as a content-filter stop.

Errors are ``{"error": {"code", "message", "status", "details"}}``; 429 (RESOURCE_EXHAUSTED), 500,
503 and 504 are retried after the ``google.rpc.RetryInfo`` ``retryDelay`` when the body has one.
Gemini answers a wrong key with 400 ``API_KEY_INVALID``, reported as an auth failure (401) so the
run stops instead of failing every batch alike.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Unpack
from urllib.parse import quote

from quiztui.providers._http import HTTPOptions, HTTPProvider, event_json, sse_data
from quiztui.providers.base import (
    ChatRequest,
    ChatResult,
    OnLogprobs,
    OnText,
    RequestFailed,
    StreamInterrupted,
)

if TYPE_CHECKING:
    import httpx

from quiztui.providers.retry import Retryable, transient

DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com"
_FILTERED = frozenset(
    {"SAFETY", "RECITATION", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII", "IMAGE_SAFETY"}
)
_FINISH = {"STOP": "stop", "MAX_TOKENS": "length"}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d*)?)s\s*$")
_RETRY_INFO = "type.googleapis.com/google.rpc.RetryInfo"
_ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"


def finish_to_reason(finish: object) -> str | None:
    if not isinstance(finish, str) or not finish or finish == "FINISH_REASON_UNSPECIFIED":
        return None
    if finish in _FILTERED:
        return "content_filter"
    return _FINISH.get(finish, finish.lower())


def _details(body: Any) -> list[dict[str, Any]]:
    error = body.get("error") if isinstance(body, dict) else None
    details = error.get("details") if isinstance(error, dict) else None
    return [d for d in details if isinstance(d, dict)] if isinstance(details, list) else []


def retry_info_delay(body: Any) -> float | None:
    """Seconds from a ``google.rpc.RetryInfo`` detail (``"retryDelay": "13s"``), if any."""
    for detail in _details(body):
        if detail.get("@type") == _RETRY_INFO:
            match = _DURATION.match(str(detail.get("retryDelay", "")))
            if match:
                return float(match.group(1))
    return None


class GeminiProvider(HTTPProvider):
    name = "gemini"

    def __init__(
        self,
        *,
        model: str,
        base_url: str = DEFAULT_BASE_URL,
        api_key_env: str | None = "GEMINI_API_KEY",
        **options: Unpack[HTTPOptions],
    ) -> None:
        super().__init__(
            base_url=base_url,
            model=model.removeprefix("models/"),
            api_key_env=api_key_env,
            **options,
        )
        self._path = f"/v1beta/models/{quote(self.model, safe='.-_')}"

    def _key_headers(self, key: str) -> dict[str, str]:
        return {"x-goog-api-key": key}

    def _chat_path(self, stream: bool) -> str:
        return f"{self._path}:{'streamGenerateContent' if stream else 'generateContent'}"

    def _body(self, request: ChatRequest) -> dict[str, Any]:
        system = "\n\n".join(c for r, c in request.messages if r == "system" and c)
        contents = [
            {"role": "model" if r == "assistant" else "user", "parts": [{"text": c}]}
            for r, c in request.messages
            if r != "system"
        ]
        config: dict[str, Any] = {"temperature": request.temperature}
        if request.max_tokens is not None:
            config["maxOutputTokens"] = request.max_tokens
        body: dict[str, Any] = {"contents": contents, "generationConfig": config}
        if system:
            body["systemInstruction"] = {"parts": [{"text": system}]}
        return body

    def _retry_after(self, response: httpx.Response, body: Any) -> float | None:
        hint = super()._retry_after(response, body)
        return hint if hint is not None else retry_info_delay(body)

    def _auth_failure(self, response: httpx.Response, body: Any) -> bool:
        if response.status_code != 400:
            return False
        reasons = {d.get("reason") for d in _details(body) if d.get("@type") == _ERROR_INFO}
        return "API_KEY_INVALID" in reasons

    async def _attempt(
        self,
        request: ChatRequest,
        stream: bool,
        on_text: OnText | None,
        on_logprobs: OnLogprobs | None,
    ) -> ChatResult:
        if stream:
            assert on_text is not None
            return await self._stream_once(request, on_text)
        data = await self._post_json(self._chat_path(False), self._body(request))
        if not isinstance(data, dict):
            raise Retryable("malformed response body")
        result = ChatResult()
        parts: list[str] = []
        _take(data, result, parts, None)
        result.text = "".join(parts)
        if result.finish_reason is None and not parts:
            raise Retryable("malformed response body")
        return result

    async def _stream_once(self, request: ChatRequest, on_text: OnText) -> ChatResult:
        result = ChatResult()
        parts: list[str] = []
        try:
            async with self._client.stream(
                "POST", self._chat_path(True), params={"alt": "sse"}, json=self._body(request)
            ) as response:
                if response.status_code >= 400:
                    await response.aread()
                    self._check_status(response)
                async for payload in sse_data(response):
                    try:
                        chunk = event_json(payload)
                    except ValueError:
                        continue  # a malformed event: skip it, the parser re-asks missing ids
                    if isinstance(chunk, dict):
                        self._stream_error(chunk, parts)
                        _take(chunk, result, parts, on_text)
        except transient() as exc:
            raise self._broken(f"stream cut ({type(exc).__name__})", parts) from None
        result.text = "".join(parts)
        if result.finish_reason is None:
            if parts:
                raise StreamInterrupted("stream ended without a finishReason", result.text)
            raise Retryable("empty stream")
        return result

    def _stream_error(self, chunk: dict[str, Any], parts: list[str]) -> None:
        """An error object inside the stream ends the attempt like the same error status."""
        error = chunk.get("error")
        if not isinstance(error, dict):
            return
        code = error.get("code")
        what = f"stream error {error.get('status') or code}: {str(error.get('message'))[:200]}"
        if isinstance(code, int) and code not in self.retryable_status:
            raise RequestFailed(what, status=code, retryable=False)
        raise self._broken(what, parts, rate_limited=code == 429)


def _take(
    chunk: dict[str, Any], result: ChatResult, parts: list[str], on_text: OnText | None
) -> None:
    """Fold one ``GenerateContentResponse`` into ``result`` (texts into ``parts``)."""
    usage = chunk.get("usageMetadata")
    if isinstance(usage, dict):
        result.tokens_in = int(usage.get("promptTokenCount") or 0)
        result.tokens_out = int(usage.get("candidatesTokenCount") or 0)
    feedback = chunk.get("promptFeedback")
    block = feedback.get("blockReason") if isinstance(feedback, dict) else None
    if block:
        result.finish_reason = "content_filter"
        result.refusal = f"prompt blocked ({block})"
    candidates = chunk.get("candidates")
    if not isinstance(candidates, list) or not candidates or not isinstance(candidates[0], dict):
        return
    candidate = candidates[0]
    content = candidate.get("content")
    for part in (content.get("parts") if isinstance(content, dict) else None) or ():
        text = part.get("text") if isinstance(part, dict) and not part.get("thought") else None
        if isinstance(text, str) and text:
            parts.append(text)
            if on_text is not None:
                on_text(text)
    finish = finish_to_reason(candidate.get("finishReason"))
    if finish is not None:
        result.finish_reason = finish
