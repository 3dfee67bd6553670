"""``grade --benchmark FILE --fit kfold``: graders fitted on a user's own marks, and the fitted
calibration applied to their unmarked answers.

``KFoldRun.events()`` grades every marked answer once per grader (a ``GradeRun`` each, so its
events — ``GradeStarted``, ``ItemGraded``, ``GradeFinished`` — stream as in any grade run, and an
LLM grader's replies come from the grade cache when it has them), then cross-validates
(:mod:`quiztui.core.grade_fit`) and yields ``KFoldScored``. The folds reuse the grades: nothing is
asked or encoded twice. The models refitted on all the marks are saved as a calibration file
(JSON) that ``grade FILE --calibration PATH`` applies to unmarked answers.
"""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from contextlib import aclosing
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from quiztui.core.grade_fit import (
    LEXICAL,
    NEIGHBOURS,
    Fitted,
    Group,
    KFoldResult,
    cross_validate,
    fold_ids,
    neighbour_marks,
)
from quiztui.core.grading import GradeItem
from quiztui.core.lexical import normalize_answer
from quiztui.errors import QuiztuiError
from quiztui.formats.marked import MarkedFile, Scale
from quiztui.pipeline.grade import (
    GradeEvent,
    GradeFinished,
    GradeRun,
    GradeSettings,
    ItemGraded,
    lexical_outcome,
)
from quiztui.pipeline.kfold_record import FitRecord
from quiztui.providers.base import Provider
from quiztui.store import Store

CALIBRATION_FORMAT = 1


@dataclass(frozen=True, slots=True)
class KFoldScored:
    result: KFoldResult
    scale: Scale
    calibration_path: Path | None  # where the fitted calibration was saved (None: not saved)
    run_id: int | None = None  # the fit kept in the store (kfold:N in quiztui runs)
    # graders that stopped part-way (a judge refusing the key), and why: their unscored answers
    # are left out of their rows, and no calibration is saved from such a fit
    stopped: tuple[tuple[str, str], ...] = ()


def group_key(item: GradeItem) -> str:
    """Answers are neighbours when they answer the same question (the reference, without one)."""
    return " ".join(item.question.split()) or " ".join(item.reference.split())


def _bag(text: str) -> Counter[str]:
    return Counter(normalize_answer(text).split())


def _f1(a: Counter[str], b: Counter[str]) -> float:
    if not a or not b:
        return float(not a and not b)
    same = sum((a & b).values())
    if same == 0:
        return 0.0
    p, r = same / sum(a.values()), same / sum(b.values())
    return 2 * p * r / (p + r)


def similarity_groups(
    keys: Sequence[str], candidates: Sequence[str], similarity: str, embedder: Any = None
) -> list[Group]:
    """Each question's answers and their pairwise similarity (token F1, or embedding cosine)."""
    by_key: dict[str, list[int]] = {}
    for i, key in enumerate(keys):
        by_key.setdefault(key, []).append(i)
    groups: list[Group] = []
    for members in by_key.values():
        if len(members) < 2:
            continue
        texts = [candidates[i] for i in members]
        if similarity == "embedding":
            vectors = embedder.encode(texts)
            sims = np.asarray(vectors @ vectors.T, dtype=float)
        else:
            bags = [_bag(t) for t in texts]
            sims = np.array([[_f1(a, b) for b in bags] for a in bags], dtype=float)
        groups.append(Group(np.asarray(members, dtype=np.int64), sims))
    return groups


