"""Editing one Cloze blank in the TUI, in a bank with a skipped item: the blank is re-judged
over real HTTP to the fake server, and ctrl+s rewrites only that question's bytes — the skipped
item's text and every other byte of the file stay as the author wrote them."""

from __future__ import annotations

from pathlib import Path

from test_edit_rejudge import edit_option
from tui_helpers import settled

from quiztui.assemble.vet import vet_runs
from quiztui.cli.vet import build_vet_app
from quiztui.config import load_config
from quiztui.formats import load_quiz
from quiztui.simulate.vet import truth_table
from quiztui.store import Store
from quiztui.testing.fake_openai import FakeOpenAI

BANK = (
    "// Unit 4: there is / there are\n"
    "::Exist cloze::{1:MC:~It ~=There} are three books and {1:SA:=there} is a pen.\n"
    "\n"
    "::Broken::{~It ~=There is a cat.\n"
    "\n"
    "::Exist plain::{~It ~=There} is no milk left.\n"
)


async def test_editing_a_cloze_blank_saves_only_its_question(tmp_path: Path) -> None:
    path = tmp_path / "unit4.gift"
    path.write_text(BANK, encoding="utf-8")
    quiz = load_quiz(path, strict=False)
    assert [q.id for q in quiz.questions] == ["q1.1", "q2"]
    assert [u.id for u in quiz.unjudged] == ["q1.2"] and len(quiz.skipped) == 1
    config = load_config()
    judge = config.judge.model_copy(update={"provider": "openai-compat", "model": "fake-judge"})
    with FakeOpenAI(truth_table(quiz), seed=3) as server:
        judge = judge.model_copy(update={"base_url": server.base_url, "logprobs": "off"})
        config = config.model_copy(update={"judge": judge})
        store = Store(tmp_path / "runs.db")
        try:
            runs = vet_runs(config, quiz, store, None)
            app = build_vet_app(config, store, quiz, runs, autostart=True)
            async with app.run_test(size=(120, 40)) as pilot:
                await settled(pilot)
                await edit_option(pilot, 0, 0, "Here")
                await pilot.press("ctrl+s")
                await pilot.pause()
                assert not app.vet_screen.edits
                bank = app.vet_screen.bank  # re-read after the save, skipped item still skipped
                assert bank is not None and len(bank.skipped) == 1
        finally:
            store.close()
    saved = path.read_text(encoding="utf-8")
    assert saved.startswith("// Unit 4: there is / there are\n::Exist cloze::")
    assert "{1:MC:Here~=There}" in saved and "{1:SA:=there} is a pen." in saved
    tail = BANK[BANK.index("\n\n::Broken::") :]
    assert saved.endswith(tail)  # the skipped item and the rest, byte for byte
