"""Issue 27 item 2: ``panel --member MODEL@URL`` as users type it. A model id holding ``@``
stays whole; a model the server does not serve is refused before the run, one line, exit 2,
as ``vet`` refuses it; the panel's JSON holds no bare NaN (null and a reason)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import REPO

from quiztui.assemble.panel import split_member
from quiztui.cli import main
from quiztui.formats import load_quiz
from quiztui.simulate.vet import truth_table
from quiztui.testing.fake_openai import FakeOpenAI

QUIZ = REPO / "sample_quizzes" / "planted_errors.json"


def _no_constants(name: str) -> None:
    raise AssertionError(f"bare {name} in a report")


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("google_text-unicorn@001", ("google_text-unicorn@001", "")),
        (
            "google_text-unicorn@001@http://127.0.0.1:9/v1",
            ("google_text-unicorn@001", "http://127.0.0.1:9/v1"),
        ),
        ("llama3@https://h.local/v1", ("llama3", "https://h.local/v1")),
        ("m@http://user@h.local/v1", ("m", "http://user@h.local/v1")),
    ],
)
def test_a_member_spec_splits_at_the_at_sign_a_url_follows(
    spec: str, expected: tuple[str, str]
) -> None:
    assert split_member(spec) == expected


def test_members_whose_model_ids_hold_an_at_sign_are_judged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    quiz = load_quiz(QUIZ)
    models = ["google_text-unicorn@001", "fake-judge"]
    with FakeOpenAI(truth_table(quiz), models=models) as server:
        members = [a for m in models for a in ("--member", f"{m}@{server.base_url}")]
        assert main(["panel", str(QUIZ), *members, "--format", "json"]) == 0
    out = capsys.readouterr()
    data = json.loads(out.out, parse_constant=_no_constants)
    assert [j["judged"] for j in data["judges"]] == [data["judges"][0]["judged"]] * 2
    assert data["judges"][0]["judged"] > 0
    assert "google_text-unicorn@001" in data["judges"][0]["label"]


def test_a_member_the_server_does_not_serve_is_refused_before_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    quiz = load_quiz(QUIZ)
    with FakeOpenAI(truth_table(quiz), models=["fake-judge"]) as server:
        members = ["--member", f"fake-judge@{server.base_url}"]
        members += ["--member", f"no-such-model@{server.base_url}"]
        assert main(["panel", str(QUIZ), *members]) == 2
        asked = [r for r in server.requests if "chat" in r.path]
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("quiztui: error")]
    assert len(lines) == 1, err
    assert "panel judge 2 (no-such-model)" in lines[0] and "not served" in lines[0]
    assert asked == []  # refused before any question was asked


def test_a_panel_report_holds_no_bare_nan(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Judges that say "true" to everything: κ is undefined (the verdicts do not vary).
    members = [a for s in (1, 2) for a in ("--member", f"simulated:tpr=1,tnr=0,seed={s}")]
    assert main(["panel", str(QUIZ), *members, "--format", "json"]) == 0
    text = capsys.readouterr().out
    assert "NaN" not in text and "Infinity" not in text
    data = json.loads(text, parse_constant=_no_constants)
    assert data["fleiss_kappa"] is None
    assert "do not vary" in data["fleiss_kappa_note"]
    assert data["cohen_kappa"][0]["kappa"] is None and data["cohen_kappa"][0]["kappa_note"]
