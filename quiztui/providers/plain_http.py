"""A lean HTTP/1.1 client for plain-HTTP servers (``http://``: llama.cpp, Ollama, vLLM, LM Studio
and every other server on the machine or the LAN), as an httpx transport and without httpx.

httpx's default transport (httpcore, h11 and anyio) costs about 2.5 ms of CPU per streamed reply
on loopback, most of it in layers a plain HTTP/1.1 exchange does not need: the connection pool
polls every idle socket's readability each time it hands out a request, and each body chunk
passes through five async generators. With one GIL that CPU is paid between the judge's replies
(``docs/speed.md``). This module speaks HTTP/1.1 over asyncio streams itself — about 0.3 ms a
reply on its own, 1 ms with httpx's client above it (``bench/vet_throughput.py``) — and keeps
httpx's client, its request and response objects, event hooks and exception types, so the
providers and the retry loop see exactly what they saw before. HTTPS keeps httpx's own transport
(TLS is not re-implemented here), and so does a URL a proxy from the environment applies to
(:func:`proxied`: httpx's client honours ``HTTP_PROXY`` only with its own transport).

httpx itself (about 30 ms of imports: ``http.client``, ``email``, ``urllib.request``) is not
needed to send: :meth:`PlainHTTPTransport.send` takes a request's bytes and returns the answer's
head, and :func:`fetch` asks one request synchronously (the endpoint probe before a run). So a
headless run's first requests leave before httpx is imported, and it is imported while the judge
works (``cli/vet.report_work``); a response becomes an httpx ``Response`` when its head arrives,
and an error is raised as httpx's (httpx imported then).

What it does: one request per connection at a time, keep-alive connections kept per host and
port (``max_idle`` of them), a connection the server closed is never reused, and a request that
cannot be written to a reused one (the server closed it meanwhile) goes on a new one; bodies framed by
``Content-Length``, ``Transfer-Encoding: chunked`` (trailers read and dropped) or the connection's
end; the connect, read and write timeouts of the request's httpx ``Timeout``. Errors map to
httpx's as httpcore maps them: ``ConnectError``/``ConnectTimeout`` (nothing sent), ``ReadTimeout``,
``WriteError``/``WriteTimeout``, ``ReadError`` for a reset, and ``RemoteProtocolError`` for a
server that closes early or answers what is not HTTP/1.x.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import socket
import sys
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import urlsplit

if TYPE_CHECKING:
    import httpx

# A request that is no httpx Request (sent before httpx is imported): its method and URL, which
# an error names (httpx's exceptions carry a request).
Target = tuple[str, str]
Timeouts = Mapping[str, float | None]

_HEAD_LIMIT = 1 << 16  # a response head (status line and headers) longer than this is refused
_NO_BODY_STATUS = frozenset({204, 304})


def _error(kind: str, message: str, request: httpx.Request | Target) -> Exception:
    """httpx's exception ``kind`` for ``request`` (httpx is imported here, on an error's way)."""
    import httpx

    if isinstance(request, tuple):
        request = httpx.Request(*request)
    error: Exception = getattr(httpx, kind)(message, request=request)
    return error


def proxied(url: str) -> bool:
    """Whether a proxy from the environment (``HTTP_PROXY``/``ALL_PROXY``, less ``NO_PROXY``)
    applies to the plain-HTTP ``url``: then httpx's own transport carries it, through the proxy.

    Where proxies come only from the environment (not macOS or Windows, whose system settings
    ``urllib.request`` also reads), no such variable set means none, without importing
    ``urllib.request`` (and ``http.client`` with it)."""
    if sys.platform not in ("darwin", "win32") and not any(
        value and name.lower() in ("http_proxy", "all_proxy") for name, value in os.environ.items()
    ):
        return False
    import urllib.request

    proxies = urllib.request.getproxies()
    if not (proxies.get("http") or proxies.get("all")):
        return False
    return not urllib.request.proxy_bypass(urlsplit(url).hostname or "")


class _Connection:
    __slots__ = ("key", "reader", "writer", "reused")

    def __init__(
        self, key: tuple[str, int], reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        self.key = key
        self.reader = reader
        self.writer = writer
        self.reused = False

    def usable(self) -> bool:
        return not (self.reader.at_eof() or self.writer.is_closing())

    def close(self) -> None:
        self.writer.close()


class _Closed(Exception):
    """The server had closed a reused connection: the request could not be written to it, so
    nothing reached the server and it is sent on a new connection."""


class Answer(NamedTuple):
    """A response head as it arrived, its body still on the connection (:meth:`PlainHTTPTransport.send`)."""

    status: int
    reason: bytes
    headers: list[tuple[bytes, bytes]]
    framing: int | str  # a length, "chunked" or "close" (to the connection's end)
    keep_alive: bool
    connection: _Connection
    read_timeout: float | None


class PlainHTTPTransport:
    """HTTP/1.1 for ``http://`` URLs over asyncio streams (see the module docstring): an httpx
    transport (``handle_async_request``) and, without httpx, :meth:`send`."""

    def __init__(self, *, max_idle: int = 16) -> None:
        self.max_idle = max(1, max_idle)
        self._idle: dict[tuple[str, int], list[_Connection]] = {}
        self.opened = 0  # connections opened (tests read it: keep-alive holds)

    async def __aenter__(self) -> PlainHTTPTransport:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        if url.scheme != "http":
            raise _error(
                "UnsupportedProtocol",
                f"this transport speaks plain HTTP only, not {url.scheme}",
                request,
            )
        timeout = request.extensions.get("timeout") or {}
        body = await request.aread()
        answer = await self.send(
            (url.host, url.port or 80), request_head(request), body, timeout, request
        )
        return self.response(answer, request)

    async def send(
        self,
        key: tuple[str, int],
        head: bytes,
        body: bytes,
        timeout: Timeouts,
        request: httpx.Request | Target,
    ) -> Answer:
        """Send a request's bytes (``head``: its request line and headers) to ``key``'s server
        and read the answer's head; its body is read through :meth:`response`. Needs no httpx
        but for an error, raised as httpx's."""
        while True:
            connection = self._take(key) or await self._open(key, timeout.get("connect"), request)
            try:
                return await self._exchange(connection, head, body, timeout, request)
            except _Closed:  # a keep-alive the server had closed: once more, on a new one
                continue

    def response(self, answer: Answer, request: httpx.Request) -> httpx.Response:
        """``answer`` as httpx's response, its body read as it arrives (httpx imported here)."""
        import httpx

        stream: Any = _body_type()(self, answer, request)  # an httpx AsyncByteStream
        return httpx.Response(
            answer.status,
            headers=answer.headers,
            stream=stream,
            extensions={"http_version": b"HTTP/1.1", "reason_phrase": answer.reason},
        )

    async def _exchange(
        self,
        connection: _Connection,
        head: bytes,
        body: bytes,
        timeout: Timeouts,
        request: httpx.Request | Target,
    ) -> Answer:
        reader = connection.reader
        try:
            connection.writer.write(head + body)
            async with asyncio.timeout(timeout.get("write")):
                await connection.writer.drain()
        except TimeoutError:
            connection.close()
            raise _error("WriteTimeout", "timed out sending the request", request) from None
        except OSError as exc:
            connection.close()
            if connection.reused:
                raise _Closed from None
            raise _error("WriteError", str(exc) or type(exc).__name__, request) from None
        read_timeout = timeout.get("read")
        try:
            while True:  # 1xx answers come before the real one
                async with asyncio.timeout(read_timeout):
                    raw = await reader.readuntil(b"\r\n\r\n")
                status, reason, headers, keep_alive = _parse_head(raw, request)
                if status >= 200 or status == 101:
                    break
        except BaseException as exc:
            connection.close()
            if isinstance(exc, asyncio.IncompleteReadError | ConnectionError):
                raise _error(
                    "RemoteProtocolError",
                    "Server disconnected without sending a response.",
                    request,
                ) from None
            if isinstance(exc, TimeoutError):
                raise _error("ReadTimeout", "timed out waiting for the answer", request) from None
            if isinstance(exc, asyncio.LimitOverrunError):
                raise _error("RemoteProtocolError", "response head too long", request) from None
            raise
        method = request[0] if isinstance(request, tuple) else request.method
        framing = _framing(method, status, headers)
        keep_alive = keep_alive and framing != "close"
        return Answer(status, reason, headers, framing, keep_alive, connection, read_timeout)

    def _take(self, key: tuple[str, int]) -> _Connection | None:
        idle = self._idle.get(key)
        while idle:
            connection = idle.pop()
            if connection.usable():
                connection.reused = True
                return connection
            connection.close()
        return None

    def _give_back(self, connection: _Connection) -> None:
        idle = self._idle.setdefault(connection.key, [])
        if connection.usable() and len(idle) < self.max_idle:
            idle.append(connection)
        else:
            connection.close()

    async def _open(
        self,
        key: tuple[str, int],
        connect_timeout: float | None,
        request: httpx.Request | Target,
    ) -> _Connection:
        try:
            async with asyncio.timeout(connect_timeout):
                reader, writer = await asyncio.open_connection(*key, limit=_HEAD_LIMIT)
        except TimeoutError:
            raise _error("ConnectTimeout", "timed out connecting", request) from None
        except OSError as exc:
            raise _error("ConnectError", str(exc) or type(exc).__name__, request) from None
        self.opened += 1
        return _Connection(key, reader, writer)

    async def open_ahead(
        self, key: tuple[str, int], count: int, connect_timeout: float | None
    ) -> int:
        """Open connections to ``key``'s server (host, port) until ``count`` are idle, all at
        once; how many were opened. A run's first requests then go out each as soon as it is
        made: connecting takes a turn of the event loop, and the first turn made every request of
        the first round before any was sent. A connection that fails is left to the request that
        would have used it (it connects again and reports the error)."""
        wanted = min(count, self.max_idle) - len(self._idle.get(key, ()))
        if wanted <= 0:
            return 0
        where = ("GET", f"http://{netloc(*key)}/")  # names the server in a connect error
        opened = await asyncio.gather(
            *(self._open(key, connect_timeout, where) for _ in range(wanted)),
            return_exceptions=True,
        )
        made = [c for c in opened if isinstance(c, _Connection)]
        for connection in made:
            self._give_back(connection)
        return len(made)

    async def aclose(self) -> None:
        for idle in self._idle.values():
            for connection in idle:
                connection.close()
        self._idle.clear()


