"""Plain values of provider batch mode (OpenAI Batch, Anthropic Message Batches).

A request's ``custom_id`` is content-addressed: a hash of the model and the exact request body,
plus how many times this run has asked that same body before. A resumed run re-issues the same
requests in the same order, so it computes the same ids and finds them in the batch it submitted
before the restart instead of submitting them again; a re-ask of a request that failed in a batch
gets the next occurrence number and so a fresh id.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

# Anthropic allows 1-64 characters of [A-Za-z0-9_-]; OpenAI any string. 40 hex digits of SHA-256
# plus "-<n>" stays well inside both.
_HASH_CHARS = 40


def request_fingerprint(model: str, body: dict[str, Any]) -> str:
    """A stable hash of a request: the same model and body give the same value in any process."""
    canonical = json.dumps({"model": model, "body": body}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:_HASH_CHARS]


def custom_id(fingerprint: str, occurrence: int) -> str:
    """The id of the ``occurrence``-th (1-based) asking of a request within one run."""
    if occurrence < 1:
        raise ValueError("occurrence counts from 1")
    return f"q{fingerprint}-{occurrence}"


@dataclass(frozen=True, slots=True)
class BatchItemResult:
    """One request's outcome in a provider batch. ``error`` None means it succeeded."""

    custom_id: str
    text: str = ""
    tokens_in: int = 0
    tokens_out: int = 0
    finish_reason: str | None = None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class BatchPoll:
    """What one look at a provider batch said.

    ``ended``: no request in it will change any more (completed, failed, expired, cancelled).
    ``error``: the whole batch failed (e.g. the input file did not validate); every request in it
    failed for this reason unless the results say otherwise. ``handle`` carries what the API needs
    to fetch the results (OpenAI: output and error file ids; Anthropic: the results URL).
    """

    batch_id: str
    status: str
    ended: bool
    total: int
    completed: int
    failed: int
    error: str | None = None
    handle: tuple[str | None, ...] = ()


__all__ = ["BatchItemResult", "BatchPoll", "custom_id", "request_fingerprint"]
