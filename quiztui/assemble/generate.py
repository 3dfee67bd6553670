"""Generate runs (seed 001): QA pairs from a document, and the optional rephrase, candidate-answer
and distractor stages, each with its prompt (the user's override where there is one)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from quiztui.assemble.common import prompt_for

if TYPE_CHECKING:
    from quiztui.config import Config
    from quiztui.formats.document import Document
    from quiztui.pipeline.generate import GenerateRun


def generate_run(
    config: Config,
    document: Document,
    *,
    subject: str,
    chunk_chars: int,
    min_ratio: float,
    stages: Sequence[str],
    batch_size: int,
) -> GenerateRun:
    """A run over ``document`` with the configured judge; ``stages`` of rephrase, candidates,
    distractors."""
    from quiztui.pipeline.generate import PROMPT_NAMES, GenerateRun, GenerateSettings
    from quiztui.providers.factory import build_provider

    settings = GenerateSettings(
        subject=subject,
        chunk_chars=chunk_chars,
        min_ratio=min_ratio,
        rephrase="rephrase" in stages,
        candidates="candidates" in stages,
        distractors="distractors" in stages,
        concurrency=config.judge.concurrency,
        batch_size=batch_size,
        temperature=config.judge.temperature,
        max_tokens=config.judge.max_tokens,
    )
    prompts = {key: prompt_for(PROMPT_NAMES[key]) for key in ("qa", *stages)}
    return GenerateRun(document, build_provider(config), prompts, settings)
