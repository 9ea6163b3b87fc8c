#!/usr/bin/env python3
"""Compares lowbit's `compressed-tensors:int4|int8` schemes (`lowbit.blocks`, the Python package
built from python/) with compressed-tensors 0.20.0 itself, bit for bit, on fresh random and edge
weights, and fails on any difference or when it compared nothing.

Optional: not part of `cargo test` or CI (torch is heavy; CI checks the row against the
recordings in tests/data/integer/compressed_tensors/). Needs the pinned peers (torch 2.15.0,
compressed-tensors 0.20.0) and the lowbit package importable:

    target/blocks-venv/bin/python scripts/crosscheck_compressed_tensors.py [--cases N] [--seed S]
    target/blocks-venv/bin/python scripts/crosscheck_compressed_tensors.py --bench [--rows R --cols C]

The peer is called as scripts/gen_integer_compressed_tensors_fixtures.py calls it (its `peer` is
imported, and its version check): per-group torch.amin/amax in the weight's dtype,
`calculate_qparams`, `quantize(..., dtype=int8)`, the compressor's `compress`, and `dequantize`
(decompress's arithmetic; `decompress` itself is run too and must agree where it does not raise).
Per case (a scheme with random bits, group or channel, sym/asym and compressor; a float32, float16
or bfloat16 weight of random shape, random or edge values with NaN/Inf put at random places)
lowbit's element codes, scales, zero points, every stored tensor, the dequantized weight in the
weight's dtype (and as float32: torch's cast of it), and `from_storage` of the package's own tensors (codes and dequantized values)
are compared. A peer exception counts only where it is a declared refusal (DECLARED_REFUSALS) and
lowbit refuses too. Torch runs single-threaded: the NaN bits of its vector loops are those of one
thread. About 30 s for the default 300 cases (most of it importing torch), 1 min for 5000.

--bench times quantize (qparams, codes and the stored tensors) and dequantize (the stored tensors
back to the weight in its dtype) of one weight, one thread each, best of --repeat runs.
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_integer_compressed_tensors_fixtures as gen  # noqa: E402  (pins checked on import)

import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

import lowbit  # noqa: E402
import lowbit.blocks  # noqa: E402

# (exception type, words of its message): the package's own refusals, which lowbit shares.
DECLARED_REFUSALS = [("ValueError", "tensor column shape must be divisble by the given group_size")]

NUMPY = {torch.float32: np.float32, torch.float16: np.float16, torch.bfloat16: ml_dtypes.bfloat16}
STORED_NUMPY = {torch.int32: np.int32, torch.int64: np.int64, torch.int8: np.int8, **NUMPY}


def to_numpy(t):
    t = t.detach().contiguous()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    return t.numpy()


def bits_of(a):
    a = np.ascontiguousarray(a)
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])


def random_scheme(rng, cols):
    bits = int(rng.choice([4, 8]))
    options = []
    if rng.random() < 0.25:
        options.append("channel")
    else:
        divisors = [g for g in (1, 2, 4, 8, 16, 32, 40, 64, 128) if cols % g == 0]
        g = int(rng.choice(divisors)) if divisors and rng.random() < 0.9 else int(rng.choice([8, 32, 128]))
        options.append(f"group={g}")
    options.append(str(rng.choice(["sym", "asym"])))
    if rng.random() < 0.3:
        options.append("format=int-quantized")
    return ",".join([f"compressed-tensors:int{bits}"] + options)


def random_weight(rng, dtype):
    rows = int(rng.choice([1, 3, 8, 9, 17, 33, 40, 64]))
    cols = int(rng.choice([8, 16, 36, 40, 64, 80, 128, 256]))
    kind = rng.choice(["normal", "wide", "edge"])
    if kind == "edge":
        e = gen.edge_weight(dtype).to(torch.float32)
        idx = rng.integers(0, e.numel(), rows * cols)
        w = e.reshape(-1)[idx].reshape(rows, cols)
    else:
        w = torch.from_numpy(rng.standard_normal((rows, cols)).astype(np.float32))
        if kind == "wide":
            w = w * torch.from_numpy((2.0 ** rng.integers(-30, 30, (rows, 1))).astype(np.float32))
    specials = [float("nan"), float("inf"), float("-inf"), 0.0, -0.0, 65504.0, -65504.0]
    for _ in range(int(rng.integers(0, 4))):
        w[int(rng.integers(rows)), int(rng.integers(cols))] = float(rng.choice(specials))
    return w.to(dtype)


def declared(e):
    return any(type(e).__name__ == t and words in str(e) for t, words in DECLARED_REFUSALS)


def compare(scheme, w, tallies, diffs):
    label = f"{scheme} {w.dtype} {tuple(w.shape)}"
    try:
        r = gen.peer(w, scheme)
    except Exception as e:  # noqa: BLE001
        try:
            lowbit.blocks.quantize(to_numpy(w), scheme)
        except Exception:  # noqa: BLE001
            if declared(e):
                tallies["refusals"] += 1
                return
        diffs.append(f"{label}: the package raised {type(e).__name__}: {e}")
        return
    if "decompress_refusal" in r:
        tallies["decompress raised"] += 1
    q = lowbit.blocks.quantize(to_numpy(w), scheme)
    bits = int(scheme.split(",")[0][-1])
    mask = (1 << bits) - 1
    want = (to_numpy(r["q"]).view(np.uint8) & mask)
    checks = [
        ("elements", np.asarray(q.elements), want),
        ("scales", bits_of(q.scales), bits_of(to_numpy(r["scale"]))),
        ("dequantized", bits_of(q.dequantize(NUMPY[w.dtype])), bits_of(to_numpy(r["dequantized"]))),
    ]
    if w.dtype != torch.float32:
        # Another dtype asked for: the weight's, then torch's cast (`decompress(...)["weight"].float()`).
        checks.append(("dequantized as float32", bits_of(q.dequantize(np.float32)),
                       bits_of(to_numpy(r["dequantized"].to(torch.float32)))))
    if "asym" in scheme:
        checks.append(("zero points", np.asarray(q.zero_points), to_numpy(r["zero_point"]).astype(np.int32)))
    elif q.zero_points is not None:
        diffs.append(f"{label}: zero points of a symmetric scheme")
    stored = q.storage()
    theirs = {k: to_numpy(v) for k, v in r["stored"].items()}
    if list(stored) != list(theirs):
        diffs.append(f"{label}: stored names {list(stored)} != {list(theirs)}")
    for k, v in theirs.items():
        if k in stored:
            mine = np.asarray(stored[k])
            if mine.dtype != v.dtype or mine.shape != v.shape or mine.tobytes() != v.tobytes():
                diffs.append(f"{label}: stored {k} differs ({mine.dtype}{mine.shape} vs {v.dtype}{v.shape})")
            tallies["stored bytes"] += v.nbytes
    back = lowbit.blocks.from_storage(theirs, scheme, tuple(w.shape))
    checks.append(("from_storage elements", np.asarray(back.elements), want))
    checks.append(("from_storage dequantized", bits_of(back.dequantize(NUMPY[w.dtype])),
                   bits_of(to_numpy(r["dequantized"]))))
    for what, mine, theirs_ in checks:
        mine, theirs_ = np.asarray(mine).reshape(-1), np.asarray(theirs_).reshape(-1)
        if mine.shape != theirs_.shape or not np.array_equal(mine, theirs_):
            bad = np.nonzero(mine != theirs_)[0][:3] if mine.shape == theirs_.shape else []
            diffs.append(f"{label}: {what} differ at {list(bad)}: "
                         f"{[hex(int(mine[i])) for i in bad]} vs {[hex(int(theirs_[i])) for i in bad]}")
        tallies["values"] += theirs_.size
    tallies["cases"] += 1


def bench(rows, cols, repeat):
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    for scheme in ("compressed-tensors:int4", "compressed-tensors:int4,asym", "compressed-tensors:int8,channel"):
        for dtype in (torch.bfloat16, torch.float16, torch.float32):
            w = torch.from_numpy(rng.standard_normal((rows, cols)).astype(np.float32)).to(dtype)
            x = to_numpy(w)
            args, compressor_name, _ = gen.parse_scheme(scheme)
            compressor = gen.PackedQuantizationCompressor
            sch = gen.QuantizationScheme(targets=["Linear"], weights=args)
            best = {}

            def timed(key, f):
                t = time.perf_counter()
                out = f()
                best[key] = min(best.get(key, 1e9), time.perf_counter() - t)
                return out

            for _ in range(repeat):
                r = timed("peer quantize", lambda: gen.peer_quantize(w, scheme))
                timed("peer dequantize", lambda: compressor.decompress(dict(r), sch))
                q = timed("lowbit quantize", lambda: lowbit.blocks.quantize(x, scheme).storage())
                timed("lowbit dequantize",
                      lambda: lowbit.blocks.from_storage(q, scheme, (rows, cols)).dequantize(NUMPY[dtype]))
            n = rows * cols
            print(f"{scheme:34s} {str(dtype):15s} quantize: peer {n / best['peer quantize'] / 1e6:8.1f} M/s, "
                  f"lowbit {n / best['lowbit quantize'] / 1e6:8.1f} M/s "
                  f"({best['peer quantize'] / best['lowbit quantize']:.1f}x); dequantize: peer "
                  f"{n / best['peer dequantize'] / 1e6:8.1f} M/s, lowbit {n / best['lowbit dequantize'] / 1e6:8.1f} "
                  f"M/s ({best['peer dequantize'] / best['lowbit dequantize']:.1f}x)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--bench", action="store_true")
    ap.add_argument("--rows", type=int, default=4096)
    ap.add_argument("--cols", type=int, default=4096)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    if a.bench:
        bench(a.rows, a.cols, a.repeat)
        return
    rng = np.random.default_rng(a.seed)
    tallies = {"cases": 0, "values": 0, "stored bytes": 0, "refusals": 0, "decompress raised": 0}
    diffs = []
    start = time.time()
    for i in range(a.cases):
        dtype = [torch.float32, torch.float16, torch.bfloat16][i % 3]
        w = random_weight(rng, dtype)
        compare(random_scheme(rng, w.shape[1]), w, tallies, diffs)
    print(", ".join(f"{v} {k}" for k, v in tallies.items()) + f" compared in {time.time() - start:.0f} s "
          f"(lowbit from {os.path.dirname(lowbit.__file__)})")
    for d in diffs[:30]:
        print("DIFF", d)
    if diffs or tallies["values"] == 0:
        print(f"{len(diffs)} differences" if diffs else "nothing compared", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
