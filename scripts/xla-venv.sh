#!/usr/bin/env bash
# Creates (or refreshes) the virtual environment that scripts/crosscheck_xla.py runs in, at
# target/xla-venv, and prints its python. JAX 0.11 and later need Python 3.12 or newer: the script
# takes the first of $PYTHON312, python3.13, python3.12 on PATH, or a pyenv install of 3.12+
# (~/.pyenv/versions/3.1[2-9]*). Without one, install Python 3.12 (e.g. `pyenv install 3.12`) and
# rerun, or set PYTHON312 to its interpreter.
#
# Usage: PY=$(bash scripts/xla-venv.sh) && "$PY" scripts/crosscheck_xla.py
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv="$root/target/xla-venv"
py="$venv/bin/python"

new_enough() { "$1" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' 2>/dev/null; }

if [ ! -x "$py" ]; then
    base=""
    for candidate in "${PYTHON312:-}" python3.13 python3.12 python3 \
        $(ls -d "$HOME"/.pyenv/versions/3.1[2-9]*/bin/python 2>/dev/null | sort -rV); do
        [ -n "$candidate" ] || continue
        if command -v "$candidate" >/dev/null 2>&1 && new_enough "$candidate"; then
            base=$candidate
            break
        fi
    done
    if [ -z "$base" ]; then
        echo "no Python 3.12 or newer found (JAX needs one): install it (pyenv install 3.12) or set PYTHON312" >&2
        exit 1
    fi
    "$base" -m venv "$venv" >&2
fi
# The versions the xla profile names (src/profile/profiles.rs); pip is a no-op when they are installed.
"$py" -m pip install --quiet --disable-pip-version-check \
    "jax[cpu]==0.12.0.1" jaxlib==0.12.0.1 numpy==2.4.6 ml_dtypes==0.6.0 >&2
echo "$py"
