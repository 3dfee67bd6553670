"""``quiztui config init|show`` and ``quiztui locate config|data|db|log``."""

from __future__ import annotations

import argparse
from typing import Any

from quiztui.cli._args import Parents, help_for


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
        choices=("config", "data", "db", "log"),
        help="config file, data folder, run store (SQLite) or log file",
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

    if args.what == "config":
        print(args.config or config_path())
    elif args.what == "data":
        print(data_dir())
    elif args.what == "log":
        print(log_path())
    else:
        print(load_config(args.config).db_path())
    return 0
