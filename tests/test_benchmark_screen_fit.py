"""The Benchmark screen's k-fold table at laptop widths (issue 20's 80×24, issue 21's table).

Every cell of the k-fold table carries its interval, so all seven columns need ~140 cells. Before,
Rich squeezed the one foldable column — the model's name — to nothing at 80 and 120 columns, and
the rows lost their labels. Now the lower-priority columns give way and a caption names them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console
from test_grade_benchmark import tiny_kfold_screen, write_tiny

from quiztui.formats.marked import Scale, load_marked
from quiztui.pipeline.grade import GradeSettings
from quiztui.pipeline.grade_fit import KFoldRun, KFoldScored
from quiztui.report.grade_fit import kfold_rows
from quiztui.tui.screens.benchmark import KFOLD_DROP_ORDER, kfold_table

COLUMNS = {"question": "q", "reference": "ref", "candidate": "ans", "human": "mark"}


def _marked(tmp_path: Path) -> Any:
    return load_marked(write_tiny(tmp_path / "marks.csv"), Scale(0, 10), COLUMNS | {"fold": "term"})


async def _scored(tmp_path: Path) -> KFoldScored:
    run = KFoldRun(_marked(tmp_path), ["lexical"], GradeSettings(grader="lexical"), folds=3)
    out = None
    async for event in run.events():
        if isinstance(event, KFoldScored):
            out = event
    assert out is not None
    return out


def _render(table: Any, width: int) -> str:
    console = Console(width=width, record=True, color_system=None)
    console.print(table)
    return console.export_text()


async def test_at_every_width_each_row_keeps_its_model_name(tmp_path: Path) -> None:
    scored = await _scored(tmp_path)
    rows = kfold_rows(scored.result, scored.scale)
    for width in (78, 118, 200):
        text = _render(kfold_table(scored, width), width)
        flat = " ".join(text.split())
        for row in rows:
            assert row["model"].split(" (")[0] in flat  # a name may fold, never vanish
            assert row["AAD (0-10)"] in text and row["bracket acc"] in text
        assert max(len(line) for line in text.splitlines()) <= width
    narrow = _render(kfold_table(scored, 78), 78)
    hidden = [h for h in rows[0] if h not in narrow.splitlines()[0]]
    assert hidden and "not shown at this width:" in narrow
    assert all(any(h.startswith(name) for name in KFOLD_DROP_ORDER) for h in hidden)
    assert "not shown" not in _render(kfold_table(scored, 200), 200)  # wide: every column


async def test_the_screen_at_80x24_shows_the_model_names(tmp_path: Path) -> None:
    from quiztui.tui.grade_app import GradeApp

    screen = tiny_kfold_screen(tmp_path)
    app = GradeApp(screen)
    async with app.run_test(size=(80, 24)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        screen.flush()
        await pilot.pause()
        widget = screen.query_one("#bench-comparison")
        text = "\n".join(widget.render_line(y).text for y in range(widget.size.height))
        assert "constant mean (baseline)" in text and "lexical · monotone" in text
        assert "not shown at this width:" in text
        await pilot.resize_terminal(200, 40)
        await pilot.pause()
        widget = screen.query_one("#bench-comparison")
        text = "\n".join(widget.render_line(y).text for y in range(widget.size.height))
        assert "Spearman ρ" in text and "not shown" not in text
