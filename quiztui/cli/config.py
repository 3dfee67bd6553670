"""``quiztui config init|show`` and ``quiztui locate config|data|db|log``."""

from __future__ import annotations

import argparse
from typing import Any

from quiztui.cli._args import Parents, help_for

LOCATIONS = ("config", "data", "db", "log")


def register(sub: Any, parents: Parents) -> None:
    common = parents.common
    cfg = sub.add_parser("config", parents=[common], help=help_for("config"))
    cfg_sub = cfg.add_subparsers(dest="config_command", required=True)
    init = cfg_sub.add_parser("init", parents=[common], help="write a commented default config")
    init.add_argument("--force", action="store_true", help="overwrite an existing config file")
    cfg_sub.add_parser("show", parents=[common], help="print the effective configuration")
    # `config init` must work when the config file is missing or broken: it loads nothing.
    cfg.set_defaults(handler=cmd_config, loads_config=False)

    loc = sub.add_parser("locate", parents=[common], help=help_for("locate"))
    loc.add_argument(
        "what",
        nargs="?",
        choices=LOCATIONS,
        help="one location, printed alone (for scripts); without it every location, named",
    )
    loc.set_defaults(handler=cmd_locate, loads_config=False)


def cmd_config(config: Any, args: argparse.Namespace) -> int:
    from quiztui.config import load_config, write_default_config
    from quiztui.locations import config_path

    if args.config_command == "init":
        print(write_default_config(args.config or config_path(), force=args.force))
        return 0
    import tomli_w

    print(
        tomli_w.dumps(load_config(args.config).model_dump(exclude_none=True, by_alias=True)), end=""
    )
    return 0


def cmd_locate(config: Any, args: argparse.Namespace) -> int:
    from quiztui.config import load_config
    from quiztui.locations import config_path, data_dir, log_path

    def where(what: str) -> object:
        if what == "config":
            return args.config or config_path()
        if what == "data":
            return data_dir()
        if what == "log":
            return log_path()
        return load_config(args.config).db_path()

    if args.what is not None:
        print(where(args.what))
        return 0
    for what in LOCATIONS:  # `quiztui locate` alone: every location, each named
        print(f"{what:<7}{where(what)}")
    return 0
