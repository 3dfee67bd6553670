"""What the HTTP providers share: one client, the adaptive limiter, the retry loop, SSE reading.

OpenAI-compatible, Anthropic and Gemini differ in request and reply shapes, error bodies and
rate-limit hints; everything else is here once. A subclass implements :meth:`HTTPProvider._attempt`
(one request, raising :class:`Retryable` for what retrying can fix, :class:`RequestFailed` for what
it cannot and :class:`StreamInterrupted` when a stream breaks after text arrived) and may refine
the error message and retry-delay hooks. :meth:`HTTPProvider.complete` does the rest: a limiter slot
per attempt (``usage.in_flight`` counts requests on the wire, not ones sleeping before a retry),
backoff with jitter or the server's hint, a cut in the concurrency limit on rate limits and other
signs of overload (503, timeouts, resets, cut streams), ``on_retry`` notices and usage accounting
(estimated with :func:`estimated_tokens` when the server reports none). The loop itself is
:func:`quiztui.providers.retry.retry_call`, which the batch endpoints' client uses too.
"""

from __future__ import annotations

import json
import os
import random
import time
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Any, TypedDict, TypeVar, cast
from urllib.parse import urlsplit

from quiztui import __version__
from quiztui.core.estimate import approx_tokens
from quiztui.core.json_text import orjson_module
from quiztui.core.secrets import mask_secrets
from quiztui.providers.base import (
    ChatRequest,
    ChatResult,
    OnLogprobs,
    OnRetry,
    OnText,
    RequestFailed,
    RetryNotice,
    StreamInterrupted,
    Usage,
)
from quiztui.providers.limiter import AdaptiveLimiter
from quiztui.providers.plain_http import (
    PlainHTTPTransport,
    Target,
    netloc,
    proxied,
    request_head,
)
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

if TYPE_CHECKING:
    import httpx

_Text = TypeVar("_Text", str, bytes)  # a stream's lines, as bytes or as text


async def sse_data(response: httpx.Response) -> AsyncIterator[str]:
    """The ``data:`` payloads of a server-sent-event stream (cheaper than ``aiter_lines``).

    ``event:`` lines are skipped: every provider repeats the event type inside the JSON. A CR of
    CRLF line ends (Gemini) goes with the ``strip``. A UTF-8 stream (every one: the format's
    own encoding) is split into lines as bytes and each ``data:`` line decoded alone, as httpx's
    text decoder would (a line end is never inside a character); another charset is decoded by
    httpx first.
    """
    if (response.encoding or "utf-8").lower().replace("_", "-") in ("utf-8", "utf8"):
        lines = _data_lines(response.aiter_bytes(), b"\n", b"data:", _utf8)
    else:
        lines = _data_lines(response.aiter_text(), "\n", "data:", str)
    async for payload in lines:
        yield payload


def _utf8(line: bytes) -> str:
    return line.decode("utf-8", "replace")


async def _data_lines(
    chunks: AsyncIterator[_Text], newline: _Text, prefix: _Text, text: Callable[[_Text], str]
) -> AsyncIterator[str]:
    """The ``prefix`` lines of ``chunks`` (bytes or text), past the prefix, as stripped text."""
    buffer = newline[:0]
    cut = len(prefix)
    async for chunk in chunks:
        buffer += chunk
        if newline not in chunk:
            continue
        lines = buffer.split(newline)
        buffer = lines.pop()
        for line in lines:
            if line.startswith(prefix):
                yield text(line[cut:]).strip()
    if buffer.startswith(prefix):
        yield text(buffer[cut:]).strip()


def event_json(payload: str) -> Any:
    """One streamed event's JSON (``ValueError`` when it is not JSON): orjson when installed, three
    times faster on a reply's logprobs (about 0.5 ms of a reply's 3 ms); ``json`` for what orjson
    refuses and the standard library takes (NaN, Infinity, a lone surrogate), so the result is
    the one ``json.loads`` gives, but for an integer past 64 bits, which orjson reads as a float
    (no field of a judge's event holds one: ``tests/test_plain_http.py``). orjson is imported
    with the first event, not before the first request (a headless vet imports it while the
    judge works: ``cli/vet.report_work``)."""
    if not _orjson:
        _orjson.append(orjson_module())
    fast = _orjson[0]
    if fast is not None:
        try:
            return fast.loads(payload)
        except fast.JSONDecodeError:
            pass
    return json.loads(payload)


