"""F1 / ``?`` help: the keys of the focused widget, then the screen's, then the global ones."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widget import Widget
from textual.widgets import Footer, Static

from quiztui.core.figures import CONFIDENCE_HELP, P_TRUE_HELP


def dialog_help(prefix: str) -> Binding:
    """A dialog's `?` (F1 is the app's, a priority key that reaches into dialogs too), with the
    dialog's own binding id. A dialog holding an Input keeps `?` for typing while it has focus."""
    return Binding("question_mark", "app.help", "Help", id=f"{prefix}.help", show=False)


@dataclass(frozen=True, slots=True)
class HelpEntry:
    keys: str
    description: str
    binding_id: str | None
    enabled: bool


@dataclass(frozen=True, slots=True)
class HelpSection:
    title: str
    entries: tuple[HelpEntry, ...]


def _node_title(node: object, screen: Screen[object]) -> str:
    if isinstance(node, App):
        return "Global"
    if isinstance(node, Screen):
        return "This screen"
    if isinstance(node, Widget):
        name = type(node).__name__
        if node is screen.focused:
            return f"Focused: {name}" + (f" #{node.id}" if node.id else "")
        return name
    return type(node).__name__


def collect_sections(screen: Screen[object]) -> list[HelpSection]:
    """Group ``screen.active_bindings`` by the node that defines them, focused widget first."""
    app = screen.app
    grouped: dict[int, tuple[str, list[HelpEntry]]] = {}
    order: list[int] = []
    for key, active in screen.active_bindings.items():
        binding = active.binding
        if binding.system or not binding.description:
            continue
        node_id = id(active.node)
        if node_id not in grouped:
            grouped[node_id] = (_node_title(active.node, screen), [])
            order.append(node_id)
        display = app.get_key_display(binding) or key
        # A screen may name a key more fully than its footer does (the vet screen's desk keys).
        describe = getattr(screen, "help_description", None)
        description = describe(binding) if callable(describe) else binding.description
        grouped[node_id][1].append(HelpEntry(display, description, binding.id, active.enabled))
    # Merge entries that share a description (e.g. "q" and "ctrl+q" → Quit). Our own bindings
    # (they carry ids) come first; keys a widget inherits from Textual go to a last section.
    sections: list[HelpSection] = []
    inherited: list[HelpSection] = []
    for node_id in order:
        title, entries = grouped[node_id]
        merged: dict[str, HelpEntry] = {}
        for entry in entries:
            if entry.description in merged:
                old = merged[entry.description]
                ids = ", ".join(dict.fromkeys(i for i in (old.binding_id, entry.binding_id) if i))
                merged[entry.description] = HelpEntry(
                    f"{old.keys}, {entry.keys}", old.description, ids or None, old.enabled
                )
            else:
                merged[entry.description] = entry
        own = tuple(e for e in merged.values() if e.binding_id)
        builtin = tuple(e for e in merged.values() if not e.binding_id)
        if own:
            sections.append(HelpSection(title, own))
        if builtin:
            if own or title.startswith("Focused"):
                inherited.append(
                    HelpSection(f"{title.removeprefix('Focused: ')} (built-in)", builtin)
                )
            else:
                sections.append(HelpSection(title, builtin))
    return sections + inherited


def sections_text(sections: list[HelpSection]) -> Text:
    text = Text(end="")
    for i, section in enumerate(sections):
        if i:
            text.append("\n")
        text.append(section.title, style="bold underline")
        text.append("\n")
        width = max((len(e.keys) for e in section.entries), default=0)
        for entry in section.entries:
            style = "" if entry.enabled else "dim"
            text.append(f"  {entry.keys:<{width}}  ", style="bold " + style)
            text.append(entry.description, style=style)
            if entry.binding_id:
                text.append(f"  ({entry.binding_id})", style="dim")
            text.append("\n")
    return text


def figures_text() -> Text:
    """What the two probabilities on screen are (core/figures: the reports say the same)."""
    text = Text(end="")
    text.append("\nFigures", style="bold underline")
    for line in (CONFIDENCE_HELP, P_TRUE_HELP):
        text.append(f"\n  {line}")
    text.append("\n")
    return text


class HelpScreen(ModalScreen[None]):
    """Lists the bindings that were active where F1 was pressed."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,f1,question_mark", "close", "Close help", id="help.close"),
    ]

    def __init__(self, sections: list[HelpSection]) -> None:
        super().__init__()
        self.sections = sections

    def compose(self) -> ComposeResult:
        with Vertical(id="help-dialog"):
            yield Static(Text("Keys", style="bold"), id="help-title")
            with VerticalScroll(id="help-scroll"):
                yield Static(sections_text(self.sections) + figures_text(), id="help-body")
            yield Static(
                Text("esc close · ↑/↓ scroll · ctrl+p command palette", style="dim"),
                id="help-hint",
            )
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#help-scroll", VerticalScroll).focus()

    def action_close(self) -> None:
        self.dismiss(None)
