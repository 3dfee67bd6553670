"""The simulated judge: answers judge prompts from a truth table with a configurable TPR/TNR.

It writes its reply in the documented line format and streams it line by line, so the pipeline's
parser, batching and retry paths run exactly as with a real model. It is always labelled
SIMULATED. Token counts are an approximation (characters / 4), as no tokenizer is involved.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Mapping

from quiztui.core.simulation import oracle_reply
from quiztui.providers.base import ChatRequest, ChatResult, OnRetry, OnText, Usage


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
        truth_source: str = "key",
    ) -> None:
        self.truth = dict(truth)
        self.tpr = tpr
        self.tnr = tnr
        self.latency = latency
        self.line_delay = line_delay
        self.seed = seed
        self.truth_source = truth_source
        self.model = f"simulated-tpr{tpr:g}-tnr{tnr:g}"
        self.usage = Usage()
        self._sem = asyncio.Semaphore(max(1, concurrency))

    @property
    def label(self) -> str:
        return (
            f"SIMULATED judge (TPR {self.tpr:g}, TNR {self.tnr:g}, truth from {self.truth_source})"
        )

    async def complete(
        self,
        request: ChatRequest,
        *,
        on_text: OnText | None = None,
        on_retry: OnRetry | None = None,
    ) -> ChatResult:
        prompt = request.messages[-1][1]
        async with self._sem:
            self.usage.requests += 1
            if self.latency:
                await asyncio.sleep(self.latency)
            reply = oracle_reply(prompt, self.truth, tpr=self.tpr, tnr=self.tnr, seed=self.seed)
            if on_text is not None:
                for line in reply.splitlines(keepends=True):
                    on_text(line)
                    if self.line_delay:
                        await asyncio.sleep(self.line_delay)
        tokens_in = sum(approx_tokens(c) for _, c in request.messages)
        tokens_out = approx_tokens(reply)
        self.usage.tokens_in += tokens_in
        self.usage.tokens_out += tokens_out
        return ChatResult(reply, tokens_in, tokens_out, "stop")

    async def aclose(self) -> None:
        return None
