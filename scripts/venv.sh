# Sourced by scripts/quickstart.sh and scripts/test.sh: pick Python 3.11+ (PYTHON=... overrides),
# make the virtual environment "$1" unless it exists, activate it and upgrade pip.
PYTHON="${PYTHON:-}"
if [[ -z "$PYTHON" ]]; then
    if command -v python3.11 >/dev/null 2>&1; then PYTHON=python3.11; else PYTHON=python3; fi
fi
"$PYTHON" -c 'import sys; assert sys.version_info >= (3, 11), f"Python 3.11+ needed, found {sys.version}"'
if [[ ! -x "$1/bin/python" ]]; then "$PYTHON" -m venv "$1"; fi
# shellcheck disable=SC1091
source "$1/bin/activate"
python -m pip install --upgrade pip
