"""How many files and items of the public GIFT / Aiken / Moodle XML fixtures load, strict and not.

    python bench/format_load_counts.py [DATA_DIR]

DATA_DIR defaults to ``../shared/data/quiz_formats`` beside the checkout; the files are read from
there (never copied). For each corpus it prints: files, files that load strict, items loaded
strict, files that load non-strict (at least one item), items loaded non-strict and items skipped.
A quiztui without non-strict loading counts the strict load in both columns.
"""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

from quiztui.errors import QuiztuiError
from quiztui.formats.bank_io import load_bank

DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "data" / "quiz_formats"
CORPORA = {
    "gift_pegjs_tests": ("*.gift", "*.txt"),
    "moodle_core_fixtures": ("*.gift.txt", "*.aiken.txt", "aiken_errors.txt"),
    "moodle_xml_synthetic": ("*.xml",),
}
_HAS_STRICT = "strict" in inspect.signature(load_bank).parameters


def _load(path: Path, strict: bool) -> tuple[int, int]:
    """(items loaded, items skipped); (0, 0) when the file is refused."""
    fmt = "aiken" if path.name == "aiken_errors.txt" else None
    try:
        bank = load_bank(path, fmt, strict=strict) if _HAS_STRICT else load_bank(path, fmt)
    except QuiztuiError:
        return 0, 0
    return len(bank.items), len(getattr(bank, "skipped", ()))


def main(argv: list[str]) -> int:
    root = Path(argv[0]) if argv else DEFAULT
    if not root.is_dir():
        print(f"{root}: not found", file=sys.stderr)
        return 2
    print("corpus                 files  strict:files items  non-strict:files items skipped")
    for name, patterns in CORPORA.items():
        folder = root / name
        paths = sorted({p for pat in patterns for p in folder.glob(pat) if p.name != "SOURCE.txt"})
        strict = [_load(p, True) for p in paths]
        loose = [_load(p, False) for p in paths]
        print(
            f"{name:<22} {len(paths):>5}"
            f"  {sum(1 for n, _ in strict if n):>12} {sum(n for n, _ in strict):>5}"
            f"  {sum(1 for n, _ in loose if n):>16} {sum(n for n, _ in loose):>5}"
            f" {sum(k for _, k in loose):>7}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
