"""Anthropic's Messages API over httpx: ``POST {base_url}/v1/messages``, streamed as SSE.

The key goes in ``x-api-key`` with ``anthropic-version: 2023-06-01``. System messages go in the
top-level ``system`` field (the API takes only user and assistant turns), and ``max_tokens`` is
required, so a request without one gets :data:`DEFAULT_MAX_TOKENS`.

Stream events: ``message_start`` (input token count), ``content_block_delta`` with a
``text_delta``, ``message_delta`` (``stop_reason`` and the output token count), ``message_stop``;
``ping`` is ignored and an ``error`` event (``overloaded_error`` and friends) ends the attempt.
``stop_reason`` maps to the OpenAI words the pipeline knows: ``end_turn``/``stop_sequence`` →
"stop", ``max_tokens`` → "length", and ``refusal`` → "refusal" with :attr:`ChatResult.refusal`
set, so a refusal is never read as an empty judgement.

429 ``rate_limit_error``, 529 ``overloaded_error`` and 5xx ``api_error`` are retried. The delay is
``retry-after`` when sent, else the ``anthropic-ratelimit-*-reset`` times (RFC 3339) of the limits
that ran out; 429 and 529 cut the adaptive concurrency limit.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Unpack

from quiztui.providers._http import HTTPOptions, HTTPProvider, event_json, sse_data
from quiztui.providers.base import ChatRequest, ChatResult, OnLogprobs, OnText, StreamInterrupted

if TYPE_CHECKING:
    import httpx

from quiztui.providers.retry import RETRYABLE_STATUS, Retryable, transient

API_VERSION = "2023-06-01"
DEFAULT_BASE_URL = "https://api.anthropic.com"
DEFAULT_MAX_TOKENS = 4096  # a judge reply of 50 verdicts with reasons fits well inside
MESSAGES_PATH = "/v1/messages"
_RATE_LIMITS = ("requests", "tokens", "input-tokens", "output-tokens")
_STOP = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length"}
# Mid-stream error types that mean "too busy": they cut the concurrency limit like a 429.
_BUSY = frozenset({"overloaded_error", "rate_limit_error"})


def _rfc3339(value: str | None) -> dt.datetime | None:
    if not value:
        return None
    try:
        when = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=dt.UTC)


def ratelimit_reset_delay(headers: Mapping[str, str], now: dt.datetime) -> float | None:
    """Seconds until Anthropic's rate limits let a request through, from its reset headers.

    The latest reset among the limits whose ``-remaining`` is 0 (they all have to refill); when
    none says which ran out, the earliest reset (the soonest anything frees up). None when no
    reset header parses.
    """
    exhausted: list[float] = []
    every: list[float] = []
    for kind in _RATE_LIMITS:
        when = _rfc3339(headers.get(f"anthropic-ratelimit-{kind}-reset"))
        if when is None:
            continue
        delay = max((when - now).total_seconds(), 0.0)
        every.append(delay)
        if headers.get(f"anthropic-ratelimit-{kind}-remaining", "").strip() == "0":
            exhausted.append(delay)
    if exhausted:
        return max(exhausted)
    return min(every) if every else None


def stop_to_finish(stop_reason: object) -> str | None:
    if not isinstance(stop_reason, str) or not stop_reason:
        return None
    return _STOP.get(stop_reason, stop_reason)


class AnthropicProvider(HTTPProvider):
    name = "anthropic"
    retryable_status = RETRYABLE_STATUS | {529}
    rate_limit_status = frozenset({429, 529})

    def __init__(
        self,
        *,
        model: str,
        base_url: str = DEFAULT_BASE_URL,
        api_key_env: str | None = "ANTHROPIC_API_KEY",
        **options: Unpack[HTTPOptions],
    ) -> None:
        super().__init__(
            base_url=base_url,
            model=model,
            api_key_env=api_key_env,
            headers={"anthropic-version": API_VERSION},
            **options,
        )

    def _key_headers(self, key: str) -> dict[str, str]:
        return {"x-api-key": key}

    def _chat_path(self, stream: bool) -> str:
        return MESSAGES_PATH

    def _body(self, request: ChatRequest, stream: bool) -> dict[str, Any]:
        system = "\n\n".join(c for r, c in request.messages if r == "system" and c)
        turns = [
            {"role": "assistant" if r == "assistant" else "user", "content": c}
            for r, c in request.messages
            if r != "system"
        ]
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": request.max_tokens or DEFAULT_MAX_TOKENS,
            "messages": turns,
            "temperature": request.temperature,
            "stream": stream,
        }
        if system:
            body["system"] = system
        return body

    def _retry_after(self, response: httpx.Response, body: Any) -> float | None:
        hint = super()._retry_after(response, body)
        if hint is None:
            hint = ratelimit_reset_delay(response.headers, dt.datetime.now(dt.UTC))
        return hint

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
        data = await self._post_json(MESSAGES_PATH, self._body(request, False))
        try:
            blocks = data["content"]
            text = "".join(
                b.get("text") or ""
                for b in blocks
                if isinstance(b, dict) and b.get("type") == "text"
            )
            usage = data.get("usage") or {}
            stop = data.get("stop_reason")
        except (KeyError, TypeError, AttributeError):
            raise Retryable("malformed response body") from None
        result = ChatResult(
            text=text,
            tokens_in=int(usage.get("input_tokens") or 0),
            tokens_out=int(usage.get("output_tokens") or 0),
        )
        _finish(result, stop)
        return result

    async def _stream_once(self, request: ChatRequest, on_text: OnText) -> ChatResult:
        result = ChatResult()
        parts: list[str] = []
        done = False
        body = self._body(request, True)
        try:
            async with self._post_stream(MESSAGES_PATH, body) as response:
                if response.status_code >= 400:
                    await response.aread()
                    self._check_status(response)
                async for payload in sse_data(response):
                    try:
                        event = event_json(payload)
                    except ValueError:
                        continue  # a malformed event: skip it, the parser re-asks missing ids
                    if not isinstance(event, dict):
                        continue
                    kind = event.get("type")
                    if kind == "content_block_delta":
                        delta = event.get("delta") or {}
                        text = delta.get("text") if delta.get("type") == "text_delta" else None
                        if isinstance(text, str) and text:
                            parts.append(text)
                            on_text(text)
                    elif kind == "message_start":
                        usage = (event.get("message") or {}).get("usage") or {}
                        result.tokens_in = int(usage.get("input_tokens") or 0)
                        result.tokens_out = int(usage.get("output_tokens") or 0)
                    elif kind == "message_delta":
                        usage = event.get("usage") or {}
                        if usage.get("output_tokens") is not None:
                            result.tokens_out = int(usage["output_tokens"])  # cumulative
                        if usage.get("input_tokens") is not None:
                            result.tokens_in = int(usage["input_tokens"])
                        _finish(result, (event.get("delta") or {}).get("stop_reason"))
                    elif kind == "message_stop":
                        done = True  # read on to the end so the connection goes back to the pool
                    elif kind == "error":
                        error = event.get("error") or {}
                        what = f"{error.get('type', 'error')}: {str(error.get('message'))[:200]}"
                        busy = error.get("type") in _BUSY
                        raise self._broken(f"stream error {what}", parts, rate_limited=busy)
        except transient() as exc:
            raise self._broken(f"stream cut ({type(exc).__name__})", parts) from None
        result.text = "".join(parts)
        if not done and result.finish_reason is None:
            if parts:
                raise StreamInterrupted("stream ended without message_stop", result.text)
            raise Retryable("empty stream")
        return result


def _finish(result: ChatResult, stop_reason: object) -> None:
    finish = stop_to_finish(stop_reason)
    if finish is None:
        return
    result.finish_reason = finish
    if finish == "refusal":
        result.refusal = "the model declined to answer (stop_reason: refusal)"
