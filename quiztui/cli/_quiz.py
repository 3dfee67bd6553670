"""Reading the quiz a subcommand was given, the same way for every subcommand: non-strict unless
``--strict`` or ``[formats] strict``, ``[import]`` and ``--columns`` applied, and the load report on stderr."""

from __future__ import annotations

import argparse
import sys

from quiztui.config import Config
from quiztui.core.quiz import Quiz


def quiz_columns(config: Config, flag: str | None) -> dict[str, tuple[str, ...]] | None:
    """Which column holds what: the ``[import]`` table, with ``--columns`` winning role by role."""
    from quiztui.formats._dataset import parse_columns

    columns = config.import_.columns()
    if flag:
        columns.update(parse_columns(flag))
    return columns or None


def load_input(config: Config, args: argparse.Namespace) -> Quiz:
    """The quiz of ``args.quiz`` (see ``_args.quiz_arguments``), its skipped items listed."""
    from quiztui.formats import load_quiz

    columns = quiz_columns(config, getattr(args, "columns", None))
    strict = getattr(args, "strict", False) or config.formats.strict
    quiz = load_quiz(args.quiz, strict=strict, columns=columns)
    for line in quiz.load_report():
        print(f"quiztui: {line}", file=sys.stderr)
    return quiz
