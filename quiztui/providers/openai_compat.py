"""OpenAI-compatible chat completions (OpenAI, Ollama, vLLM, llama.cpp server, LM Studio…).

The client, the adaptive concurrency limit, retries (exponential backoff and jitter on 408/429/5xx,
timeouts and connection errors, honouring ``Retry-After``) and SSE reading are shared with the
native providers in :mod:`quiztui.providers._http`. A stream that breaks after text arrived raises
:class:`StreamInterrupted` with the partial text so the caller keeps what it already parsed.

Token logprobs (``logprobs``/``top_logprobs``) are asked for when the request wants them. With
``logprobs="auto"`` a server that answers 400 about logprobs is asked again without them, and not
asked for them again; with ``"on"`` that refusal is an error (:class:`LogprobsRejected`).
"""

from __future__ import annotations

import codecs
import json
import logging
from typing import TYPE_CHECKING, Any, Literal, Unpack

from quiztui.core.logprobs import ServerAlternatives, TokenLogprob, as_logprob
from quiztui.providers._http import HTTPOptions, HTTPProvider, event_json, sse_data
from quiztui.providers.base import (
    ChatRequest,
    ChatResult,
    LogprobsRejected,
    OnLogprobs,
    OnText,
    RequestFailed,
    StreamInterrupted,
    StructuredRejected,
)
from quiztui.providers.probe import (
    Tokenizer,
    check_endpoint,
    server_slots,
    server_tokenizer,
    token_count,
)
from quiztui.providers.retry import Retryable, transient

if TYPE_CHECKING:
    import httpx

log = logging.getLogger(__name__)

CHAT_PATH = "/chat/completions"
# Models whose chat templates drop or refuse a system message (llama.cpp's "gemma" format drops it
# with a debug line): judge.system_role "auto" puts the instructions in the user turn for these.
SYSTEMLESS_MODELS = ("gemma",)  # under the base URL, which ends in /v1 for most servers
# Error codes and types that mean "slow down" (OpenAI's, and Anthropic's in its compatible API).
_RATE_LIMIT_CODES = frozenset({"rate_limit_exceeded", "rate_limit_error", "requests", "tokens"})


class _TokenTexts:
    """Token texts that concatenate to the reply text.

    A character may span tokens (UTF-8 bytes split between them), in which case servers send a
    placeholder as ``token``; decoding the ``bytes`` incrementally keeps the character offsets of
    later tokens right. A token whose bytes are whole UTF-8 characters, with none held back from
    the tokens before it (nearly every token), is decoded in one call; the incremental decoder
    takes the rest, and the tokens after them until it holds nothing back.
    """

    __slots__ = ("_decoder", "_holding")

    def __init__(self) -> None:
        self._decoder: codecs.IncrementalDecoder | None = None
        self._holding = False  # the decoder holds the start of a character

    def text(self, item: dict[str, Any]) -> str:
        raw = item.get("bytes")
        if type(raw) is list and raw:
            try:  # a list of ints 0-255, else TypeError/ValueError (one C call, not a loop)
                data = bytes(raw)
            except (TypeError, ValueError):
                pass
            else:
                if not self._holding:
                    try:
                        return data.decode()
                    except UnicodeDecodeError:
                        pass  # a character cut at the end, or a bad byte: the decoder's way
                decoder = self._decoder
                if decoder is None:
                    decoder = self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
                text = decoder.decode(data)
                self._holding = bool(decoder.getstate()[0])
                return text
        token = item.get("token")
        return token if isinstance(token, str) else ""


_new_token = tuple.__new__  # a TokenLogprob without its Python-level __new__ (one per token)


def _parse_logprobs(logprobs: Any, texts: _TokenTexts) -> list[TokenLogprob]:
    """``choices[i].logprobs.content`` → tokens; a malformed item keeps its text (offsets) only.
    Each token's alternatives are read when first used (:class:`ServerAlternatives`)."""
    content = logprobs.get("content") if isinstance(logprobs, dict) else None
    if not isinstance(content, list):
        return []
    tokens = []
    text = texts.text
    for item in content:
        if type(item) is not dict:
            continue
        alternatives = item.get("top_logprobs")
        top = (
            ServerAlternatives(alternatives) if type(alternatives) is list and alternatives else ()
        )
        logprob = as_logprob(item.get("logprob"))
        tokens.append(_new_token(TokenLogprob, (text(item), logprob, top)))
    return tokens


