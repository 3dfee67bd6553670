"""Abstractive robustness answers grouped by embedding similarity (needs the embed extra)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from quiztui.cli import main
from quiztui.embed import embed_available

REPO = Path(__file__).resolve().parents[1]
BLOCKED = """
import sys
sys.modules["onnxruntime"] = None  # as if the extra were not installed
from quiztui.cli import main
sys.exit(main(sys.argv[1:]))
"""
needs_extra = pytest.mark.skipif(
    not embed_available(), reason="the embed extra is not installed (pip install 'quiztui[embed]')"
)


@needs_extra
def test_abstractive_answers_grouped_by_embedding(capsys: pytest.CaptureFixture[str]) -> None:
    quiz = str(REPO / "sample_quizzes" / "planted_errors.json")
    args = ["robustness", quiz, "--answer-format", "abstractive", "--format", "json"]
    assert main([*args, "--match", "embedding"]) == 0
    body = json.loads(capsys.readouterr().out)
    by_text = {q["text"]: q for q in body["questions"]}
    hydrogen = next(q for t, q in by_text.items() if "atomic number 1" in t)
    given = [a for a in hydrogen["answers"] if a["status"] == "answered"]
    # "Hydrogen", "hydrogen", "Hydrogen." are one group, and it is the key's
    assert {a["code"] for a in given} == {hydrogen["correct"]} == {0}
    assert body["summary"]["quiz"]["ordering_holds"] is True


def test_without_the_extra_embedding_match_is_a_clear_error(tmp_path: Path) -> None:
    """A real process with onnxruntime blocked: exit 2 and the install line, no traceback."""
    quiz = str(REPO / "sample_quizzes" / "planted_errors.json")
    args = ["robustness", quiz, "--answer-format", "abstractive", "--match", "embedding"]
    env = {**os.environ, "QUIZTUI_DATA_DIR": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", BLOCKED, *args], capture_output=True, text=True, env=env
    )
    assert done.returncode == 2
    assert "pip install 'quiztui[embed]'" in done.stderr and "Traceback" not in done.stderr
