"""The log file: stdlib ``logging`` to a rotating file in the platform log dir, keys redacted.

Modules log to ``logging.getLogger(__name__)`` (children of ``quiztui``); :func:`setup_logging`,
called once by the CLI after the config is loaded, gives the ``quiztui`` logger one
:class:`~logging.handlers.RotatingFileHandler` at ``locations.log_path()`` (``QUIZTUI_LOG_DIR``
overrides the directory) with the level of ``[log] level`` / ``QUIZTUI_LOG_LEVEL``. Nothing goes to
the terminal: the TUI owns it, and headless output is the report and the progress line.

Every record passes :class:`RedactingFilter` on its way to the file: the values of the API key
variables the config names, and anything shaped like a bearer token, an ``x-api-key`` header or a
``key=`` parameter, become ``[redacted]`` — in the message, its arguments and any traceback. The
same filter makes the record terminal-safe (``core/terminal.terminal_safe``): a log line quoting a
quiz or a reply carries no escape sequence for whoever reads the file with ``cat`` or ``tail -f``.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable
from logging.handlers import RotatingFileHandler
from pathlib import Path
from typing import TYPE_CHECKING

from quiztui.core.terminal import terminal_safe
from quiztui.locations import log_path

if TYPE_CHECKING:
    from quiztui.config import Config

LOGGER = "quiztui"
MAX_BYTES = 1_000_000
BACKUPS = 3
REDACTED = "[redacted]"
FORMAT = "%(asctime)s %(levelname)s %(name)s [%(process)d]: %(message)s"

# Key variables redacted even when the config names others (the providers' defaults).
DEFAULT_KEY_VARIABLES = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY")
# Shorter values are not scrubbed verbatim (a one-letter "key" would scrub every such letter);
# the patterns below still catch them in a header or parameter.
MIN_SECRET_CHARS = 6

_VALUE = r"[^\s\"',;&)}\]]+"
_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # Authorization: Bearer <token>
    (re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]+"), rf"\1{REDACTED}"),
    # x-api-key / x-goog-api-key / api_key / key / access_token, as a header, a dict item or a
    # query parameter: the name and separator stay, the value goes.
    (
        re.compile(
            r"(?i)\b((?:x-(?:goog-)?)?api[-_]?key|key|access[-_]token)"
            rf"([\"']?\s*[:=]\s*[\"']?)(?!\[redacted\]){_VALUE}"
        ),
        rf"\1\2{REDACTED}",
    ),
)


class RedactingFilter(logging.Filter):
    """Scrubs key values and key-shaped text from a record's message, arguments and traceback.

    Attached to the handler (a logger's own filters do not see its children's records). The
    record is rewritten in place: its message is formatted once and its arguments dropped.
    """

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        super().__init__()
        # Longest first, so a key that contains another is scrubbed whole.
        self.secrets = sorted(
            {s for s in secrets if len(s) >= MIN_SECRET_CHARS}, key=len, reverse=True
        )

    def redact(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, REDACTED)
        for pattern, replacement in _PATTERNS:
            text = pattern.sub(replacement, text)
        return terminal_safe(text)

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a format string that does not match its arguments
            message = f"{record.msg} {record.args!r}"
        record.msg = self.redact(message)
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.redact(record.exc_text)
        if record.stack_info:
            record.stack_info = self.redact(record.stack_info)
        return True


class _LogFile(RotatingFileHandler):
    """The handler :func:`setup_logging` owns (found again by its type, so setup is idempotent)."""


def key_variables(config: Config) -> list[str]:
    """The names of every API key variable: each ``*_env`` key of the config, and the defaults."""
    names = list(DEFAULT_KEY_VARIABLES)
    for section in type(config).model_fields:
        model = getattr(config, section)
        for field in type(model).model_fields:
            value = getattr(model, field)
            if field.endswith("_env") and isinstance(value, str) and value:
                names.append(value)
    return list(dict.fromkeys(names))


def key_values(config: Config, environ: dict[str, str] | None = None) -> list[str]:
    """The values of the key variables that are set (what the log must never contain)."""
    env = os.environ if environ is None else environ
    return [env[name] for name in key_variables(config) if env.get(name)]


def setup_logging(config: Config) -> Path | None:
    """Log the ``quiztui`` logger to the rotating file at the configured level; its path.

    Idempotent: called again it keeps one handler (a new one when the log dir changed) and
    re-reads the level and the key values. When the file cannot be opened, logging is off
    (None) rather than the command failing.
    """
    logger = logging.getLogger(LOGGER)
    level = getattr(logging, config.log.level)
    path = log_path()
    current = [h for h in logger.handlers if isinstance(h, _LogFile)]
    handler = next((h for h in current if h.baseFilename == os.path.abspath(path)), None)
    for old in current:
        if old is not handler:
            logger.removeHandler(old)
            old.close()
    if handler is None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            handler = _LogFile(path, maxBytes=MAX_BYTES, backupCount=BACKUPS, encoding="utf-8")
        except OSError:
            if not any(isinstance(h, logging.NullHandler) for h in logger.handlers):
                logger.addHandler(logging.NullHandler())  # never the last-resort stderr handler
            return None
        handler.setFormatter(logging.Formatter(FORMAT))
        logger.addHandler(handler)
    for old_filter in list(handler.filters):
        handler.removeFilter(old_filter)
    handler.addFilter(RedactingFilter(key_values(config)))
    handler.setLevel(level)
    logger.setLevel(level)
    from quiztui import __version__

    logger.info("quiztui %s started; logging at %s", __version__, config.log.level)
    return path


def teardown_logging() -> None:
    """Close and remove the log file handler and reset the level (tests, between runs)."""
    logger = logging.getLogger(LOGGER)
    for handler in [h for h in logger.handlers if isinstance(h, _LogFile)]:
        logger.removeHandler(handler)
        handler.close()
    logger.setLevel(logging.NOTSET)
