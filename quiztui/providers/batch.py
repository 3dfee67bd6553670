"""Provider batch APIs: what the OpenAI Batch and Anthropic Message Batches clients share.

A :class:`BatchBackend` speaks one provider's batch wire format: it builds a request body, submits
many bodies as one batch, polls it, and reads its results back as :class:`BatchItemResult` values
keyed by ``custom_id``. It knows nothing of runs, stores or events —
:mod:`quiztui.pipeline.batch` turns it into a :class:`~quiztui.providers.base.Provider`.
:class:`HTTPBatchBackend` is the constructor and client both backends share.

:class:`BatchHTTP` is the JSON-over-HTTP client both use: the API key from the environment in
a header, the providers' one retry loop (:func:`quiztui.providers.retry.retry_call`: backoff on
408/429/5xx and dropped connections, honouring ``Retry-After`` and the backend's own rate-limit
hints), and a :class:`RequestFailed` carrying the status for anything else.

Creating a batch is not idempotent: sent twice it makes two batches, both paid for. A create whose
reply was lost after it went out (a read timeout, a dropped connection, a 5xx from a gateway) is
therefore not sent again blindly: the backend's ``recover`` lists the newest batches and takes the
one that request made, if there is one (:func:`submission_marker` tags it; the time it was created
narrows the search), and only otherwise creates again.
"""

from __future__ import annotations

import hashlib
import logging
import random
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any, Protocol

import httpx

from quiztui.core.provider_batch import BatchItemResult, BatchPoll
from quiztui.core.secrets import mask_secrets
from quiztui.providers.base import ChatRequest, RequestFailed
from quiztui.providers.probe import tls_for
from quiztui.providers.retry import (
    RETRYABLE_STATUS,
    Retryable,
    RetryPolicy,
    parse_retry_after,
    refuse_redirect,
    retry_call,
    transient,
)

log = logging.getLogger(__name__)

# How far before the first attempt a found batch may have been created (clock skew between this
# machine and the provider) and still count as the one the lost request made.
CLOCK_SLACK = 300.0
# Pages of a list endpoint searched for a batch (or file) a lost request may have created.
MAX_LOOKUP_PAGES = 10

Recover = Callable[[Retryable], Awaitable[dict[str, Any] | None]]


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


def submission_marker(custom_ids: Sequence[str]) -> str:
    """A tag for one submission, the same for the same requests in any process.

    The custom ids are content-addressed (:mod:`quiztui.core.provider_batch`), so this names
    exactly these requests; it goes into the batch's metadata and the uploaded file's name.
    """
    digest = hashlib.sha256("\n".join(custom_ids).encode("utf-8")).hexdigest()
    return f"quiztui-{digest[:32]}"


def error_message(response: httpx.Response, secrets: Sequence[str] = ()) -> str:
    """``HTTP <status>: <the API's error message>`` (both APIs put it at ``error.message``), with
    ``secrets`` masked before it is cut to length."""
    try:
        body = response.json()
        error = body.get("error") if isinstance(body, dict) else None
        message = error.get("message") if isinstance(error, dict) else None
    except (ValueError, AttributeError):
        message = None
    text = f"HTTP {response.status_code}"
    return f"{text}: {mask_secrets(str(message), secrets)[:200]}" if message else text


