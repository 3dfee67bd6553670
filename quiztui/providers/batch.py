"""Provider batch APIs: what the OpenAI Batch and Anthropic Message Batches clients share.

A :class:`BatchBackend` speaks one provider's batch wire format: it builds a request body, submits
many bodies as one batch, polls it, and reads its results back as :class:`BatchItemResult` values
keyed by ``custom_id``. It knows nothing of runs, stores or events —
:mod:`quiztui.pipeline.batch` turns it into a :class:`~quiztui.providers.base.Provider`.
:class:`HTTPBatchBackend` is the constructor and client both backends share.

:class:`BatchHTTP` is the one JSON-over-HTTP client both use: the API key from the environment in
a header, retries with backoff on 408/429/5xx and dropped connections (honouring
``Retry-After``), and a :class:`RequestFailed` carrying the status for anything else.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import httpx

from quiztui.core.provider_batch import BatchItemResult, BatchPoll
from quiztui.providers.base import ChatRequest, RequestFailed
from quiztui.providers.retry import RETRYABLE_STATUS, RetryPolicy, parse_retry_after

_TRANSIENT = (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError)


class BatchBackend(Protocol):
    """One provider's batch API."""

    api: str  # "openai" | "anthropic": recorded with the run (batch price) and each batch row
    model: str
    base_url: str

    def body(self, request: ChatRequest) -> dict[str, Any]:
        """The request body as this API's batch line carries it (hashed into the custom_id)."""
        ...

    async def submit(self, items: Sequence[tuple[str, dict[str, Any]]]) -> BatchPoll:
        """Submit (custom_id, body) pairs as one batch; the provider's answer, with its id."""
        ...

    async def poll(self, batch_id: str) -> BatchPoll: ...

    async def results(self, poll: BatchPoll) -> list[BatchItemResult]:
        """Every result line of an ended batch (requests without a line are left out)."""
        ...

    async def aclose(self) -> None: ...


def error_message(response: httpx.Response) -> str:
    """``HTTP <status>: <the API's error message>`` (both APIs put it at ``error.message``)."""
    try:
        body = response.json()
        error = body.get("error") if isinstance(body, dict) else None
        message = error.get("message") if isinstance(error, dict) else None
    except (ValueError, AttributeError):
        message = None
    text = f"HTTP {response.status_code}"
    return f"{text}: {str(message)[:200]}" if message else text


class BatchHTTP:
    """A JSON client for batch endpoints, with retries; the key goes in a header and nowhere else."""

    def __init__(
        self,
        base_url: str,
        headers: Mapping[str, str],
        *,
        timeout: float = 120.0,
        retry: RetryPolicy | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.retry = retry or RetryPolicy()
        self._rng = random.Random()
        self._client = httpx.AsyncClient(
            base_url=base_url.rstrip("/"),
            headers=dict(headers),
            timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)),
            transport=transport,
        )

    async def request(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        """Send one request, retrying what a retry can fix; raises :class:`RequestFailed`."""
        attempt = 0
        while True:
            attempt += 1
            retry_after: float | None = None
            try:
                response = await self._client.request(method, url, **kwargs)
            except _TRANSIENT as exc:
                error = f"{type(exc).__name__} on {method} {url}"
            else:
                if response.status_code < 400:
                    return response
                error = f"{error_message(response)} on {method} {url}"
                if response.status_code not in RETRYABLE_STATUS:
                    raise RequestFailed(error, status=response.status_code, retryable=False)
                retry_after = parse_retry_after(response.headers.get("retry-after"))
            if attempt > self.retry.max_retries:
                raise RequestFailed(f"{error} (gave up after {attempt} attempts)")
            await asyncio.sleep(self.retry.delay(attempt, retry_after, self._rng))

    async def json(self, method: str, url: str, **kwargs: Any) -> dict[str, Any]:
        response = await self.request(method, url, **kwargs)
        try:
            data = response.json()
        except ValueError:
            data = None
        if not isinstance(data, dict):
            raise RequestFailed(f"malformed reply to {method} {url}: not a JSON object")
        return data

    async def aclose(self) -> None:
        await self._client.aclose()


class HTTPBatchBackend:
    """Base of the batch backends: the base URL, the model and a :class:`BatchHTTP` client.

    A subclass sets ``api``, implements the :class:`BatchBackend` methods on ``self._http`` and
    may change :meth:`_headers` (the key as a bearer token here).
    """

    api: str

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str | None,
        timeout: float = 120.0,
        retry: RetryPolicy | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self._http = BatchHTTP(
            self.base_url, self._headers(api_key), timeout=timeout, retry=retry, transport=transport
        )

    def _headers(self, api_key: str | None) -> dict[str, str]:
        """The headers every request carries: the key, when there is one."""
        return {"Authorization": f"Bearer {api_key}"} if api_key else {}

    async def aclose(self) -> None:
        await self._http.aclose()


def jsonl_objects(text: str) -> list[dict[str, Any]]:
    """The JSON objects of a JSONL document; blank and unparseable lines are skipped."""
    import json

    out = []
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict):
            out.append(obj)
    return out


def as_dict(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one (untrusted replies)."""
    return value if isinstance(value, dict) else {}


def as_int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


__all__ = [
    "BatchBackend",
    "BatchHTTP",
    "HTTPBatchBackend",
    "as_dict",
    "as_int",
    "error_message",
    "jsonl_objects",
]
