"""The one retry loop of every HTTP call the providers make (chat requests and batch endpoints).

:func:`retry_call` runs an attempt until it succeeds, raises :class:`RequestFailed` (what retrying
cannot fix) or has failed :attr:`RetryPolicy.max_retries` + 1 times. An attempt raises
:class:`Retryable` for what another attempt may fix; the wait before the next one is the server's
hint (``Retry-After``, a rate-limit reset time, Gemini's ``RetryInfo``), capped, or else
exponential backoff with jitter. Every retry is logged (``quiztui.providers.retry``) with the
request's method and path, the status or error class and the delay — never a header, a query
string or the server's message, which may quote what was sent.

A request that creates something (a provider batch, an uploaded file) must not be sent again
blindly when it may already have taken effect — a read timeout or a dropped connection after the
request went out. ``recover`` looks the object up first; only when it finds nothing does the loop
try again.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import random
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

from quiztui.core.records import record
from quiztui.providers.base import RequestFailed, RetryNotice

if TYPE_CHECKING:
    import httpx

log = logging.getLogger(__name__)

T = TypeVar("T")

# Statuses another attempt may fix: request timeout, conflict, too early, too many, any 5xx.
# 400/401/403/404/422 and the rest are final; a 3xx is refused outright (refuse_redirect).
RETRYABLE_STATUS = frozenset({408, 409, 425, 429, *range(500, 600)})
# Refusals that say the server turned the request away before acting on it (timeout waiting for
# it, too early, too many, unavailable, Anthropic's overloaded): a create may be sent again as is.
NOT_ACTED_ON = frozenset({408, 425, 429, 503, 529})
# Statuses that say the server is past its capacity: the concurrency limit goes down on them.
OVERLOAD_STATUS = frozenset({429, 503, 529})


@functools.cache
def not_sent() -> tuple[type[Exception], ...]:
    """httpx's transport errors that mean no byte of the request reached the server."""
    import httpx

    return (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)


@functools.cache
def transient() -> tuple[type[Exception], ...]:
    """httpx's transport errors another attempt may fix (:func:`not_sent`'s among them).

    A function, so that httpx is imported with the first error, not before a run's first
    request (``providers/plain_http.py``): ``except transient() as exc`` evaluates it only
    when an exception is on its way."""
    import httpx

    return (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError)


@record(frozen=True)
class RetryPolicy:
    max_retries: int = 4
    base_delay: float = 0.5
    max_delay: float = 30.0
    jitter: float = 0.5  # fraction of the delay drawn at random
    max_retry_after: float = 120.0  # a server's Retry-After is obeyed up to this many seconds

    def delay(
        self, attempt: int, retry_after: float | None = None, rng: random.Random | None = None
    ) -> float:
        """Seconds to wait before retry number ``attempt`` (1-based)."""
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_retry_after)
        raw = min(self.base_delay * 2 ** (attempt - 1), self.max_delay)
        r = (rng or random).random()
        return raw * (1.0 - self.jitter) + raw * self.jitter * r


class Retryable(Exception):
    """A failure that another attempt may fix; ``retry_after`` is the server's hint in seconds.

    ``rate_limited`` marks the server saying "too many" (429, 529, RESOURCE_EXHAUSTED): the
    limiter cuts the concurrency limit on those, not on a 500 or a dropped connection.
    ``sent`` is False only when the request surely had no effect (no connection was made, or the
    server refused it outright); a create is then sent again without looking it up first.
    ``cause`` is what the log shows: the status or the error class, never the server's words.
    ``overloaded`` marks the other signs of a server past its capacity (503, a timeout, a reset or
    refused connection, a stream cut short): the limiter lowers the concurrency limit on those too,
    as on a rate limit (a local server that serves one request at a time answers so, not 429).
    """

    def __init__(
        self,
        error: str,
        retry_after: float | None = None,
        *,
        rate_limited: bool = False,
        sent: bool = True,
        cause: str | None = None,
        overloaded: bool = False,
    ) -> None:
        super().__init__(error)
        self.error = error
        self.retry_after = retry_after
        self.rate_limited = rate_limited
        self.sent = sent
        self.cause = cause or error.split(":")[0]
        self.overloaded = overloaded or rate_limited

    @classmethod
    def from_status(
        cls, status: int, error: str, retry_after: float | None, *, rate_limited: bool
    ) -> Retryable:
        """A retryable error status: ``error`` is shown to the user, the status is logged."""
        return cls(
            error,
            retry_after,
            rate_limited=rate_limited,
            sent=status not in NOT_ACTED_ON,
            cause=f"HTTP {status}",
            overloaded=status in OVERLOAD_STATUS,
        )

    @classmethod
    def from_transport(cls, exc: Exception, where: str = "") -> Retryable:
        """A timeout or a broken connection (``where``: " on POST /path", for the user)."""
        name = type(exc).__name__
        return cls(
            f"{name}{where}", sent=not isinstance(exc, not_sent()), cause=name, overloaded=True
        )


