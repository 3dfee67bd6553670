#!/usr/bin/env bash
# Build the wheel, install it into a fresh venv outside the checkout, and run quiztui from a
# temporary folder: --version, a headless vet, an offline and a simulated grade, a calibration on
# the packaged gold set, and the TUI (headless). Everything must come from the wheel.
#   .ci/wheel_smoke.sh            (KEEP=1 keeps the temporary folder and prints it)
set -euo pipefail
REPO="$(cd "$(dirname "$0")/.." && pwd)"
BUILD_PY="${BUILD_PY:-$REPO/.venv/bin/python}"  # any python with pip; the build is isolated
BASE_PY="${PYTHON:-python3}"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/quiztui-wheel.XXXXXX")"
if [ "${KEEP:-0}" = 1 ]; then echo "wheel-smoke: keeping $WORK"; else trap 'rm -rf "$WORK"' EXIT; fi

step() { echo "wheel-smoke: $*"; }
# On a failure, show what the commands wrote to their logs before the folder goes.
trap 'echo "wheel-smoke: FAILED (line $LINENO)"; tail -n 30 "$WORK"/run/*.log 2>/dev/null' ERR

"$BUILD_PY" -m pip wheel --quiet --no-deps -w "$WORK/dist" "$REPO"
WHEEL="$(ls "$WORK"/dist/quiztui-*.whl)"
count="$("$BUILD_PY" -c 'import sys, zipfile; print(len(zipfile.ZipFile(sys.argv[1]).namelist()))' "$WHEEL")"
step "built $(basename "$WHEEL"): $count files"

"$BASE_PY" -m venv "$WORK/venv"
"$WORK/venv/bin/python" -m pip install --quiet -c "$REPO/constraints.txt" "$WHEEL"
Q="$WORK/venv/bin/quiztui"
PY="$WORK/venv/bin/python"

# A clean room: its own config and data folders, no colour override, nothing from the checkout.
mkdir -p "$WORK/run"
cp "$REPO/sample_quizzes/planted_errors.json" "$REPO/sample_quizzes/planted_errors.truth.json" \
    "$REPO/sample_quizzes/answers_sample.csv" "$WORK/run/"
cp "$REPO/.ci/tui_smoke.py" "$WORK/"
cd "$WORK/run"
unset NO_COLOR QUIZTUI_CONFIG PYTHONPATH
export QUIZTUI_CONFIG_DIR="$WORK/config" QUIZTUI_DATA_DIR="$WORK/data" QUIZTUI_LOG_DIR="$WORK/log"
export QUIZTUI_SIMULATED_LATENCY=0 QUIZTUI_SIMULATED_LINE_DELAY=0
SIM=(--judge simulated --sim-latency 0)

version="$("$Q" --version)"
origin="$("$PY" -c 'import quiztui; print(quiztui.__file__)')"
step "$version from $origin"

# Exit 1 means some question is poor (the quiz has four planted wrong keys): expected here.
rc=0; "$Q" vet planted_errors.json --no-tui "${SIM[@]}" -o report.json 2>vet.log || rc=$?
[ "$rc" -le 1 ] || { cat vet.log; echo "wheel-smoke: vet exited $rc"; exit 1; }
"$PY" - "$rc" <<'EOF'
import json, sys
r = json.load(open("report.json"))
assert r["status"] == "finished" and r["unjudged"] == 0, r["status"]
print(f"wheel-smoke: vet exit {sys.argv[1]}: {len(r['questions'])} questions, {r['judged']} "
      f"assertions judged, badges {r['badge_counts']}")
EOF

"$Q" grade answers_sample.csv --grader lexical --format json -o grade_lexical.json 2>grade.log
"$Q" grade answers_sample.csv --grader pass3 "${SIM[@]}" --format json -o grade_pass3.json \
    2>>grade.log
"$PY" <<'EOF'
import json
for name in ("lexical", "pass3"):
    r = json.load(open(f"grade_{name}.json"))
    scored = [i for i in r["items"] if i.get("score") is not None]
    print(f"wheel-smoke: grade {name}: {len(scored)}/{len(r['items'])} answers scored ({r['judge']})")
    assert r["items"] and len(scored) == len(r["items"])
EOF

"$Q" calibrate "${SIM[@]}" --n 20 --format json >calibrate.json 2>calibrate.log
"$PY" <<'EOF'
import json
(p,) = json.load(open("calibrate.json"))
print(f"wheel-smoke: calibrate on {p['gold']}: TPR {p['tpr']:.3f} TNR {p['tnr']:.3f}, "
      f"{p['questions']} questions, {p['unjudged']} unjudged")
assert p["gold"].startswith("opentdb_sample.json: 20 of 50 questions"), p["gold"]
EOF

tui="$(timeout 300 "$PY" "$WORK/tui_smoke.py" planted_errors.json 2>tui.log)"
step "$tui"
step "ok"
