"""Where the `lowbit` binary of this checkout is, for the tests that compare with the command line:
$LOWBIT_BIN (CI sets it), else under the target directory cargo reports for this checkout
(`cargo metadata`: $CARGO_TARGET_DIR, a `build.target-dir` setting, or target/)."""

import functools
import json
import os
import pathlib
import subprocess

REPO = pathlib.Path(__file__).resolve().parents[2]


@functools.lru_cache(maxsize=None)
def target_directory():
    """Cargo's target directory for the checkout; $CARGO_TARGET_DIR or target/ without cargo."""
    try:
        out = subprocess.run(
            ["cargo", "metadata", "--format-version", "1", "--no-deps"],
            cwd=REPO, capture_output=True, text=True, check=True,
        )
        return pathlib.Path(json.loads(out.stdout)["target_directory"])
    except (OSError, subprocess.CalledProcessError, ValueError, KeyError):
        return pathlib.Path(os.environ.get("CARGO_TARGET_DIR") or REPO / "target")


def lowbit_binary(profiles=("release", "debug")):
    """$LOWBIT_BIN, else the first of `profiles` built under the target directory, else None."""
    if os.environ.get("LOWBIT_BIN"):
        return pathlib.Path(os.environ["LOWBIT_BIN"])
    for profile in profiles:
        path = target_directory() / profile / "lowbit"
        if path.exists():
            return path
    return None
