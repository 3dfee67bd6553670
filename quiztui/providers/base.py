"""The provider interface: send messages, stream text back, report usage."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import field
from typing import Protocol

from quiztui.core.logprobs import TokenLogprob
from quiztui.core.records import record
from quiztui.errors import ProviderError


@record(frozen=True)
class ChatRequest:
    messages: tuple[tuple[str, str], ...]  # (role, content)
    temperature: float = 0.0
    max_tokens: int | None = None
    logprobs: bool = False  # ask for token logprobs (providers that cannot simply send none)
    top_logprobs: int = 5  # alternatives per token, when logprobs are asked for
    # The JSON schema the reply must fit (as JSON text), for providers that constrain output
    # (structured output); None: free text.
    response_schema: str | None = None

    def cache_params(self) -> dict[str, object]:
        """Parameters that change the output (retry and concurrency settings do not).

        Logprobs are left out: asking for them changes what comes back beside the text, not the
        text, and the cache keeps P(true) where it was measured.
        """
        return {"temperature": self.temperature, "max_tokens": self.max_tokens}


@record
class ChatResult:
    text: str = ""
    tokens_in: int = 0
    tokens_out: int = 0
    finish_reason: str | None = None
    attempts: int = 1
    logprobs: list[TokenLogprob] | None = None  # the reply's tokens, when the provider sent them
    refusal: str | None = None  # the provider's refusal message, when it sent one instead of text
    tokens_estimated: bool = False  # the server reported no usage; the counts are estimates
    tokens_counted: bool = False  # no usage either; counted by the server's own tokenizer


@record
class RetryNotice:
    attempt: int
    error: str
    delay: float


class StreamInterrupted(ProviderError):
    """The reply stream broke after text had arrived; ``partial`` holds what came through."""

    def __init__(self, message: str, partial: str) -> None:
        super().__init__(message)
        self.partial = partial


class RequestFailed(ProviderError):
    """A request failed for good (retries exhausted, or an error that retrying cannot fix)."""

    def __init__(self, message: str, *, status: int | None = None, retryable: bool = True) -> None:
        super().__init__(message)
        self.status = status
        self.retryable = retryable
        # The structured-output shape the failed request was sent with (an OpenAI-compatible
        # ``response_format`` type; None: none), so a refusal is judged against what was sent.
        self.sent_format: str | None = None


class LogprobsRejected(RequestFailed):
    """The provider refused a request for asking for logprobs, and falling back was not allowed."""


class StructuredRejected(RequestFailed):
    """The provider refused structured output (``judge.structured = "on"``)."""


OnText = Callable[[str], None]
OnRetry = Callable[[RetryNotice], None]
OnLogprobs = Callable[[list[TokenLogprob]], None]


@record
class Usage:
    requests: int = 0
    retries: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    in_flight: int = 0  # requests on the wire right now
    limit: int = 0  # the concurrency limit in force now (adaptive: moves with 429s); 0 unknown
    estimated: int = 0  # replies whose token counts are estimates (the server reported none)
    counted: int = 0  # replies without usage counted by the server's tokenizer (/tokenize)


class Provider(Protocol):
    """What the pipeline needs from a model API."""

    name: str
    model: str
    base_url: str
    simulated: bool
    usage: Usage

    @property
    def label(self) -> str: ...

    async def complete(
        self,
        request: ChatRequest,
        *,
        on_text: OnText | None = None,
        on_retry: OnRetry | None = None,
        on_logprobs: OnLogprobs | None = None,
    ) -> ChatResult:
        """Run one chat request; with ``on_text`` the reply is streamed and each delta passed on.

        With ``request.logprobs`` and a provider that returns them, ``on_logprobs`` receives each
        chunk's tokens *before* ``on_text`` receives that chunk's text (a verdict parsed from the
        text then finds its token); the tokens' texts concatenate to the reply text.

        Raises :class:`StreamInterrupted` when a stream breaks after text arrived (the caller
        keeps what was parsed) and :class:`RequestFailed` when retries are exhausted.
        """
        ...

    async def aclose(self) -> None: ...
