"""Build hook: put the top-level prompts, themes and default gold set into ``quiztui/_data/``.

The table ``[tool.hatch.build.targets.wheel.hooks.custom.data]`` in pyproject.toml maps each
source (a file or folder at the top of the checkout, where contributors edit it) to its place in
the package. A wheel gets copies through hatchling's ``force_include``. An editable install
(``pip install -e .``) imports ``quiztui`` from the checkout, where files force-included into the
editable wheel would land in site-packages and stay invisible to ``importlib.resources``; so for
an editable build the hook links each place to its source instead (gitignored; a copy where the
file system has no symlinks), and an edit to ``prompts/`` is seen at once.
"""

from __future__ import annotations

import os
import shutil
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class PackageDataHook(BuildHookInterface):  # type: ignore[type-arg]
    PLUGIN_NAME = "custom"

    def _mapping(self) -> dict[str, str]:
        data = self.config.get("data", {})
        if not isinstance(data, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in data.items()
        ):
            raise TypeError("hooks.custom.data must map source paths to package paths")
        return data

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel":
            return
        mapping = self._mapping()
        for source in mapping:
            if not os.path.exists(os.path.join(self.root, source)):
                raise FileNotFoundError(f"package data source not found: {source}")
        if version == "editable":
            for source, target in mapping.items():
                self._link(source, target)
        else:
            build_data["force_include"].update(mapping)

    def _link(self, source: str, target: str) -> None:
        src = os.path.join(self.root, source)
        dst = os.path.join(self.root, target)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        if os.path.islink(dst) or os.path.isfile(dst):
            os.unlink(dst)
        elif os.path.isdir(dst):
            shutil.rmtree(dst)  # an earlier copy: the place is built, never edited
        is_dir = os.path.isdir(src)
        try:
            os.symlink(os.path.relpath(src, os.path.dirname(dst)), dst, target_is_directory=is_dir)
        except OSError as exc:
            if is_dir:
                shutil.copytree(src, dst)
            else:
                shutil.copy2(src, dst)
            self.app.display_warning(
                f"{target}: copied, not linked ({exc}); re-run `pip install -e .` after editing {source}"
            )
