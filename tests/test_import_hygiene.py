"""A11: quiztui.core stays pure — importing it loads no textual, httpx or sqlite3."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import quiztui.core


def test_core_imports_no_ui_network_or_database_modules() -> None:
    modules = [f"quiztui.core.{m.name}" for m in pkgutil.iter_modules(quiztui.core.__path__)]
    assert "quiztui.core.bayes" in modules
    code = (
        "import sys\n"
        + "".join(f"import {m}\n" for m in modules)
        + "banned = {'textual', 'httpx', 'sqlite3', '_sqlite3'}\n"
        + "bad = sorted(m for m in sys.modules if m.split('.')[0] in banned)\n"
        + "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_cli_start_does_not_import_scipy() -> None:
    code = "import sys, quiztui.cli; print('scipy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
