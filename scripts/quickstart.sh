#!/usr/bin/env bash
# The main job from a fresh clone, in one command: a virtual environment (.venv), torch (CPU-only
# without a CUDA GPU), the rl extra, then the quick start trained (standard rules, 4 players,
# 9 minutes, its time limit) and evaluated against three guards: 43 min in all measured on 2
# cores under heavy load (the README's quick start splits it up).
#   scripts/quickstart.sh            # the run goes to runs/quickstart
#   scripts/quickstart.sh --force    # arguments go to agurk train: --force moves an old run aside
# Needs only Python 3.11+ (PYTHON=... picks the interpreter, VENV=... the environment).
set -euo pipefail

cd "$(dirname "$0")/.."

VENV="${VENV:-.venv}"
# shellcheck source=scripts/venv.sh
source scripts/venv.sh "$VENV"
scripts/torch.sh
pip install -e ".[rl]"

OUT="runs/quickstart"
EVALUATE=(agurk evaluate --agents "ppo:$OUT/checkpoints/best.pt,heuristic,heuristic,heuristic" --matches 2000 --seed 1)
agurk train configs/quickstart.yaml --out "$OUT" "$@"
"${EVALUATE[@]}"

# The environment was activated in this script's shell, not in yours.
echo
echo "agurk is in $VENV, not on your PATH: activate it in your shell first:  . $VENV/bin/activate"
echo "next: ${EVALUATE[*]}    # the evaluation above: change --agents or --matches to try others"
