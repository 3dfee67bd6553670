"""The simulated judge: answers judge prompts from a truth table with a configurable TPR/TNR.

It writes its reply in the documented line format and streams it line by line, so the pipeline's
parser, batching and retry paths run exactly as with a real model. It is always labelled
SIMULATED. Token counts are an approximation (characters / 4), as no tokenizer is involved.
Its usage counts requests in flight against its fixed concurrency limit, as the HTTP providers do,
so the footer's connection figure shows offline too.
Asked for logprobs, it cuts its reply into word pieces and gives each verdict word the oracle's
confidence (:func:`quiztui.simulate.logprobs.oracle_logprobs`), so P(true) shows offline too.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Mapping

from quiztui.core.logprobs import TokenLogprob
from quiztui.providers.base import ChatRequest, ChatResult, OnLogprobs, OnRetry, OnText, Usage
from quiztui.simulate.logprobs import oracle_logprobs, tokens_by_chunk
from quiztui.simulate.robustness import CONTENT_FILTERED
from quiztui.simulate.vet import oracle_reply


def approx_tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


class SimulatedProvider:
    name = "simulated"
    simulated = True
    base_url = "simulated://"

    def __init__(
        self,
        truth: Mapping[str, bool],
        *,
        tpr: float = 0.9,
        tnr: float = 0.9,
        latency: float = 0.0,
        line_delay: float = 0.0,
        seed: int = 0,
        concurrency: int = 16,
        truth_source: str = "the quiz key",
        disagreement: float = 0.0,
        refusal_rate: float = 0.0,
    ) -> None:
        self.truth = dict(truth)
        self.tpr = tpr
        self.tnr = tnr
        self.latency = latency
        self.line_delay = line_delay
        self.seed = seed
        self.truth_source = truth_source
        self.disagreement = disagreement  # robustness answers: see core.robust_oracle
        self.refusal_rate = refusal_rate
        self.model = f"simulated-tpr{tpr:g}-tnr{tnr:g}"
        self.usage = Usage(limit=max(1, concurrency))
        self._sem = asyncio.Semaphore(max(1, concurrency))

    @property
    def label(self) -> str:
        from quiztui.core.figures import simulated_rates_text

        rates = simulated_rates_text(self.tpr, self.tnr)
        return f"SIMULATED judge (answers from {self.truth_source}; {rates})"

    async def complete(
        self,
        request: ChatRequest,
        *,
        on_text: OnText | None = None,
        on_retry: OnRetry | None = None,
        on_logprobs: OnLogprobs | None = None,
    ) -> ChatResult:
        prompt = request.messages[-1][1]
        async with self._sem:
            self.usage.requests += 1
            self.usage.in_flight += 1
            try:
                reply, finish, tokens = await self._answer(request, prompt, on_text, on_logprobs)
            finally:
                self.usage.in_flight -= 1
        tokens_in = sum(approx_tokens(c) for _, c in request.messages)
        tokens_out = approx_tokens(reply)
        self.usage.tokens_in += tokens_in
        self.usage.tokens_out += tokens_out
        return ChatResult(reply, tokens_in, tokens_out, finish, logprobs=tokens or None)

    async def _answer(
        self,
        request: ChatRequest,
        prompt: str,
        on_text: OnText | None,
        on_logprobs: OnLogprobs | None,
    ) -> tuple[str, str, list[TokenLogprob]]:
        """The reply, its finish reason and its tokens, streamed line by line to ``on_text``."""
        if self.latency:
            await asyncio.sleep(self.latency)
        reply = oracle_reply(
            prompt,
            self.truth,
            tpr=self.tpr,
            tnr=self.tnr,
            seed=self.seed,
            disagreement=self.disagreement,
            refusal_rate=self.refusal_rate,
        )
        finish = "stop"
        if reply == CONTENT_FILTERED:
            reply, finish = "", "content_filter"
        tokens: list[TokenLogprob] = []
        if request.logprobs:
            tokens = oracle_logprobs(
                prompt, reply, self.truth, seed=self.seed, top_n=request.top_logprobs
            )
        if on_text is not None:
            lines = reply.splitlines(keepends=True)
            for line, line_tokens in zip(lines, tokens_by_chunk(tokens, lines), strict=True):
                if on_logprobs is not None and line_tokens:
                    on_logprobs(line_tokens)
                on_text(line)
                if self.line_delay:
                    await asyncio.sleep(self.line_delay)
        elif on_logprobs is not None and tokens:
            on_logprobs(tokens)
        return reply, finish, tokens

    async def aclose(self) -> None:
        return None
