"""Test helpers shipped with the package: a loopback fake OpenAI-compatible server."""

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