class BatchHTTP:
    """A JSON client for batch endpoints, with retries; the key goes in a header and nowhere else.

    ``retryable_status`` and ``rate_limit_status`` say which error statuses are retried and which
    of those mean "slow down"; ``retry_hint`` reads the server's wait from an error reply (the
    ``Retry-After`` header when not given).
    """

    def __init__(
        self,
        base_url: str,
        headers: Mapping[str, str],
        *,
        timeout: float = 120.0,
        retry: RetryPolicy | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        retryable_status: frozenset[int] = RETRYABLE_STATUS,
        rate_limit_status: frozenset[int] = frozenset({429}),
        retry_hint: Callable[[httpx.Response], float | None] | None = None,
        secrets: Sequence[str] = (),
    ) -> None:
        self.retry = retry or RetryPolicy()
        self._secrets = tuple(secrets)  # masked in every error message (core/secrets.py)
        self.retryable_status = retryable_status
        self.rate_limit_status = rate_limit_status
        self._retry_hint = retry_hint or (lambda r: parse_retry_after(r.headers.get("retry-after")))
        self._rng = random.Random()
        self._client = httpx.AsyncClient(
            base_url=base_url.rstrip("/"),
            headers=dict(headers),
            timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)),
            transport=transport,
            event_hooks={"response": [refuse_redirect]},  # a 3xx is an error, never followed
            verify=tls_for(base_url),
        )

    def _where(self, method: str, url: str) -> str:
        """``METHOD /path`` for messages and the log: the path only (no host, no query)."""
        target = httpx.URL(url)
        if target.is_absolute_url:
            return f"{method} {target.path}"
        return f"{method} {self._client.base_url.path.rstrip('/')}/{target.path.lstrip('/')}"

    async def _send(self, method: str, url: str, where: str, **kwargs: Any) -> httpx.Response:
        """One attempt: the response, or :class:`Retryable` / :class:`RequestFailed`."""
        try:
            response = await self._client.request(method, url, **kwargs)
        except transient() as exc:
            raise Retryable.from_transport(exc, f" on {where}") from None
        status = response.status_code
        if status < 400:
            return response
        error = f"{error_message(response, self._secrets)} on {where}"
        if status not in self.retryable_status:
            raise RequestFailed(error, status=status, retryable=False)
        raise Retryable.from_status(
            status, error, self._retry_hint(response), rate_limited=status in self.rate_limit_status
        )

    async def request(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        """Send one request, retrying what a retry can fix; raises :class:`RequestFailed`."""
        where = self._where(method, url)
        return await retry_call(
            lambda _: self._send(method, url, where, **kwargs),
            self.retry,
            what=where,
            rng=self._rng,
        )

    async def json(
        self, method: str, url: str, *, recover: Recover | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        """The JSON object a request answers. ``recover`` (for requests that create something)
        is asked, after an attempt that may have taken effect, for the object that attempt made;
        when it finds one, that is the answer and nothing is sent again."""
        where = self._where(method, url)

        async def attempt(_: int) -> dict[str, Any]:
            response = await self._send(method, url, where, **kwargs)
            try:
                data = response.json()
            except ValueError:
                data = None
            if not isinstance(data, dict):
                raise RequestFailed(f"malformed reply to {where}: not a JSON object")
            return data

        async def look_up(exc: Retryable) -> dict[str, Any] | None:
            assert recover is not None
            try:
                return await recover(exc)
            except RequestFailed as failure:
                log.warning("%s: %s, and the lookup failed; not sent again", where, exc.cause)
                raise RequestFailed(
                    f"{where} may have taken effect ({exc.cause}) and looking for what it made"
                    f" failed: {failure}",
                    status=failure.status,
                    retryable=False,
                ) from None

        return await retry_call(
            attempt,
            self.retry,
            what=where,
            rng=self._rng,
            recover=look_up if recover is not None else None,
        )

    async def pages(
        self, url: str, params: dict[str, Any], cursor: str
    ) -> AsyncIterator[list[dict[str, Any]]]:
        """The ``data`` of each page of a list endpoint, newest first, at most
        :data:`MAX_LOOKUP_PAGES`; ``cursor`` is the parameter taking the previous page's
        ``last_id``. The caller stops when the items get older than it cares for."""
        query = dict(params)
        for _ in range(MAX_LOOKUP_PAGES):
            page = await self.json("GET", url, params=query)
            items = [item for item in page.get("data") or [] if isinstance(item, dict)]
            yield items
            last = page.get("last_id") or (items[-1].get("id") if items else None)
            if not page.get("has_more") or not items or not isinstance(last, str):
                return
            query[cursor] = last

    async def aclose(self) -> None:
        await self._client.aclose()


class HTTPBatchBackend:
    """Base of the batch backends: the base URL, the model and a :class:`BatchHTTP` client.

    A subclass sets ``api``, implements the :class:`BatchBackend` methods on ``self._http`` and
    may change :meth:`_headers` (the key as a bearer token here), the statuses it retries and
    :meth:`_retry_hint`, as the online provider of the same API does.
    """

    api: str
    retryable_status: frozenset[int] = RETRYABLE_STATUS
    rate_limit_status: frozenset[int] = frozenset({429})

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
            self.base_url,
            self._headers(api_key),
            secrets=(api_key,) if api_key else (),
            timeout=timeout,
            retry=retry,
            transport=transport,
            retryable_status=self.retryable_status,
            rate_limit_status=self.rate_limit_status,
            retry_hint=self._retry_hint,
        )
        # Batches this backend created or found: never taken for another submission's.
        self._claimed: set[str] = set()

    def _headers(self, api_key: str | None) -> dict[str, str]:
        """The headers every request carries: the key, when there is one."""
        return {"Authorization": f"Bearer {api_key}"} if api_key else {}

    def _retry_hint(self, response: httpx.Response) -> float | None:
        """Seconds an error reply asks to wait (its ``Retry-After`` header here)."""
        return parse_retry_after(response.headers.get("retry-after"))

    def _claim(self, batch: dict[str, Any], how: str, requests: int) -> dict[str, Any]:
        """Remember a batch as this backend's and log how it came to be."""
        batch_id = str(batch.get("id") or "")
        self._claimed.add(batch_id)
        log.info("%s batch %s %s (%d requests)", self.api, batch_id, how, requests)
        return batch

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
    "submission_marker",
    "as_dict",
    "as_int",
    "error_message",
    "jsonl_objects",
]
