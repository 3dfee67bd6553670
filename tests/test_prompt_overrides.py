"""A prompt file in the config dir's ``prompts/`` overrides the packaged one for every run kind.

Before the run assembly moved into ``quiztui/assemble``, ``grade`` and ``robustness`` loaded the
packaged prompts only and ignored the user's copy; vet honoured it. Each run here goes to the
loopback fake server, which records the user message of every request it is sent.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import REPO

from quiztui.cli import main
from quiztui.testing.fake_openai import FakeOpenAI

SAMPLES = REPO / "sample_quizzes"
MARK = "OVERRIDE-MARKER-7f3a: the user's own wording"


def override(name: str) -> None:
    """A copy of the shipped prompt ``name`` with MARK as the first line of its user part."""
    text = (REPO / "prompts" / f"{name}.md").read_text(encoding="utf-8")
    assert "=== USER ===\n" in text
    folder = Path(os.environ["QUIZTUI_CONFIG_DIR"]) / "prompts"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.md").write_text(text.replace("=== USER ===\n", f"=== USER ===\n{MARK}\n", 1))


def judge_args(server: FakeOpenAI) -> list[str]:
    return ["--judge", "openai-compat", "--base-url", server.base_url, "--model", "fake-judge"]


@pytest.mark.parametrize(
    ("prompts", "argv"),
    [
        (("judge_assertions",), ["vet", str(SAMPLES / "planted_errors.json"), "--no-tui"]),
        (("grade_pass3",), ["grade", str(SAMPLES / "answers_sample.csv"), "--grader", "pass3"]),
        (
            ("robust_rewrite", "robust_answer_choice"),
            ["robustness", str(SAMPLES / "planted_errors.json"), "--limit", "2", "-v", "1"],
        ),
    ],
    ids=["vet", "grade", "robustness"],
)
def test_a_prompt_override_reaches_the_model(
    prompts: tuple[str, ...], argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    for name in prompts:
        override(name)
    seen: list[str] = []

    def record(prompt: str) -> None:
        seen.append(prompt)
        return None  # the oracle answers

    with FakeOpenAI(responder=record) as server:
        code = main([*argv, *judge_args(server), "--format", "json"])
    err = capsys.readouterr().err
    assert code in (0, 1), err
    assert seen, "no request reached the server"
    overridden = [p for p in seen if MARK in p]
    # Every request of these run kinds is built from an overridden prompt.
    assert len(overridden) == len(seen), f"{len(overridden)} of {len(seen)} carried the override"