class KFoldRun:
    """Grade the marked answers with each grader, cross-validate, save the calibration."""

    def __init__(
        self,
        marked: MarkedFile,
        graders: Sequence[str],
        settings: GradeSettings,
        *,
        provider: Provider | None = None,
        store: Store | None = None,
        prompt_dir: Any = None,
        folds: int = 5,
        seed: int = 0,
        save_dir: Path | None = None,
        save_name: str | None = None,
    ) -> None:
        self.marked = marked
        self.graders = list(dict.fromkeys(graders))
        self.settings = settings
        self.provider = provider
        self.store = store
        self.prompt_dir = prompt_dir
        self.k = folds
        self.seed = seed
        self.save_dir = save_dir
        self.save_name = save_name  # None: the marked file's stem (default_calibration_name)
        n = len(marked.items)
        if marked.folds:
            self.folds = fold_ids(n, folds, seed, [marked.folds[it.id] for it in marked.items])
            if int(self.folds.max()) < 1:
                raise QuiztuiError(f"{marked.path}: the fold column has one value; need two")
        else:
            if not 2 <= folds <= n:
                raise QuiztuiError(f"--folds {folds}: need 2 to {n} (the marked answers)")
            self.folds = fold_ids(n, folds, seed)
        self.similarity = "embedding" if "embedding" in self.graders else "lexical"
        self.embedder: Any = None

    async def events(self) -> AsyncIterator[GradeEvent | KFoldScored]:
        """The run's events; with a store the fit is kept (pipeline/kfold_record.FitRecord):
        ``KFoldScored`` carries its id, an early end is stored as cancelled or failed."""
        if self.store is None:
            async for event in self._events():
                yield event
            return
        record = FitRecord(
            self.store,
            source=self.marked.path,
            digest=self.marked.digest,
            marked=len(self.marked.items),
            graders=self.graders,
            folds=int(self.folds.max()) + 1,
            seed=self.seed,
            scale=(self.marked.scale.lo, self.marked.scale.hi),
            provider_model=self.provider.model if self.provider is not None else None,
        )
        with record.ending():
            async with aclosing(self._events()) as events:
                async for event in events:
                    if isinstance(event, KFoldScored):
                        fit_id = record.finish(event.result, event.calibration_path)
                        event = replace(event, run_id=fit_id)
                    else:
                        record.see(event)
                    yield event

    async def _events(self) -> AsyncGenerator[GradeEvent | KFoldScored, None]:
        items = list(self.marked.items)
        n = len(items)
        stopped: list[tuple[str, str]] = []
        cols: dict[str, np.ndarray] = {
            LEXICAL: np.array([lexical_outcome(it).raw for it in items], dtype=float)
        }
        for grader in self.graders:
            run = GradeRun(
                items,
                GradeSettings(**{**_fields(self.settings), "grader": grader}),
                provider=self.provider,
                store=self.store,
                source=f"benchmark:{self.marked.path}",
                splits=[f"fold {f + 1}" for f in self.folds.tolist()],
                prompt_dir=self.prompt_dir,
            )
            if run.embedder is not None:
                self.embedder = run.embedder
            raw = np.full(n, np.nan)
            async for event in run.events():
                if isinstance(event, ItemGraded) and event.outcome.raw is not None:
                    raw[event.seq] = event.outcome.raw
                elif isinstance(event, GradeFinished) and event.summary.stopped:
                    stopped.append((grader, event.summary.stopped))
                yield event
            cols[grader] = raw
        if self.similarity == "embedding" and self.embedder is None:
            from quiztui.embed import load_embedder

            self.embedder = load_embedder()
        groups = similarity_groups(
            [group_key(it) for it in items],
            [it.candidate for it in items],
            self.similarity,
            self.embedder,
        )
        human = np.array([float(it.human or 0.0) for it in items])
        try:
            result = cross_validate(
                self.marked.name,
                cols,
                human,
                self.graders,
                self.folds,
                groups,
                seed=self.seed,
            )
        except ValueError as exc:
            raise QuiztuiError(f"{self.marked.path}: {exc}") from None
        path = None
        if self.save_dir is not None and not stopped:
            path = save_calibration(
                self.save_dir, self.marked, result, self.similarity, self.save_name
            )
        yield KFoldScored(result, self.marked.scale, path, stopped=tuple(stopped))


def _fields(settings: GradeSettings) -> dict[str, Any]:
    return {k: getattr(settings, k) for k in settings.__dataclass_fields__}


# --- the saved calibration ----------------------------------------------------------------------


# A calibration's name: letters, digits and - _ . (starting with a letter, digit or _, so it is
# never a hidden file nor read as a flag); "none" is the word that turns calibration off.
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,63}")
NO_CALIBRATION = "none"
NAME_RULE = "letters, digits and - _ . (starting with a letter, digit or _), at most 64"


def valid_calibration_name(name: str) -> bool:
    return _NAME.fullmatch(name) is not None and name.lower() != NO_CALIBRATION


