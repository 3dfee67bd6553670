"""Issue 18, item 7 (LO1): quiztui against a real local server, through real processes.

Run by ``make test-local`` (``.ci/test_local.sh``), which builds llama-cpp-python's server and the
packaged Gemma 3 270M GGUF into a cached venv, starts it on loopback and sets
``QUIZTUI_LOCAL_URL`` and ``QUIZTUI_LOCAL_MODEL``; without them every test here is skipped. Not
part of ``.ci/run``: the build compiles for many minutes.

The tests assert on transport, parsing, usage and exit codes, never on verdict quality (a 270M
model is a poor judge); they print the share of assertions judged per set-up.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

URL = os.environ.get("QUIZTUI_LOCAL_URL", "")
MODEL = os.environ.get("QUIZTUI_LOCAL_MODEL", "")
ROOT = Path(__file__).resolve().parents[1]
# Three questions (12 assertions, one batch) and three answers: a 270M model on two shared cores
# writes a few tokens a second, slower under a grammar, so the cases stay small. The share judged
# on the whole sample quiz is bench/local_judged_share.py's figure.
QUIZ = ROOT / "tests" / "fixtures" / "local" / "tiny_quiz.json"
ANSWERS = ROOT / "tests" / "fixtures" / "local" / "tiny_answers.csv"
GOLD = ROOT / "sample_quizzes" / "opentdb_sample.json"

pytestmark = pytest.mark.skipif(
    not (URL and MODEL), reason="no local server (make test-local starts one)"
)


def quiztui(
    tmp_path: Path, *args: str, judge: str = "", max_tokens: int = 400
) -> tuple[int, str, str, float]:
    """Run ``quiztui ARGS`` in a fresh process against the local server: (code, out, err, s).
    ``max_tokens`` caps each reply: a structured batch of 12 verdicts with reasons takes about
    300 tokens; a text reply the model echoes the prompt into runs to the cap."""
    config = tmp_path / "config.toml"
    config.write_text(
        f'[judge]\nprovider = "openai-compat"\nbase_url = "{URL}"\nmodel = "{MODEL}"\n'
        f"max_tokens = {max_tokens}\ntimeout = 900\n{judge}"
        # No re-asks: each case's requests are known, and a re-ask of a reply the model cannot
        # write would only repeat it.
        f'[vet]\nmax_reasks = 0\n[store]\npath = "{tmp_path / "runs.db"}"\n',
        encoding="utf-8",
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("QUIZTUI_")}
    env["QUIZTUI_CONFIG_DIR"] = str(tmp_path / "config-dir")
    env["QUIZTUI_LOG_DIR"] = str(tmp_path / "log")
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "quiztui", *args, "--config", str(config)],
        capture_output=True,
        text=True,
        env=env,
        timeout=1800,
    )
    return done.returncode, done.stdout, done.stderr, time.monotonic() - started


@pytest.mark.parametrize(
    ("name", "mode", "judge", "max_tokens"),
    [
        ("assertion, streamed, structured", "assertion", "", 512),
        (
            "assertion, not streamed, structured on",
            "assertion",
            'stream = false\nstructured = "on"\n',
            512,
        ),
        ("assertion, streamed, text", "assertion", 'structured = "off"\n', 256),
        ("question, streamed, structured on", "question", 'structured = "on"\n', 160),
        ("question, not streamed, text", "question", 'stream = false\nstructured = "off"\n', 160),
    ],
)
def test_vet_against_the_local_server(
    tmp_path: Path, name: str, mode: str, judge: str, max_tokens: int
) -> None:
    code, out, err, seconds = quiztui(
        tmp_path,
        "vet",
        str(QUIZ),
        "--no-tui",
        "--format",
        "json",
        "--mode",
        mode,
        judge=judge,
        max_tokens=max_tokens,
    )
    assert "Traceback" not in err, err
    assert code in (0, 1), err  # 0/1: the quiz's verdict; never 2 (a failed run) or 3
    report = json.loads(out)
    total = report["judged"] + report["unjudged"]
    print(
        f"\n{name}: judged {report['judged']}/{total} ({report['judged'] / total:.0%}),"
        f" {report['requests']} requests, {report['retries']} retries, tokens"
        f" {report['tokens_in']}/{report['tokens_out']}"
        f"{' (estimated)' if report.get('tokens_estimated') else ''}, {seconds:.0f} s;"
        f" reasons: {sorted({r for q in report['questions'] for r in q['reasons']})[:4]}"
    )
    assert report["status"] == "finished" and total == 12
    # Usage is never zero: the server's counts, or estimated where it sent none (streams).
    assert report["tokens_in"] > 0 and report["tokens_out"] > 0
    if "stream = false" in judge:
        assert not report.get("tokens_estimated")  # the server's own usage
    else:
        # No usage in its streams: llama-cpp-python's /extras/tokenize counted them, one request
        # at a time (a cut stream would have been estimated).
        assert not report.get("tokens_estimated")
        assert "(counted by the server's tokenizer)" in err, err
    if mode == "assertion" and "structured" in name:
        # Under the grammar every id is a required key: each verdict is read, right or wrong.
        assert report["judged"] == total, report["questions"]
    reasons = {r for q in report["questions"] for r in q["reasons"]}
    assert not any("finish reason" in r and "judged" in r for r in reasons)


def test_grade_against_the_local_server(tmp_path: Path) -> None:
    code, out, err, seconds = quiztui(
        tmp_path, "grade", str(ANSWERS), "--grader", "rubric10", max_tokens=160
    )
    assert "Traceback" not in err, err
    assert code in (0, 1), err  # 1 only when nothing at all was scored
    print(f"\ngrade rubric10: exit {code}, {seconds:.0f} s; {err.strip().splitlines()[-1]}")


def test_calibrate_against_the_local_server(tmp_path: Path) -> None:
    code, out, err, seconds = quiztui(
        tmp_path, "calibrate", str(GOLD), "--n", "3", "--format", "json"
    )
    assert "Traceback" not in err, err
    assert code == 0, err
    print(f"\ncalibrate on 3 gold questions: {seconds:.0f} s")


def test_a_dead_port_fails_fast_before_any_request(tmp_path: Path) -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    config = tmp_path / "dead.toml"
    config.write_text(
        f'[judge]\nprovider = "openai-compat"\nbase_url = "http://127.0.0.1:{port}/v1"\n'
        f'model = "{MODEL}"\n[store]\npath = "{tmp_path / "runs.db"}"\n',
        encoding="utf-8",
    )
    # The suite's conftest sets QUIZTUI_JUDGE_PROVIDER=simulated, which would win over the file.
    env = {k: v for k, v in os.environ.items() if not k.startswith("QUIZTUI_")}
    env["QUIZTUI_CONFIG_DIR"] = str(tmp_path / "config-dir")
    env["QUIZTUI_LOG_DIR"] = str(tmp_path / "log")
    done = subprocess.run(
        [sys.executable, "-m", "quiztui", "vet", str(QUIZ), "--no-tui", "--config", str(config)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().endswith(
        f"cannot reach http://127.0.0.1:{port}/v1: connection refused"
    )
