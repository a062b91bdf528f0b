#!/usr/bin/env bash
# Install torch into the active virtual environment: the CPU-only build where there is no CUDA
# GPU (nvidia-smi absent), which spares the multi-GB CUDA build; the default build otherwise.
# Used by scripts/quickstart.sh and scripts/test.sh; `pip install -e ".[rl]"` then keeps it.
set -euo pipefail

TORCH="torch==2.13.0"  # within pyproject.toml's torch>=2.3,<2.14
if python -c "import torch" >/dev/null 2>&1; then
    echo "torch $(python -c 'import torch; print(torch.__version__)') is installed"
elif command -v nvidia-smi >/dev/null 2>&1; then
    python -m pip install "$TORCH"
elif ! python -m pip install --timeout 30 --retries 1 "$TORCH" --index-url https://download.pytorch.org/whl/cpu; then
    # No way to the CPU index (an offline mirror, a proxy): the configured index, as pip finds it.
    echo "the CPU-only index is out of reach; installing $TORCH from the configured package index" >&2
    python -m pip install "$TORCH"
fi
