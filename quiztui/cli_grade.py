"""``quiztui grade FILE`` and ``quiztui grade --benchmark DATASET``: grading candidate answers."""

from __future__ import annotations

import argparse
from typing import Any

from quiztui.config import Config
from quiztui.errors import QuiztuiError


def add_parser(sub: Any, common: argparse.ArgumentParser, judge: argparse.ArgumentParser) -> None:
    sub.add_parser("grade", parents=[common, judge], help="grade candidate answers")


def cmd_grade(config: Config, args: argparse.Namespace) -> int:
    raise QuiztuiError("grade: not built yet")
