"""Issue 20 item 6: what the app writes beside a quiz file in the checkout (the ``.bak`` of a save
or of "apply fixes", the temporary file of an atomic write) and the tools' caches are ignored by
git, so a session of editing the sample quizzes leaves ``git status`` clean."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from conftest import REPO

from quiztui.formats.bank_io import BACKUP_SUFFIX


@pytest.mark.skipif(
    shutil.which("git") is None or not (REPO / ".git").exists(), reason="not a git checkout"
)
@pytest.mark.parametrize(
    "path",
    [
        f"sample_quizzes/demo.json{BACKUP_SUFFIX}",
        "sample_quizzes/.demo.json.quiztui-tmp",
        ".hypothesis/examples/x",
        ".mypy_cache/3.11/x.json",
        ".ruff_cache/x",
        ".import_linter_cache/x",
        "dist/quiztui-0.1.0-py3-none-any.whl",
    ],
)
def test_app_and_tool_leftovers_are_ignored(path: str) -> None:
    done = subprocess.run(
        ["git", "check-ignore", "--no-index", "-q", path], cwd=REPO, capture_output=True
    )
    assert done.returncode == 0, f"{path} is not ignored by .gitignore"
