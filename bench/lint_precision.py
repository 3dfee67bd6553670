"""Lint precision: planted flaws per rule, and findings on real exam questions annotators checked.

Clean items come from ../shared/data (read there, never copied): Open Trivia DB multiple-choice
questions (opentdb/opentdb.json, CC BY-SA 4.0) and the MMLU validation split
(mmlu_val/mmlu_val_all.csv, MIT). A random control set (items with a repeated stem, an option repeated verbatim or an
"all/none of the above" option left out: those carry a flaw as a plain fact) is linted as it is; disjoint random
samples each get one planted flaw of one kind (the key again with a full stop, a distractor
misspelled, the key in the stem, "All of the above", an unemphasised "not", a very long key,
a stem repeated with a grammar word swapped and a letter dropped, a two-word stem, the stem
wrapped in <p>…</p>, the key repeated in capitals). Everything is linted together, as one bank.

Per rule: precision = findings on items planted with that flaw / all its findings; recall =
planted items it found / planted items; false alarms = control items it fires on / control
items. "clean" counts control items with any warning, and with any error.

Second part (``--part dev``): MMLU-Redux's development half
(mmlu_redux_helm_dev/labels, CC BY 4.0: 28 subjects, 100 questions each, each labelled by
annotators ok or with an error type). Each subject file is linted as the user's CSV would be
(``load_quiz``; the Mac Roman file is decoded as Mac Roman into a temporary UTF-8 copy), with the
default selection (correctness) and with ``all``. Per category: the share of ok items with a
warning or error finding. Per correctness code: the precision of its findings against the
labels (an item labelled with any error counts as a true finding), and its error-severity
findings on ok items, each checked: an L116/L102 is true when two options are the same text once
case and spacing are ignored (the annotators missed those).

    .venv/bin/python bench/lint_precision.py                 # both parts
    .venv/bin/python bench/lint_precision.py --part dev      # the MMLU-Redux part only
"""

from __future__ import annotations

import argparse
import csv
import html
import json
import os
import random
import re
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from quiztui.core.lint import CATEGORIES, CODES, LintReport, LintSettings, codes_of, lint_quiz
from quiztui.core.quiz import Question, Quiz


def _shared_data() -> Path:
    """``$QUIZTUI_SHARED_DATA``, else ``shared/data`` beside the checkout or one level up (a
    worktree under ``wt/``)."""
    named = os.environ.get("QUIZTUI_SHARED_DATA")
    if named:
        return Path(named)
    repo = Path(__file__).resolve().parents[1]
    for base in (repo.parent, repo.parent.parent):
        if (base / "shared" / "data").is_dir():
            return base / "shared" / "data"
    return repo.parent / "shared" / "data"


DATA = _shared_data()
Item = tuple[str, list[str], int]  # stem, options, key index
_REFERS = re.compile(r"(all|none|both|neither)\b.*\b(above|these|options|answers|[a-d])\b", re.I)


def opentdb_items() -> list[Item]:
    body = json.loads((DATA / "opentdb" / "opentdb.json").read_text(encoding="utf-8"))
    out = []
    for r in body["results"]:
        if r["type"] != "multiple":
            continue
        options = [html.unescape(r["correct_answer"])]
        options += [html.unescape(o) for o in r["incorrect_answers"]]
        out.append((html.unescape(r["question"]), options, 0))
    return out


def mmlu_items() -> list[Item]:
    with (DATA / "mmlu_val" / "mmlu_val_all.csv").open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    return [
        (r["question"], [r["A"], r["B"], r["C"], r["D"]], "ABCD".index(r["answer"])) for r in rows
    ]


def _misspell(word: str, rng: random.Random) -> str:
    cut = rng.randrange(2, len(word) - 1)
    return word[:cut] + word[cut + 1 :]


def _long_word(text: str) -> str | None:
    words = [w for w in text.split() if w.isalpha() and len(w) >= 8]
    return words[0] if words else None


# Each planter returns the flawed item (or None when the item cannot carry that flaw).
def plant_l102(item: Item, rng: random.Random) -> Item | None:
    stem, options, key = item
    other = next(i for i in range(len(options)) if i != key)
    options = list(options)
    options[other] = options[key].lower() + "."
    return stem, options, key


