#!/usr/bin/env bash
# The whole test suite from a fresh clone, in one command, exactly as CI runs it (.ci/run calls
# this): a fresh virtual environment outside the checkout (your .venv is never touched), Debian's
# chromium and chromium-driver for the browser tests (through apt-get, with sudo when not root),
# torch (CPU-only without a CUDA GPU), then the install, the lint, the docs site and the tests.
# Needs only Python 3.11+ (PYTHON=... picks the interpreter, CI_VENV=... the environment). The
# fresh environment (some GB, with torch) is removed at the end, however the run ends; one named
# by CI_VENV=... is kept, and used again by the next run given it.
set -euo pipefail

cd "$(dirname "$0")/.."

if [[ -n "${CI_VENV:-}" ]]; then
    VENV="$CI_VENV"
    echo "test environment: $VENV (CI_VENV: kept)"
else
    FRESH="$(mktemp -d)"
    VENV="$FRESH/venv"
    trap 'rm -rf "$FRESH"; echo "test environment $VENV removed (CI_VENV=DIR keeps one)"' EXIT
    echo "test environment: $VENV (removed at the end; CI_VENV=DIR keeps one)"
fi
# shellcheck source=scripts/venv.sh
source scripts/venv.sh "$VENV"

# The browser tests (tests/test_web_browser.py) drive Debian's chromium through its chromedriver.
if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then
    SUDO=""
    if [[ "$(id -u)" != 0 ]]; then SUDO="sudo"; fi
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium chromium-driver
fi

scripts/torch.sh

# The tests' command, verbatim:
pip install -e ".[test,docs]" && ruff check . && mypy && mkdocs build --strict && python -m pytest -n 2 -m "not slow"
