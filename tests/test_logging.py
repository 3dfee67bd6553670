"""Issue 15 item 9: the rotating log file — where it goes, its level, and keys never in it."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import pytest
from conftest import REPO

from quiztui.cli import main
from quiztui.config import load_config
from quiztui.errors import ConfigError
from quiztui.formats import load_quiz
from quiztui.log import REDACTED, RedactingFilter, setup_logging
from quiztui.testing.fake_openai import FakeOpenAI, truth_from_quiz

SECRET = "sk-LOGMARKER-4e1d-DO-NOT-LOG"
QUIZ = REPO / "sample_quizzes" / "planted_errors.json"


def log_dir() -> Path:
    return Path(os.environ["QUIZTUI_LOG_DIR"])


def log_text() -> str:
    """Every log file in the log dir (rotated ones too), flushed."""
    for handler in logging.getLogger("quiztui").handlers:
        handler.flush()
    return "".join(p.read_text(encoding="utf-8") for p in sorted(log_dir().glob("quiztui.log*")))


def test_the_log_file_is_in_the_log_dir_at_the_configured_level(tmp_path: Path) -> None:
    config_file = tmp_path / "config.toml"
    config_file.write_text('[log]\nlevel = "warning"\n', encoding="utf-8")
    path = setup_logging(load_config(config_file))
    assert path == log_dir() / "quiztui.log"
    log = logging.getLogger("quiztui.providers.test")
    log.info("an info line")
    log.warning("a warning line")
    text = log_text()
    assert path.is_file() and "a warning line" in text and "an info line" not in text
    assert " WARNING quiztui.providers.test " in text


def test_the_level_comes_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config_file = tmp_path / "config.toml"
    config_file.write_text('[log]\nlevel = "ERROR"\n', encoding="utf-8")
    monkeypatch.setenv("QUIZTUI_LOG_LEVEL", "debug")  # env beats the file, any case
    setup_logging(load_config(config_file))
    logging.getLogger("quiztui.x").debug("a debug line")
    assert "a debug line" in log_text()
    monkeypatch.setenv("QUIZTUI_LOG_LEVEL", "chatty")
    with pytest.raises(ConfigError, match="environment QUIZTUI_.*log.level"):
        load_config(config_file)


def test_setup_is_idempotent_and_follows_the_log_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    logger = logging.getLogger("quiztui")
    root_handlers = list(logging.getLogger().handlers)
    config = load_config()
    setup_logging(config)
    setup_logging(config)
    assert len(logger.handlers) == 1
    monkeypatch.setenv("QUIZTUI_LOG_DIR", str(tmp_path / "elsewhere"))
    setup_logging(config)
    assert [Path(h.baseFilename) for h in logger.handlers] == [  # type: ignore[attr-defined]
        tmp_path / "elsewhere" / "quiztui.log"
    ]
    assert logging.getLogger().handlers == root_handlers  # the quiztui logger only


def test_nothing_reaches_the_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    setup_logging(load_config())
    logging.getLogger("quiztui.tui").error("a worker failed", exc_info=ValueError("boom"))
    out, err = capsys.readouterr()
    assert out == "" and err == ""
    assert "a worker failed" in log_text() and "ValueError: boom" in log_text()


def test_the_filter_scrubs_keys_from_messages_args_and_tracebacks() -> None:
    redact = RedactingFilter([SECRET, "abc"])  # too short to scrub verbatim: no "abc" damage
    record = logging.LogRecord(
        "quiztui.p", logging.INFO, __file__, 1, "sent %s with key %r", ("abcdef", SECRET), None
    )
    try:
        raise RuntimeError(f"refused {SECRET}")
    except RuntimeError as exc:
        record.exc_info = (type(exc), exc, exc.__traceback__)
    assert redact.filter(record)
    assert record.getMessage() == f"sent abcdef with key '{REDACTED}'"
    assert record.args is None
    assert SECRET not in (record.exc_text or "") and f"refused {REDACTED}" in (
        record.exc_text or ""
    )

    # Key-shaped text is scrubbed even when the value is not a configured key.
    for text, kept in [
        ("Authorization: Bearer sk-other-123", "Authorization: Bearer "),
        ("headers {'x-api-key': 'sk-ant-999'}", "'x-api-key': '"),
        ("x-goog-api-key: AIzaSyXYZ", "x-goog-api-key: "),
        ("GET /v1beta/models?key=AIzaSy123&alt=sse", "?key="),
        ("api_key=hunter22", "api_key="),
    ]:
        scrubbed = redact.redact(text)
        assert kept + REDACTED in scrubbed and scrubbed != text, scrubbed
    assert redact.redact("retry 2 of 4 after HTTP 429") == "retry 2 of 4 after HTTP 429"


def test_setup_reads_the_key_values_of_the_configured_variables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config_file = tmp_path / "config.toml"
    config_file.write_text('[judge]\napi_key_env = "MY_JUDGE_KEY"\n', encoding="utf-8")
    monkeypatch.setenv("MY_JUDGE_KEY", SECRET)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-SECOND-MARKER")
    setup_logging(load_config(config_file))
    log = logging.getLogger("quiztui.providers.x")
    log.warning("the reply echoed %s", SECRET)
    log.warning("and sk-ant-SECOND-MARKER in the message itself")
    text = log_text()
    assert SECRET not in text and "SECOND-MARKER" not in text
    assert text.count(REDACTED) == 2


def test_a_vet_run_logs_retries_and_never_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("QUIZTUI_LOG_LEVEL", "DEBUG")  # as much in the log as there is
    quiz = load_quiz(QUIZ)
    with FakeOpenAI(truth_from_quiz(quiz), require_key=SECRET, retry_after=0) as server:
        server.inject("429")
        server.inject("500")
        code = main(
            [
                "vet",
                str(QUIZ),
                "--no-tui",
                "--judge",
                "openai-compat",
                "--base-url",
                server.base_url,
                "--model",
                "fake-judge",
                "--format",
                "json",
                "--no-cache",
                "--concurrency",
                "2",
            ]
        )
        statuses = [r.status for r in server.requests]
    out = capsys.readouterr().out
    assert code in (0, 1)
    assert json.loads(out)["retries"] >= 2
    assert 429 in statuses and 500 in statuses and 401 not in statuses  # the key was sent
    text = log_text()
    retry_lines = [line for line in text.splitlines() if "retry" in line.lower()]
    assert any("429" in line for line in retry_lines), text
    assert any("500" in line for line in retry_lines), text
    for path in log_dir().rglob("*"):
        assert SECRET.encode() not in path.read_bytes(), path


def test_locate_log_prints_the_log_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["locate", "log"]) == 0
    assert capsys.readouterr().out == f"{log_dir() / 'quiztui.log'}\n"
