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
import os
import sys
from collections.abc import Sequence
from pathlib import Path

# httpx's own command line (httpx._main: click, rich, pygments; a quarter of its import time) is
# never used here: marked absent, so `import httpx` skips it (httpx falls back to a stub `main`).
if "httpx" not in sys.modules:
    sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
# numpy's OpenBLAS starts a thread per core when it is imported, and each spins for about 0.1 s
# before it sleeps: 50-90 ms of CPU on another core, taken from the judge server beside it (a
# local llama.cpp) and from the run. quiztui's numpy work is small arrays (the judge model's
# fit, the statistics; embeddings run on onnxruntime's own threads), which a thread pool does
# not speed up: one thread, unless the user chose otherwise (bench/vet_throughput.py: a headless
# 400-question vet's CPU went from 0.78-0.84 s to 0.54-0.70 s).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from quiztui import __version__  # noqa: E402
from quiztui.cli._args import (  # noqa: E402
    COMMANDS,
    DEPRECATED,
    first_positional,
    grouped_commands,
    parents,
)
from quiztui.errors import QuizFormatError, QuiztuiError  # noqa: E402


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser; only ``command``'s module is imported to declare its arguments (the other
    subcommands are listed with their one-line help)."""
    p = argparse.ArgumentParser(
        prog="quiztui",
        description="Vet quizzes with LLM judges, in a terminal app or headless.",
        # The commands under headings (argparse's own list is one long block).
        epilog=grouped_commands(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--version", action="version", version=f"quiztui {__version__}")
    p.add_argument("--config", type=Path, help="config file (default: the XDG config path)")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", help=argparse.SUPPRESS)
    # Set after add_subparsers, which makes each subcommand's "quiztui NAME" prefix from it.
    p.usage = "quiztui [-h] [--version] [--config CONFIG] QUIZ | COMMAND ..."
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
    from quiztui.cli import collector
    from quiztui.core.terminal import terminal_stream

    collector.hold()  # start-up makes no garbage worth a collection (cli/collector.py)
    stdout, stderr = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = terminal_stream(stdout), terminal_stream(stderr)
    try:
        return _main(argv)
    finally:
        sys.stdout, sys.stderr = stdout, stderr
        collector.restore()


def _main(argv: Sequence[str] | None) -> int:
    from quiztui.cli import collector

    argv = list(sys.argv[1:] if argv is None else argv)
    # `quiztui QUIZ [options]` is `quiztui vet QUIZ [options]` in the TUI.
    position = first_positional(argv)
    if position is not None and argv[position] in DEPRECATED:
        old, new = argv[position], DEPRECATED[argv[position]]
        print(f"quiztui: `{old}` is now `quiztui {new}`; `{old}` will go away", file=sys.stderr)
        argv[position] = new
    if position is not None and argv[position] not in COMMANDS:
        argv.insert(position, "vet")
    command = argv[position] if position is not None else None
    try:
        parser = build_parser(command)
        args, extra = parser.parse_known_args(argv)
        if extra:
            _unrecognized(parser, args, extra)  # the subcommand's usage, and a "did you mean"
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
        if not getattr(args, "releases_collector", False):
            collector.release()  # the command's work begins (a headless vet: at its requests)
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


def _unrecognized(
    parser: argparse.ArgumentParser, args: argparse.Namespace, extra: list[str]
) -> None:
    """Exit 2 with the usage of the (sub)command the flags were given to, naming the nearest
    flag it has for each it does not: ``--formt`` → "did you mean --format?"."""
    import difflib

    target = parser
    while True:  # down to the deepest subcommand chosen: `runs show`, `config init`
        subs = [a for a in target._actions if isinstance(a, argparse._SubParsersAction)]
        chosen = getattr(args, subs[0].dest, None) if subs else None
        if not subs or chosen not in subs[0].choices:
            break
        target = subs[0].choices[chosen]
    # compared without their dashes, which every flag shares
    flags = {o.lstrip("-"): o for a in target._actions for o in a.option_strings}
    hints = []
    for word in extra:
        if word.startswith("-"):
            name = word.split("=", 1)[0].lstrip("-")
            near = difflib.get_close_matches(name, list(flags), n=1, cutoff=0.7)
            if near:
                hints.append(f"did you mean {flags[near[0]]}?")
    message = f"unrecognized arguments: {' '.join(extra)}"
    target.error(message + (f" ({'; '.join(hints)})" if hints else ""))


def entry() -> None:
    _exit(main())


def _exit(code: int) -> None:
    """End the process once the command has written everything, without the interpreter's
    teardown: freeing every module and object one at a time took 70-90 ms after a 400-question
    vet run, longer than its report (``bench/vet_throughput.py``). The exit handlers still run
    (logging's flush and close among them) and the standard streams are flushed; with another
    thread still alive the ordinary exit waits for it as it always did."""
    import atexit
    import threading

    if threading.active_count() > 1:
        sys.exit(code)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: nothing more can reach it
            pass
    os._exit(code)


if __name__ == "__main__":
    entry()
