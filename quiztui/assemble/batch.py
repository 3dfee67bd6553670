"""Batch mode (``--batch-api``): whether a vet run goes through a provider batch API, the
:class:`~quiztui.pipeline.batch.BatchProvider` for the configured judge, and the run settings
that park every first-pass request at once. The judging itself is ``VetRun``, as online."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from quiztui.config import Config
    from quiztui.core.quiz import Quiz
    from quiztui.pipeline.batch import BatchProvider
    from quiztui.pipeline.vet import VetSettings
    from quiztui.store import Store


def batch_mode(store: Store, resume: int | None, flag: bool) -> bool:
    """The flag, or a resumed run that was sent through a batch API (so it is collected, not
    sent again online)."""
    if flag:
        return True
    if resume is None:
        return False
    if store.provider_batches.for_run(resume):
        return True
    return bool(store.get_run(resume).params.get("batch_api"))


def build_provider(config: Config) -> BatchProvider:
    from quiztui.pipeline.batch import build_batch_provider

    return build_batch_provider(config)


def batch_settings(
    settings: VetSettings, quiz: Quiz, store: Store, resume: int | None
) -> VetSettings:
    """Enough workers that every first-pass request is asked (and parked) at once.

    A resumed run keeps its own batch size, which may be smaller than the configured one.
    """
    size = settings.batch_size
    if resume is not None:
        size = min(size, store.get_run(resume).batch_size)
    if settings.mode == "question":
        requests = len(quiz.questions)
    else:
        requests = math.ceil(sum(q.n for q in quiz.questions) / max(1, size))
    return replace(settings, concurrency=max(1, requests), logprobs=False)
