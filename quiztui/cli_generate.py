"""``quiztui generate DOC --subject S``: question–answer pairs from a document (seed 001)."""

from __future__ import annotations

import argparse
from typing import Any

from quiztui.config import Config
from quiztui.errors import QuiztuiError


def add_parser(sub: Any, common: argparse.ArgumentParser, judge: argparse.ArgumentParser) -> None:
    sub.add_parser("generate", parents=[common, judge], help="question-answer pairs from a document")


def cmd_generate(config: Config, args: argparse.Namespace) -> int:
    raise QuiztuiError("generate: not built yet")
