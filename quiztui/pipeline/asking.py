"""Asking a judge until its reply parses: the one request loop of grade, review and robustness.

Each ask is one single-turn request, sent again (a *re-ask*) while the reply does not parse, up to
``max_reasks`` more times; the provider has already retried HTTP errors by then. A request that
fails for good ends the ask with the error; an authentication failure (one of ``stop_statuses``)
ends the run (:class:`RunStopped`). A refusal, when the caller can tell one (``declined``), ends
the ask at once: asking again would only be refused again. What did not parse is never a value.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from quiztui.core.grading import ReplyUnparsed
from quiztui.core.logprobs import TokenLogprob
from quiztui.providers.base import (
    ChatRequest,
    ChatResult,
    OnRetry,
    OnText,
    Provider,
    RequestFailed,
    RetryNotice,
    StreamInterrupted,
)

T = TypeVar("T")

AUTH_STATUSES = frozenset({401, 403, 404})  # a key or model the provider will never accept


class RunStopped(Exception):
    """The run cannot go on (authentication failed); carries the reason."""


@dataclass
class Asked(Generic[T]):
    """One question to the judge, asked until it parsed: the value, or why not."""

    value: T | None = None
    reason: str = "no reply"
    reply: str = ""
    failed: bool = False  # the request failed after the provider's own retries
    declined: str | None = None  # the reply was a refusal: the caller's status for it
    attempts: int = 0
    replies: int = 0  # requests that returned a reply
    tokens_in: int = 0
    tokens_out: int = 0
    tokens: list[TokenLogprob] = field(default_factory=list)  # the last reply's, when asked for


# The caller's reading of a reply that may be a refusal: (its status, the reason), or None.
Declined = Callable[[ChatResult], tuple[str, str] | None]


@dataclass
class Asker:
    """How one run asks: its sampling settings, its re-ask limit and what stops it; counts the
    re-asks and the provider's retry notices over the run."""

    temperature: float
    max_tokens: int | None
    max_reasks: int
    stop_statuses: Collection[int] = AUTH_STATUSES
    limit: asyncio.Semaphore | None = None  # held around each request, not around the re-asks
    stopped: Callable[[], str | None] | None = None  # checked before each attempt
    reasks: int = 0
    retries: int = 0

    async def ask(
        self,
        provider: Provider,
        system: str,
        user: str,
        parse: Callable[[str], T],
        *,
        on_retry: OnRetry,
        on_text: OnText | None = None,
        logprobs: bool = False,
        declined: Declined | None = None,
    ) -> Asked[T]:
        """Ask until the reply parses (1 + max_reasks tries); else the reason, never a value.

        ``on_retry`` gets the provider's retry notices and one notice per re-ask ("asked again:
        why", no delay).
        """
        request = ChatRequest(
            messages=(("system", system), ("user", user)),
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            logprobs=logprobs,
        )

        def retried(notice: RetryNotice) -> None:
            self.retries += 1
            on_retry(notice)

        asked: Asked[T] = Asked()
        tries = self.max_reasks + 1
        for attempt in range(1, tries + 1):
            if self.stopped is not None and (why := self.stopped()):
                raise RunStopped(why)
            asked.attempts += 1
            tokens: list[TokenLogprob] = []
            try:
                async with self.limit or contextlib.nullcontext():
                    result = await provider.complete(
                        request,
                        on_text=on_text,
                        on_retry=retried,
                        on_logprobs=tokens.extend if logprobs else None,
                    )
            except StreamInterrupted as exc:
                asked.reason, asked.reply = f"stream cut ({exc})", exc.partial
            except RequestFailed as exc:
                if not exc.retryable and exc.status in self.stop_statuses:
                    raise RunStopped(f"request failed: {exc}") from None
                asked.reason, asked.failed = f"request failed: {exc}", True
                return asked  # the provider has already retried what can be retried
            else:
                if self._settle(asked, result, tokens, parse, declined):
                    return asked
            if attempt < tries:
                self.reasks += 1
                on_retry(RetryNotice(attempt, f"asked again: {asked.reason}", 0.0))
        asked.reason += f" (after {tries} tr{'y' if tries == 1 else 'ies'})"
        return asked

    @staticmethod
    def _settle(
        asked: Asked[T],
        result: ChatResult,
        tokens: list[TokenLogprob],
        parse: Callable[[str], T],
        declined: Declined | None,
    ) -> bool:
        """Take one reply into ``asked``; True when the ask is over (parsed or declined)."""
        asked.replies += 1
        asked.tokens_in += result.tokens_in
        asked.tokens_out += result.tokens_out
        asked.reply, asked.tokens = result.text, tokens
        refused = declined(result) if declined is not None else None
        if refused is not None:
            asked.declined, asked.reason = refused
            asked.reply = result.text or (result.refusal or "")
            return True
        try:
            asked.value = parse(result.text)
        except ReplyUnparsed as exc:
            asked.reason = str(exc)
            return False
        asked.reason = ""
        return True


__all__ = ["AUTH_STATUSES", "Asked", "Asker", "Declined", "RunStopped"]
