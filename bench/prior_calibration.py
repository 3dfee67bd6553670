"""Calibration of the posterior with ``prior = "auto"`` vs the fixed default (issue 21, T1).

Seeded simulated worlds: for each wrong-key rate (0, 5, 10, 30 %), 200 quizzes of 100
four-option questions. In each question one option is true; the key is that option, or — at the
wrong-key rate — one of the others. A judge with TPR 0.90 / TNR 0.90 gives a verdict on every
option. The posterior P(key correct | verdicts) is computed by quiztui's own code
(``core.bayes.question_posterior``) with the fixed default prior (0.95) and with the prior each
quiz estimates from its own verdicts (``core.prior.estimate_prior``), once with the judge profile
right and once with it off by −0.05 and +0.05 (TPR and TNR both). ECE (10 equal-width bins) is
pooled over the 20,000 questions of a row; the estimate's mean and its interval's coverage of
the quiz's true share of correct keys are printed beside it. The last column, "auto+rates", fits
the judge's TPR/TNR together with X from each quiz (``core.prior.fit_prior_and_rates``, the
profile counting as ``--weight`` pseudo-assertions per rate): what a wrong profile costs when the
quiz may correct it: ``prior = "auto"`` (the default) scores with the profile's rates,
``prior = "auto+rates"`` with the fitted ones (weight 20, as here). The column "judges" is
what ``prior = "auto"`` scores with since issue 26 (``core.judges.DifficultyJudges`` with the
profile as measured on 200 gold questions: the 2 % default share is set aside only on decisive
evidence).

    .venv/bin/python bench/prior_calibration.py                  # the table quoted in README
    .venv/bin/python bench/prior_calibration.py --quizzes 50     # quicker
"""

from __future__ import annotations

import argparse
import random
import statistics

from quiztui.core.bayes import (
    DEFAULT_PRIOR,
    JudgeAccuracy,
    expected_calibration_error,
    question_posterior,
)
from quiztui.core.judges import DifficultyJudges, Observations, Profile
from quiztui.core.prior import estimate_prior, fit_prior_and_rates

OPTIONS = 4
RATES = (0.0, 0.05, 0.10, 0.30)
OFFSETS = (0.0, -0.05, 0.05)

Quiz = list[tuple[list[bool | None], int, bool]]  # (verdicts, key, key is correct)


def world(rate: float, questions: int, tpr: float, tnr: float, rng: random.Random) -> Quiz:
    quiz: Quiz = []
    for _ in range(questions):
        correct = rng.randrange(OPTIONS)
        key = correct
        if rng.random() < rate:
            key = rng.choice([o for o in range(OPTIONS) if o != correct])
        verdicts: list[bool | None] = [
            (rng.random() < tpr) if i == correct else not (rng.random() < tnr)
            for i in range(OPTIONS)
        ]
        quiz.append((verdicts, key, key == correct))
    return quiz


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quizzes", type=int, default=200)
    parser.add_argument("--questions", type=int, default=100)
    parser.add_argument("--tpr", type=float, default=0.90)
    parser.add_argument("--tnr", type=float, default=0.90)
    parser.add_argument("--seed", type=int, default=21)
    parser.add_argument(
        "--weight", type=float, default=20.0, help="auto+rates: the profile's pseudo-assertions"
    )
    args = parser.parse_args()

    print(
        f"{args.quizzes} quizzes x {args.questions} questions, {OPTIONS} options; judge TPR"
        f" {args.tpr:.2f} / TNR {args.tnr:.2f}; fixed prior {DEFAULT_PRIOR}; ECE, 10 bins"
    )
    print(
        f"{'wrong keys':>10}  {'profile':>7}  {'ECE fixed':>9}  {'ECE auto':>8}"
        f"  {'auto mean':>9}  {'interval covers':>15}  {'ECE auto+rates':>14}  {'ECE judges':>10}"
    )
    for rate in RATES:
        rng = random.Random(f"{args.seed}-{rate}")
        quizzes = [
            world(rate, args.questions, args.tpr, args.tnr, rng) for _ in range(args.quizzes)
        ]
        for offset in OFFSETS:
            acc = JudgeAccuracy(tpr=args.tpr + offset, tnr=args.tnr + offset)
            fixed: list[float] = []
            auto: list[float] = []
            joint: list[float] = []
            model: list[float] = []
            outcomes: list[bool] = []
            estimates: list[float] = []
            covered = 0
            tp = round(200 * acc.tpr)
            tn = round(600 * acc.tnr)
            profile = Profile(tp, 200 - tp, tn, 600 - tn)
            for quiz in quizzes:
                obs = Observations.build([[v] for v, _, _ in quiz], [k for _, k, _ in quiz])
                fit = DifficultyJudges(profiles=[profile], draws=0).fit(obs)
                model.extend(1.0 - fit.p_key_wrong)
                est = estimate_prior([(v, k) for v, k, _ in quiz], acc)
                estimates.append(est.value)
                both = fit_prior_and_rates([(v, k) for v, k, _ in quiz], acc, weight=args.weight)
                share = sum(ok for _, _, ok in quiz) / len(quiz)
                covered += est.interval[0] <= share <= est.interval[1]
                for verdicts, key, ok in quiz:
                    fixed.append(question_posterior(verdicts, key, acc, DEFAULT_PRIOR).confidence)
                    auto.append(question_posterior(verdicts, key, acc, est.value).confidence)
                    fitted = question_posterior(verdicts, key, both.accuracy, both.prior.value)
                    joint.append(fitted.confidence)
                    outcomes.append(ok)
            label = "right" if offset == 0 else f"{offset:+.2f}"
            print(
                f"{rate:>10.0%}  {label:>7}  {expected_calibration_error(fixed, outcomes):>9.3f}"
                f"  {expected_calibration_error(auto, outcomes):>8.3f}"
                f"  {statistics.fmean(estimates):>9.3f}  {covered / len(quizzes):>15.0%}"
                f"  {expected_calibration_error(joint, outcomes):>14.3f}"
                f"  {expected_calibration_error(model, outcomes):>10.3f}"
            )


if __name__ == "__main__":
    main()
