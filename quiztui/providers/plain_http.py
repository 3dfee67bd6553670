"""A lean httpx transport for plain-HTTP servers (``http://``: llama.cpp, Ollama, vLLM, LM Studio
and every other server on the machine or the LAN).

httpx's default transport (httpcore, h11 and anyio) costs about 2.5 ms of CPU per streamed reply
on loopback, most of it in layers a plain HTTP/1.1 exchange does not need: the connection pool
polls every idle socket's readability each time it hands out a request, and each body chunk
passes through five async generators. With one GIL that CPU is paid between the judge's replies
(``docs/speed.md``). This transport speaks HTTP/1.1 over asyncio streams itself — about 0.3 ms a
reply on its own, 1 ms with httpx's client above it (``bench/vet_throughput.py``) — and keeps
httpx's client, its request and response objects, event hooks and exception types, so the
providers and the retry loop see exactly what they saw before. HTTPS keeps httpx's own transport
(TLS is not re-implemented here), and so does a URL a proxy from the environment applies to
(:func:`proxied`: httpx's client honours ``HTTP_PROXY`` only with its own transport).

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
from collections.abc import AsyncIterator

import httpx

_HEAD_LIMIT = 1 << 16  # a response head (status line and headers) longer than this is refused
_NO_BODY_STATUS = frozenset({204, 304})


def proxied(url: str) -> bool:
    """Whether a proxy from the environment (``HTTP_PROXY``/``ALL_PROXY``, less ``NO_PROXY``)
    applies to the plain-HTTP ``url``: then httpx's own transport carries it, through the proxy."""
    import urllib.request
    from urllib.parse import urlsplit

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


