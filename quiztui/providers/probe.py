"""One look at an OpenAI-compatible endpoint before a run: ``GET {base_url}/models``.

A run against a server that is not there would spend every request's retries on a dead port and
end with each item unjudged; a base URL without ``/v1`` gives only "HTTP 404" per request; a model
name the server does not have fails every request alike. :func:`check_endpoint` finds each of
these with one request and raises :class:`~quiztui.errors.ConfigError` (exit 2) with one line:

- nothing listening: ``cannot reach URL: connection refused`` (or the transport error's kind);
- 404: the URL tried, and the hint that OpenAI-compatible servers serve under ``/v1``;
- a model list without the model: the models the server has.

Any other answer (a 401 for a key, a 5xx, a body that is not a model list) lets the run go on and
report it as it does. Ollama lists ``name:tag``; a model given without a tag matches ``:latest``.

:func:`server_slots` asks a loopback or LAN server how many requests it serves at once (llama.cpp's
``/props``), so the adaptive limit starts there instead of at ``judge.concurrency``.

:func:`server_tokenizer` finds a loopback or LAN server's tokenize endpoint: llama.cpp's
``POST /tokenize {"content": ...}`` or llama-cpp-python's ``POST /extras/tokenize {"input": ...}``
(both answer ``{"tokens": [...]}``), to count the tokens of replies the server sends no usage for.
"""

from __future__ import annotations

import json
import ssl
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal, Protocol, cast
from urllib.parse import urlsplit

from quiztui.core.records import record
from quiztui.errors import ConfigError

if TYPE_CHECKING:
    import httpx

MAX_LISTED = 20  # models named in the unknown-model line


def tls_for(url: str) -> ssl.SSLContext | bool:
    """httpx's ``verify`` for a client of ``url``: True (httpx loads the CA bundle, tens of ms a
    client) for HTTPS; for plain HTTP a bare client context that loads no certificates. Such a
    client never speaks TLS (quiztui follows no redirect), and if it did it would verify against
    no authority and fail: never trust."""
    if url.lower().startswith("http://"):
        return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    return True


def _transport_for(url: str, transport: httpx.BaseTransport | None) -> httpx.BaseTransport | None:
    """``transport`` when given; for a plain-HTTP URL quiztui's own (``plain_http.fetch``: no
    httpx or ``http.client`` to import before a run's first request), unless a proxy from the
    environment applies to it; else httpx's own."""
    from quiztui.providers.plain_http import PlainHTTPSyncTransport, proxied

    if transport is None and url.lower().startswith("http://") and not proxied(url):
        return cast("httpx.BaseTransport", PlainHTTPSyncTransport())  # one, by its methods
    return transport


class _Answer(Protocol):
    """What the probe reads of an answer: httpx's response, or ``plain_http.Answered``."""

    @property
    def status_code(self) -> int: ...

    def json(self) -> Any: ...


def _ask(
    method: str,
    url: str,
    headers: Mapping[str, str] | None,
    timeout: float,
    transport: httpx.BaseTransport | None,
    body: dict[str, Any] | None = None,
) -> _Answer:
    """One request of the probe's: straight over ``plain_http.fetch`` for a plain-HTTP URL (the
    answer asked uncompressed, as it is read whole here), else through httpx's client. Errors are
    httpx's either way."""
    sent = {k: v for k, v in (headers or {}).items() if k.lower() != "accept-encoding"}
    content = b"" if body is None else json.dumps(body, separators=(",", ":")).encode()
    if body is not None:
        sent["Content-Type"] = "application/json"
    chosen = _transport_for(url, transport)
    from quiztui.providers.plain_http import PlainHTTPSyncTransport, fetch

    if isinstance(chosen, PlainHTTPSyncTransport) and transport is None:
        sent["Accept-Encoding"] = "identity"
        limits = {"connect": timeout, "read": timeout, "write": timeout}
        return fetch(method, url, headers=sent, body=content, timeout=limits)
    import httpx

    with httpx.Client(timeout=timeout, transport=chosen, verify=tls_for(url)) as client:
        return client.request(method, url, headers=sent, content=content or None)


