"""The package's data files, read through :mod:`importlib.resources`.

Contributors edit ``prompts/`` and ``themes/`` at the top of the checkout; the build puts them, the
default gold set and the demo quiz under ``quiztui/_data/`` (the ``hooks.custom.data`` table in
pyproject.toml: copies in a wheel, links in an editable install, see ``hatch_build.py``). So an
installed wheel and a checkout read the same way, and nothing here looks beside the source tree.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import importlib.util
import json
import tempfile
from importlib.resources import as_file, files
from importlib.resources.abc import Traversable
from pathlib import Path
from urllib.parse import unquote, urlparse

PACKAGE = "quiztui"

# Kept open until the process ends: temporary copies of resources of a zipped install.
_COPIES = contextlib.ExitStack()
atexit.register(_COPIES.close)


def data_root() -> Traversable:
    return _package() / "_data"


@functools.cache
def _package() -> Traversable:
    """The package's folder. Installed on disk (a wheel's install, a checkout) it is the folder
    the import system found it in, which ``files`` gives too, without the readers and zipfile
    ``files`` imports to find that out (a few ms of a run's start-up); ``files`` for any other
    install (a zip)."""
    spec = importlib.util.find_spec(PACKAGE)
    where = list(spec.submodule_search_locations or ()) if spec is not None else []
    if len(where) == 1 and Path(where[0]).is_dir():
        return Path(where[0])
    return files(PACKAGE)


def prompts_dir() -> Traversable:
    """The packaged prompt files, one ``<name>.md`` per prompt."""
    return data_root() / "prompts"


def prompt_file(name: str) -> Traversable:
    return prompts_dir() / f"{name}.md"


def prompt_names() -> tuple[str, ...]:
    """Every packaged prompt's name (file stem), sorted; none when the data is missing."""
    return _stems(prompts_dir(), ".md")


def themes_dir() -> Traversable:
    """The packaged Textual themes, ``*.toml``."""
    return data_root() / "themes"


def theme_files(directory: Traversable | None = None) -> list[Traversable]:
    """The ``*.toml`` files of ``directory`` (the packaged themes by default), sorted by name."""
    folder = themes_dir() if directory is None else directory
    if not folder.is_dir():
        return []
    return sorted(
        (t for t in folder.iterdir() if t.name.endswith(".toml") and t.is_file()),
        key=lambda t: t.name,
    )


def default_gold() -> Traversable:
    """The default calibration gold set: 50 Open Trivia DB questions."""
    return data_root() / "gold" / "opentdb_sample.json"


def demo_quiz() -> Traversable:
    """The demo quiz with four planted wrong keys; its truth file lies beside it."""
    return data_root() / "demo" / "planted_errors.json"


def minilm_vocab() -> Traversable:
    """The WordPiece vocabulary of all-MiniLM-L6-v2 (see the NOTICE beside it)."""
    return data_root() / "minilm" / "vocab.txt"


def read_text(resource: Traversable) -> str:
    return resource.read_text(encoding="utf-8")


def as_path(resource: Traversable, *, with_siblings: bool = False) -> Path:
    """A file-system path for a packaged file, for code that needs one (e.g. ``load_quiz``).

    An unpacked install (the usual case, and an editable checkout) already gives a path. A zipped
    one gives a temporary copy that lasts until the process exits; ``with_siblings`` copies the
    files beside it too (a quiz's truth file).
    """
    if isinstance(resource, Path):
        return resource
    if not with_siblings:
        return _COPIES.enter_context(as_file(resource))
    folder = Path(_COPIES.enter_context(tempfile.TemporaryDirectory(prefix="quiztui-data-")))
    parent = _parent_of(resource)
    for sibling in parent.iterdir() if parent is not None else (resource,):
        if sibling.is_file():
            (folder / sibling.name).write_bytes(sibling.read_bytes())
    return folder / resource.name


def _parent_of(resource: Traversable) -> Traversable | None:
    parent = getattr(resource, "parent", None)  # zipfile.Path and pathlib.Path both have one
    return parent if parent is not None and hasattr(parent, "iterdir") else None


def _stems(folder: Traversable, suffix: str) -> tuple[str, ...]:
    if not folder.is_dir():
        return ()
    return tuple(
        sorted(t.name.removesuffix(suffix) for t in folder.iterdir() if t.name.endswith(suffix))
    )


@functools.cache
def checkout_root() -> Path | None:
    """The project folder when quiztui is an editable install imported from it, else None.

    Read from the install's PEP 610 ``direct_url.json``: development defaults that live beside a
    checkout (the full Open Trivia DB dump, the grading benchmarks) are looked for only there.
    """
    from importlib import metadata  # 4 ms of imports: only asked for a checkout's own path

    try:
        raw = metadata.distribution(PACKAGE).read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        return None
    if not raw:
        return None
    try:
        record = json.loads(raw)
    except ValueError:
        return None
    url = record.get("url", "") if isinstance(record, dict) else ""
    editable = isinstance(record, dict) and (record.get("dir_info") or {}).get("editable") is True
    if not editable or not url.startswith("file:"):
        return None
    root = Path(unquote(urlparse(url).path))
    package = files(PACKAGE)
    if not isinstance(package, Path) or not package.is_relative_to(root):
        return None  # another copy of quiztui is the one imported
    return root
