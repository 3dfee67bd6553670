"""OpenAI-compatible chat completions (OpenAI, Ollama, vLLM, llama.cpp server, LM Studio…).

One ``httpx.AsyncClient`` per provider, a semaphore for the concurrency limit, retries with
exponential backoff and jitter on 408/429/5xx, timeouts and connection errors, honouring
``Retry-After``. Streaming uses server-sent events; a stream that breaks after text arrived raises
:class:`StreamInterrupted` with the partial text so the caller keeps what it already parsed.

Token logprobs (``logprobs``/``top_logprobs``) are asked for when the request wants them. With
``logprobs="auto"`` a server that answers 400 about logprobs is asked again without them, and not
asked for them again; with ``"on"`` that refusal is an error (:class:`LogprobsRejected`).
"""

from __future__ import annotations

import asyncio
import codecs
import json
import math
import os
import random
from collections.abc import AsyncIterator
from typing import Any, Literal

import httpx

from quiztui.core.logprobs import TokenLogprob
from quiztui.providers.base import (
    ChatRequest,
    ChatResult,
    LogprobsRejected,
    OnLogprobs,
    OnRetry,
    OnText,
    RequestFailed,
    RetryNotice,
    StreamInterrupted,
    Usage,
)
from quiztui.providers.retry import RETRYABLE_STATUS, RetryPolicy, parse_retry_after

_TRANSIENT = (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError)


async def _sse_data(response: httpx.Response) -> AsyncIterator[str]:
    """The ``data:`` payloads of a server-sent-event stream (cheaper than ``aiter_lines``)."""
    buffer = ""
    async for text in response.aiter_text():
        buffer += text
        if "\n" not in buffer:
            continue
        *lines, buffer = buffer.split("\n")
        for line in lines:
            if line.startswith("data:"):
                yield line[5:].strip()
    if buffer.startswith("data:"):
        yield buffer[5:].strip()


class _Retryable(Exception):
    def __init__(self, error: str, retry_after: float | None = None) -> None:
        super().__init__(error)
        self.error = error
        self.retry_after = retry_after


def _error_detail(response: httpx.Response) -> str:
    try:
        body = response.json()
        message = body.get("error", {}).get("message") if isinstance(body, dict) else None
    except (ValueError, AttributeError):
        message = None
    text = f"HTTP {response.status_code}"
    return f"{text}: {str(message)[:200]}" if message else text


class _TokenTexts:
    """Token texts that concatenate to the reply text.

    A character may span tokens (UTF-8 bytes split between them), in which case servers send a
    placeholder as ``token``; decoding the ``bytes`` incrementally keeps the character offsets of
    later tokens right.
    """

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def text(self, item: dict[str, Any]) -> str:
        raw = item.get("bytes")
        if isinstance(raw, list) and raw and all(isinstance(b, int) and 0 <= b < 256 for b in raw):
            return self._decoder.decode(bytes(raw))
        token = item.get("token")
        return token if isinstance(token, str) else ""