def plant_l103(item: Item, rng: random.Random) -> Item | None:
    stem, options, key = item
    for i, option in enumerate(options):
        word = _long_word(option)
        if i != key and word:
            options = [*options, option.replace(word, _misspell(word, rng), 1)]
            return stem, options, key
    return None


def plant_l104(item: Item, rng: random.Random) -> Item | None:
    stem, options, key = item
    if len(options[key]) < 4:
        return None
    return f"Recall {options[key]}. {stem}", options, key


def plant_l105(item: Item, rng: random.Random) -> Item | None:
    stem, options, key = item
    other = next(i for i in range(len(options)) if i != key)
    options = list(options)
    options[other] = "All of the above"
    return stem, options, key


def plant_l106(item: Item, rng: random.Random) -> Item | None:
    stem, options, key = item
    return f"{stem.rstrip().rstrip('?')}: which answer is not wrong?", options, key


def plant_l107(item: Item, rng: random.Random) -> Item | None:
    stem, options, key = item
    longest = max(len(o) for o in options)
    tail = " — as every standard reference work on the subject agrees, without exception"
    while len(options[key] + tail) < 2 * longest + 12:
        tail += ", without exception"
    options = list(options)
    options[key] = options[key] + tail
    return stem, options, key


def plant_l113(item: Item, rng: random.Random) -> Item | None:
    stem, options, key = item
    return " ".join(stem.split()[-2:]).rstrip("?.") + "?", options, key


def plant_l114(item: Item, rng: random.Random) -> Item | None:
    stem, options, key = item
    return f"<p>{stem}</p>", options, key


def plant_l116(item: Item, rng: random.Random) -> Item | None:
    stem, options, key = item
    if not any(ch.isalpha() for ch in options[key]):
        return None
    other = next(i for i in range(len(options)) if i != key)
    options = list(options)
    options[other] = (
        options[key].upper() if options[key] != options[key].upper() else options[key].lower()
    )
    return stem, options, key


PLANTERS: dict[str, Callable[[Item, random.Random], Item | None]] = {
    "L102": plant_l102,
    "L103": plant_l103,
    "L104": plant_l104,
    "L105": plant_l105,
    "L106": plant_l106,
    "L107": plant_l107,
    "L113": plant_l113,
    "L114": plant_l114,
    "L116": plant_l116,
}


def plant_l110(source: Item, rng: random.Random) -> Item | None:
    stem, options, key = source
    word = _long_word(stem)
    if word is None or len(stem.split()) < 5:
        return None
    return stem.replace(word, _misspell(word, rng), 1).replace("Which", "What", 1), options, key


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("planted", "dev", "both"), default="both")
    parser.add_argument("--control", type=int, default=1000, help="clean items")
    parser.add_argument("--per-flaw", type=int, default=100, help="items planted per flaw")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if args.part in ("planted", "both"):
        planted(args)
    if args.part in ("dev", "both"):
        if args.part == "both":
            print()
        print(dev_table(dev_figures()))