class _BodyReader:
    """A response body as it arrives; the connection goes back to the pool once it is read to
    its end (and is closed if the body is left unread). httpx's ``AsyncByteStream`` is mixed in
    when the first response is made (:func:`_body_type`)."""

    def __init__(
        self, transport: PlainHTTPTransport, answer: Answer, request: httpx.Request
    ) -> None:
        self._transport = transport
        self._connection: _Connection | None = answer.connection
        self._framing = answer.framing
        self._keep_alive = answer.keep_alive
        self._timeout = answer.read_timeout
        self._request = request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        connection = self._connection
        if connection is None:
            return
        reader = connection.reader
        try:
            async with asyncio.timeout(None) as deadline:
                loop = asyncio.get_running_loop()
                timeout = self._timeout
                slack = 0.0 if timeout is None else min(1.0, timeout / 10)
                armed = [-slack - 1.0]

                def arm() -> None:
                    # The read timeout runs from the last byte; moved forward at most every
                    # ``slack`` (a timer per read was a tenth of the transport's time).
                    if timeout is not None and (now := loop.time()) - armed[0] > slack:
                        deadline.reschedule(now + timeout)
                        armed[0] = now

                if self._framing == "chunked":
                    while True:
                        arm()
                        line = await reader.readuntil(b"\r\n")
                        try:
                            size = int(line.split(b";", 1)[0], 16)
                        except ValueError:
                            raise _error(
                                "RemoteProtocolError", "malformed chunk size", self._request
                            ) from None
                        if size == 0:
                            while (await reader.readuntil(b"\r\n")) != b"\r\n":
                                arm()  # trailers: read and dropped
                            break
                        arm()
                        data = await reader.readexactly(size + 2)
                        yield data[:-2]
                elif self._framing == "close":
                    while True:
                        arm()
                        data = await reader.read(1 << 16)
                        if not data:
                            break
                        yield data
                else:
                    left = int(self._framing)
                    while left > 0:
                        arm()
                        data = await reader.read(min(left, 1 << 16))
                        if not data:
                            raise asyncio.IncompleteReadError(b"", left)
                        left -= len(data)
                        yield data
        except TimeoutError:
            self._drop()
            raise _error("ReadTimeout", "timed out reading the answer", self._request) from None
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            self._drop()
            raise _error(
                "RemoteProtocolError",
                "peer closed connection without sending complete message body",
                self._request,
            ) from None
        except ConnectionError as exc:
            self._drop()
            raise _error("ReadError", str(exc) or type(exc).__name__, self._request) from None
        except BaseException:
            self._drop()
            raise
        self._connection = None
        if self._keep_alive:
            self._transport._give_back(connection)
        else:
            connection.close()

    def _drop(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    async def aclose(self) -> None:
        self._drop()  # read to its end, the connection is already back in the pool


@functools.cache
def _body_type() -> type[_BodyReader]:
    """:class:`_BodyReader` as httpx's ``AsyncByteStream`` (which httpx's response asks of a
    stream it reads asynchronously), made once httpx is imported."""
    import httpx

    return type("_Body", (_BodyReader, httpx.AsyncByteStream), {})


def netloc(host: str, port: int) -> str:
    """``host:port`` as a Host header and a URL write it (an IPv6 address in brackets)."""
    host = f"[{host}]" if ":" in host else host
    return host if port == 80 else f"{host}:{port}"


def request_head(request: httpx.Request) -> bytes:
    target = request.url.raw_path  # the path and query (origin form)
    lines = [request.method.encode("ascii"), b" ", target, b" HTTP/1.1\r\n"]
    for name, value in request.headers.raw:
        lines += [name, b": ", value, b"\r\n"]
    lines.append(b"\r\n")
    return b"".join(lines)


def _parse_head(
    raw: bytes, request: httpx.Request | Target
) -> tuple[int, bytes, list[tuple[bytes, bytes]], bool]:
    """(status, reason, headers, keep-alive) of a response head."""
    status_line, *header_lines = raw[:-4].split(b"\r\n")
    parts = status_line.split(b" ", 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/1.") or not parts[1].isdigit():
        raise _error(
            "RemoteProtocolError", f"not an HTTP/1.x answer: {status_line[:40]!r}", request
        )
    headers = []
    for line in header_lines:
        name, sep, value = line.partition(b":")
        if not sep or not name or name != name.strip():
            raise _error("RemoteProtocolError", f"malformed header {line[:40]!r}", request)
        headers.append((name, value.strip()))
    connection = b",".join(v for n, v in headers if n.lower() == b"connection").lower()
    keep_alive = b"close" not in connection and (
        parts[0] != b"HTTP/1.0" or b"keep-alive" in connection
    )
    return int(parts[1]), parts[2] if len(parts) > 2 else b"", headers, keep_alive


def _framing(method: str, status: int, headers: list[tuple[bytes, bytes]]) -> int | str:
    """How the body ends: its length, "chunked", or "close" (the connection's end)."""
    if method == "HEAD" or status in _NO_BODY_STATUS or 100 <= status < 200:
        return 0
    coding = b",".join(v for n, v in headers if n.lower() == b"transfer-encoding").lower()
    if coding:
        return "chunked" if coding.rsplit(b",", 1)[-1].strip() == b"chunked" else "close"
    lengths = {v for n, v in headers if n.lower() == b"content-length"}
    if len(lengths) == 1 and (length := lengths.pop()).isdigit():
        return int(length)
    return "close"


class Answered(NamedTuple):
    """A whole answer to :func:`fetch`: what the probe reads of httpx's response."""

    status_code: int
    reason: bytes
    headers: list[tuple[bytes, bytes]]
    content: bytes

    def json(self) -> Any:
        return json.loads(self.content)


class _SocketReader:
    """A blocking socket read up to a delimiter or a length, the rest kept for the next read."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._buffer = b""

    def _more(self) -> bool:
        data = self._sock.recv(1 << 16)
        self._buffer += data
        return bool(data)

    def until(self, delimiter: bytes, limit: int) -> bytes:
        while (end := self._buffer.find(delimiter)) < 0:
            if len(self._buffer) > limit:
                raise _TooLong
            if not self._more():
                raise asyncio.IncompleteReadError(self._buffer, None)
        if end > limit:
            raise _TooLong
        end += len(delimiter)
        line, self._buffer = self._buffer[:end], self._buffer[end:]
        return line

    def exactly(self, size: int) -> bytes:
        while len(self._buffer) < size:
            if not self._more():
                raise asyncio.IncompleteReadError(self._buffer, size)
        data, self._buffer = self._buffer[:size], self._buffer[size:]
        return data

    def rest(self) -> bytes:
        while self._more():
            pass
        data, self._buffer = self._buffer, b""
        return data

    def body(self, framing: int | str) -> bytes:
        if framing == "close":
            return self.rest()
        if framing != "chunked":
            return self.exactly(int(framing))
        parts: list[bytes] = []
        while True:
            line = self.until(b"\r\n", _HEAD_LIMIT)
            try:
                size = int(line.split(b";", 1)[0], 16)
            except ValueError:
                raise _Malformed("malformed chunk size") from None
            if size == 0:
                while self.until(b"\r\n", _HEAD_LIMIT) != b"\r\n":
                    pass  # trailers: read and dropped
                return b"".join(parts)
            parts.append(self.exactly(size + 2)[:-2])


class _TooLong(Exception):
    """A response head past :data:`_HEAD_LIMIT`."""


class _Malformed(Exception):
    """A body framing that is not HTTP/1.1."""


def fetch(
    method: str,
    url: str,
    *,
    head: bytes | None = None,
    headers: Mapping[str, str] | None = None,
    body: bytes = b"",
    timeout: Timeouts,
    request: httpx.Request | None = None,
) -> Answered:
    """One request to a plain-HTTP ``url`` over a connection of its own, answered whole: the
    probe's few requests before a run (``providers/probe.py``), without httpx or ``http.client``
    (tens of ms of imports before the first request). ``head`` is the request line and headers as
    they go out; without it they are made of ``headers`` (``Host`` and ``Content-Length`` added).
    Errors are httpx's, as :class:`PlainHTTPTransport` raises them."""
    parts = urlsplit(url)
    where: httpx.Request | Target = request if request is not None else (method, url)
    if parts.scheme != "http" or not parts.hostname:
        raise _error("UnsupportedProtocol", f"plain HTTP only, not {url[:40]!r}", where)
    host, port = parts.hostname, parts.port or 80
    if head is None:
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        lines = [f"{method} {target} HTTP/1.1", f"Host: {netloc(host, port)}"]
        lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
        if body or method not in ("GET", "HEAD"):
            lines.append(f"Content-Length: {len(body)}")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    try:
        sock = socket.create_connection((host, port), timeout=timeout.get("connect"))
    except TimeoutError:
        raise _error("ConnectTimeout", "timed out connecting", where) from None
    except OSError as exc:
        raise _error("ConnectError", str(exc) or type(exc).__name__, where) from None
    with sock:
        try:
            sock.settimeout(timeout.get("write"))
            sock.sendall(head + body)
        except TimeoutError:
            raise _error("WriteTimeout", "timed out sending the request", where) from None
        except OSError as exc:
            raise _error("WriteError", str(exc) or type(exc).__name__, where) from None
        reader = _SocketReader(sock)
        try:
            sock.settimeout(timeout.get("read"))
            while True:  # 1xx answers come before the real one
                raw = reader.until(b"\r\n\r\n", _HEAD_LIMIT)
                status, reason, response_headers, _ = _parse_head(raw, where)
                if status >= 200:
                    break
            content = reader.body(_framing(method, status, response_headers))
        except TimeoutError:
            raise _error("ReadTimeout", "timed out waiting for the answer", where) from None
        except (asyncio.IncompleteReadError, ConnectionError):
            what = "Server disconnected without sending a complete response."
            raise _error("RemoteProtocolError", what, where) from None
        except (_TooLong, _Malformed) as exc:
            what = str(exc) or "response head too long"
            raise _error("RemoteProtocolError", what, where) from None
        except OSError as exc:
            raise _error("ReadError", str(exc) or type(exc).__name__, where) from None
    return Answered(status, reason, response_headers, content)


class PlainHTTPSyncTransport:
    """An httpx transport over :func:`fetch`: one request at a time for ``http://``, a
    connection each (the probe through httpx's client, where a test gives it one)."""

    def __enter__(self) -> PlainHTTPSyncTransport:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        pass

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        import httpx

        url = request.url
        if url.scheme != "http":
            raise httpx.UnsupportedProtocol(
                f"this transport speaks plain HTTP only, not {url.scheme}", request=request
            )
        timeout = request.extensions.get("timeout") or {}
        answer = fetch(
            request.method,
            str(url),
            head=request_head(request),
            body=request.read(),
            timeout=timeout,
            request=request,
        )
        return httpx.Response(
            answer.status_code,
            headers=answer.headers,
            stream=httpx.ByteStream(answer.content),
            extensions={"http_version": b"HTTP/1.1", "reason_phrase": answer.reason},
        )
