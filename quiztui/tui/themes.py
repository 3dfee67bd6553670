"""Themes as data files: ``themes/*.toml`` → :class:`textual.theme.Theme`.

The wheel carries ``themes/`` as ``quiztui/_data/themes`` (see :mod:`quiztui.resources`).

A theme file holds the colour fields of ``Theme`` (primary, secondary, accent, foreground,
background, surface, panel, boost, warning, error, success), ``dark``, optional ``name``
(defaults to the file stem) and an optional ``[variables]`` table. A broken file is skipped
and reported, never fatal.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from importlib.resources.abc import Traversable

from textual.color import Color, ColorParseError
from textual.theme import Theme

from quiztui import resources

THEMES_DIR: Traversable = resources.themes_dir()
DEFAULT_THEME = "quiztui-dark"
FALLBACK_THEME = "textual-dark"

_COLOURS = (
    "primary",
    "secondary",
    "accent",
    "foreground",
    "background",
    "surface",
    "panel",
    "boost",
    "warning",
    "error",
    "success",
)
_OTHER = {"name", "dark", "variables", "luminosity_spread", "text_alpha"}


@dataclass
class LoadedThemes:
    themes: list[Theme] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def theme_from_mapping(data: dict[str, object], default_name: str) -> Theme:
    unknown = sorted(set(data) - set(_COLOURS) - _OTHER)
    if unknown:
        raise ValueError(f"unknown key(s): {', '.join(unknown)}")
    if "primary" not in data:
        raise ValueError("missing key: primary")
    colours: dict[str, str] = {}
    for key in _COLOURS:
        if key in data:
            value = data[key]
            if not isinstance(value, str):
                raise ValueError(f"{key} must be a colour string")
            try:
                Color.parse(value)
            except ColorParseError as exc:
                raise ValueError(f"{key}: {exc}") from None
            colours[key] = value
    name = data.get("name", default_name)
    dark = data.get("dark", True)
    variables = data.get("variables", {})
    if not isinstance(name, str) or not name:
        raise ValueError("name must be a non-empty string")
    if not isinstance(dark, bool):
        raise ValueError("dark must be true or false")
    if not isinstance(variables, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in variables.items()
    ):
        raise ValueError("[variables] must map names to strings")
    extra: dict[str, float] = {}
    for key in ("luminosity_spread", "text_alpha"):
        if key in data:
            value = data[key]
            if not isinstance(value, int | float) or isinstance(value, bool):
                raise ValueError(f"{key} must be a number")
            extra[key] = float(value)
    return Theme(
        name=name,
        primary=colours.pop("primary"),
        dark=dark,
        variables=dict(variables),
        **colours,  # type: ignore[arg-type]
        **extra,  # type: ignore[arg-type]
    )


def load_themes(directory: Traversable = THEMES_DIR) -> LoadedThemes:
    """Every ``*.toml`` theme in ``directory`` (a folder or the packaged themes; sorted by name).

    A missing directory gives none.
    """
    out = LoadedThemes()
    for path in resources.theme_files(directory):
        try:
            with path.open("rb") as fh:
                data = tomllib.load(fh)
            out.themes.append(theme_from_mapping(data, path.name.removesuffix(".toml")))
        except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError, ValueError) as exc:
            out.problems.append(f"{path.name}: {exc}")
    return out
