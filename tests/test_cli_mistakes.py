"""Issue 27 item 6: CLI mistakes answered. A wrong flag gets the subcommand's usage and a "did you
mean"; ``locate`` alone lists every location; Ctrl+C in a headless run and quitting the TUI mid-run
say the exact ``--resume RUN_ID``."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO
from tui_helpers import wait_until

from quiztui.cli import main

PLANTED = REPO / "sample_quizzes" / "planted_errors.json"


@pytest.mark.parametrize(
    ("argv", "usage", "hint"),
    [
        (
            ["lint", str(PLANTED), "--formt", "json"],
            "usage: quiztui lint",
            "did you mean --format?",
        ),
        (["vet", str(PLANTED), "--judeg", "simulated"], "usage: quiztui vet", "--judge?"),
        ([str(PLANTED), "--no-tuui"], "usage: quiztui vet", "did you mean --no-tui?"),
        (["runs", "show", "1", "--fromat", "json"], "usage: quiztui runs show", "--format?"),
    ],
)
def test_a_wrong_flag_gets_the_subcommands_usage_and_a_did_you_mean(
    argv: list[str], usage: str, hint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(usage) and "unrecognized arguments" in err and hint in err


def test_a_flag_like_none_gets_no_guess(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["lint", str(PLANTED), "--bogus"])
    err = capsys.readouterr().err
    assert "usage: quiztui lint" in err and "did you mean" not in err


def test_locate_alone_lists_every_location(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["locate"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == ["config", "data", "db", "log"]
    assert main(["locate", "db"]) == 0
    db = capsys.readouterr().out.strip()
    assert lines[2].split(maxsplit=1)[1] == db  # the same path, named


def test_ctrl_c_in_a_headless_run_prints_the_exact_resume(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    argv = [sys.executable, "-m", "quiztui", "vet", str(PLANTED), "--no-tui", "--judge"]
    argv += ["simulated", "--sim-latency", "0.5", "--batch-size", "1", "--concurrency", "1"]
    argv += ["--db", str(db), "--no-cache"]
    proc = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ}
    )
    try:
        deadline = time.monotonic() + 60
        while not db.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(1.0)  # inside the run (a batch takes 0.5 s): a point of the run, not a measure
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err
    found = re.search(r"quiztui vet --resume (\d+) --no-tui", err)
    assert found, err
    import sqlite3

    conn = sqlite3.connect(db)
    ids = [row[0] for row in conn.execute("SELECT id FROM runs")]
    conn.close()
    assert ids == [int(found.group(1))]


async def test_quitting_the_tui_mid_run_names_the_run_to_resume(tmp_path: Path) -> None:
    import asyncio

    from quiztui.assemble.vet import vet_runs
    from quiztui.cli.vet import build_vet_app
    from quiztui.config import load_config
    from quiztui.formats import load_quiz
    from quiztui.store import Store
    from quiztui.tui.screens.confirm import ConfirmQuitScreen

    config = load_config()
    judge = config.judge.model_copy(update={"provider": "simulated"})
    sim = config.simulated.model_copy(update={"latency": 0.5})
    config = config.model_copy(update={"judge": judge, "simulated": sim})
    config.vet.batch_size = 1

    def open_app():  # type: ignore[no-untyped-def]
        store = Store(config.db_path())
        quiz = load_quiz(PLANTED)
        return build_vet_app(config, store, quiz, vet_runs(config, quiz, store, None)), store

    app, store = await asyncio.to_thread(open_app)
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            screen = app.vet_screen
            await wait_until(pilot, lambda: screen.state.started is not None, what="the run")
            started = screen.state.started
            assert started is not None and screen.running
            await pilot.press("q")
            await wait_until(pilot, lambda: isinstance(app.screen, ConfirmQuitScreen))
            dialog = app.screen
            assert isinstance(dialog, ConfirmQuitScreen)
            assert f"quiztui vet --resume {started.run_id}" in dialog.question
            await pilot.press("y")
            await wait_until(pilot, lambda: app.interrupted_run is not None, what="quit")
        assert app.interrupted_run == started.run_id
    finally:
        store.close()


async def test_nothing_promises_cache_hits_for_the_simulated_judge(tmp_path: Path) -> None:
    # The simulated judge answers from the quiz's own key, which an edit changes: its verdicts
    # are never cached, so no message counts cache hits for it (today: "0 verdict(s) from the
    # cache" after every re-judge).
    import asyncio

    from quiztui.assemble.vet import vet_runs
    from quiztui.cli.vet import build_vet_app
    from quiztui.config import load_config
    from quiztui.formats import load_quiz
    from quiztui.store import Store
    from quiztui.tui.screens.edit import Edit

    config = load_config()
    config = config.model_copy(
        update={"judge": config.judge.model_copy(update={"provider": "simulated"})}
    )

    def open_app():  # type: ignore[no-untyped-def]
        store = Store(config.db_path())
        quiz = load_quiz(PLANTED)
        return build_vet_app(config, store, quiz, vet_runs(config, quiz, store, None)), store

    app, store = await asyncio.to_thread(open_app)
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            screen = app.vet_screen
            await wait_until(pilot, lambda: screen.state.summary is not None, what="the run")
            first = screen.quiz.questions[0]
            # the editor's result, as the edit dialog returns it: the same question, key B
            screen._edited(first.id, Edit(first.text, first.options, 1))

            def said() -> str:
                return " ".join(n.message for n in app._notifications)

            await wait_until(pilot, lambda: "re-judged" in said(), what="the re-judge toast")
            assert "cache" not in said()
    finally:
        store.close()
    assert "the simulated judge is never cached" in " ".join(
        subprocess.run(
            [sys.executable, "-m", "quiztui", "vet", "--help"],
            capture_output=True,
            text=True,
            timeout=60,
        ).stdout.split()
    )
