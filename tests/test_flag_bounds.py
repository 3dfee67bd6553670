"""Issue 15 item 8: every numeric flag is validated like the config (one line, exit 2).

The flags are found by walking the real parser of every subcommand, so a new numeric flag
without a declared bound fails here; each is then given a value just below its lower bound and
just above its upper bound through ``quiztui.cli.main``, in-process.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import get_args

import pytest

from quiztui.cli import build_parser, main
from quiztui.cli._args import COMMANDS
from quiztui.cli.flags import Number, apply_flags
from quiztui.config import Config, load_config
from quiztui.errors import ConfigError

# Argument types that are not numbers (anything else must be declared with action=Number).
NON_NUMERIC_TYPES = (None, Path, str)


@dataclass(frozen=True)
class Flag:
    path: tuple[str, ...]  # the subcommand words, e.g. ("runs", "show")
    action: Number
    parser: argparse.ArgumentParser

    @property
    def name(self) -> str:
        return self.action.option_strings[-1] if self.action.option_strings else self.dest

    @property
    def dest(self) -> str:
        return self.action.dest

    def __str__(self) -> str:
        return " ".join((*self.path, self.name))


def _subparsers(parser: argparse.ArgumentParser) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            yield from action.choices.items()


# (subcommand words, the parser, one of its actions)
Found = tuple[tuple[str, ...], argparse.ArgumentParser, argparse.Action]


def _walk(parser: argparse.ArgumentParser, path: tuple[str, ...]) -> Iterator[Found]:
    for action in parser._actions:
        yield path, parser, action
    for name, child in _subparsers(parser):
        yield from _walk(child, (*path, name))


def _all_actions() -> list[Found]:
    out: list[Found] = []
    for command in COMMANDS:
        parser = build_parser(command)
        for name, child in _subparsers(parser):
            if name == command:
                out.extend(_walk(child, (command,)))
    return out


ACTIONS = _all_actions()
FLAGS = [Flag(path, action, p) for path, p, action in ACTIONS if isinstance(action, Number)]


def test_every_numeric_flag_declares_its_bounds() -> None:
    undeclared = [
        f"{' '.join(path)} {action.option_strings or action.dest}: type={action.type!r}"
        for path, _, action in ACTIONS
        if not isinstance(action, Number) and action.type not in NON_NUMERIC_TYPES
    ]
    assert not undeclared, "numeric flags need action=Number (a config key or bounds)"
    assert len(FLAGS) >= 20  # the walk found the subcommands' flags, not an empty parser
    for flag in FLAGS:
        bounds = flag.action.bounds()
        assert bounds.lower is not None or bounds.upper is not None, flag
        if flag.action.number_kind() is int:
            assert bounds.lower is not None and bounds.upper is not None, f"{flag}: {bounds}"


def _positionals(flag: Flag) -> list[str]:
    """Values for the other required positionals of the flag's parser."""
    out = []
    for action in flag.parser._actions:
        if action.option_strings or action is flag.action:
            continue
        if isinstance(action, argparse._SubParsersAction) or action.nargs == "?":
            continue
        out.append("1" if isinstance(action, Number) else "x")
    return out


def _required_options(flag: Flag) -> list[str]:
    """The parser's required options (``generate --subject``) with a value."""
    return [
        f"{action.option_strings[-1]}=x"
        for action in flag.parser._actions
        if action.option_strings and action.required
    ]


def _argv(flag: Flag, option: str | None, value: str) -> list[str]:
    rest = _positionals(flag)
    if option is None:  # a positional: in its place among the others
        index = [a for a in flag.parser._actions if not a.option_strings].index(flag.action)
        rest.insert(min(index, len(rest)), value)
        return [*flag.path, *_required_options(flag), *rest]
    return [*flag.path, *_required_options(flag), f"{option}={value}", *rest]


def _text(value: float, kind: type) -> str:
    return str(int(value)) if kind is int else repr(float(value))


def _out_of_bounds(flag: Flag) -> list[tuple[str, str]]:
    """(which, value text) just outside each declared bound."""
    bounds, kind = flag.action.bounds(), flag.action.number_kind()
    step = 1
    out = []
    if bounds.ge is not None:
        out.append(("below min", _text(bounds.ge - step, kind)))
    elif bounds.gt is not None:
        out.append(("below min", _text(bounds.gt, kind)))
    if bounds.le is not None:
        out.append(("above max", _text(bounds.le + step, kind)))
    elif bounds.lt is not None:
        out.append(("above max", _text(bounds.lt, kind)))
    else:
        out.append(("above max", "inf"))  # floats are finite
    return out


def _options(flag: Flag) -> list[str | None]:
    """Each way to type the flag (``-v`` and ``--variants``); None for a positional."""
    return [*flag.action.option_strings] or [None]


CASES = [
    pytest.param(flag, option, value, id=f"{' '.join(flag.path)} {option or flag.name} {which}")
    for flag in FLAGS
    for which, value in _out_of_bounds(flag)
    for option in _options(flag)
]


