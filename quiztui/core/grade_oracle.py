"""Deterministic replies to the grading prompts (rubric10, pass3, fact extraction, fact scoring).

Used by the simulated provider and the fake server. ``reply`` returns None for any other prompt.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # logprobs imports simulation, which imports this module
    from quiztui.core.logprobs import TokenLogprob


def reply(prompt: str, seed: int = 0) -> str | None:
    return None


def logprobs(prompt: str, reply: str, top_n: int = 5) -> list[TokenLogprob] | None:
    return None
