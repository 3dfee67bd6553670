"""``quiztui runs``, ``runs show`` and ``runs compare`` as a user runs them: real processes over
a real store made by two headless vet runs with simulated judges of different TPR/TNR. Within a
test, the commands after the first run through ``main()`` in-process (``cli_helpers``), as do the
error paths."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from cli_helpers import quiztui_main
from conftest import REPO, isolated_env
from test_cli import run_cli

from quiztui.pipeline.history import compare_stored
from quiztui.store import Store

QUIZ = REPO / "sample_quizzes" / "planted_errors.json"
OTHER = REPO / "sample_quizzes" / "opentdb_sample.json"


def vet(quiz: Path, tpr: str, tnr: str, env: dict[str, str] | None = None) -> None:
    out = run_cli(
        "vet",
        str(quiz),
        "--no-tui",
        env={**(env or {}), "QUIZTUI_SIMULATED_TPR": tpr, "QUIZTUI_SIMULATED_TNR": tnr},
    )
    assert out.returncode in (0, 1), out.stderr


def vet_here(quiz: Path, tpr: str, tnr: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """``vet`` through ``main()`` in this process, into the test's own store."""
    monkeypatch.setenv("QUIZTUI_SIMULATED_TPR", tpr)
    monkeypatch.setenv("QUIZTUI_SIMULATED_TNR", tnr)
    out = quiztui_main("vet", str(quiz), "--no-tui")
    assert out.returncode in (0, 1), out.stderr


@pytest.fixture(scope="module")
def two_runs_once(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The two vet runs, made once per module in a home of their own."""
    env = isolated_env(tmp_path_factory.mktemp("two-runs"))
    vet(QUIZ, "0.95", "0.9", env)
    vet(QUIZ, "0.6", "0.7", env)
    return Path(env["QUIZTUI_DATA_DIR"]) / "quiztui.db"


@pytest.fixture
def two_runs(two_runs_once: Path) -> Path:
    """A copy of the two runs' store in this test's data dir (the store is closed: its WAL is
    empty), so a test that adds a run changes no other test's store."""
    data = Path(os.environ["QUIZTUI_DATA_DIR"])
    data.mkdir(parents=True, exist_ok=True)
    for part in (two_runs_once, two_runs_once.with_name(two_runs_once.name + "-wal")):
        if part.exists():
            shutil.copy(part, data / part.name)
    return data / "quiztui.db"


def test_runs_lists_counts_judge_and_cost(two_runs: Path) -> None:
    out = run_cli("runs")
    assert out.returncode == 0, out.stderr
    header, *lines = out.stdout.splitlines()
    for column in ("run", "date", "kind", "status", "qs", "good/q/p", "cost"):
        assert column in header
    assert all(len(line) <= 80 for line in out.stdout.splitlines())
    # each run: its figures, then its quiz and judge on the line under it
    rows, under = lines[0::2], lines[1::2]
    assert len(rows) == 2
    with Store(two_runs) as store:
        listings = store.run_listings()
    for row, listing in zip(rows, listings, strict=True):
        counts = "/".join(
            str(listing.badge_counts.get(b, 0)) for b in ("good", "questionable", "poor")
        )
        fields = row.split()
        assert fields[0] == str(listing.id) and "finished" in fields
        assert counts in fields and fields[-1] == "$0"  # the simulated judge is free
    assert all(line.strip().startswith("planted_errors · SIMULATED tpr") for line in under)
    assert "tpr0.6-tnr0.7" in under[0] and "tpr0.95-tnr0.9" in under[1]  # newest first


def test_runs_filters_by_kind_and_quiz(two_runs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vet_here(OTHER, "0.9", "0.9", monkeypatch)
    mine = run_cli("runs", "--quiz", str(QUIZ))
    assert mine.returncode == 0 and len(mine.stdout.splitlines()) == 1 + 2 * 2  # two lines a run
    assert quiztui_main("runs", "--limit", "1").stdout.count("\n") == 3
    none = quiztui_main("runs", "--kind", "calibrate")
    assert none.returncode == 0 and none.stdout == "" and "no runs stored" in none.stderr


def test_runs_show_prints_the_report_of_the_run(two_runs: Path) -> None:
    out = run_cli("runs", "show", "1")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("# quiztui vet report")
    assert "Run: 1 (finished)" in out.stdout and "wrong on 5% of true" in out.stdout
    as_json = json.loads(quiztui_main("runs", "show", "2", "--format", "json").stdout)
    assert as_json["run_id"] == 2 and len(as_json["questions"]) == 12


def test_runs_compare_prints_what_core_compare_computes(two_runs: Path) -> None:
    with Store(two_runs) as store:
        c = compare_stored(store, 1, 2).comparison
    out = run_cli("runs", "compare", "1", "2")
    assert out.returncode == 0, out.stderr
    assert f"verdict agreement {c.agreement:.3f} ({c.agreed}/{c.both_judged})" in out.stdout
    assert f"Cohen's kappa {c.kappa:.3f}" in out.stdout
    assert f"disagreements: {len(c.disagreements)} question(s)" in out.stdout
    data = json.loads(quiztui_main("runs", "compare", "1", "2", "--json").stdout)
    assert data["kappa"] == pytest.approx(c.kappa) and data["agreed"] == c.agreed
    assert [d["question_id"] for d in data["disagreements"]] == [
        d.question_id for d in c.disagreements
    ]


def test_runs_bad_ids_and_other_quiz_exit_2(
    two_runs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vet_here(OTHER, "0.9", "0.9", monkeypatch)  # run 3: another quiz
    cases = [
        (("show", "99"), "no run with id 99"),
        (("compare", "1", "99"), "no run with id 99"),
        (("compare", "2", "2"), "compared with itself"),
        (("compare", "1", "3"), "different versions of the quiz"),
    ]
    for args, message in cases:
        out = quiztui_main("runs", *args)
        assert out.returncode == 2, args
        assert "Traceback" not in out.stderr and out.stdout == ""
        lines = out.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("quiztui: error: ") and message in lines[0]


def test_runs_compare_needs_two_integer_ids() -> None:
    out = quiztui_main("runs", "compare", "1")
    assert out.returncode == 2 and "Traceback" not in out.stderr