def _mentions_logprobs(exc: RequestFailed) -> bool:
    return exc.status in (400, 422) and "logprob" in str(exc).lower()


def _mentions_response_format(exc: RequestFailed) -> bool:
    """A refusal of ``response_format``: a 400 or 422 naming it (or a bare 422, a validation
    error), or the 500 llama-cpp-python's server gives for a type it does not know."""
    text = str(exc).lower()
    named = any(word in text for word in ("response_format", "json_schema", "schema", "grammar"))
    bare = exc.status == 422 and text.strip() == "http 422"
    return (exc.status in (400, 422, 500) and named) or bare


class OpenAICompatProvider(HTTPProvider):
    name = "openai-compat"

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key_env: str | None = None,
        logprobs: Literal["auto", "on", "off"] = "auto",
        system_role: Literal["auto", "system", "user"] = "auto",
        structured: Literal["auto", "on", "off"] = "auto",
        **options: Unpack[HTTPOptions],
    ) -> None:
        super().__init__(base_url=base_url, model=model, api_key_env=api_key_env, **options)
        self.logprobs = logprobs
        self.logprobs_rejected = False  # set when the server refused them under "auto"
        self.system_role = system_role
        self.structured = structured
        # The response_format shape this endpoint takes: "json_schema" (OpenAI, llama.cpp's
        # server, vLLM, LM Studio, Ollama), "json_object" with a schema (llama-cpp-python's
        # server), or None once the server refused both (under "auto"). Learnt from the first
        # refusals, remembered for the provider's life. The first requests do not wait for one
        # of them to learn it (that cost every run a whole reply's time): each refused request
        # steps the shape down once, from the shape it was sent with (:meth:`_structured_fallback`).
        self.structured_wire: str | None = None if structured == "off" else "json_schema"
        self.tokenizer: Tokenizer | None = None  # a local server's tokenize endpoint (probe)

    @property
    def system_in_user(self) -> bool:
        """Whether the instructions go at the top of the user turn (see ``judge.system_role``)."""
        if self.system_role == "auto":
            return any(name in self.model.lower() for name in SYSTEMLESS_MODELS)
        return self.system_role == "user"

    def _messages(self, request: ChatRequest) -> list[dict[str, str]]:
        messages = list(request.messages)
        if self.system_in_user:
            system = "\n\n".join(c for r, c in messages if r == "system")
            messages = [(r, c) for r, c in messages if r != "system"]
            if system and messages and messages[0][0] == "user":
                messages[0] = ("user", f"{system}\n\n{messages[0][1]}")
            elif system:
                messages.insert(0, ("user", system))
        return [{"role": r, "content": c} for r, c in messages]

    def _response_format(self, request: ChatRequest) -> dict[str, Any] | None:
        if request.response_schema is None or self.structured_wire is None:
            return None
        schema = json.loads(request.response_schema)
        if self.structured_wire == "json_object":
            return {"type": "json_object", "schema": schema}
        return {
            "type": "json_schema",
            "json_schema": {"name": "quiztui_reply", "strict": True, "schema": schema},
        }

    def _chat_path(self, stream: bool) -> str:
        return CHAT_PATH

    def probe(self) -> list[str] | None:
        """One ``GET /models`` before a run (:mod:`quiztui.providers.probe`): a dead server, a
        base URL without ``/v1`` or a model the server lacks is a one-line error (exit 2) before
        any request is spent. The key goes to this provider's own base URL only."""
        headers = {k: v for k, v in self._headers.items() if k.lower() != "content-type"}
        models = check_endpoint(self.base_url, self.model, headers=headers)
        slots = server_slots(self.base_url, headers=headers)
        if slots is not None and self.limiter.adaptive:
            self.limiter.start_at(slots, f"the server serves {slots} at once (/props)")
        self.tokenizer = server_tokenizer(self.base_url, headers=headers)
        if self.tokenizer is not None:
            log.info("%s tokenizer at %s", self.tokenizer.server, self.tokenizer.url)
            if self.tokenizer.server == "llama-cpp-python":
                self._suit_llama_cpp_python()
        return models

    def _suit_llama_cpp_python(self) -> None:
        """llama-cpp-python's server (found by its ``/extras/tokenize``): its structured output is
        ``json_object`` with a schema (it answers ``json_schema`` with a 500), and it computes
        logprobs in Python over the whole vocabulary, sorting it per token — measured 1.6 s a
        token for Gemma 3's 262k vocabulary on two cores, ten times the token itself — so
        logprobs "auto" does not ask it ("on" still does)."""
        if self.structured_wire == "json_schema":
            self.structured_wire = "json_object"
        # One lock serves every request, and a request waiting for it ends the running stream
        # (its interrupt_requests): one at a time, never more.
        self.limiter.max_limit = 1
        self.limiter.start_at(1, "llama-cpp-python serves one request at a time")
        if self.logprobs == "auto" and not self.logprobs_rejected:
            self.logprobs_rejected = True
            log.info("logprobs not asked: llama-cpp-python computes them in Python (slow)")

    async def _server_tokens(self, request: ChatRequest, reply: str) -> tuple[int, int] | None:
        """The prompt (the messages' text as sent) and the reply counted by the server's tokenize
        endpoint (:func:`~quiztui.providers.probe.server_tokenizer`); None without one or when
        it fails (the estimate stands in)."""
        if self.tokenizer is None:
            return None
        prompt = "\n".join(m["content"] for m in self._messages(request))
        counts = []
        for text in (prompt, reply):
            try:
                response = await self._client.post(
                    self.tokenizer.url, json={self.tokenizer.field: text}
                )
            except Exception as exc:
                import httpx

                if isinstance(exc, httpx.HTTPError):
                    return None
                raise
            count = token_count(response) if response.status_code == 200 else None
            if count is None:
                return None
            counts.append(count)
        return counts[0], counts[1]

    def _body(self, request: ChatRequest, stream: bool, logprobs: bool) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": self._messages(request),
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
        response_format = self._response_format(request)
        if response_format is not None:
            body["response_format"] = response_format
        return body

    async def _attempt(
        self,
        request: ChatRequest,
        stream: bool,
        on_text: OnText | None,
        on_logprobs: OnLogprobs | None,
    ) -> ChatResult:
        logprobs = request.logprobs and self.logprobs != "off" and not self.logprobs_rejected
        wire = self.structured_wire  # the shape this attempt's body is built with
        try:
            if stream:
                assert on_text is not None
                return await self._stream_once(request, on_text, on_logprobs, logprobs)
            return await self._once(request, logprobs)
        except RequestFailed as exc:
            exc.sent_format = wire  # what the server refused, if it refused the format
            raise

    def _fallback(self, request: ChatRequest, exc: RequestFailed) -> str | None:
        """Under logprobs "auto", a 400 about logprobs means: ask again, and from now on, without.

        Decided from the request, not from per-attempt state: attempts of other requests run
        meanwhile, and once another one has set ``logprobs_rejected`` a retry goes without too.
        A refused ``response_format`` steps down the same way (:meth:`_structured_fallback`).
        """
        structured = self._structured_fallback(request, exc)
        if structured is not None:
            return structured
        if not (request.logprobs and self.logprobs != "off" and _mentions_logprobs(exc)):
            return None
        if self.logprobs == "on":
            raise LogprobsRejected(
                f'{exc} (judge.logprobs is "on"; "auto" goes on without them)',
                status=exc.status,
                retryable=False,
            ) from None
        self.logprobs_rejected = True
        return f"{exc}; continuing without logprobs"

    def _check_status(self, response: httpx.Response) -> None:
        """As the base; and a 5xx about ``response_format`` is a refusal, not a server fault:
        llama-cpp-python's server answers 500 to a ``response_format`` type it does not know
        (its request validation error), which retrying cannot fix."""
        if response.status_code >= 500 and self.structured_wire is not None:
            try:
                body: Any = response.json()
            except ValueError:
                body = None
            message = self._error_message(body) or ""
            if "response_format" in message:
                detail = f"HTTP {response.status_code}: {message[:200]}"
                raise RequestFailed(detail, status=response.status_code, retryable=False)
        super()._check_status(response)

    def _structured_fallback(self, request: ChatRequest, exc: RequestFailed) -> str | None:
        """A 400/422 about the response format: try llama-cpp-python's ``json_object`` with a
        schema, then (under "auto") plain text; under "on", text is an error.

        Requests run side by side: a refusal of a shape another refusal already stepped down
        from is asked again the current way, so no refusal steps down twice.
        """
        sent = exc.sent_format
        if request.response_schema is None or sent is None:
            return None
        if not _mentions_response_format(exc):
            return None
        if sent != self.structured_wire:
            now = self.structured_wire or "text replies"
            return f"{exc}; asking again as {now} (learnt from an earlier refusal)"
        if self.structured_wire == "json_schema":
            self.structured_wire = "json_object"
            return f"{exc}; asking for JSON with a schema the other way (json_object)"
        if self.structured == "on":
            raise StructuredRejected(
                f'{exc} (judge.structured is "on"; "auto" goes on with text replies)',
                status=exc.status,
                retryable=False,
            ) from None
        self.structured_wire = None
        return f"{exc}; continuing with text replies (no structured output)"

    async def _once(self, request: ChatRequest, logprobs: bool) -> ChatResult:
        data = await self._post_json(CHAT_PATH, self._body(request, False, logprobs))
        try:
            choice = data["choices"][0]
            text = choice["message"].get("content") or ""
            usage = data.get("usage") or {}
        except (KeyError, IndexError, TypeError, AttributeError):
            raise Retryable("malformed response body") from None
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
            async with self._post_stream(CHAT_PATH, body) as response:
                if response.status_code >= 400:
                    await response.aread()
                    self._check_status(response)
                async for payload in sse_data(response):
                    if payload == "[DONE]":
                        done = True  # read on to the end so the connection goes back to the pool
                        continue
                    try:
                        chunk = event_json(payload)
                    except ValueError:
                        continue  # a malformed event: skip it, the parser re-asks missing ids
                    if not isinstance(chunk, dict):
                        continue
                    if chunk.get("error"):
                        raise self._stream_error(chunk["error"], parts)
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
        except transient() as exc:
            raise self._broken(f"stream cut ({type(exc).__name__})", parts) from None
        result.text = "".join(parts)
        result.refusal = "".join(refusal) or None
        result.logprobs = tokens or None
        if result.finish_reason is None:
            # No finish reason is a cut stream, [DONE] or not: llama.cpp's Python server ends a
            # running stream with [DONE] when another request arrives.
            what = "stream ended without a finish reason" + ("" if done else " or [DONE]")
            if parts:
                raise StreamInterrupted(what, result.text)
            raise Retryable(what if done else "empty stream", overloaded=True)
        return result

    def _stream_error(self, error: Any, parts: list[str]) -> Exception:
        """The exception for an ``error`` object inside the stream (``data: {"error": {...}}``).

        OpenAI, vLLM and llama.cpp's server send one when generation fails midway. As with
        Anthropic's ``error`` event, text that already went to ``on_text`` is kept as a cut stream
        (:class:`StreamInterrupted`: the caller re-asks what is missing) and is never delivered a
        second time by a retry; before any text the request is retried.
        """
        fields = error if isinstance(error, dict) else {"message": error}
        code, kind = fields.get("code"), fields.get("type")
        label = kind if isinstance(kind, str) and kind else code or "error"
        what = f"stream error {label}: {str(fields.get('message'))[:200]}"
        busy = str(code) == "429" or not _RATE_LIMIT_CODES.isdisjoint({str(code), str(kind)})
        return self._broken(what, parts, rate_limited=busy)


def _text_or_none(value: object) -> str | None:
    return value if isinstance(value, str) and value else None
