"""Test isolation: every test gets its own config/data dirs and no API keys or NO_COLOR."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from quiztui.log import teardown_logging

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"
KEY_VARS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "OPENAI_BASE_URL")


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


def shared_data(*parts: str) -> Path:
    """A path under ../shared/data, skipping the test cleanly when it is absent."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared data not available: {path}")
    return path