def planted(args: argparse.Namespace) -> None:
    if not (DATA / "opentdb").exists() or not (DATA / "mmlu_val").exists():
        raise SystemExit(f"shared data not found under {DATA}")
    rng = random.Random(args.seed)
    pool = opentdb_items() + mmlu_items()
    # Items that carry a planted kind of flaw as plain text facts, checked without lint, are not
    # clean: a stem seen before, an option repeated character for character, an option that is
    # "all/none of the above" (L105's definition). Unemphasised negatives stay (the data has many).
    seen: set[str] = set()
    unique = []
    for item in pool:
        stem, options, _ = item
        texts = [o.strip() for o in options]
        referring = any(_REFERS.match(o) for o in texts)
        if stem not in seen and len(set(texts)) == len(texts) and not referring:
            seen.add(stem)
            unique.append(item)
    rng.shuffle(unique)
    control = unique[: args.control]
    rest = iter(unique[args.control :])
    items: list[tuple[Item, str | None]] = [(item, None) for item in control]
    for code, planter in [*PLANTERS.items(), ("L110", plant_l110)]:
        planted = 0
        while planted < args.per_flaw:
            source = next(rest)
            flawed = planter(source, rng)
            if flawed is None:
                continue
            if code == "L110":
                items.append((source, None))  # the original, then its near-duplicate
            items.append((flawed, code))
            planted += 1
    questions = tuple(
        Question(id=f"q{n + 1}", text=stem, options=tuple(options), key=key)
        for n, ((stem, options, key), _) in enumerate(items)
    )
    report = lint_quiz(Quiz(title="precision", questions=questions))
    planted_as = {f"q{n + 1}": code for n, (_, code) in enumerate(items)}
    control_ids = {f"q{n + 1}" for n in range(len(control))}
    fired: dict[str, set[str]] = defaultdict(set)
    for f in report.findings:
        if f.question_id is not None:
            fired[f.code].add(f.question_id)
    planted_count = Counter(code for _, code in items if code)
    print(
        f"{len(control)} clean control items, {sum(planted_count.values())} planted"
        f" ({args.per_flaw} per flaw), Open Trivia DB + MMLU validation, seed {args.seed}\n"
    )
    print("| code | severity | planted | precision | recall | false alarms on clean |")
    print("|---|---|---|---|---|---|")
    for code in sorted(CODES):
        hits = fired.get(code, set())
        planted = {q for q, c in planted_as.items() if c == code}
        if not hits and not planted:
            continue
        tp = len(hits & planted)
        precision = f"{tp / len(hits):.2f}" if hits else "–"
        recall = f"{tp / len(planted):.2f}" if planted else "–"
        alarms = len(hits & control_ids)
        print(
            f"| {code} | {CODES[code].severity} | {len(planted)} | {precision} | {recall} |"
            f" {alarms}/{len(control_ids)} = {alarms / len(control_ids):.1%} |"
        )
    warned = {q for code, ids in fired.items() if CODES[code].severity == "warning" for q in ids}
    erred = {q for code, ids in fired.items() if CODES[code].severity == "error" for q in ids}
    print(
        f"\nclean items with any warning: {len(warned & control_ids)}/{len(control_ids)}"
        f" = {len(warned & control_ids) / len(control_ids):.1%};"
        f" with any error: {len(erred & control_ids)}"
    )


# --- MMLU-Redux development half ------------------------------------------------------------

DEV = DATA / "mmlu_redux_helm_dev" / "labels"
DEFAULT_SELECT = codes_of(["correctness"])
ALL = codes_of(["all"])


def dev_quizzes(directory: Path = DEV) -> list[Quiz]:
    """Each subject file loaded as ``quiztui lint`` loads a CSV (from a UTF-8 temporary copy)."""
    import tempfile

    from quiztui.formats import load_quiz

    quizzes = []
    with tempfile.TemporaryDirectory() as tmp:
        for path in sorted(directory.glob("*.csv")):
            raw = path.read_bytes()
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                text = raw.decode("mac_roman")  # mmlu_moral_scenarios.csv
            copy = Path(tmp) / path.name
            copy.write_text(text, encoding="utf-8")
            quiz = load_quiz(copy, strict=True)
            quizzes.append(quiz.model_copy(update={"source_path": str(path)}))
    return quizzes


def label(q: Question) -> str:
    """The annotators' error type, normalised: ok, wrong_groundtruth, bad_question_clarity, …"""
    raw = dict(q.metadata).get("error_type", "")
    return "_".join(raw.strip().lower().split())


def really_repeated(q: Question) -> bool:
    """Two options the same text once case and spacing are ignored (checked without lint)."""
    texts = [" ".join(o.split()).casefold() for o in q.options]
    return len(set(texts)) < len(texts)


