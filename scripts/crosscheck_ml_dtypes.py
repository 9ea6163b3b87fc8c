#!/usr/bin/env python3
"""Compares `lowbit cast --profile ml-dtypes` with numpy/ml_dtypes `astype`, bit for bit (texts
character for character), and fails on any difference.

Optional: not part of `cargo test`. Needs a release build (`cargo build --release`; the binary is
$LOWBIT, else $CARGO_TARGET_DIR/release/lowbit, else target/release/lowbit) and numpy with
ml_dtypes (the venv of scripts/peers-venv.sh has both). Usage:
    PY=$(bash scripts/peers-venv.sh) && "$PY" scripts/crosscheck_ml_dtypes.py [--random N] [--only SRC->TO]

Every pair of the 26 castable dtypes (STRING through numpy's own str conversions), identity
included, no pair skipped, with the inputs of scripts/crosscheck_common.py. ml_dtypes has no
saturate or round_mode: lowbit runs every attribute set of the target (float8: saturate 1 and 0;
E8M0: every round_mode too) and each must equal the one `astype` result. Where astype raises,
lowbit must refuse too (a text it cannot read) or, where the profile hands the pair to `spec` (as
`lowbit profiles --json` lists), give exactly `spec`'s answer. Exit status 1 on any difference.
"""
import argparse
import sys
import warnings

import ml_dtypes
import numpy as np

import crosscheck_common as cc

PROFILE = "ml-dtypes"


def peer(src, to, codes, texts):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            x = np.array(texts, dtype=np.str_) if src == "STRING" else cc.to_array(src, codes)
            if to == "STRING":
                return [str(t) for t in x.astype(np.str_)]
            return cc.raw_bytes(to, cc.array_codes(to, x.astype(cc.NP[to])))


def check(tally, profiles, src, to, payload, n, inputs, codes, texts):
    try:
        theirs, error = peer(src, to, codes, texts), None
    except Exception as e:  # ml_dtypes/numpy has no such cast, or cannot read a text
        theirs, error = None, cc.peer_error_text(e)
    for saturate, round_mode in cc.variants(to):
        key = f"{src}->{to} saturate={saturate} round_mode={round_mode}"
        if texts is not None and len(texts) == 1:
            key += f" [text {texts[0]!r}]"
        cc.compare_variant(tally, profiles, PROFILE, key, src, to, payload, n, theirs, error, inputs, saturate,
                           round_mode)

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--random", type=int, default=100000, help="random patterns per 32- or 64-bit source")
    ap.add_argument("--only", default="", help="only pairs whose 'SRC->TO' contains this")
    args = ap.parse_args()
    rng = np.random.default_rng(20261122)
    profiles = cc.profile_table()
    tally = cc.Tally(f"ml_dtypes {ml_dtypes.__version__} (numpy {np.__version__})")
    for src in cc.ALL:
        targets = [t for t in cc.ALL if not args.only or args.only in f"{src}->{t}"]
        if not targets:
            continue
        codes = None if src == "STRING" else cc.patterns(src, args.random, rng)
        for to in targets:
            if src == "STRING":
                sets = [cc.decimal_texts(), cc.integer_texts(to)] + [[t] for t in cc.ODD_TEXTS]
                for texts in sets:
                    check(tally, profiles, src, to, texts, len(texts), texts, None, texts)
            else:
                check(tally, profiles, src, to, cc.raw_bytes(src, codes), len(codes), codes, codes, None)
        print(f"{src}: done", file=sys.stderr, flush=True)
    return tally.report(PROFILE)


if __name__ == "__main__":
    sys.exit(main())
