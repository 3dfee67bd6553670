"""Start the fake OpenAI server in a separate process (so it does not share the client's GIL)."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def fake_server(*args: str, tail: list[str] | None = None) -> Iterator[str]:
    """The server's base URL while the block runs. ``tail``: filled with what the server prints
    as it stops (``served N requests…``, ``first chat request at EPOCH``)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "quiztui.testing.fake_openai", "--port", "0", *args],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        if "http://" not in first:
            raise RuntimeError(f"fake server did not start: {first!r}")
        yield first.split(" at ", 1)[1].split()[0]
    finally:
        if tail is None:
            proc.terminate()
        else:  # Ctrl-C: the server says what it served before it exits
            proc.send_signal(signal.SIGINT)
            assert proc.stdout is not None
            tail.extend(proc.stdout.read().splitlines())
        proc.wait(timeout=10)
