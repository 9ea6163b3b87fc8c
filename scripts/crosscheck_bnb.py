#!/usr/bin/env python3
"""Compares lowbit's bitsandbytes 4-bit row (`bnb:nf4|fp4[,blocksize=N][,nested]`, through the
Python package) with the live bitsandbytes 0.50.2 CPU backend, bit for bit, on fresh random and
edge weights; fails on any difference, and when nothing was compared.

Optional, not in CI (torch and bitsandbytes are heavy; tests/integer_bnb.rs checks the recorded
runs of scripts/gen_integer_bnb_fixtures.py). About two minutes for the default 400 weights on the
project's machine (about half of it torch.compile building bitsandbytes' fallback kernel). Needs torch and bitsandbytes (the blocks venv, bitsandbytes added with
`pip install --no-deps bitsandbytes==0.50.2`) and the lowbit package built from this checkout,
e.g. installed with `pip install --no-deps --target DIR` and put first on PYTHONPATH:

    PYTHONPATH=DIR target/blocks-venv/bin/python scripts/crosscheck_bnb.py [--weights N] [--seed S]
    PYTHONPATH=DIR target/blocks-venv/bin/python scripts/crosscheck_bnb.py --self-test

The dequantize kernel bitsandbytes' CPU backend picks depends on the machine: the rows model an
x86-64 CPU with AVX-512 (and torch's float32 sum on one thread, which this script sets).

Per weight (shape, input dtype float32/float16/bfloat16, blocksize among all eight, NF4 or FP4,
plain or nested), compared: every tensor `QuantState.as_dict(packed=True)` saves with the packed
weight (bytes, dtype, shape; the quant_state JSON byte for byte), `dequantize_4bit` in float32,
float16 and bfloat16 against lowbit's `dequantize(dtype)`, and lowbit's `from_storage` of the
peer's own tensors dequantized (decoding apart from encoding). A peer exception counts only as a
declared refusal that lowbit refuses too.
"""
import argparse
import logging
import sys
import time

import ml_dtypes
import numpy as np
import torch

logging.disable(logging.WARNING)
import bitsandbytes  # noqa: E402
import bitsandbytes.functional as F  # noqa: E402

import lowbit.blocks as lb  # noqa: E402

# bitsandbytes wraps its torch fallback kernels in torch.compile; once a function has been
# recompiled for 8 shapes, torch runs it eagerly, which writes a NaN as bfloat16 0xFFFF instead
# of 0x7FC0. The rows model the compiled kernel: the limits are lifted so that every shape is.
torch._dynamo.config.recompile_limit = 1 << 20
torch._dynamo.config.accumulated_recompile_limit = 1 << 20

PEER_VERSION = "0.50.2"
BLOCK_SIZES = (32, 64, 128, 256, 512, 1024, 2048, 4096)
OUT_DTYPES = {"float32": (torch.float32, np.float32), "float16": (torch.float16, np.float16),
              "bfloat16": (torch.bfloat16, ml_dtypes.bfloat16)}
# (exception type, start of its message) bitsandbytes raises where lowbit refuses too.
DECLARED_REFUSALS = [("ValueError", "invalid blocksize")]


