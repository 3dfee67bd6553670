"""Are quiztui's probabilities honest on real judges? (issue 26)

A real exam with human error labels — MMLU-Redux's annotations of MMLU questions — and the
recorded answers of 10 real LLMs to it (``../shared/data/mmlu_redux_helm_dev``, its SOURCE.txt;
``--data`` or ``$QUIZTUI_REAL_EXAM`` point elsewhere, e.g. at the held-out half). Each recorded
answer is what a per-question judge gives: the option it picked true, the others false. Every
figure is measured on the rows the annotators marked ok or wrong_groundtruth: P(key wrong)
against "the annotators say the key is wrong".

Printed side by side, each with ECE of P(key wrong) (10 equal-width bins), the predicted share of
wrong keys (the mean of P(key wrong)) against the annotators', AUROC and average precision of
wrong_groundtruth vs ok, and the precision and recall of the flag (P(key wrong) ≥ 0.2: on this
exam even ten judges agreeing against the key are right about 4 times in 10, so no honest
probability reaches 0.5 here; ``--flag`` sets it):

* the 10-judge panel (``core.judges.DifficultyJudges``: difficulty, attractive distractors,
  shared mistakes; the share of wrong keys at its published-audit default);
* each single judge with default rates (nothing measured);
* each single judge with a profile calibrated on half of the subjects (its picks on their ok
  questions, where the key is the truth) and scored on the other half, both ways round;
* a plain majority vote of the same answers (the share of judges that left the key: a score,
  read as a probability for its ECE) and each model's own disagreement with the key;
* today's independent model, for comparison: the structured panel fit (``core.panel_fit``) and a
  single judge with default TPR/TNR 0.9/0.9 and ``prior = auto`` (``core.prior``).

    .venv/bin/python bench/real_judges.py
    .venv/bin/python bench/real_judges.py --data PATH --skip-independent
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from quiztui.core.agreement import auroc, average_precision
from quiztui.core.bayes import JudgeAccuracy, expected_calibration_error, panel_posterior
from quiztui.core.judges import DifficultyJudges, Profile, majority_disagreement
from quiztui.core.panel_fit import structured_fit
from quiztui.core.prior import estimate_prior
from quiztui.testing.real_exam import RealExam, default_path, load


@dataclass(frozen=True)
class Row:
    name: str
    ece: float
    predicted: float
    actual: float
    auroc: float
    ap: float
    flagged: int
    precision: float
    recall: float
    seconds: float | None = None


FLAG = 0.2  # P(key wrong) at which a question is flagged for checking


def measure(name: str, p: npt.NDArray[np.float64], exam: RealExam, rows=None, seconds=None) -> Row:
    """Figures of P(key wrong) ``p`` on the ok + wrong_groundtruth rows (of ``rows``)."""
    idx = np.arange(len(exam.keys)) if rows is None else np.asarray(rows)
    keep = exam.scored()[idx]
    y = exam.wrong()[idx][keep]
    q = np.asarray(p, dtype=np.float64)[keep]
    flag = q >= FLAG
    return Row(
        name,
        expected_calibration_error(q.tolist(), y.tolist()),
        float(q.mean()),
        float(y.mean()),
        auroc(q, y),
        average_precision(q, y),
        int(flag.sum()),
        float(y[flag].mean()) if flag.any() else float("nan"),
        float(flag[y].mean()) if y.any() else float("nan"),
        seconds,
    )


def profile_of(exam: RealExam, judge: int, rows: npt.NDArray[np.int64]) -> Profile:
    """A gold profile from ``rows``' ok questions: a pick judge's verdicts, the key the truth."""
    ok = rows[(exam.labels[rows] == "ok") & (exam.picks[rows, judge] >= 0)]
    right = exam.picks[ok, judge] == exam.keys[ok]
    tp = int(right.sum())
    fn = int(len(ok) - tp)
    n = exam.counts[ok]
    # in verdict form: a right pick is n − 1 true negatives; a wrong one is one false positive
    # and n − 2 true negatives
    tn = int(np.sum(np.where(right, n - 1, n - 2)))
    return Profile(tp, fn, tn, fn)


def independent_single(exam: RealExam, judge: int) -> npt.NDArray[np.float64]:
    """Today's single-judge scoring: default TPR/TNR, prior auto, independent verdicts."""
    acc = JudgeAccuracy()
    obs = exam.observations([judge])
    verdicts = []
    for q in range(len(exam.keys)):
        row = obs.verdicts[q, : exam.counts[q], 0]
        verdicts.append([None if np.isnan(x) else bool(x) for x in row])
    est = estimate_prior(list(zip(verdicts, exam.keys.tolist(), strict=True)), acc)
    out = np.empty(len(exam.keys))
    for q, v in enumerate(verdicts):
        out[q] = 1.0 - panel_posterior([v], int(exam.keys[q]), [acc], est.value).confidence
    return out