def dev_figures(directory: Path = DEV) -> dict[str, Any]:
    """Findings on the labelled questions with the default selection and with all."""
    quizzes = dev_quizzes(directory)
    labels = {(qz.source_path, q.id): label(q) for qz in quizzes for q in qz.questions}
    ok = {key for key, value in labels.items() if value == "ok"}
    repeated = {
        (qz.source_path, q.id) for qz in quizzes for q in qz.questions if really_repeated(q)
    }
    flagged: dict[str, dict[str, set[tuple[str | None, str]]]] = {}
    per_code: dict[str, set[tuple[str | None, str]]] = defaultdict(set)
    errors_on_ok: list[dict[str, Any]] = []
    for name, select in (("default", DEFAULT_SELECT), ("all", ALL)):
        by_category: dict[str, set[tuple[str | None, str]]] = defaultdict(set)
        for quiz in quizzes:
            report: LintReport = lint_quiz(quiz, LintSettings(select=select))
            for f in report.findings:
                if f.question_id is None or f.severity not in ("warning", "error"):
                    continue
                key = (quiz.source_path, f.question_id)
                by_category[f.category].add(key)
                by_category["any"].add(key)
                if name == "all":
                    per_code[f.code].add(key)
                if name == "default" and f.severity == "error" and key in ok:
                    q = quiz.question(f.question_id)
                    errors_on_ok.append(
                        {
                            "code": f.code,
                            "item": f"{Path(quiz.source_path or '').stem} {f.question_id}",
                            "true": f.code in ("L102", "L116") and really_repeated(q),
                            "message": f.message,
                        }
                    )
        flagged[name] = dict(by_category)
    return {
        "subjects": len(quizzes),
        "questions": len(labels),
        "ok": ok,
        "repeated": repeated,
        "labels": labels,
        "flagged": flagged,
        "per_code": dict(per_code),
        "errors_on_ok": errors_on_ok,
    }


def _share(part: int, whole: int) -> str:
    return f"{part}/{whole} = {part / whole:.1%}" if whole else "–"


def dev_table(fig: dict[str, Any]) -> str:
    ok = fig["ok"]
    lines = [
        f"MMLU-Redux dev: {fig['subjects']} subjects, {fig['questions']:,} questions,"
        f" {len(ok):,} labelled ok; each subject linted as one quiz",
        "",
        "ok items with a warning or error finding:",
        "",
        "| selection | correctness | style | any |",
        "|---|---|---|---|",
    ]
    for name in ("default", "all"):
        cells = [_share(len(fig["flagged"][name].get(c, set()) & ok), len(ok)) for c in CATEGORIES]
        anyone = _share(len(fig["flagged"][name].get("any", set()) & ok), len(ok))
        shown = "default (correctness)" if name == "default" else "all"
        lines.append(f"| {shown} | {' | '.join(cells)} | {anyone} |")
    lines += [
        "",
        "Correctness findings (warning/error) against the annotators' labels"
        " (precision: flagged items labelled with an error):",
        "",
        "| code | severity | items flagged | labelled with an error | precision |"
        " with repeated options checked true |",
        "|---|---|---|---|---|---|",
    ]
    every: set[tuple[str | None, str]] = set()
    repeated = fig["repeated"]
    for code in sorted(fig["per_code"]):
        if CODES[code].category != "correctness":
            continue
        items = fig["per_code"][code]
        every |= items
        bad = len(items - ok)
        checked = bad + (len(items & ok & repeated) if code in ("L102", "L116") else 0)
        lines.append(
            f"| {code} | {CODES[code].severity} | {len(items)} | {bad} |"
            f" {bad / len(items):.2f} | {checked / len(items):.2f} |"
        )
    bad = len(every - ok)
    checked = bad + len(
        {
            k
            for k in every & ok & repeated
            if any(k in fig["per_code"].get(c, ()) for c in ("L102", "L116"))
        }
    )
    if every:
        lines.append(
            f"| any correctness | | {len(every)} | {bad} | {bad / len(every):.2f} |"
            f" {checked / len(every):.2f} |"
        )
    errors = fig["errors_on_ok"]
    true = sum(e["true"] for e in errors)
    lines += ["", f"error-severity findings on ok items: {len(errors)}, true (checked): {true}"]
    lines += [f"- {e['item']} {e['code']}: {e['message']}" for e in errors]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
