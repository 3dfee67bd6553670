"""Test isolation: every test gets its own config/data dirs and no API keys or NO_COLOR.

The suite runs on two xdist workers (``make test``: ``-n 2``); what the workers share is made
once: the package's byte code (before they start) and the built wheel (``built_wheel``).
"""

from __future__ import annotations

import compileall
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import textual.constants as textual_constants
from filelock import FileLock

from quiztui.log import teardown_logging

# Textual's animations (a tab's underline sliding, a smooth scroll) run for up to half a second
# after a key, and a Pilot key press waits for the app to be idle, so each one waited them out.
# The tests check where things end up, never the frames between: the apps they start in this
# process do not animate (as TEXTUAL_ANIMATIONS=none would; pytest-textual-snapshot has imported
# textual before this file, so the constant is set here). Real `quiztui` processes still animate.
textual_constants.TEXTUAL_ANIMATIONS = "none"

# A shell starts a background job (`make test &`) with SIGINT ignored, and every process the
# suite starts inherits that: the Ctrl-C tests then find runs that cannot be interrupted, and
# asyncio.run leaves SIGINT alone. Python's own handler is put back, as a foreground start has
# it (the processes the tests start then begin with the default, as a user's do).
if (
    threading.current_thread() is threading.main_thread()
    and signal.getsignal(signal.SIGINT) == signal.SIG_IGN
):
    signal.signal(signal.SIGINT, signal.default_int_handler)

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"
KEY_VARS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "OPENAI_BASE_URL")
# Set by `make fuzz`: the generated-bank round trips then run their full number of examples.
FUZZING = bool(os.environ.get("QUIZTUI_FUZZ_EXAMPLES"))


def fuzz_examples(full: int) -> int:
    """``max_examples`` for a Hypothesis round trip marked ``fuzz``: ``full`` under ``make fuzz``
    (``QUIZTUI_FUZZ_EXAMPLES`` set), a third of it in ``make test``."""
    return full if FUZZING else max(1, full // 3)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "fuzz: a Hypothesis round trip that `make fuzz` runs at its full length"
    )


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    """Byte-compile the package once, before any worker starts: the hundreds of quiztui processes
    the tests run then import it as an installed wheel would, instead of each compiling every
    module again (PYTHONDONTWRITEBYTECODE keeps an import from writing its byte code). The test
    modules' assert-rewritten byte code likewise (``_rewrite_test_modules``)."""
    if not hasattr(session.config, "workerinput"):  # the controller, or a run without xdist
        compileall.compile_dir(REPO / "quiztui", quiet=1)
        if session.config.pluginmanager.has_plugin("xdist") and session.config.getoption(
            "numprocesses", None
        ):
            _rewrite_test_modules(session.config)


_REWRITE_CONFIG: list[pytest.Config] = []  # the controller's config, inherited by the fork


def _rewrite_one(path: Path) -> None:
    from _pytest.assertion.rewrite import (
        PYC_TAIL,
        _read_pyc,
        _rewrite_test,
        _write_pyc,
        assertstate_key,
        get_cache_dir,
    )

    (config,) = _REWRITE_CONFIG
    pyc = get_cache_dir(path) / (path.name[:-3] + PYC_TAIL)
    try:
        if _read_pyc(path, pyc) is None:
            source_stat, code = _rewrite_test(path, config)
            pyc.parent.mkdir(exist_ok=True)
            _write_pyc(config.stash[assertstate_key], code, source_stat, pyc)
    except Exception:  # a syntax error, a read-only tree: the worker's collection says it
        return


def _rewrite_test_modules(config: pytest.Config) -> None:
    """Rewrite the asserts of every test module once, in two forked processes, into the pyc that
    pytest's import hook reads (``tests/__pycache__/*-pytest-*.pyc``), before the xdist workers
    start. PYTHONDONTWRITEBYTECODE keeps pytest from writing it, so without this each worker
    rewrote all of them at collection (about 7 s of CPU each). Best effort: pytest's private
    helpers; if they move, the workers rewrite as before."""
    import multiprocessing

    try:
        from _pytest.assertion.rewrite import _rewrite_test  # noqa: F401
    except ImportError:
        return
    paths = sorted(REPO.joinpath("tests").glob("test_*.py")) + [REPO / "tests" / "conftest.py"]
    _REWRITE_CONFIG[:] = [config]
    with multiprocessing.get_context("fork").Pool(2) as pool:
        pool.map(_rewrite_one, paths)


@pytest.fixture(scope="session")
def built_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The checkout built as a wheel, once per test session: the first worker to ask builds it
    (under a file lock in the session's shared temp dir), the other finds it there."""
    shared = tmp_path_factory.getbasetemp().parent  # one dir for every worker of this session
    out = shared / "built-wheel"
    with FileLock(str(shared / "built-wheel.lock")):
        if not any(out.glob("quiztui-*.whl")):
            subprocess.run(
                [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps"]
                + ["--no-build-isolation", "-w", str(out / "tmp"), str(REPO)],
                check=True,
                capture_output=True,
                text=True,
                timeout=300,
            )
            (made,) = (out / "tmp").glob("quiztui-*.whl")
            made.rename(out / made.name)
    (built,) = out.glob("quiztui-*.whl")
    return built


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("QUIZTUI_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("QUIZTUI_DATA_DIR", str(tmp_path / "data"))
    # The CLI's log file (quiztui/log.py) goes here, never to the user's log dir.
    monkeypatch.setenv("QUIZTUI_LOG_DIR", str(tmp_path / "log"))
    monkeypatch.delenv("QUIZTUI_LOG_LEVEL", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg-state"))
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("QUIZTUI_CONFIG", raising=False)
    for name in KEY_VARS:
        monkeypatch.delenv(name, raising=False)
    # Never probe a real Ollama from tests: the judge is explicit everywhere.
    monkeypatch.setenv("QUIZTUI_JUDGE_PROVIDER", "simulated")
    # The demo pace of the simulated judge is for people; tests run it at full speed.
    monkeypatch.setenv("QUIZTUI_SIMULATED_LATENCY", "0")
    monkeypatch.setenv("QUIZTUI_SIMULATED_LINE_DELAY", "0")
    yield
    # A test that ran the CLI in-process leaves its log handler open: close it.
    teardown_logging()


def isolated_env(home: Path) -> dict[str, str]:
    """The environment ``_isolated`` gives a test, under ``home``: for a fixture wider than one
    test (module or session scope), which sets up before any test's own environment exists."""
    import os

    env = {k: v for k, v in os.environ.items() if k not in KEY_VARS and k != "NO_COLOR"}
    env.pop("QUIZTUI_LOG_LEVEL", None)
    env.pop("QUIZTUI_CONFIG", None)
    env |= {
        "QUIZTUI_CONFIG_DIR": str(home / "config"),
        "QUIZTUI_DATA_DIR": str(home / "data"),
        "QUIZTUI_LOG_DIR": str(home / "log"),
        "XDG_CONFIG_HOME": str(home / "xdg-config"),
        "XDG_DATA_HOME": str(home / "xdg-data"),
        "XDG_CACHE_HOME": str(home / "xdg-cache"),
        "XDG_STATE_HOME": str(home / "xdg-state"),
        "QUIZTUI_JUDGE_PROVIDER": "simulated",
        "QUIZTUI_SIMULATED_LATENCY": "0",
        "QUIZTUI_SIMULATED_LINE_DELAY": "0",
    }
    return env


def shared_data(*parts: str) -> Path:
    """A path under ../shared/data, skipping the test cleanly when it is absent."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared data not available: {path}")
    return path