def check_endpoint(
    base_url: str,
    model: str,
    *,
    headers: Mapping[str, str] | None = None,
    timeout: float = 5.0,
    transport: httpx.BaseTransport | None = None,
) -> list[str] | None:
    """Probe ``base_url``; the models it lists (None when it answered but listed none)."""
    base = base_url.rstrip("/")
    url = f"{base}/models"
    try:
        response = _ask("GET", url, headers, timeout, transport)
    except Exception as exc:  # the probe's errors are httpx's (imported with the first one)
        import httpx

        if isinstance(exc, httpx.ConnectError):
            why = "connection refused" if "refused" in str(exc).lower() else _kind(exc)
            raise ConfigError(f"cannot reach {base}: {why}") from None
        if isinstance(exc, httpx.TimeoutException):
            raise ConfigError(f"cannot reach {base}: no answer within {timeout:g} s") from None
        if isinstance(exc, httpx.HTTPError):
            raise ConfigError(f"cannot reach {base}: {_kind(exc)}") from None
        raise
    if response.status_code == 404:
        path = urlsplit(base).path.rstrip("/")
        hint = (
            f"; OpenAI-compatible servers serve their API under /v1: try --base-url {base}/v1"
            if not path.endswith("/v1")
            else "; is this an OpenAI-compatible server?"
        )
        raise ConfigError(f"GET {url}: HTTP 404{hint}")
    if response.status_code != 200:
        return None
    models = _model_ids(response)
    if models and not _has_model(models, model):
        shown = ", ".join(models[:MAX_LISTED]) + (" …" if len(models) > MAX_LISTED else "")
        raise ConfigError(f"model '{model}' is not served at {base}; the server has: {shown}")
    return models or None


def server_slots(
    base_url: str,
    *,
    headers: Mapping[str, str] | None = None,
    timeout: float = 5.0,
    transport: httpx.BaseTransport | None = None,
) -> int | None:
    """The requests a local server serves at once, where it says: llama.cpp's ``/props``
    ``total_slots`` (its ``-np``). None for a server elsewhere than loopback or the LAN, or one
    that does not say (Ollama, vLLM and LM Studio do not, nor does llama-cpp-python)."""
    parts = urlsplit(base_url)
    if not _is_local(parts.hostname or ""):
        return None
    path = parts.path.rstrip("/").removesuffix("/v1")
    url = f"{parts.scheme}://{parts.netloc}{path}/props"
    try:
        response = _ask("GET", url, headers, timeout, transport)
        body: Any = response.json() if response.status_code == 200 else None
    except ValueError:
        return None
    except Exception as exc:
        import httpx

        if isinstance(exc, httpx.HTTPError):
            return None
        raise
    slots = body.get("total_slots") if isinstance(body, dict) else None
    return slots if isinstance(slots, int) and not isinstance(slots, bool) and slots > 0 else None


@record(frozen=True)
class Tokenizer:
    """A server's tokenize endpoint: ``POST url {field: text}`` → ``{"tokens": [...]}``."""

    server: Literal["llama.cpp", "llama-cpp-python"]
    url: str
    field: str


# (server, path under the server's root, the text's field), tried in this order.
_TOKENIZERS: tuple[tuple[Literal["llama.cpp", "llama-cpp-python"], str, str], ...] = (
    ("llama.cpp", "/tokenize", "content"),
    ("llama-cpp-python", "/extras/tokenize", "input"),
)


def server_tokenizer(
    base_url: str,
    *,
    headers: Mapping[str, str] | None = None,
    timeout: float = 5.0,
    transport: httpx.BaseTransport | None = None,
) -> Tokenizer | None:
    """The tokenize endpoint of a loopback or LAN server (llama.cpp's ``/tokenize``,
    llama-cpp-python's ``/extras/tokenize``), found by asking each to tokenize a word; None for a
    server elsewhere or one that has neither (Ollama, vLLM's takes another body, LM Studio)."""
    parts = urlsplit(base_url)
    if not _is_local(parts.hostname or ""):
        return None
    root = f"{parts.scheme}://{parts.netloc}{parts.path.rstrip('/').removesuffix('/v1')}"
    for server, path, field in _TOKENIZERS:
        try:
            response = _ask("POST", root + path, headers, timeout, transport, {field: "quiz"})
        except Exception as exc:
            import httpx

            if isinstance(exc, httpx.HTTPError):
                return None
            raise
        if response.status_code == 200 and token_count(response) is not None:
            return Tokenizer(server, root + path, field)
    return None


def token_count(response: _Answer) -> int | None:
    """The length of a tokenize answer's ``tokens`` list; None when it is no such answer."""
    try:
        body: Any = response.json()
    except ValueError:
        return None
    tokens = body.get("tokens") if isinstance(body, dict) else None
    return len(tokens) if isinstance(tokens, list) else None


def _is_local(host: str) -> bool:
    import ipaddress

    if host in ("localhost", "") or host.endswith(".local"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_link_local


def _kind(exc: Exception) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}" + (f" ({text[:120]})" if text else "")


def _model_ids(response: _Answer) -> list[str]:
    try:
        body: Any = response.json()
    except ValueError:
        return []
    data = body.get("data") if isinstance(body, dict) else None
    if not isinstance(data, list):
        return []
    return [str(m["id"]) for m in data if isinstance(m, dict) and isinstance(m.get("id"), str)]


def _has_model(models: list[str], model: str) -> bool:
    return model in models or (":" not in model and f"{model}:latest" in models)


__all__ = ["Tokenizer", "check_endpoint", "server_slots", "server_tokenizer", "token_count"]
