"""``quiztui ARGS`` through ``main()`` in the test's own process.

For the commands whose process proves nothing (an error line, a report written, a listing): the
same code the console script runs, without an interpreter start and the imports (about half a
second of CPU each). Exit codes on a terminal, signals, what a fresh process imports and the
installed wheel keep their real processes.
"""

from __future__ import annotations

import contextlib
import io
import subprocess

from quiztui.cli import main


def quiztui_main(*args: str) -> subprocess.CompletedProcess[str]:
    """``quiztui ARGS`` in this process: its exit code and what it printed, shaped like
    ``subprocess.run(..., capture_output=True, text=True)``'s result."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse's own errors
            code = exc.code if isinstance(exc.code, int) else 2
    return subprocess.CompletedProcess(list(args), code, out.getvalue(), err.getvalue())
