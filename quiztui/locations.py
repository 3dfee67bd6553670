"""Where quiztui keeps its files (XDG via platformdirs), each overridable by environment."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

APP = "quiztui"


def config_dir() -> Path:
    return Path(os.environ.get("QUIZTUI_CONFIG_DIR") or platformdirs.user_config_dir(APP))


def data_dir() -> Path:
    return Path(os.environ.get("QUIZTUI_DATA_DIR") or platformdirs.user_data_dir(APP))


def config_path() -> Path:
    return Path(os.environ.get("QUIZTUI_CONFIG") or config_dir() / "config.toml")


def default_db_path() -> Path:
    return data_dir() / "quiztui.db"
