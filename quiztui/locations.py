"""Where quiztui keeps its files (XDG via platformdirs), each overridable by environment."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

APP = "quiztui"

# Environment variables that name a location; they are not ``QUIZTUI_<SECTION>_<KEY>`` overrides.
LOCATION_VARIABLES = frozenset(
    ("QUIZTUI_CONFIG", "QUIZTUI_CONFIG_DIR", "QUIZTUI_DATA_DIR", "QUIZTUI_LOG_DIR")
)


def config_dir() -> Path:
    return Path(os.environ.get("QUIZTUI_CONFIG_DIR") or platformdirs.user_config_dir(APP))


def data_dir() -> Path:
    return Path(os.environ.get("QUIZTUI_DATA_DIR") or platformdirs.user_data_dir(APP))


def log_dir() -> Path:
    """Where the rotating log file lives (``quiztui locate log``)."""
    return Path(os.environ.get("QUIZTUI_LOG_DIR") or platformdirs.user_log_dir(APP))


def log_path() -> Path:
    return log_dir() / "quiztui.log"


def config_path() -> Path:
    return Path(os.environ.get("QUIZTUI_CONFIG") or config_dir() / "config.toml")


def default_db_path() -> Path:
    return data_dir() / "quiztui.db"