class PlainHTTPTransport(httpx.AsyncBaseTransport):
    """HTTP/1.1 for ``http://`` URLs over asyncio streams (see the module docstring)."""

    def __init__(self, *, max_idle: int = 16) -> None:
        self.max_idle = max(1, max_idle)
        self._idle: dict[tuple[str, int], list[_Connection]] = {}
        self.opened = 0  # connections opened (tests read it: keep-alive holds)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        if url.scheme != "http":
            raise httpx.UnsupportedProtocol(
                f"this transport speaks plain HTTP only, not {url.scheme}", request=request
            )
        timeout = request.extensions.get("timeout") or {}
        key = (url.host, url.port or 80)
        body = await request.aread()
        head = _request_head(request)
        while True:
            connection = self._take(key) or await self._open(key, timeout.get("connect"), request)
            try:
                return await self._exchange(connection, request, head, body, timeout)
            except _Closed:  # a keep-alive the server had closed: once more, on a new one
                continue

    async def _exchange(
        self,
        connection: _Connection,
        request: httpx.Request,
        head: bytes,
        body: bytes,
        timeout: dict[str, float | None],
    ) -> httpx.Response:
        reader = connection.reader
        try:
            connection.writer.write(head + body)
            async with asyncio.timeout(timeout.get("write")):
                await connection.writer.drain()
        except TimeoutError:
            connection.close()
            raise httpx.WriteTimeout("timed out sending the request", request=request) from None
        except OSError as exc:
            connection.close()
            if connection.reused:
                raise _Closed from None
            raise httpx.WriteError(str(exc) or type(exc).__name__, request=request) from None
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
                raise httpx.RemoteProtocolError(
                    "Server disconnected without sending a response.", request=request
                ) from None
            if isinstance(exc, TimeoutError):
                raise httpx.ReadTimeout(
                    "timed out waiting for the answer", request=request
                ) from None
            if isinstance(exc, asyncio.LimitOverrunError):
                raise httpx.RemoteProtocolError("response head too long", request=request) from None
            raise
        framing = _framing(request.method, status, headers)
        stream = _Body(self, connection, framing, keep_alive, read_timeout, request)
        return httpx.Response(
            status,
            headers=headers,
            stream=stream,
            extensions={"http_version": b"HTTP/1.1", "reason_phrase": reason},
        )

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
        self, key: tuple[str, int], connect_timeout: float | None, request: httpx.Request
    ) -> _Connection:
        try:
            async with asyncio.timeout(connect_timeout):
                reader, writer = await asyncio.open_connection(*key, limit=_HEAD_LIMIT)
        except TimeoutError:
            raise httpx.ConnectTimeout("timed out connecting", request=request) from None
        except OSError as exc:
            raise httpx.ConnectError(str(exc) or type(exc).__name__, request=request) from None
        self.opened += 1
        return _Connection(key, reader, writer)

    async def open_ahead(self, url: httpx.URL, count: int, connect_timeout: float | None) -> int:
        """Open connections to ``url``'s server until ``count`` are idle, all at once; how many
        were opened. A run's first requests then go out each as soon as it is made: connecting
        takes a turn of the event loop, and the first turn made every request of the first round
        before any was sent. A connection that fails is left to the request that would have used
        it (it connects again and reports the error)."""
        key = (url.host, url.port or 80)
        wanted = min(count, self.max_idle) - len(self._idle.get(key, ()))
        if wanted <= 0:
            return 0
        request = httpx.Request("GET", url)  # names the URL in a connect error, never sent
        opened = await asyncio.gather(
            *(self._open(key, connect_timeout, request) for _ in range(wanted)),
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


class _Body(httpx.AsyncByteStream):
    """A response body as it arrives; the connection goes back to the pool once it is read to
    its end (and is closed if the body is left unread)."""

    def __init__(
        self,
        transport: PlainHTTPTransport,
        connection: _Connection,
        framing: int | str,
        keep_alive: bool,
        read_timeout: float | None,
        request: httpx.Request,
    ) -> None:
        self._transport = transport
        self._connection: _Connection | None = connection
        self._framing = framing  # a length, "chunked" or "close" (to the connection's end)
        self._keep_alive = keep_alive and framing != "close"
        self._timeout = read_timeout
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
                            raise httpx.RemoteProtocolError(
                                "malformed chunk size", request=self._request
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
            raise httpx.ReadTimeout("timed out reading the answer", request=self._request) from None
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            self._drop()
            raise httpx.RemoteProtocolError(
                "peer closed connection without sending complete message body",
                request=self._request,
            ) from None
        except ConnectionError as exc:
            self._drop()
            raise httpx.ReadError(str(exc) or type(exc).__name__, request=self._request) from None
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


def _request_head(request: httpx.Request) -> bytes:
    target = request.url.raw_path  # the path and query (origin form)
    lines = [request.method.encode("ascii"), b" ", target, b" HTTP/1.1\r\n"]
    for name, value in request.headers.raw:
        lines += [name, b": ", value, b"\r\n"]
    lines.append(b"\r\n")
    return b"".join(lines)


def _parse_head(
    raw: bytes, request: httpx.Request
) -> tuple[int, bytes, list[tuple[bytes, bytes]], bool]:
    """(status, reason, headers, keep-alive) of a response head."""
    status_line, *header_lines = raw[:-4].split(b"\r\n")
    parts = status_line.split(b" ", 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/1.") or not parts[1].isdigit():
        raise httpx.RemoteProtocolError(
            f"not an HTTP/1.x answer: {status_line[:40]!r}", request=request
        )
    headers = []
    for line in header_lines:
        name, sep, value = line.partition(b":")
        if not sep or not name or name != name.strip():
            raise httpx.RemoteProtocolError(f"malformed header {line[:40]!r}", request=request)
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


class PlainHTTPSyncTransport(httpx.BaseTransport):
    """One request at a time over the standard library's ``http.client``, for ``http://``: the
    endpoint probe's few requests before a run (``providers/probe.py``), so a run against a
    plain-HTTP server never imports httpcore (about 20 ms). Errors map as in
    :class:`PlainHTTPTransport`; a connection serves one request."""

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        import http.client

        url = request.url
        if url.scheme != "http":
            raise httpx.UnsupportedProtocol(
                f"this transport speaks plain HTTP only, not {url.scheme}", request=request
            )
        timeout = request.extensions.get("timeout") or {}
        connection = http.client.HTTPConnection(
            url.host, url.port or 80, timeout=timeout.get("connect")
        )
        try:
            try:
                connection.connect()
            except TimeoutError:
                raise httpx.ConnectTimeout("timed out connecting", request=request) from None
            except OSError as exc:
                raise httpx.ConnectError(str(exc) or type(exc).__name__, request=request) from None
            assert connection.sock is not None
            connection.sock.settimeout(timeout.get("read"))
            try:
                connection.putrequest(
                    request.method,
                    request.url.raw_path.decode("ascii"),
                    skip_host=True,
                    skip_accept_encoding=True,
                )
                for name, value in request.headers.raw:
                    connection.putheader(name.decode("latin-1"), value)
                connection.endheaders(request.read() or None)
                response = connection.getresponse()
                data = response.read()
            except TimeoutError:
                raise httpx.ReadTimeout(
                    "timed out waiting for the answer", request=request
                ) from None
            except (http.client.HTTPException, ConnectionError) as exc:
                what = str(exc) or type(exc).__name__
                raise httpx.RemoteProtocolError(what, request=request) from None
            except OSError as exc:
                raise httpx.ReadError(str(exc) or type(exc).__name__, request=request) from None
            return httpx.Response(
                response.status,
                headers=response.getheaders(),
                stream=httpx.ByteStream(data),
                extensions={"http_version": b"HTTP/1.1", "reason_phrase": response.reason.encode()},
            )
        finally:
            connection.close()