def independent_panel(exam: RealExam) -> npt.NDArray[np.float64]:
    obs = exam.observations()
    fit = structured_fit(obs.verdicts, exam.keys.tolist(), exam.counts.tolist())
    post = fit.posterior[:, : obs.verdicts.shape[1]]
    post = post / post.sum(axis=1, keepdims=True)
    return 1.0 - post[np.arange(len(exam.keys)), exam.keys]


def print_rows(title: str, rows: list[Row]) -> None:
    print(f"\n{title}")
    print(
        f"  {'':44s} {'ECE':>6s} {'pred':>6s} {'actual':>6s} {'AUROC':>6s} {'AP':>6s}"
        f" {'flag':>5s} {'prec':>5s} {'recall':>6s}   (flag: P ≥ {FLAG:g})"
    )
    for r in rows:
        t = f"  ({r.seconds:.1f} s)" if r.seconds is not None else ""
        print(
            f"  {r.name[:44]:44s} {r.ece:6.4f} {r.predicted:6.2%} {r.actual:6.2%} {r.auroc:6.3f}"
            f" {r.ap:6.3f} {r.flagged:5d} {r.precision:5.2f} {r.recall:6.2f}{t}"
        )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=None, help="the exam folder (labels/, answers/)")
    ap.add_argument(
        "--skip-independent", action="store_true", help="leave out today's independent model"
    )
    ap.add_argument("--flag", type=float, default=FLAG, help="P(key wrong) that flags a key")
    args = ap.parse_args(argv)
    globals()["FLAG"] = args.flag
    path = args.data or default_path()
    if path is None or not path.is_dir():
        print("real_judges: no exam folder (give --data or set QUIZTUI_REAL_EXAM)", file=sys.stderr)
        return 2
    exam = load(path)
    scored = exam.scored()
    print(
        f"{path.name}: {len(exam.keys)} questions joined ({len(set(exam.subjects))} subjects),"
        f" {int(scored.sum())} ok + wrong_groundtruth, of which {int(exam.wrong().sum())} wrong"
        f" ({exam.wrong()[scored].mean():.2%}); {len(exam.models)} judges"
    )
    model = DifficultyJudges()
    panel: list[Row] = []
    t = time.perf_counter()
    fit = model.fit(exam.observations())
    panel.append(measure("10-judge panel", fit.p_key_wrong, exam, seconds=time.perf_counter() - t))
    panel.append(
        measure(
            "majority vote (share leaving the key)",
            majority_disagreement(exam.observations()),
            exam,
        )
    )
    if not args.skip_independent:
        t = time.perf_counter()
        panel.append(
            measure(
                "independent model (today's panel fit)",
                independent_panel(exam),
                exam,
                seconds=time.perf_counter() - t,
            )
        )
    print_rows(
        f"Panel (share of wrong keys: {fit.wrong_share.value:.1%}, {fit.wrong_share.source};"
        f" expected wrong keys {fit.p_key_wrong.sum():.0f}; attraction β {fit.attraction:.2f})",
        panel,
    )
    subjects = sorted(set(exam.subjects.tolist()))
    half_a = np.isin(exam.subjects, subjects[0::2])
    singles: list[Row] = []
    profiled: list[Row] = []
    own: list[Row] = []
    independent: list[Row] = []
    for j, name in enumerate(exam.models):
        short = name.split("_", 1)[-1]
        single = model.fit(exam.observations([j]))
        singles.append(measure(short, single.p_key_wrong, exam))
        p = np.empty(len(exam.keys))
        for cal, score in ((half_a, ~half_a), (~half_a, half_a)):
            rows = np.flatnonzero(score)
            prof = profile_of(exam, j, np.flatnonzero(cal))
            f = DifficultyJudges(profiles=[prof]).fit(exam.observations([j], rows))
            p[rows] = f.p_key_wrong
        profiled.append(measure(short, p, exam))
        picks = exam.picks[:, j]
        own.append(measure(short, ((picks >= 0) & (picks != exam.keys)).astype(float), exam))
        if not args.skip_independent:
            independent.append(measure(short, independent_single(exam, j), exam))
    print_rows("Single judge, default rates (nothing measured)", singles)
    print_rows("Single judge, profile from the other half of the subjects", profiled)
    print_rows("Each model's own disagreement with the key (0 or 1)", own)
    if independent:
        print_rows("Today's independent model: single judge, TPR/TNR 0.9, prior auto", independent)
    worst = max(r.ece for r in singles)
    worst_p = max(r.ece for r in profiled)
    share_gap = max(abs(r.predicted - r.actual) for r in [panel[0], *singles, *profiled])
    print(
        f"\nworst ECE: panel {panel[0].ece:.4f}, single default {worst:.4f},"
        f" single profiled {worst_p:.4f}; largest |predicted − actual| share {share_gap:.2%};"
        f" panel vs majority: AUROC {panel[0].auroc - panel[1].auroc:+.3f},"
        f" AP {panel[0].ap - panel[1].ap:+.3f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
