"""Command line: ``quiztui QUIZ`` opens the TUI; ``quiztui vet QUIZ --no-tui`` runs headless.

One module per subcommand under this package; each registers its parser with
``set_defaults(handler=…)`` and is imported only when its subcommand runs, so ``quiztui --version``
and ``quiztui --help`` load no numpy, scipy or textual. The run assembly both faces share is
:mod:`quiztui.assemble`. Exit codes: 0 fine, 1 a quiz at or past ``--fail-on``, 2 bad input or
config, 3 stopped early (``--resume`` continues), 130 interrupted.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from pathlib import Path

# httpx's own command line (httpx._main: click, rich, pygments; a quarter of its import time) is
# never used here: marked absent, so `import httpx` skips it (httpx falls back to a stub `main`).
if "httpx" not in sys.modules:
    sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]

from quiztui import __version__  # noqa: E402
from quiztui.cli._args import COMMANDS, first_positional, parents  # noqa: E402
from quiztui.errors import QuizFormatError, QuiztuiError  # noqa: E402


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser; only ``command``'s module is imported to declare its arguments (the other
    subcommands are listed with their one-line help)."""
    p = argparse.ArgumentParser(
        prog="quiztui",
        description="Vet quizzes with LLM judges. `quiztui QUIZ` opens the TUI.",
    )
    p.add_argument("--version", action="version", version=f"quiztui {__version__}")
    p.add_argument("--config", type=Path, help="config file (default: the XDG config path)")
    sub = p.add_subparsers(dest="command")
    shared = parents()
    selected = COMMANDS[command][0] if command in COMMANDS else None
    for name, (module, help_text) in COMMANDS.items():
        if name in sub.choices:
            continue  # registered with its module's other commands
        if module == selected:
            importlib.import_module(f"quiztui.cli.{module}").register(sub, shared)
        else:
            sub.add_parser(name, help=help_text, add_help=False)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; all it prints passes the terminal sanitiser (``core/terminal.py``): quiz
    text, model replies and server messages never put an escape sequence on the terminal."""
    from quiztui.core.terminal import terminal_stream

    stdout, stderr = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = terminal_stream(stdout), terminal_stream(stderr)
    try:
        return _main(argv)
    finally:
        sys.stdout, sys.stderr = stdout, stderr


def _main(argv: Sequence[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # `quiztui QUIZ [options]` is `quiztui vet QUIZ [options]` in the TUI.
    position = first_positional(argv)
    if position is not None and argv[position] not in COMMANDS:
        argv.insert(position, "vet")
    command = argv[position] if position is not None else None
    try:
        parser = build_parser(command)
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help()
            return 0
        config = None
        if getattr(args, "loads_config", True):
            from quiztui.cli.flags import apply_flags
            from quiztui.config import load_config
            from quiztui.log import setup_logging

            config = apply_flags(load_config(args.config), args)
            setup_logging(config)  # the log file (quiztui locate log); never the terminal
        return int(args.handler(config, args))
    except QuizFormatError as exc:
        # Every problem on its own self-contained line: file, location, field, message.
        for line in exc.all_lines():
            print(f"quiztui: error: {line}", file=sys.stderr)
        return exc.exit_code
    except QuiztuiError as exc:
        print(f"quiztui: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print(
            "quiztui: interrupted; judged verdicts are saved (resume with --resume)",
            file=sys.stderr,
        )
        return 130


def entry() -> None:
    sys.exit(main())


if __name__ == "__main__":
    entry()