async def retry_call(
    attempt: Callable[[int], Awaitable[T]],
    policy: RetryPolicy,
    *,
    what: str,
    rng: random.Random | None = None,
    on_retry: Callable[[RetryNotice], None] | None = None,
    on_error: Callable[[Retryable], None] | None = None,
    fallback: Callable[[RequestFailed], str | None] | None = None,
    recover: Callable[[Retryable], Awaitable[T | None]] | None = None,
) -> T:
    """``await attempt(n)`` for n = 1, 2, … until it returns; see the module docstring.

    ``what`` names the request in the log ("POST /v1/batches": a method and a path, no query).
    ``on_retry`` hears of every retry before its wait, ``on_error`` of every :class:`Retryable`
    (the last one too). ``fallback`` may turn a :class:`RequestFailed` into a retry at once with
    changed settings by returning a note (None: give up). ``recover`` runs after the wait when
    the failed attempt may have taken effect (``Retryable.sent``), after the last attempt too;
    what it returns, unless None, is the result and no further attempt is made.
    """
    n = 0
    while True:
        n += 1
        try:
            return await attempt(n)
        except RequestFailed as exc:
            note = fallback(exc) if fallback is not None else None
            cause = f"HTTP {exc.status}" if exc.status else type(exc).__name__
            if note is None or n > policy.max_retries:
                log.warning("%s: %s, not retried", what, cause)
                raise
            log.info("%s: %s; trying again at once with changed settings", what, cause)
            if on_retry is not None:
                on_retry(RetryNotice(n, note, 0.0))
            continue
        except Retryable as exc:
            if on_error is not None:
                on_error(exc)
            retrying = n <= policy.max_retries
            looking = recover is not None and exc.sent
            if not retrying and not looking:
                raise _gave_up(what, exc, n) from None
            delay = policy.delay(n, exc.retry_after, rng)
            if retrying:
                hint = " (server's hint)" if exc.retry_after is not None else ""
                log.info(
                    "%s: %s; retry %d of %d in %.2f s%s",
                    what,
                    exc.cause,
                    n,
                    policy.max_retries,
                    delay,
                    hint,
                )
                if on_retry is not None:
                    on_retry(RetryNotice(n, exc.error, delay))
            await asyncio.sleep(delay)  # a lookup too waits: the list may lag behind the create
            if looking:
                assert recover is not None
                found = await recover(exc)
                if found is not None:
                    return found
            if not retrying:
                raise _gave_up(what, exc, n) from None


def _gave_up(what: str, exc: Retryable, attempts: int) -> RequestFailed:
    log.warning("%s: %s; gave up after %d attempts", what, exc.cause, attempts)
    return RequestFailed(f"{exc.error} (gave up after {attempts} attempts)")


def redirect_message(response: httpx.Response) -> str:
    """``HTTP 3xx``, the request, and where the server pointed it."""
    request = response.request
    target = response.headers.get("location") or "(no Location header)"
    return (
        f"HTTP {response.status_code}: {request.method} {request.url.path} was redirected to"
        f" {target}; redirects are not followed (they would carry the API key elsewhere) —"
        " set the base URL to that address if you trust it"
    )


async def refuse_redirect(response: httpx.Response) -> None:
    """An httpx response hook: a 3xx fails the request at once — never followed, never retried."""
    if 300 <= response.status_code < 400:
        await response.aclose()
        raise RequestFailed(
            redirect_message(response), status=response.status_code, retryable=False
        )


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After (or retry-after-ms style) header value: delta-seconds or HTTP date."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        import datetime as dt
        from email.utils import parsedate_to_datetime

        when = parsedate_to_datetime(value)
        return max((when - dt.datetime.now(when.tzinfo)).total_seconds(), 0.0)
    except (TypeError, ValueError):
        return None


__all__ = [
    "NOT_ACTED_ON",
    "OVERLOAD_STATUS",
    "RETRYABLE_STATUS",
    "not_sent",
    "transient",
    "RetryPolicy",
    "Retryable",
    "parse_retry_after",
    "redirect_message",
    "refuse_redirect",
    "retry_call",
]
