#!/usr/bin/env python3
"""Compares `lowbit cast --profile xla` with JAX/XLA on CPU (`jax.jit` of `astype`, which XLA
compiles to a convert), bit for bit, and fails on any difference.

Optional: not part of `cargo test`. Needs a release build (`cargo build --release`; the binary is
$LOWBIT, else $CARGO_TARGET_DIR/release/lowbit, else target/release/lowbit) and a Python with
`jax[cpu]`. JAX 0.11 and later need Python 3.12 or newer; scripts/xla-venv.sh finds one (or says
how to get it) and makes the venv target/xla-venv:
    PY=$(bash scripts/xla-venv.sh) && "$PY" scripts/crosscheck_xla.py [--random N] [--only SRC->TO] [--sample N --seed S]

Every pair of the 26 castable dtypes and ml_dtypes' three float8 types that ONNX lacks
(float8_e3m4, float8_e4m3, float8_e4m3b11fnuz: lowbit's named formats), 29 x 29, identity included, no pair skipped, with the inputs of
scripts/crosscheck_common.py (64-bit types enabled with jax_enable_x64). XLA has no saturate or
round_mode: lowbit runs every attribute set of the target and each must equal the one XLA result.
Where XLA has no conversion (STRING; float6 sources, which do not compile), the profile must hand
the pair to `spec` (as `lowbit profiles --json` lists) and give exactly `spec`'s answer; any other
exception of XLA is a difference (REFUSALS declares the two). Exit status 1 on any difference, and
when nothing was compared (a typo in --only).

ml_dtypes' int1 and uint1 are not compared: jax 0.12.0.1 has no working cast for them (float32 ->
int1 lowers to `x != 0` and its result reads back as a bool array; reading an int1 array fails
with a buffer size mismatch; uint1 does not lower), so the `xla` profile has no row for them.
"""
import argparse
import subprocess
import sys

try:
    import jax
except ImportError:
    sys.exit("crosscheck_xla.py needs jax[cpu] (Python 3.12+): PY=$(bash scripts/xla-venv.sh) && \"$PY\" "
             "scripts/crosscheck_xla.py")

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")

import numpy as np  # noqa: E402

import crosscheck_common as cc  # noqa: E402

PROFILE = "xla"


class NoConversion(Exception):
    pass


# Where XLA has no conversion: no string type, and float6 sources that do not compile (found by
# `xla_holds` in a child process, since some targets abort the process).
REFUSALS = [cc.Refusal("no cast", "NoConversion", r"^XLA (has no string type|does not compile a conversion from)")]


def xla_holds(src):
    """Whether XLA converts `src` at all. It does not compile float6 sources (a JaxRuntimeError
    into float32, an abort of the whole process inside XLA for some targets), so each source is
    first converted to float32 in a child process."""
    probe = ("import jax, numpy as np, sys; sys.path.insert(0, %r); import crosscheck_common as cc; "
             "jax.config.update('jax_enable_x64', True); "
             "jax.jit(lambda a: a.astype(np.float32))(np.zeros(4, dtype=cc.NP[%r])).block_until_ready()") % (str(cc.ROOT / "scripts"), src)
    return subprocess.run([sys.executable, "-c", probe], capture_output=True).returncode == 0


def peer(src, to, codes, holds):
    if "STRING" in (src, to):
        raise NoConversion("XLA has no string type")
    if not holds:
        raise NoConversion(f"XLA does not compile a conversion from {src}")
    x = cc.to_array(src, codes)
    target = cc.NP[to]
    y = jax.jit(lambda a: a.astype(target))(x)
    return cc.raw_bytes(to, cc.array_codes(to, np.asarray(y)))


def main():
    ap = argparse.ArgumentParser()
    cc.add_arguments(ap)
    args = ap.parse_args()
    rng = cc.start(args)
    profiles = cc.profile_table()
    tally = cc.Tally(f"jax {jax.__version__} (XLA, CPU)")
    for src in cc.ALL + cc.NAMED:
        targets = [t for t in cc.ALL + cc.NAMED if not args.only or args.only in f"{src}->{t}"]
        if not targets:
            continue
        if src == "STRING":
            codes, payload = None, cc.decimal_texts()
            n = len(payload)
        else:
            codes = cc.patterns(src, args.random, rng, args.sample)
            payload, n = cc.raw_bytes(src, codes), len(codes)
        holds = src == "STRING" or xla_holds(src)
        for to in targets:
            try:
                theirs, error = peer(src, to, codes, holds), None
            except Exception as e:  # compare_variant accepts only the refusals REFUSALS declares
                theirs, error = None, e
            for saturate, round_mode in cc.variants(to):
                key = f"{src}->{to} saturate={saturate} round_mode={round_mode}"
                cc.compare_variant(tally, profiles, PROFILE, REFUSALS, key, src, to, payload, n, theirs, error, codes,
                                   saturate, round_mode)
        print(f"{src}: done", file=sys.stderr, flush=True)
    status = tally.report(PROFILE)
    cc.record("crosscheck_xla.py", args, {PROFILE: tally})
    return status


if __name__ == "__main__":
    sys.exit(main())
