"""Test helpers shipped with the package: a loopback fake OpenAI-compatible server.

Names are imported lazily so ``python -m quiztui.testing.fake_openai`` runs the module once.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from quiztui.testing.fake_openai import (
        FAULT_KINDS,
        REFUSAL_TEXT,
        FakeOpenAI,
        RequestRecord,
        approx_tokens,
        truth_from_quiz,
    )

__all__ = [
    "FAULT_KINDS",
    "REFUSAL_TEXT",
    "FakeOpenAI",
    "RequestRecord",
    "approx_tokens",
    "truth_from_quiz",
]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return getattr(importlib.import_module("quiztui.testing.fake_openai"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
