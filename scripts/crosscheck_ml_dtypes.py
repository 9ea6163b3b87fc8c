#!/usr/bin/env python3
"""Compares `lowbit cast --profile ml-dtypes` with numpy/ml_dtypes `astype`, bit for bit (texts
character for character), and fails on any difference.

Optional: not part of `cargo test`. Needs a release build (`cargo build --release`; the binary is
$LOWBIT, else $CARGO_TARGET_DIR/release/lowbit, else target/release/lowbit) and numpy with
ml_dtypes (the venv of scripts/peers-venv.sh has both). Usage:
    PY=$(bash scripts/peers-venv.sh) && "$PY" scripts/crosscheck_ml_dtypes.py [--random N] [--only SRC->TO] \
        [--sample N --seed S]

Every pair of the 26 castable dtypes, ml_dtypes' three float8 types that ONNX lacks
(float8_e3m4, float8_e4m3, float8_e4m3b11fnuz: lowbit's named formats) and its int1 and uint1
(lowbit's named integer types, eight codes per byte in raw data), 31 x 31 (STRING through
numpy's own str conversions), identity included, no pair skipped, with the inputs of scripts/crosscheck_common.py. ml_dtypes has no
saturate or round_mode: lowbit runs every attribute set of the target (float8: saturate 1 and 0;
E8M0: every round_mode too) and each must equal the one `astype` result. An exception of astype
counts only when it is a refusal declared in REFUSALS (its type and message): "no cast" where the
profile hands the pair to `spec` (as `lowbit profiles --json` lists; lowbit must give exactly
`spec`'s answer, reported apart from the comparisons), "text" where it cannot read a text (lowbit
must refuse it too); any other exception is a difference. Exit status 1 on any difference, and
when nothing was compared (a typo in --only).
"""
import argparse
import sys
import warnings

import ml_dtypes
import numpy as np

import crosscheck_common as cc

PROFILE = "ml-dtypes"

# What numpy/ml_dtypes 0.6.0 raise where they have no behaviour (observed).
REFUSALS = [
    cc.Refusal("no cast", "TypeError", r"^Cannot cast array data from dtype\(.*\) to dtype\(.*\) according to the "
               r"rule 'unsafe'$"),
    cc.Refusal("no cast", "TypeError", r"^cannot cast dtype \w+ to <class 'numpy\.dtypes\.StrDType'>\.$"),
    cc.Refusal("text", "ValueError", r"^(could not convert string to float|invalid literal for int\(\))"),
    # An integer text beyond the integer target: numpy refuses the text.
    cc.Refusal("text", "OverflowError",
               r"^Python int(eger -?\d+ out of bounds for u?int\d+| too large to convert to C long)$", echoed=True),
]


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
    except Exception as e:  # compare_variant accepts only the refusals REFUSALS declares
        theirs, error = None, e
    for saturate, round_mode in cc.variants(to):
        key = f"{src}->{to} saturate={saturate} round_mode={round_mode}"
        if texts is not None and len(texts) == 1:
            key += f" [text {texts[0]!r}]"
        cc.compare_variant(tally, profiles, PROFILE, REFUSALS, key, src, to, payload, n, theirs, error, inputs, saturate,
                           round_mode)

def main():
    ap = argparse.ArgumentParser()
    cc.add_arguments(ap)
    args = ap.parse_args()
    rng = cc.start(args)
    profiles = cc.profile_table()
    tally = cc.Tally(f"ml_dtypes {ml_dtypes.__version__} (numpy {np.__version__})")
    types = cc.ALL + cc.NAMED + cc.NAMED_INTEGERS
    for src in types:
        targets = [t for t in types if not args.only or args.only in f"{src}->{t}"]
        if not targets:
            continue
        codes = None if src == "STRING" else cc.patterns(src, args.random, rng, args.sample)
        for to in targets:
            if src == "STRING":
                sets = [cc.decimal_texts(), cc.integer_texts(to)] + [[t] for t in cc.ODD_TEXTS]
                for texts in sets:
                    check(tally, profiles, src, to, texts, len(texts), texts, None, texts)
            else:
                check(tally, profiles, src, to, cc.raw_bytes(src, codes), len(codes), codes, codes, None)
        print(f"{src}: done", file=sys.stderr, flush=True)
    status = tally.report(PROFILE)
    cc.record("crosscheck_ml_dtypes.py", args, {PROFILE: tally})
    return status


if __name__ == "__main__":
    sys.exit(main())
