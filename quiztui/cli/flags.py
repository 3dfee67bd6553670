"""Flags validated like the config, and the flags a user typed applied over the loaded config.

Every numeric flag is declared with ``action=Number``: either ``key="vet.batch_size"``, so the
value goes through that config key's field (the validation the TOML file and the
``QUIZTUI_…`` variables get), or explicit bounds (``ge``/``gt``/``le``/``lt``) for a flag that is no
config key (run ids, ``--limit``). A value out of bounds ends the parse with a ``ConfigError``:
one line naming the flag as typed, the value and the bound, exit status 2 — never a traceback,
never ignored.

:func:`apply_flags` then merges the judge and run flags the user typed (``is not None``, so
``--seed 0`` counts) into their config sections and validates each touched section again.

Light at import (argparse only): the parser is built for ``quiztui --help`` too; the config
is imported when a flag is typed or applied.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, get_args

from quiztui.core.records import record

if TYPE_CHECKING:
    from quiztui.config import Config

# Run ids and seeds are stored in SQLite INTEGER columns (as quiztui.config.INT64_*).
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


@record
class Bounds:
    """A flag's declared range: each bound inclusive (ge, le) or not (gt, lt); None: none."""

    ge: float | None = None
    gt: float | None = None
    le: float | None = None
    lt: float | None = None

    @property
    def lower(self) -> float | None:
        return self.ge if self.ge is not None else self.gt

    @property
    def upper(self) -> float | None:
        return self.le if self.le is not None else self.lt

    def __str__(self) -> str:
        lo = (
            "(-inf"
            if self.lower is None
            else ("[" if self.ge is not None else "(") + f"{self.lower}"
        )
        hi = (
            "inf)"
            if self.upper is None
            else f"{self.upper}" + ("]" if self.le is not None else ")")
        )
        return f"{lo}, {hi}"


class Number(argparse.Action):
    """An int or float flag validated against a config key's field or given bounds.

    ``key``: a config key ("section.name"); its field's type and bounds apply. Otherwise ``kind``
    (int or float) and at least one of ``ge``/``gt``/``le``/``lt``. ``clean`` rewrites the text
    before validation (``--budget $0.50``). Floats are finite in both cases.
    """

    def __init__(
        self,
        option_strings: Sequence[str],
        dest: str,
        *,
        key: str | None = None,
        kind: type[int] | type[float] = int,
        ge: float | None = None,
        gt: float | None = None,
        le: float | None = None,
        lt: float | None = None,
        clean: Callable[[str], str] | None = None,
        **kwargs: Any,
    ) -> None:
        explicit = Bounds(ge, gt, le, lt)
        if key is None and explicit.lower is None and explicit.upper is None:
            raise ValueError(f"{dest}: a numeric flag needs a config key or a bound")
        if key is not None and (explicit.lower is not None or explicit.upper is not None):
            raise ValueError(f"{dest}: a config key's flag takes the key's bounds, not its own")
        super().__init__(option_strings, dest, **kwargs)
        self.key, self.kind, self.explicit, self.clean = key, kind, explicit, clean

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        from quiztui.errors import ConfigError
        from quiztui.schema import ValidationError

        text = str(values)
        try:
            value = self.validate(self.clean(text) if self.clean else text)
        except ValidationError as exc:
            # Raised through parse_args to the CLI's handler: one line, exit 2 (not argparse's
            # usage block).
            flag = option_string or self.metavar or self.dest.upper()
            message = exc.errors()[0]["msg"]
            where = f" (config key {self.key})" if self.key else ""
            raise ConfigError(f"{flag} {text}: {message[:1].lower()}{message[1:]}{where}") from None
        setattr(namespace, self.dest, value)

    def validate(self, text: str) -> int | float | None:
        """The flag's value from ``text``; raises ``schema.ValidationError`` out of bounds."""
        if self.key is None:
            from quiztui.schema import bounds_of, check_value

            b = self.explicit
            metadata = bounds_of(ge=b.ge, gt=b.gt, le=b.le, lt=b.lt)
            return check_value(self.kind, text, metadata)  # type: ignore[no-any-return]
        section, _, name = self.key.partition(".")
        validated = _section(section).model_validate({name: text})
        return getattr(validated, name)  # type: ignore[no-any-return]

    def bounds(self) -> Bounds:
        """The declared range: the given bounds, or the config field's."""
        if self.key is None:
            return self.explicit
        field = _field(self.key)
        found: dict[str, float] = {}
        for item in field.metadata:
            for attr in ("ge", "gt", "le", "lt"):
                if hasattr(item, attr):
                    found[attr] = getattr(item, attr)
        return Bounds(**found)

    def number_kind(self) -> type[int] | type[float]:
        """int or float: the config field's type (without None) or ``kind``."""
        if self.key is None:
            return self.kind
        annotation = _field(self.key).annotation
        return float if float in (get_args(annotation) or (annotation,)) else int