def weight(rng, rows, cols, dtype, edge):
    """Normal values whose magnitude changes per 16 elements; edge: zeros, NaN (with payloads),
    infinities, subnormals, float32's largest, -0.0 and exact code midpoints put at random
    places."""
    n = rows * cols
    mags = np.repeat(2.0 ** rng.integers(-30, 30, size=-(-n // 16)), 16)[:n]
    x = (rng.standard_normal(n) * mags).astype(np.float32)
    if edge:
        k = max(1, n // 20)
        at = rng.integers(0, n, size=(8, k))
        x[at[0]] = 0.0
        x[at[1]] = -0.0
        x[at[2]] = np.float32(1e-40) * rng.standard_normal(k).astype(np.float32)
        x[at[3]] = np.float32(3e38) * np.sign(rng.standard_normal(k)).astype(np.float32)
        bits = x.view(np.uint32)
        bits[at[4][: max(1, k // 4)]] = np.uint32(0x7F812345)
        bits[at[5][: max(1, k // 4)]] = np.uint32(0xFFC00000)
        x[at[6][: max(1, k // 4)]] = np.inf if rng.random() < 0.5 else -np.inf
        code = F.get_4bit_type("nf4" if rng.random() < 0.5 else "fp4", device="cpu")
        s = torch.sort(code).values
        mids = ((s[:-1] + s[1:]) / 2).numpy()
        x[at[7]] = mids[rng.integers(0, 15, size=k)]
        if rng.random() < 0.3:
            x[: min(n, 64)] = 0.5  # a constant block
    t = torch.from_numpy(x.reshape(rows, cols))
    return t.to(dtype)


def to_numpy(t):
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    return t.numpy()


def raw(a):
    return np.ascontiguousarray(a).reshape(-1).view(np.uint8).tobytes()


def peer_storage(q, state):
    out = {"weight": q}
    out.update(state.as_dict(packed=True))
    return out


def compare_weight(tally, label, w, quant_type, blocksize, nested):
    scheme = f"bnb:{quant_type},blocksize={blocksize}" + (",nested" if nested else "")
    try:
        q, state = F.quantize_4bit(w, blocksize=blocksize, compress_statistics=nested, quant_type=quant_type)
    except Exception as e:  # noqa: BLE001
        declared = any(type(e).__name__ == t and str(e).startswith(m) for t, m in DECLARED_REFUSALS)
        try:
            lb.quantize(to_numpy(w), scheme)
            refused = False
        except Exception:  # noqa: BLE001
            refused = True
        tally.check(declared and refused, f"{label}: peer raised {type(e).__name__}: {e}; lowbit refused: {refused}")
        return
    theirs = peer_storage(q, state)
    ours = lb.quantize(to_numpy(w), scheme)
    mine = ours.storage()
    tally.check(list(mine) == list(theirs), f"{label}: tensors {list(mine)} vs {list(theirs)}")
    for name, t in theirs.items():
        if name not in mine:
            continue
        a = mine[name]
        tally.check(list(a.shape) == list(t.shape) and raw(a) == t.contiguous().view(torch.uint8).numpy().tobytes(),
                    f"{label}: {name} differs")
    from_peer = lb.from_storage({k: v.numpy() for k, v in theirs.items()}, scheme, list(w.shape))
    # The peer reads its own tensors back as transformers does (the JSON's offset: a NaN offset
    # reads back as float("nan")).
    reloaded = F.QuantState.from_dict({k: v for k, v in theirs.items() if k != "weight"}, torch.device("cpu"))
    for key, (tdt, ndt) in OUT_DTYPES.items():
        state.dtype = tdt
        reloaded.dtype = tdt
        want = F.dequantize_4bit(q, state).contiguous().view(torch.uint8).numpy().tobytes()
        tally.check(raw(ours.dequantize(ndt)) == want, f"{label}: dequantize {key} differs")
        want = F.dequantize_4bit(q, reloaded).contiguous().view(torch.uint8).numpy().tobytes()
        tally.check(raw(from_peer.dequantize(ndt)) == want, f"{label}: from_storage dequantize {key} differs")
    tally.elements += w.numel()


class Tally:
    def __init__(self):
        self.compared = 0
        self.elements = 0
        self.failures = []

    def check(self, ok, what):
        self.compared += 1
        if not ok:
            self.failures.append(what)


def run(weights, seed):
    rng = np.random.default_rng(seed)
    tally = Tally()
    for i in range(weights):
        quant_type = ("nf4", "fp4")[i % 2]
        blocksize = int(rng.choice(BLOCK_SIZES))
        nested = bool(rng.random() < 0.4)
        rows = int(rng.integers(1, 24))
        # Every kernel: cols % 16 == 0 (AVX-512), other even (scalar), and one weight in ten odd
        # (torch's compiled fallback, also every block of 2048 or more: torch.compile builds it
        # anew for each shape, dtype and blocksize, a few seconds each, so those shapes are few).
        kind = 1 if i % 10 == 9 else i % 2 * 2
        cols = int(rng.integers(1, 40)) * 16 if kind == 0 else int(rng.integers(1, 200)) * 2 + (2 if rng.random() < 0.5 else 0)
        if cols % 16 == 0 and kind == 2:
            cols += 2
        if nested and rng.random() < 0.3:
            rows, cols = 64, int(rng.choice([256, 400, 1000]))  # several second-level blocks
        if kind == 1:
            rows, cols = 5, 33
        if blocksize >= 2048 and kind != 1:
            blocksize = 1024
        dtype = (torch.float32, torch.float16, torch.bfloat16)[int(rng.integers(0, 3))]
        edge = bool(rng.random() < 0.4)
        w = weight(rng, rows, cols, dtype, edge)
        label = f"#{i} bnb:{quant_type},blocksize={blocksize}{',nested' if nested else ''} {rows}x{cols} {dtype}" + \
            (" edge" if edge else "")
        compare_weight(tally, label, w, quant_type, blocksize, nested)
    return tally


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--weights", type=int, default=400)
    ap.add_argument("--seed", type=int, default=20261128)
    ap.add_argument("--self-test", action="store_true", help="an empty run and an injected difference must fail")
    args = ap.parse_args()
    if bitsandbytes.__version__ != PEER_VERSION:
        print(f"bitsandbytes {bitsandbytes.__version__}, not {PEER_VERSION}", file=sys.stderr)
        return 2
    torch.set_num_threads(1)
    if args.self_test:
        empty = run(0, args.seed)
        injected = run(3, args.seed)
        injected.check(False, "injected")
        ok = empty.compared == 0 and injected.failures == ["injected"]
        print("self-test", "passed" if ok else "FAILED")
        return 0 if ok else 1
    start = time.time()
    tally = run(args.weights, args.seed)
    for f in tally.failures[:40]:
        print(f)
    print(f"bnb: {args.weights} weights, {tally.elements} elements, {tally.compared} comparisons, "
          f"{len(tally.failures)} differences, {time.time() - start:.1f} s")
    return 1 if tally.failures or tally.compared == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