def _float(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def _parse_logprobs(logprobs: Any, texts: _TokenTexts) -> list[TokenLogprob]:
    """``choices[i].logprobs.content`` → tokens; a malformed item keeps its text (offsets) only."""
    content = logprobs.get("content") if isinstance(logprobs, dict) else None
    if not isinstance(content, list):
        return []
    tokens = []
    for item in content:
        if not isinstance(item, dict):
            continue
        top = []
        for alt in item.get("top_logprobs") or ():
            if isinstance(alt, dict) and isinstance(alt.get("token"), str):
                top.append((alt["token"], _float(alt.get("logprob"))))
        tokens.append(TokenLogprob(texts.text(item), _float(item.get("logprob")), tuple(top)))
    return tokens


def _mentions_logprobs(exc: RequestFailed) -> bool:
    return exc.status in (400, 422) and "logprob" in str(exc).lower()


class OpenAICompatProvider:
    name = "openai-compat"
    simulated = False

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key_env: str | None = None,
        concurrency: int = 16,
        timeout: float = 120.0,
        retry: RetryPolicy | None = None,
        stream: bool = True,
        logprobs: Literal["auto", "on", "off"] = "auto",
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.stream = stream
        self.logprobs = logprobs
        self.logprobs_rejected = False  # set when the server refused them under "auto"
        self.retry = retry or RetryPolicy()
        self.usage = Usage()
        self._sem = asyncio.Semaphore(max(1, concurrency))
        self._rng = random.Random()
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(api_key_env) if api_key_env else None
        if key:
            headers["Authorization"] = f"Bearer {key}"
        limits = httpx.Limits(
            max_connections=max(1, concurrency), max_keepalive_connections=max(1, concurrency)
        )
        self._client = httpx.AsyncClient(
            base_url=self.base_url,
            headers=headers,
            timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)),
            limits=limits,
            transport=transport,
        )

    @property
    def label(self) -> str:
        return f"{self.model} @ {self.base_url}"

    def _body(self, request: ChatRequest, stream: bool, logprobs: bool) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": r, "content": c} for r, c in request.messages],
            "temperature": request.temperature,
            "stream": stream,
        }
        if request.max_tokens is not None:
            body["max_tokens"] = request.max_tokens
        if logprobs:
            body["logprobs"] = True
            body["top_logprobs"] = max(0, min(20, request.top_logprobs))
        if stream:
            body["stream_options"] = {"include_usage": True}
        return body

    async def complete(
        self,
        request: ChatRequest,
        *,
        on_text: OnText | None = None,
        on_retry: OnRetry | None = None,
        on_logprobs: OnLogprobs | None = None,
    ) -> ChatResult:
        stream = self.stream and on_text is not None
        attempt = 0
        async with self._sem:
            while True:
                attempt += 1
                self.usage.requests += 1
                logprobs = request.logprobs and self.logprobs != "off"
                logprobs = logprobs and not self.logprobs_rejected
                try:
                    if stream:
                        result = await self._stream_once(
                            request,
                            on_text,  # type: ignore[arg-type]
                            on_logprobs,
                            logprobs,
                        )
                    else:
                        result = await self._once(request, logprobs)
                        if on_logprobs is not None and result.logprobs:
                            on_logprobs(result.logprobs)
                        if on_text is not None and result.text:
                            on_text(result.text)
                    result.attempts = attempt
                    self.usage.tokens_in += result.tokens_in
                    self.usage.tokens_out += result.tokens_out
                    return result
                except RequestFailed as exc:
                    if not (logprobs and _mentions_logprobs(exc)):
                        raise
                    if self.logprobs == "on":
                        raise LogprobsRejected(
                            f'{exc} (judge.logprobs is "on"; "auto" goes on without them)',
                            status=exc.status,
                            retryable=False,
                        ) from None
                    # "auto": this server does not do logprobs; ask again, and from now on, without.
                    self.logprobs_rejected = True
                    self.usage.retries += 1
                    if on_retry is not None:
                        on_retry(RetryNotice(attempt, f"{exc}; continuing without logprobs", 0.0))
                except _Retryable as exc:
                    self.usage.errors[exc.error.split(":")[0]] = (
                        self.usage.errors.get(exc.error.split(":")[0], 0) + 1
                    )
                    if attempt > self.retry.max_retries:
                        raise RequestFailed(
                            f"{exc.error} (gave up after {attempt} attempts)"
                        ) from None
                    delay = self.retry.delay(attempt, exc.retry_after, self._rng)
                    self.usage.retries += 1
                    if on_retry is not None:
                        on_retry(RetryNotice(attempt, exc.error, delay))
                    await asyncio.sleep(delay)

    def _check_status(self, response: httpx.Response) -> None:
        if response.status_code < 400:
            return
        detail = _error_detail(response)
        if response.status_code in RETRYABLE_STATUS:
            raise _Retryable(detail, parse_retry_after(response.headers.get("retry-after")))
        raise RequestFailed(detail, status=response.status_code, retryable=False)

    async def _once(self, request: ChatRequest, logprobs: bool) -> ChatResult:
        body = self._body(request, False, logprobs)
        try:
            response = await self._client.post("/chat/completions", json=body)
        except _TRANSIENT as exc:
            raise _Retryable(type(exc).__name__) from None
        self._check_status(response)
        try:
            data = response.json()
            choice = data["choices"][0]
            text = choice["message"].get("content") or ""
            usage = data.get("usage") or {}
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            raise _Retryable("malformed response body") from None
        tokens = _parse_logprobs(choice.get("logprobs"), _TokenTexts()) if logprobs else []
        return ChatResult(
            text=text,
            tokens_in=int(usage.get("prompt_tokens") or 0),
            tokens_out=int(usage.get("completion_tokens") or 0),
            finish_reason=choice.get("finish_reason"),
            logprobs=tokens or None,
            refusal=_text_or_none(choice["message"].get("refusal")),
        )

    async def _stream_once(
        self,
        request: ChatRequest,
        on_text: OnText,
        on_logprobs: OnLogprobs | None,
        logprobs: bool,
    ) -> ChatResult:
        result = ChatResult()
        parts: list[str] = []
        refusal: list[str] = []
        tokens: list[TokenLogprob] = []
        texts = _TokenTexts()
        done = False
        body = self._body(request, True, logprobs)
        try:
            async with self._client.stream("POST", "/chat/completions", json=body) as response:
                if response.status_code >= 400:
                    await response.aread()
                    self._check_status(response)
                async for payload in _sse_data(response):
                    if payload == "[DONE]":
                        done = True  # read on to the end so the connection goes back to the pool
                        continue
                    try:
                        chunk = json.loads(payload)
                    except ValueError:
                        continue  # a malformed event: skip it, the parser re-asks missing ids
                    if not isinstance(chunk, dict):
                        continue
                    if chunk.get("error"):
                        raise _Retryable(f"stream error: {str(chunk['error'])[:200]}")
                    usage = chunk.get("usage")
                    if usage:
                        result.tokens_in = int(usage.get("prompt_tokens") or 0)
                        result.tokens_out = int(usage.get("completion_tokens") or 0)
                    for choice in chunk.get("choices") or []:
                        if logprobs and choice.get("logprobs"):
                            got = _parse_logprobs(choice["logprobs"], texts)
                            if got:
                                tokens += got
                                if on_logprobs is not None:
                                    on_logprobs(got)  # before the text: see Provider.complete
                        refused = _text_or_none((choice.get("delta") or {}).get("refusal"))
                        if refused:
                            refusal.append(refused)
                        delta = (choice.get("delta") or {}).get("content")
                        if delta:
                            parts.append(delta)
                            on_text(delta)
                        if choice.get("finish_reason"):
                            result.finish_reason = choice["finish_reason"]
        except _TRANSIENT as exc:
            if parts:
                raise StreamInterrupted(
                    f"stream cut ({type(exc).__name__})", "".join(parts)
                ) from None
            raise _Retryable(type(exc).__name__) from None
        result.text = "".join(parts)
        result.refusal = "".join(refusal) or None
        result.logprobs = tokens or None
        if not done and result.finish_reason is None:
            if parts:
                raise StreamInterrupted("stream ended without [DONE]", result.text)
            raise _Retryable("empty stream")
        return result

    async def aclose(self) -> None:
        await self._client.aclose()


def _text_or_none(value: object) -> str | None:
    return value if isinstance(value, str) and value else None
