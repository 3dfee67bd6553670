"""The headless CLI as a user runs it: exit codes, reports, errors (A8).

Runs that produce reports go through a real process (``python -m quiztui``); error paths, where a
subprocess adds nothing but start-up time, call ``main()`` in-process and read what it printed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import REPO

from quiztui.cli import main

MALFORMED = REPO / "tests" / "malformed"
EXPECTED = json.loads((MALFORMED / "EXPECTED.json").read_text())
SAMPLES = REPO / "sample_quizzes"


def run_cli(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "quiztui", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        cwd=cwd,
        timeout=120,
    )


@dataclass
class Ran:
    returncode: int
    stdout: str
    stderr: str


def run_main(capsys: pytest.CaptureFixture[str], *args: str) -> Ran:
    """``quiztui ARGS`` in this process: its exit code and what it printed."""
    try:
        code = main(list(args))
    except SystemExit as exc:  # argparse's own errors
        code = exc.code if isinstance(exc.code, int) else 2
    out = capsys.readouterr()
    return Ran(code, out.out, out.err)


def test_at_least_fifteen_malformed_files() -> None:
    assert len(EXPECTED) >= 15


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_malformed_quiz_gives_one_line_error_exit_2(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = MALFORMED / name
    # --strict: a file with some good items would load them and go on (tests/test_partial_loads).
    out = run_main(capsys, "vet", str(path), "--no-tui", "--sim-latency", "0", "--strict")
    assert out.returncode == 2, out.stderr
    assert "Traceback" not in out.stderr and "Traceback" not in out.stdout
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    # The error names the quiz file, or the truth file beside it when that is the broken one.
    named = path.with_name(path.stem + ".truth.json") if "truth_" in name else path
    assert lines[0].startswith(f"quiztui: error: {named}:")
    assert EXPECTED[name] in lines[0]
    assert out.stdout == ""


def test_missing_file_and_directory_are_clear_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for target in (tmp_path / "nope.json", tmp_path):
        out = run_main(capsys, "vet", str(target), "--no-tui")
        assert out.returncode == 2
        assert "Traceback" not in out.stderr
        assert str(target) in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_bad_config_names_the_key(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text("[vet]\nbatch_size = 'many'\n")
    out = run_main(
        capsys, "vet", str(SAMPLES / "planted_errors.json"), "--no-tui", "--config", str(cfg)
    )
    assert out.returncode == 2
    assert f"{cfg}: vet.batch_size:" in out.stderr and "Traceback" not in out.stderr
    cfg.write_text("[judge]\nmodle = 'x'\n")
    out = run_main(
        capsys, "vet", str(SAMPLES / "planted_errors.json"), "--no-tui", "--config", str(cfg)
    )
    assert out.returncode == 2 and "judge.modle: unknown key" in out.stderr


def test_headless_vet_of_planted_errors_flags_them(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    out = run_cli(
        "vet",
        str(SAMPLES / "planted_errors.json"),
        "--no-tui",
        "--sim-latency",
        "0",
        "--format",
        "json",
        "-o",
        str(report),
    )
    assert out.returncode == 1, out.stderr  # questionable/poor questions present
    assert "assertions" in out.stderr  # the progress line
    data = json.loads(report.read_text())
    assert data["simulated"] is True and "SIMULATED" in data["judge_label"]
    truth = json.loads((SAMPLES / "planted_errors.truth.json").read_text())["answers"]
    true_answer = {t["question"]: t["correct"] for t in truth}
    planted = [q for q in data["questions"] if q["options"][q["key"]] != true_answer[q["text"]]]
    assert len(planted) >= 3
    for q in planted:
        assert q["badge"] in ("questionable", "poor"), q
        assert q["suggested_option"] is not None, q
        assert q["options"][q["suggested_option"]] == true_answer[q["text"]]


@pytest.mark.parametrize(("fail_on", "code"), [("never", 0), ("questionable", 1), ("poor", 1)])
def test_fail_on_threshold(fail_on: str, code: int) -> None:
    out = run_cli(
        "vet",
        str(SAMPLES / "planted_errors.json"),
        "--no-tui",
        "--sim-latency",
        "0",
        "--fail-on",
        fail_on,
        "--format",
        "csv",
    )
    assert out.returncode == code, out.stderr
    assert out.stdout.startswith("question_id,question,key,k,n,badge")


def test_all_good_quiz_exits_zero(tmp_path: Path) -> None:
    quiz = tmp_path / "good.json"
    quiz.write_text(
        json.dumps(
            [
                {
                    "question": f"What is {i} plus {i}?",
                    "responses": [str(2 * i), str(2 * i + 1)],
                    "correct": str(2 * i),
                }
                for i in range(1, 6)
            ]
        )
    )
    out = run_cli(
        "vet",
        str(quiz),
        "--no-tui",
        "--sim-latency",
        "0",
        "--format",
        "md",
        env={"QUIZTUI_SIMULATED_TPR": "1", "QUIZTUI_SIMULATED_TNR": "1"},
    )
    assert out.returncode == 0, out.stderr
    assert "| q1 |" in out.stdout and "good 5" in out.stdout


def test_config_init_locate_and_env_override(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = tmp_path / "conf" / "config.toml"
    out = run_cli("config", "init", "--config", str(cfg))
    assert out.returncode == 0 and cfg.exists()
    text = cfg.read_text()
    assert "# assertions per request" in text and "batch_size = 20" in text
    # The same commands again through main() here: the process is shown above.
    again = run_main(capsys, "config", "init", "--config", str(cfg))
    assert again.returncode == 2  # no silent overwrite
    monkeypatch.setenv("QUIZTUI_VET_BATCH_SIZE", "7")
    shown = run_main(capsys, "config", "show", "--config", str(cfg))
    assert "batch_size = 7" in shown.stdout
    monkeypatch.delenv("QUIZTUI_VET_BATCH_SIZE")
    db = run_cli("locate", "db")
    assert db.returncode == 0 and db.stdout.strip().endswith("quiztui.db")
    assert os.environ["QUIZTUI_DATA_DIR"] in db.stdout


def test_runs_lists_a_finished_run(capsys: pytest.CaptureFixture[str]) -> None:
    ran = run_main(capsys, "vet", str(SAMPLES / "planted_errors.json"), "--no-tui")
    assert ran.returncode == 1, ran.stderr  # the planted errors are flagged
    out = run_cli("runs")
    assert out.returncode == 0
    assert "planted_errors" in out.stdout and "finished" in out.stdout


def test_quiz_shortcut_finds_the_quiz_after_global_options() -> None:
    from quiztui.cli._args import first_positional as _first_positional

    assert _first_positional(["--config", "c.toml", "quiz.json"]) == 2
    assert _first_positional(["quiz.json", "--no-tui"]) == 0
    assert _first_positional(["--version"]) is None
