"""``quiztui ARGS`` through ``main()`` in the test's own process.

For the commands whose process proves nothing (an error line, a report written, a listing): the
same code the console script runs, without an interpreter start and the imports (about half a
second of CPU each). Exit codes on a terminal, signals, what a fresh process imports and the
installed wheel keep their real processes.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
from collections.abc import Mapping
from unittest import mock

from quiztui.cli import main


def quiztui_main(
    *args: str, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``quiztui ARGS`` in this process: its exit code and what it printed, shaped like
    ``subprocess.run(..., capture_output=True, text=True)``'s result. ``env``: the whole
    environment for the command, as ``subprocess.run(env=...)`` takes it (restored after)."""
    out, err = io.StringIO(), io.StringIO()
    environ = (
        mock.patch.dict(os.environ, env, clear=True)
        if env is not None
        else contextlib.nullcontext()
    )
    with environ, contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse's own errors
            code = exc.code if isinstance(exc.code, int) else 2
    return subprocess.CompletedProcess(list(args), code, out.getvalue(), err.getvalue())
