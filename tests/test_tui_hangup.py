"""The terminal app ends when its terminal hangs up (a closed tmux pane, a dropped SSH link).

Textual's input thread reads nothing, forever, at full CPU from a terminal that has hung up: a
`make run` left in a closed tmux pane spun for 46 CPU-minutes before quiztui watched for it
(``tui/app.QuiztuiApp._exit_if_terminal_gone``). Checked in a real process on a real pseudo
terminal whose other end is closed, as tmux closes a pane's.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO

PLANTED = REPO / "sample_quizzes" / "planted_errors.json"


def test_the_app_ends_when_its_terminal_hangs_up(tmp_path: Path) -> None:
    pty = pytest.importorskip("pty")
    import fcntl
    import struct
    import termios

    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "NO_COLOR")}
    env["TERM"] = "xterm-256color"
    with subprocess.Popen(
        [sys.executable, "-m", "quiztui", str(PLANTED), "--judge", "simulated"],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env=env,
        cwd=tmp_path,
        start_new_session=True,
    ) as proc:
        os.close(follower)
        shown = b""
        deadline = time.monotonic() + 60
        while b"Questions" not in shown and time.monotonic() < deadline:  # the app is up
            try:
                shown += os.read(leader, 65536)
            except OSError:
                break
        assert b"Questions" in shown, shown[-400:]
        os.close(leader)  # the terminal hangs up
        try:
            # Ended, however: the watch exits (status 0, the command's once its app has), or
            # a write to the dead terminal fails first and the app stops on that error (1).
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            pytest.fail("the app kept running on a terminal that had hung up")
    assert proc.returncode is not None
