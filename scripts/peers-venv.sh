#!/usr/bin/env bash
# Creates (or refreshes) the virtual environment that scripts/bench_peers.py and
# scripts/crosscheck_cast.py run in, at target/peers-venv, and prints its python.
#
# Every peer is pinned to the version its profile names (src/profile/profiles.rs): the benchmark and the
# cross-checks compare against those exact kernels. .ci/run installs the same pins.
#
# Usage: PY=$(bash scripts/peers-venv.sh) && "$PY" scripts/bench_peers.py
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv="$root/target/peers-venv"
py="$venv/bin/python"

if [ ! -x "$py" ]; then
    python3 -m venv "$venv" >&2
fi
# pip is a no-op when the pins are already satisfied, so rerunning is cheap; its chatter goes to
# stderr so that stdout carries only the interpreter's path.
"$py" -m pip install --quiet --disable-pip-version-check \
    numpy==2.4.6 ml_dtypes==0.6.0 onnx==1.23.2 onnxruntime==1.31.1 >&2
echo "$py"
