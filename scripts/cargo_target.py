"""Where cargo puts this checkout's builds, for the scripts that run the release `lowbit`:
$LOWBIT when set, else `release/lowbit` under the target directory `cargo metadata` reports
($CARGO_TARGET_DIR, a `build.target-dir` setting, or target/)."""

import json
import os
import pathlib
import subprocess

ROOT = pathlib.Path(__file__).resolve().parent.parent


def target_directory():
    """Cargo's target directory for the checkout; $CARGO_TARGET_DIR or target/ without cargo."""
    try:
        out = subprocess.run(["cargo", "metadata", "--format-version", "1", "--no-deps"],
                             cwd=ROOT, capture_output=True, text=True, check=True)
        return pathlib.Path(json.loads(out.stdout)["target_directory"])
    except (OSError, subprocess.CalledProcessError, ValueError, KeyError):
        return pathlib.Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target")


def release_lowbit():
    """The release `lowbit` binary: $LOWBIT, else under the target directory."""
    if os.environ.get("LOWBIT"):
        return pathlib.Path(os.environ["LOWBIT"])
    return target_directory() / "release" / "lowbit"