def _section(name: str) -> Any:
    """The class of config section ``name`` (``JudgeConfig`` for "judge")."""
    from quiztui.config import Config

    if name not in Config.model_fields:
        raise ValueError(f"no config section {name!r}")
    return Config.model_fields[name].annotation


def _field(key: str) -> Any:
    section, _, name = key.partition(".")
    fields = _section(section).model_fields
    if name not in fields:
        raise ValueError(f"no config key {key!r}")
    return fields[name]


# Flags every judged subcommand shares, and the config key each sets: dest -> (key, flag).
_SHARED = {
    "judge": ("judge.provider", "--judge"),
    "model": ("judge.model", "--model"),
    "base_url": ("judge.base_url", "--base-url"),
    "concurrency": ("judge.concurrency", "--concurrency"),
    "batch_size": ("vet.batch_size", "--batch-size"),
    "sim_latency": ("simulated.latency", "--sim-latency"),
    "seed": ("vet.seed", "--seed"),
    "fail_on": ("vet.fail_on", "--fail-on"),
}
# Flags whose dest another subcommand uses for something else: applied for `vet` only.
_VET_ONLY = {
    "mode": ("vet.mode", "--mode"),
    "budget": ("vet.budget", "--budget"),
    "prior": ("vet.prior", "--prior"),
}


def typed_overrides(args: argparse.Namespace) -> dict[str, tuple[Any, str]]:
    """The config keys the typed flags set: key -> (value, flag)."""
    out: dict[str, tuple[Any, str]] = {}
    flags = dict(_SHARED)
    if getattr(args, "command", None) == "vet":
        flags |= _VET_ONLY
    for dest, (key, flag) in flags.items():
        value = getattr(args, dest, None)
        if value is not None:
            out[key] = (value, flag)
    if getattr(args, "no_cache", False):
        out["vet.cache"] = (False, "--no-cache")
    if getattr(args, "db", None) is not None:
        out["store.path"] = (str(args.db), "--db")
    return out


def apply_flags(config: Config, args: argparse.Namespace) -> Config:
    """``config`` with the typed judge and run flags applied, each section validated again."""
    from quiztui.errors import ConfigError
    from quiztui.schema import ValidationError

    overrides = typed_overrides(args)
    sections: dict[str, dict[str, Any]] = {}
    for key, (value, _) in overrides.items():
        section, _, name = key.partition(".")
        sections.setdefault(section, {})[name] = value
    update: dict[str, Any] = {}
    for section, values in sections.items():
        current = getattr(config, section)
        try:
            update[section] = type(current).model_validate(current.model_dump() | values)
        except ValidationError as exc:
            err = exc.errors()[0]
            name = str(err["loc"][0]) if err["loc"] else ""
            value, flag = overrides.get(f"{section}.{name}", (None, f"[{section}]"))
            raise ConfigError(
                f"{flag} {value}: {err['msg']} (config key {section}.{name})"
            ) from None
    result = config.model_copy(update=update) if update else config
    judge = result.judge
    if "judge.base_url" in overrides and not judge.model and judge.provider != "simulated":
        # Without a model the judge would fall back to Ollama's first model or the simulated one.
        raise ConfigError(
            f"--base-url {overrides['judge.base_url'][0]} needs --model: name the model the"
            " server runs (or set judge.model in the config)"
        )
    return result