_orjson: list[Any] = []  # [the orjson module, or None without it], once looked for


def _plain_server(base_url: str) -> tuple[tuple[str, int], str] | None:
    """((host, port), path) of a plain-HTTP base URL the straight path writes requests for as
    httpx's client would: an ASCII host, no user, query or fragment, a path of plain characters.
    None for any other (httpx builds those requests)."""
    parts = urlsplit(base_url)
    try:
        port = parts.port or 80
    except ValueError:
        return None
    host = parts.hostname or ""
    path = parts.path.rstrip("/")
    plain = not (parts.username or parts.password or parts.query or parts.fragment)
    safe = all(c.isalnum() or c in "/-._~" for c in path) and path.isascii()
    if not (plain and safe and host and host.isascii()) or ":" in host:  # no IPv6 literal
        return None
    return (host.lower(), port), path


def estimated_tokens(request: ChatRequest, reply: str) -> tuple[int, int]:
    """(prompt, completion) tokens by :func:`~quiztui.core.estimate.approx_tokens`, for a reply
    whose server reported no usage: never a silent zero."""
    return sum(approx_tokens(text) for _, text in request.messages), approx_tokens(reply)


def key_from_env(variable: str | None) -> str | None:
    """The API key in ``variable`` (None when unset); the value goes into a header, nowhere else."""
    return os.environ.get(variable) if variable else None


class HTTPOptions(TypedDict, total=False):
    """The :class:`HTTPProvider` keywords every subclass passes through unchanged.

    A subclass takes ``**options: Unpack[HTTPOptions]`` and forwards them, so it lists only the
    keywords it treats differently (model, base URL and key variable defaults, its own settings).
    """

    concurrency: int
    timeout: float
    retry: RetryPolicy | None
    stream: bool
    adaptive: bool
    quiet_seconds: float
    clock: Callable[[], float] | None
    transport: httpx.AsyncBaseTransport | None


