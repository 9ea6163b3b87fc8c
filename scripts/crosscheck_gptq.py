"""lowbit's `gptq` and `awq` rows against GPTQModel 7.7.0 and AutoAWQ 0.2.9 run live (see
scripts/gptq_awq_peers.py for the install and the functions called): random weights of each
scheme, input dtype and edge kind, every stored tensor's bytes and the float16 dequantized weight
compared bit for bit, both from lowbit's quantize and from lowbit's from_storage of the producer's
tensors, and the producer's dequantize of lowbit's tensors. A producer exception must meet a lowbit
refusal (counted as such); any difference, or nothing compared, fails.

    python scripts/crosscheck_gptq.py [--family gptq|awq] [--cases N] [--seed S] [--only SUBSTRING]

It imports `lowbit` (the Python package of this tree: `pip install ./python`, or put a built
wheel's directory first on PYTHONPATH). --cases 3 (270 weights, 23 MB compared) takes about 15 s,
most of it importing the two producers; CI has no torch and leaves it out: the recorded cases of
tests/integer_gptq.rs, tests/integer_awq.rs and python/tests/test_integer_*.py stand in.
"""
import argparse
import pathlib
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import gptq_awq_peers as peers  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

from lowbit import blocks  # noqa: E402

GPTQ_SCHEMES = [
    "gptq:int4,group=32", "gptq:int4,group=32,asym", "gptq:int4,group=64,asym,zeros=v2", "gptq:int4,group=-1",
    "gptq:int8,group=32,asym", "gptq:int8,group=128", "gptq:int4,group=16,asym,actorder",
]
AWQ_SCHEMES = ["awq:int4,group=32", "awq:int4,group=64", "awq:int4,group=128"]
DTYPES = [torch.float32, torch.float16, torch.bfloat16]
NP_OF = {"INT32": np.int32, "FLOAT16": np.float16}
# The producers' exceptions a lowbit refusal answers: (family, type, start of the message).
PEER_REFUSALS = [
    ("awq", "AssertionError", ""),  # pseudo_quantize_tensor: a NaN weight, or NaN from a float16 overflow
]
# Where lowbit refuses and the producer goes on (its result is not a weight): (family, kind, the
# start of lowbit's message). GPTQModel takes a NaN or infinite weight to a NaN or infinite scale
# and packs the NaN codes torch's float -> int32 conversion makes (INT_MIN on x86-64) into the words.
DECLARED_REFUSALS = [
    ("gptq", "nonfinite", "GPTQModel's range gives a NaN scale"),
]


def weight(rng, kind, rows, cols, dtype):
    w = torch.from_numpy(rng.standard_normal((rows, cols)).astype(np.float32))
    if kind == "edges":
        w[0] = 0.0
        w[1, : cols // 2] = 0.0
        w[2] = 0.5
        w[3] = -w[3].abs()
        w[4] = w[4].abs()
        w[5] = torch.from_numpy(rng.integers(-4, 12, cols).astype(np.float32)) + 0.5
    elif kind == "scaled":
        w *= float(10.0 ** rng.uniform(-6, 4))
    elif kind == "nonfinite":
        w[int(rng.integers(rows)), int(rng.integers(cols))] = float(rng.choice([np.nan, np.inf, -np.inf]))
    return w.to(dtype)


def compare(label, tally, failures, got, expected):
    if got == expected:
        tally["bytes"] += len(got)
    else:
        at = next((i for i, (a, b) in enumerate(zip(got, expected)) if a != b), min(len(got), len(expected)))
        failures.append(f"{label}: first difference at byte {at} of {len(expected)}")


def run_case(family, scheme, w, g_idx, tally, failures, label):
    shape = list(w.shape)
    try:
        if family == "gptq":
            stored, dequantized = peers.gptq_quantize(scheme, w, g_idx)
        else:
            stored, dequantized = peers.awq_quantize(scheme, w)
        peer_error = None
    except Exception as e:
        peer_error = f"{type(e).__name__}: {e}"
    try:
        q = blocks.quantize(w, scheme, g_idx=None if g_idx is None else np.asarray(g_idx, dtype=np.int32),
                            out_type="numpy")
        ours_error = None
    except Exception as e:
        q, ours_error = None, f"{type(e).__name__}: {e}"
    kind = label.split()[2]
    declared = ours_error and any(f == family and k == kind and m in ours_error
                                  for f, k, m in DECLARED_REFUSALS)
    accepted = peer_error and any(f == family and peer_error.startswith(f"{t}: {m}") for f, t, m in PEER_REFUSALS)
    if peer_error or ours_error:
        if ours_error and (accepted or (declared and not peer_error)):
            tally["refusals"] += 1
        else:
            failures.append(f"{label}: producer {peer_error or 'quantized'}, lowbit {ours_error or 'quantized'}")
        return
    ours = q.storage()
    if list(ours) != list(stored):
        failures.append(f"{label}: tensors {list(ours)}, producer {list(stored)}")
        return
    for name, (dtype, dims, raw) in stored.items():
        compare(f"{label} {name}", tally, failures, np.ascontiguousarray(ours[name]).tobytes(), raw)
    compare(f"{label} dequantize", tally, failures, q.dequantize(dtype="float16").tobytes(), dequantized)
    arrays = {n: np.frombuffer(raw, dtype=NP_OF[d]).reshape(dims) for n, (d, dims, raw) in stored.items()}
    back = blocks.from_storage(arrays, scheme, shape)
    compare(f"{label} from_storage dequantize", tally, failures, back.dequantize(dtype="float16").tobytes(), dequantized)
    ours_raw = {n: (d, dims, np.ascontiguousarray(ours[n]).tobytes()) for n, (d, dims, _) in stored.items()}
    peer_of_ours = (peers.gptq_dequantize if family == "gptq" else peers.awq_dequantize)(scheme, ours_raw, shape)
    compare(f"{label} producer's dequantize of lowbit's tensors", tally, failures, peer_of_ours, dequantized)
    tally["cases"] += 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--family", choices=["gptq", "awq"], action="append")
    ap.add_argument("--cases", type=int, default=4, help="random weights per scheme, dtype and kind")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", default="", help="only schemes containing this")
    args = ap.parse_args()
    torch.set_num_threads(1)
    rng = np.random.default_rng(args.seed)
    tally = {"cases": 0, "bytes": 0, "refusals": 0}
    failures = []
    start = time.time()
    for family in args.family or ["gptq", "awq"]:
        for scheme in GPTQ_SCHEMES if family == "gptq" else AWQ_SCHEMES:
            if args.only not in scheme:
                continue
            for dtype in DTYPES:
                for kind in ["normal", "edges", "scaled", "nonfinite"]:
                    for i in range(args.cases):
                        rows = int(rng.choice([32, 64, 96]))
                        cols = 128 * int(rng.integers(1, 3))
                        w = weight(rng, kind, rows, cols, dtype)
                        g_idx = None
                        if "actorder" in scheme:
                            g_idx = (rng.permutation(cols) // 16).astype(np.int32).tolist()
                        run_case(family, scheme, w, g_idx, tally, failures,
                                 f"{scheme} {str(dtype)[6:]} {kind} #{i} {rows}x{cols}")
    print(f"compared {tally['cases']} weights ({tally['bytes']} bytes), {tally['refusals']} refused (a producer "
          f"exception met by a lowbit refusal, or a declared one), {len(failures)} differences, {time.time() - start:.1f} s; {peers.VERSIONS}")
    for f in failures[:40]:
        print("  " + f)
    if failures or tally["cases"] == 0:
        sys.exit(1)


if __name__ == "__main__":
    main()
