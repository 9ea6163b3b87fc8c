#!/usr/bin/env bash
# Creates (or refreshes) the virtual environment that scripts/crosscheck_torch.py runs in and prints
# its python. The venv lives at $TORCH_VENV, by default target/torch-venv (outside the tracked
# files). PyTorch's Linux wheel on the registry is a CUDA build (about 5 GB with its libraries); it
# runs on the CPU, which is all the cross-check uses.
#
# torch is pinned because the `torch` profile reproduces that exact release; ml_dtypes is pinned
# because the cross-check builds its numpy inputs of the float8 types through it.
#
# Usage: PY=$(bash scripts/torch-venv.sh) && "$PY" scripts/crosscheck_torch.py
#        (TORCH_VENV=/some/dir bash scripts/torch-venv.sh to put the venv elsewhere)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv="${TORCH_VENV:-$root/target/torch-venv}"
py="$venv/bin/python"

if [ ! -x "$py" ]; then
    python3 -m venv "$venv" >&2
fi
# pip is a no-op when the pins are already satisfied, so rerunning is cheap; its chatter goes to
# stderr so that stdout carries only the interpreter's path.
"$py" -m pip install --quiet --disable-pip-version-check \
    torch==2.15.0 numpy ml_dtypes==0.6.0 >&2
echo "$py"