class HTTPProvider:
    """Base of the providers that speak HTTP with httpx (see the module docstring).

    The API key is read from the environment variable ``api_key_env`` and sent in the headers
    :meth:`_key_headers` makes of it (``Authorization: Bearer`` here); ``headers`` are sent on
    every request besides.
    """

    name = "http"
    simulated = False
    # Statuses another attempt may fix, and those among them that mean "slow down".
    retryable_status: frozenset[int] = RETRYABLE_STATUS
    rate_limit_status: frozenset[int] = frozenset({429})

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key_env: str | None = None,
        headers: Mapping[str, str] | None = None,
        concurrency: int = 16,
        timeout: float = 120.0,
        retry: RetryPolicy | None = None,
        stream: bool = True,
        adaptive: bool = True,
        quiet_seconds: float = 30.0,
        clock: Callable[[], float] | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.stream = stream
        self.retry = retry or RetryPolicy()
        self.usage = Usage()
        concurrency = max(1, concurrency)
        self.limiter = AdaptiveLimiter(
            concurrency,
            adaptive=adaptive,
            quiet_seconds=quiet_seconds,
            clock=clock or time.monotonic,
            usage=self.usage,
        )
        self._rng = random.Random()
        self._path_prefix = urlsplit(self.base_url).path.rstrip("/")  # "/v1" of ".../v1"
        key = key_from_env(api_key_env)
        self._secrets = (key,) if key else ()  # masked in every error message (core/secrets.py)
        # Every request's headers, in the order httpx's client sends them (its defaults first,
        # named here so the straight path below sends the same bytes without httpx).
        key_headers = self._key_headers(key) if key else None
        pairs = [
            ("Accept", "*/*"),
            ("Accept-Encoding", "gzip, deflate"),
            ("Connection", "keep-alive"),
            ("User-Agent", f"quiztui/{__version__}"),
            ("Content-Type", "application/json"),
        ]
        for name, value in [*(headers or {}).items(), *(key_headers or {}).items()]:
            # one header per name whatever its case, in the first one's place and the last one's
            # spelling, as httpx's Headers.update keeps them
            at = next((i for i, (n, _) in enumerate(pairs) if n.lower() == name.lower()), None)
            if at is None:
                pairs.append((name, value))
            else:
                pairs[at] = (name, value)
        self._headers = dict(pairs)
        for value in self._headers.values():
            value.encode("ascii")  # as httpx's client would refuse it: here, not at a request
        self._timeouts = {
            "connect": min(timeout, 10.0),
            "read": timeout,
            "write": timeout,
            "pool": timeout,
        }
        self._concurrency = concurrency
        plain = self.base_url.lower().startswith("http://")
        if transport is None and plain and not proxied(self.base_url):
            # Plain HTTP (a server on this machine or the LAN): a lean HTTP/1.1 transport, about
            # 1.5 ms less CPU per streamed reply than httpcore's (providers/plain_http.py).
            transport = cast("httpx.AsyncBaseTransport", PlainHTTPTransport(max_idle=concurrency))
        self._transport = transport
        self._made_client: httpx.AsyncClient | None = None
        # httpx's client sends every request through a transport it is given (no proxy mount)
        self._direct = transport if isinstance(transport, PlainHTTPTransport) else None
        self._urls: dict[str, httpx.URL] = {}
        self._server = _plain_server(self.base_url) if self._direct is not None else None
        self._heads: dict[str, tuple[bytes, str]] = {}
        self._requests: dict[str, httpx.Request] = {}

    @property
    def _client(self) -> httpx.AsyncClient:
        """httpx's client, made on first use: a plain-HTTP judge's streamed requests go without
        it (:meth:`_post_stream`), so a headless run sends its first ones before httpx is
        imported (``providers/plain_http.py``)."""
        client = self._made_client
        if client is None:
            import httpx

            client = self._made_client = httpx.AsyncClient(
                base_url=self.base_url,
                headers=self._headers,
                timeout=httpx.Timeout(self._timeouts["read"], connect=self._timeouts["connect"]),
                limits=httpx.Limits(
                    max_connections=self._concurrency,
                    max_keepalive_connections=self._concurrency,
                ),
                transport=self._transport,
                event_hooks={"response": [refuse_redirect]},  # a 3xx is an error, never followed
                verify=tls_for(self.base_url),
            )
        return client

    def _post_stream(
        self, path: str, body: dict[str, Any]
    ) -> AbstractAsyncContextManager[httpx.Response]:
        """``self._client.stream("POST", path, json=body)``; for a plain-HTTP judge (quiztui's own
        transport, no proxy in the way) the request goes straight to the transport, as the bytes
        httpx's client would send (:meth:`_straight`). What the client adds around it is no use
        here and cost about 0.5 ms of CPU a reply (``docs/speed.md``): auth (quiztui sends its
        key in a header), redirects (refused: the redirect hook runs here too), cookies (a judge's
        API needs none; they were parsed from every reply) and its log line."""
        if self._direct is None:
            return self._client.stream("POST", path, json=body)
        if self._server is None:  # a base URL the straight path does not write: httpx builds it
            url = self._urls.get(path)
            if url is None:  # the client's own joining of base URL and path, parsed once
                url = self._urls[path] = self._client.build_request("POST", path).url
            request = self._client.build_request("POST", url, json=body)
            key = (url.host, url.port or 80)
            return self._straight(key, request_head(request), request.content, request)
        prefix, url = self._heads.get(path) or self._head(path)
        data = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
        head = prefix + str(len(data)).encode() + b"\r\n\r\n"
        return self._straight(self._server[0], head, data, ("POST", url))

    def _head(self, path: str) -> tuple[bytes, str]:
        """The request line and headers of a POST to ``path`` as httpx's client writes them, up
        to the ``Content-Length`` value; and the URL."""
        assert self._server is not None
        (host, port), prefix = self._server
        target = prefix + "/" + path.lstrip("/")
        lines = [f"POST {target} HTTP/1.1", f"Host: {netloc(host, port)}"]
        lines += [f"{name}: {value}" for name, value in self._headers.items()]
        head = ("\r\n".join(lines) + "\r\nContent-Length: ").encode("ascii")
        url = f"http://{netloc(host, port)}{target}"
        self._heads[path] = head, url
        return head, url

    @asynccontextmanager
    async def _straight(
        self, key: tuple[str, int], head: bytes, body: bytes, request: httpx.Request | Target
    ) -> AsyncIterator[httpx.Response]:
        """Send to quiztui's transport; the answer as httpx's response once its head is here
        (httpx is imported by then: ``cli/vet.report_work``, or here for the first answer)."""
        assert self._direct is not None
        answer = await self._direct.send(key, head, body, self._timeouts, request)
        if isinstance(request, tuple):
            made = self._requests.get(request[1])
            if made is None:  # the request a response names (a redirect's message): one per URL
                import httpx

                made = self._requests[request[1]] = httpx.Request(*request)
            request = made
        response = self._direct.response(answer, request)
        response.request = request
        try:
            await refuse_redirect(response)
            yield response
        finally:
            await response.aclose()

    async def connect_ahead(self, requests: int) -> None:
        """Before a run's first ``requests``: open their connections at once (plain HTTP, up to the
        concurrency limit in force; ``PlainHTTPTransport.open_ahead``), so each request goes out
        the moment it is made instead of when the last of them is."""
        if self._direct is not None:
            count = min(requests, self.limiter.limit)
            key = self._server[0] if self._server is not None else None
            if key is None:
                url = self._client.build_request("GET", "/").url
                key = (url.host, url.port or 80)
            await self._direct.open_ahead(key, count, self._timeouts["connect"])

    @property
    def label(self) -> str:
        return f"{self.model} @ {self.base_url}"

    # -- the retry loop --------------------------------------------------------------------

    async def complete(
        self,
        request: ChatRequest,
        *,
        on_text: OnText | None = None,
        on_retry: OnRetry | None = None,
        on_logprobs: OnLogprobs | None = None,
    ) -> ChatResult:
        stream = self.stream and on_text is not None

        async def attempt(n: int) -> ChatResult:
            async with self.limiter.slot() as slot:
                self.usage.requests += 1
                try:
                    result = await self._attempt(request, stream, on_text, on_logprobs)
                except Retryable as exc:
                    if exc.rate_limited:
                        self.limiter.rate_limited(slot)
                    elif exc.overloaded:
                        self.limiter.rate_limited(slot, f"the server is overloaded ({exc.cause})")
                    raise
                except StreamInterrupted:
                    self.limiter.rate_limited(slot, "the server cut a stream short")
                    raise
                if not result.tokens_in and not result.tokens_out:
                    # No usage: the server's own tokenizer where it has one, asked while the
                    # slot is held (a one-request server takes it for a request).
                    counted = await self._server_tokens(request, result.text)
                    if counted is not None:
                        result.tokens_in, result.tokens_out = counted
                        result.tokens_counted = True
                        self.usage.counted += 1
            result.attempts = n
            return result

        def count_error(exc: Retryable) -> None:
            self.usage.errors[exc.cause] = self.usage.errors.get(exc.cause, 0) + 1

        def notice(note: RetryNotice) -> None:
            self.usage.retries += 1
            if on_retry is not None:
                on_retry(note)

        try:
            result = await retry_call(
                attempt,
                self.retry,
                what=f"POST {self._path_prefix}{self._chat_path(stream)}",
                rng=self._rng,
                on_retry=notice,
                on_error=count_error,
                fallback=lambda exc: self._fallback(request, exc),
            )
        except RequestFailed as exc:  # its message is stored and shown: never the key
            exc.args = (mask_secrets(str(exc), self._secrets),)
            raise
        if not stream:
            if on_logprobs is not None and result.logprobs:
                on_logprobs(result.logprobs)
            if on_text is not None and result.text:
                on_text(result.text)
        if not result.tokens_in and not result.tokens_out:
            # The server sent no usage (llama.cpp's server while streaming): count it ourselves.
            result.tokens_in, result.tokens_out = estimated_tokens(request, result.text)
            result.tokens_estimated = True
            self.usage.estimated += 1
        self.usage.tokens_in += result.tokens_in
        self.usage.tokens_out += result.tokens_out
        return result

    # -- hooks -----------------------------------------------------------------------------

    def _key_headers(self, key: str) -> dict[str, str]:
        """The headers that carry the API key (a bearer token here)."""
        return {"Authorization": f"Bearer {key}"}

    def _chat_path(self, stream: bool) -> str:
        """The chat endpoint's path under the base URL (the log names it, without a query)."""
        raise NotImplementedError

    async def _attempt(
        self,
        request: ChatRequest,
        stream: bool,
        on_text: OnText | None,
        on_logprobs: OnLogprobs | None,
    ) -> ChatResult:
        """One request. Streaming passes each text delta to ``on_text`` as it arrives."""
        raise NotImplementedError

    def _fallback(self, request: ChatRequest, exc: RequestFailed) -> str | None:
        """A note to retry at once after ``exc`` with changed settings, or None to give up."""
        return None

    async def _server_tokens(self, request: ChatRequest, reply: str) -> tuple[int, int] | None:
        """(prompt, completion) tokens counted by the server's tokenizer for a reply it sent no
        usage for; None where it has none (then the figures are estimated)."""
        return None

    def _error_message(self, body: Any) -> str | None:
        """The human message inside an error body (all three nest it as ``error.message``)."""
        error = body.get("error") if isinstance(body, dict) else None
        message = error.get("message") if isinstance(error, dict) else None
        return str(message) if message else None

    def _retry_after(self, response: httpx.Response, body: Any) -> float | None:
        """Seconds the server asks to wait before retrying (the ``Retry-After`` header here)."""
        return parse_retry_after(response.headers.get("retry-after"))

    def _auth_failure(self, response: httpx.Response, body: Any) -> bool:
        """Whether a non-401/403 error means the key was refused (Gemini answers 400 to a bad key)."""
        return False

    # -- helpers for subclasses ------------------------------------------------------------

    def _check_status(self, response: httpx.Response) -> None:
        """Raise for an error status: :class:`Retryable` or :class:`RequestFailed`."""
        status = response.status_code
        if status < 400:
            return
        try:
            body: Any = response.json()
        except ValueError:
            body = None
        message = self._error_message(body)
        if message:  # a server may repeat the key it refused: masked before anything keeps it
            message = mask_secrets(message, self._secrets)
        detail = f"HTTP {status}: {message[:200]}" if message else f"HTTP {status}"
        if status in self.retryable_status:
            raise Retryable.from_status(
                status,
                detail,
                self._retry_after(response, body),
                rate_limited=status in self.rate_limit_status,
            )
        if self._auth_failure(response, body):
            raise RequestFailed(f"{detail} (the API key was refused)", status=401, retryable=False)
        raise RequestFailed(detail, status=status, retryable=False)

    async def _post_json(self, path: str, body: dict[str, Any]) -> Any:
        """POST and return the decoded JSON reply; transport errors and garbage are retryable."""
        try:
            response = await self._client.post(path, json=body)
        except transient() as exc:
            raise Retryable.from_transport(exc) from None
        self._check_status(response)
        try:
            return response.json()
        except ValueError:
            raise Retryable("malformed response body") from None

    @staticmethod
    def _broken(message: str, parts: list[str], *, rate_limited: bool = False) -> Exception:
        """The error for a stream that broke: keep the text if any came, else try again."""
        if parts:
            return StreamInterrupted(message, "".join(parts))
        return Retryable(message, rate_limited=rate_limited, overloaded=True)

    async def aclose(self) -> None:
        if self._made_client is not None:
            await self._made_client.aclose()  # closes the transport too
        elif self._transport is not None:
            await self._transport.aclose()