def default_calibration_name(marked: MarkedFile) -> str:
    """The marked file's stem (a built-in benchmark's name), made a valid name."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", Path(marked.path).stem).lstrip(".-")[:64]
    return stem if valid_calibration_name(stem) else "marks"


def calibration_path(save_dir: Path, name: str) -> Path:
    return save_dir / f"{name}.json"


def save_calibration(
    save_dir: Path,
    marked: MarkedFile,
    result: KFoldResult,
    similarity: str,
    name: str | None = None,
) -> Path:
    """The models refitted on all the marks, the chosen one (best held-out bracket accuracy),
    and the marked answers the neighbours model looks up, saved as ``save_dir/NAME.json``
    (default name: the marked file's stem); a calibration of that name is replaced."""
    name = default_calibration_name(marked) if name is None else name
    if not valid_calibration_name(name):
        raise QuiztuiError(f"calibration name {name!r}: use {NAME_RULE}")
    best = result.best()
    body = {
        "format": CALIBRATION_FORMAT,
        "name": name,
        "benchmark": marked.path,
        "sha256": marked.digest,
        "created_at": time.time(),
        "scale": [marked.scale.lo, marked.scale.hi],
        "graders": list(result.graders),
        "similarity": similarity,
        "model": best.name,
        "held_out": {
            "k": result.k,
            "aad": best.agreement.aad,
            "bracket_accuracy": best.agreement.bracket_accuracy,
            "pearson": best.agreement.pearson,
        },
        "n_marks": len(marked.items),
        "models": [m.to_dict() for m in result.final],
        "marked": [
            {"key": group_key(it), "candidate": it.candidate, "score": it.human}
            for it in marked.items
        ],
    }
    save_dir.mkdir(parents=True, exist_ok=True)
    path = calibration_path(save_dir, name)
    tmp = path.with_name(f"{name}.json.tmp")
    tmp.write_text(json.dumps(body), encoding="utf-8")
    tmp.replace(path)
    return path


@dataclass(frozen=True, slots=True)
class Calibration:
    """A saved calibration, ready to map a grade run's raw scores onto the user's scale."""

    path: str
    graders: tuple[str, ...]
    scale: Scale
    similarity: str
    model: Fitted
    marked_keys: tuple[str, ...]
    marked_candidates: tuple[str, ...]
    marked_scores: tuple[float, ...]
    name: str = ""  # the saved name (an old digest-named file: its stem)

    @property
    def grader(self) -> str:
        return self.graders[0]

    @property
    def label(self) -> str:
        """What every face says was applied: name, grader, model and scale."""
        return (
            f"calibration {self.name} (grader {self.grader}, {self.model.name}, scale {self.scale})"
        )

    def apply(
        self, items: Sequence[GradeItem], raw: Sequence[float | None], embedder: Any = None
    ) -> list[float | None]:
        """Each item's calibrated score on the user's scale (None: the grader left it unscored
        and the model needs that score)."""
        n = len(items)
        cols: dict[str, np.ndarray] = {
            LEXICAL: np.array([lexical_outcome(it).raw for it in items], dtype=float),
            self.grader: np.array([np.nan if r is None else r for r in raw], dtype=float),
        }
        needs = {self.model.feature, *self.model.features}
        if NEIGHBOURS in needs or self.model.kind == "neighbours":
            cols[NEIGHBOURS] = self._neighbours(items, embedder)
        for g in self.graders[1:]:
            if g in needs:
                raise QuiztuiError(
                    f"{self.path}: its model combines graders {', '.join(self.graders)};"
                    " grade applies calibrations of one grader only"
                )
        predicted = self.model.predict(cols, n)
        return [None if np.isnan(p) else self.scale.from5(float(p)) for p in predicted]

    def _neighbours(self, items: Sequence[GradeItem], embedder: Any) -> np.ndarray:
        # Only the marked answers of the items' own questions can be their neighbours: the
        # rest is left out, so a screen mapping a few answers at a time compares only those.
        asked = {group_key(it) for it in items}
        marked = [i for i, key in enumerate(self.marked_keys) if key in asked]
        m = len(marked)
        keys = [*(self.marked_keys[i] for i in marked), *(group_key(it) for it in items)]
        texts = [*(self.marked_candidates[i] for i in marked), *(it.candidate for it in items)]
        human = np.array([*(self.marked_scores[i] for i in marked), *([0.0] * len(items))])
        known = np.zeros(len(keys), dtype=bool)
        known[:m] = True
        groups = similarity_groups(keys, texts, self.similarity, embedder)
        return neighbour_marks(groups, human, known, len(keys))[m:]


def load_calibration(path: Path) -> Calibration:
    shown = str(path)
    try:
        body = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise QuiztuiError(f"{shown}: calibration file not found") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise QuiztuiError(f"{shown}: not a calibration file ({exc})") from None
    try:
        if body.get("format") != CALIBRATION_FORMAT:
            raise ValueError(f"format {body.get('format')!r}, expected {CALIBRATION_FORMAT}")
        models = {m["name"]: m for m in body["models"]}
        lo, hi = body["scale"]
        return Calibration(
            path=shown,
            graders=tuple(body["graders"]),
            scale=Scale(float(lo), float(hi)),
            similarity=str(body["similarity"]),
            model=Fitted.from_dict(models[body["model"]]),
            marked_keys=tuple(str(m["key"]) for m in body["marked"]),
            marked_candidates=tuple(str(m["candidate"]) for m in body["marked"]),
            marked_scores=tuple(float(m["score"]) for m in body["marked"]),
            name=str(body.get("name") or path.stem),
        )
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise QuiztuiError(f"{shown}: not a calibration file ({exc!r})") from None


@dataclass(frozen=True, slots=True)
class SavedCalibration:
    """One saved calibration as the listing shows it (read from its JSON, not fitted again)."""

    name: str
    path: Path
    graders: tuple[str, ...] = ()
    model: str = ""
    scale: Scale = Scale()
    n_marks: int = 0
    fitted_at: float | None = None
    held_out: dict[str, Any] | None = None
    problem: str | None = None  # why the file could not be read

    @property
    def fitted_date(self) -> str:
        if self.fitted_at is None:
            return "—"
        return time.strftime("%Y-%m-%d %H:%M", time.localtime(self.fitted_at))

    @property
    def held_out_text(self) -> str:
        """The held-out figures the fit reported: bracket accuracy and AAD on the file's scale."""
        h = self.held_out or {}
        parts = []
        if isinstance(h.get("bracket_accuracy"), int | float):
            parts.append(f"brackets {100 * h['bracket_accuracy']:.1f} %")
        if isinstance(h.get("aad"), int | float):
            parts.append(f"AAD {h['aad'] * self.scale.span / 5:.2f}")
        if isinstance(h.get("k"), int):
            parts.append(f"{h['k']} folds")
        return " · ".join(parts) or "—"


def saved_calibrations(save_dir: Path) -> list[SavedCalibration]:
    """Every ``*.json`` in the calibrations folder, by name; an unreadable one says why."""
    if not save_dir.is_dir():
        return []
    out = []
    for path in sorted(save_dir.glob("*.json")):
        try:
            body = json.loads(path.read_text(encoding="utf-8"))
            lo, hi = body["scale"]
            fitted = body.get("created_at")
            out.append(
                SavedCalibration(
                    name=path.stem,
                    path=path,
                    graders=tuple(str(g) for g in body["graders"]),
                    model=str(body["model"]),
                    scale=Scale(float(lo), float(hi)),
                    n_marks=int(body.get("n_marks", len(body["marked"]))),
                    fitted_at=float(fitted) if isinstance(fitted, int | float) else None,
                    held_out=body.get("held_out")
                    if isinstance(body.get("held_out"), dict)
                    else None,
                )
            )
        except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as exc:
            out.append(SavedCalibration(name=path.stem, path=path, problem=str(exc)))
    return out


def find_calibration(value: str, save_dir: Path, what: str = "--calibration") -> Calibration:
    """``value`` as an existing file first, then as a saved calibration's name; anything else is
    an error naming the value and the saved names."""
    path = Path(value).expanduser()
    if path.is_file():
        return load_calibration(path)
    if valid_calibration_name(value):
        named = calibration_path(save_dir, value)
        if named.is_file():
            return load_calibration(named)
    names = [c.name for c in saved_calibrations(save_dir)]
    saved = (
        f"saved: {', '.join(names)}"
        if names
        else "none saved yet; fit one with quiztui grade --benchmark FILE --fit kfold"
    )
    raise QuiztuiError(f"{what} {value!r}: no such file or saved calibration ({saved})")
