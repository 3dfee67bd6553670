"""Start the fake OpenAI server in a separate process (so it does not share the client's GIL)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def fake_server(*args: str) -> Iterator[str]:
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
        proc.terminate()
        proc.wait(timeout=10)