@pytest.mark.parametrize(("flag", "option", "value"), CASES)
def test_an_out_of_bounds_flag_is_one_line_and_exit_2(
    flag: Flag, option: str | None, value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = _argv(flag, option, value)
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 2, argv
    assert out == "" and err.endswith("\n") and err.count("\n") == 1, err
    named = option or flag.action.metavar or flag.dest.upper()
    assert err.startswith(f"quiztui: error: {named} {value}: "), err
    assert "Traceback" not in err


def _in_bounds(flag: Flag) -> list[str]:
    bounds, kind = flag.action.bounds(), flag.action.number_kind()
    values = [v for v in (bounds.ge, bounds.le) if v is not None]
    if bounds.gt is not None:
        values.append(bounds.gt + (1 if kind is int else 1e-6))
    return [_text(v, kind) for v in values]


@pytest.mark.parametrize("flag", FLAGS, ids=str)
def test_the_bounds_themselves_are_accepted(flag: Flag) -> None:
    for value in _in_bounds(flag):
        argv = _argv(flag, _options(flag)[0], value)
        args = build_parser(flag.path[0]).parse_args(argv)
        assert getattr(args, flag.dest) == pytest.approx(float(value)), argv


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--concurrency", "1000"],
            "--concurrency 1000: input should be less than or equal to 256"
            " (config key judge.concurrency)",
        ),
        (
            ["--batch-size", "0"],
            "--batch-size 0: input should be greater than or equal to 1 (config key vet.batch_size)",
        ),
        (
            ["--batch-size", "501"],
            "--batch-size 501: input should be less than or equal to 500"
            " (config key vet.batch_size)",
        ),
        (["--sim-latency", "nan"], "--sim-latency nan: input should be a finite number"),
        (["--seed", str(2**63)], f"--seed {2**63}: input should be less than or equal to"),
        (["--resume", "0"], "--resume 0: input should be greater than or equal to 1"),
        (["--batch-size", "x"], "--batch-size x: input should be a valid integer"),
    ],
)
def test_the_issue_examples(
    argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    quiz = tmp_path / "never-read.json"
    assert main(["vet", str(quiz), "--no-tui", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"quiztui: error: {message}") and err.count("\n") == 1, err


def test_config_file_and_environment_get_the_same_bounds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    quiz = str(tmp_path / "never-read.json")
    config = tmp_path / "config.toml"
    config.write_text("[vet]\nbatch_size = 501\n", encoding="utf-8")
    assert main(["vet", quiz, "--no-tui", "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"quiztui: error: {config}: vet.batch_size: Input should be less than or equal to 500\n"
    )
    monkeypatch.setenv("QUIZTUI_VET_BATCH_SIZE", "0")
    assert main(["vet", quiz, "--no-tui"]) == 2
    err = capsys.readouterr().err
    assert err == (
        "quiztui: error: environment QUIZTUI_*: vet.batch_size:"
        " Input should be greater than or equal to 1\n"
    )


def test_typed_flags_win_over_environment_and_file_and_zero_counts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config_file = tmp_path / "config.toml"
    config_file.write_text(
        "[vet]\nbatch_size = 30\nseed = 7\n[judge]\nconcurrency = 3\n", encoding="utf-8"
    )
    monkeypatch.setenv("QUIZTUI_VET_BATCH_SIZE", "40")
    args = build_parser("vet").parse_args(
        ["vet", "q.json", "--batch-size", "50", "--seed", "0", "--sim-latency", "0", "--no-cache"]
    )
    config = apply_flags(load_config(config_file), args)
    assert config.vet.batch_size == 50  # flag > env > file
    assert config.vet.seed == 0  # a falsy value the user typed is applied, not ignored
    assert config.simulated.latency == 0.0 and config.vet.cache is False
    assert config.judge.concurrency == 3  # untouched by flags: the file's
    untyped = apply_flags(load_config(config_file), build_parser("vet").parse_args(["vet", "q"]))
    assert untyped.vet.batch_size == 40 and untyped.vet.seed == 7


def test_a_dollar_budget_and_a_short_alias(capsys: pytest.CaptureFixture[str]) -> None:
    args = build_parser("vet").parse_args(["vet", "q.json", "--budget", "$0.50"])
    assert args.budget == 0.5
    args = build_parser("robustness").parse_args(["robustness", "q.json", "-v", "20"])
    assert args.variants == 20
    assert main(["robustness", "q.json", "-v", "21"]) == 2
    assert capsys.readouterr().err.startswith("quiztui: error: -v 21: ")


def _number_fields() -> list[tuple[str, str, type]]:
    """(section, key, int or float) for every numeric key of the config."""
    out: list[tuple[str, str, type]] = []
    for section, field in Config.model_fields.items():
        model = field.annotation
        assert model is not None
        for key, info in model.model_fields.items():
            kinds = set(get_args(info.annotation) or (info.annotation,))
            if kinds & {int, float} and bool not in kinds:
                out.append((section, key, float if float in kinds else int))
    return out


@pytest.mark.parametrize(("section", "key", "kind"), _number_fields())
def test_every_config_number_is_bounded_and_finite(
    section: str, key: str, kind: type, monkeypatch: pytest.MonkeyPatch
) -> None:
    info = Config.model_fields[section].annotation.model_fields[key]  # type: ignore[union-attr]
    assert any(hasattr(m, attr) for m in info.metadata for attr in ("ge", "gt")), (
        f"{section}.{key} has no lower bound"
    )
    bad = ["inf", "nan"] if kind is float else [str(2**63)]
    for value in bad:
        if kind is int and not any(hasattr(m, "le") for m in info.metadata):
            continue  # a count with no natural ceiling (lint thresholds, max_tokens)
        monkeypatch.setenv(f"QUIZTUI_{section.upper()}_{key.upper()}", value)
        with pytest.raises(ConfigError, match=f"{section}.{key}"):
            load_config()
