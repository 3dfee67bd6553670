"""TUI smoke for an installed quiztui: ``quiztui QUIZ`` through the real CLI, driven headless.

``App.run`` is swapped for ``App.run_test`` so no terminal is needed; everything else (argument
parsing, config, the simulated judge, the packaged prompt, theme and stylesheet) is the installed
package's own code and data. Run it with the venv's python from outside the checkout:

    python tui_smoke.py QUIZ
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from textual.app import App
from textual.widgets import DataTable

SIZE = (120, 40)
seen: dict[str, Any] = {}


def _cells(app: App[Any]) -> list[str]:
    texts: list[str] = []
    for table in app.screen.query(DataTable):
        for row in range(table.row_count):
            texts.extend(str(cell) for cell in table.get_row_at(row))
    return texts


async def _drive(app: App[Any]) -> None:
    async with app.run_test(size=SIZE) as pilot:
        for _ in range(400):  # the simulated run has no latency; this bounds a broken one
            await pilot.pause(0.05)
            if any("poor" in text for text in _cells(app)):
                break
        seen["theme"] = app.theme
        seen["themes"] = sorted(t for t in app.available_themes if t.startswith("quiztui"))
        seen["css"] = [Path(str(p)) for p in app.css_path]
        seen["rules"] = len(app.stylesheet.rules)
        seen["poor_cells"] = sum("poor" in text for text in _cells(app))
        seen["screen"] = type(app.screen).__name__


def _run_headless(self: App[Any], *args: Any, **kwargs: Any) -> None:
    asyncio.run(_drive(self))


def main() -> int:
    import quiztui
    from quiztui.cli import main as quiztui_main

    installed = Path(quiztui.__file__).resolve()
    assert installed.is_relative_to(Path(sys.prefix).resolve()), f"quiztui from {installed}"
    App.run = _run_headless  # type: ignore[method-assign,assignment]
    code = quiztui_main([sys.argv[1], "--judge", "simulated", "--sim-latency", "0"])
    print(
        f"tui: exit {code}, screen {seen.get('screen')}, theme {seen.get('theme')},"
        f" packaged themes {seen.get('themes')}, {seen.get('rules')} CSS rules from"
        f" {[p.name for p in seen.get('css', [])]}, {seen.get('poor_cells')} 'poor' cells"
    )
    assert code == 0, code
    assert seen.get("theme") == "quiztui-dark", seen
    assert seen.get("themes") == ["quiztui-dark", "quiztui-light"], seen
    css = seen.get("css") or []
    assert css and all(p.is_file() and p.resolve().is_relative_to(sys.prefix) for p in css), css
    assert seen.get("rules", 0) > 0 and seen.get("poor_cells", 0) > 0, seen
    return 0


if __name__ == "__main__":
    sys.exit(main())
