"""Records GPTQModel 7.7.0's and AutoAWQ 0.2.9's quantize, storage and dequantize of small weights
into tests/data/integer/gptq/ and tests/data/integer/awq/ (manifest.json + data.bin each), which
tests/integer_gptq.rs and tests/integer_awq.rs check lowbit against bit for bit.

Run with the peers installed as scripts/gptq_awq_peers.py says:
    python scripts/gen_integer_gptq_fixtures.py

Each case: the scheme, the input dtype, shape and bytes, the g_idx given (act-order), then either the
tensors the producer saved (name, ONNX dtype, shape, bytes, in its order) and its dequantized
weight (float16, out x in), or the exception it raised (type and message). Inputs: random normal
weights, zero rows and groups, constant groups, exact ties of the integer rounding (torch.round
is half to even) in the codes and in the zero points, huge and tiny magnitudes, float16 and
bfloat16 inputs, non-negative weights under sym, act-order permutations and uneven groups.
"""
import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import gptq_awq_peers as peers  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
ONNX = {torch.float32: "FLOAT", torch.float16: "FLOAT16", torch.bfloat16: "BFLOAT16"}


def raw(t):
    return t.contiguous().view(torch.uint8).numpy().tobytes() if t.dtype == torch.bfloat16 else t.contiguous().numpy().tobytes()


class Recorder:
    def __init__(self, family):
        self.dir = ROOT / "tests" / "data" / "integer" / family
        self.data = bytearray()
        self.cases = []

    def blob(self, b):
        at = len(self.data)
        self.data.extend(b)
        return [at, len(b)]

    def record(self, name, scheme, w, run, g_idx=None):
        case = {"name": name, "scheme": scheme, "dtype": ONNX[w.dtype], "shape": list(w.shape),
                "input": self.blob(raw(w)), "g_idx": None if g_idx is None else [int(g) for g in g_idx]}
        try:
            stored, dequantized = run(w)
        except Exception as e:  # the producer's refusal, recorded
            case["refusal"] = {"type": type(e).__name__, "message": str(e)[:200]}
        else:
            case["tensors"] = [{"name": n, "dtype": d, "shape": s, "data": self.blob(b)} for n, (d, s, b) in stored.items()]
            case["dequantized_float16"] = self.blob(dequantized)
        self.cases.append(case)

    def write(self):
        self.dir.mkdir(parents=True, exist_ok=True)
        (self.dir / "data.bin").write_bytes(bytes(self.data))
        manifest = {"versions": peers.VERSIONS, "script": "scripts/gen_integer_gptq_fixtures.py", "cases": self.cases}
        (self.dir / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
        print(f"{self.dir}: {len(self.cases)} cases, {len(self.data)} bytes of data")


def weights(seed, rows=32, cols=64):
    """Named float32 weights of the edge kinds, (rows, cols)."""
    g = torch.Generator().manual_seed(seed)
    out = {"normal": torch.randn(rows, cols, generator=g)}
    w = torch.randn(rows, cols, generator=g)
    w[0] = 0.0
    w[1, :16] = 0.0
    w[2, :] = 0.75
    w[3, :] = -2.5
    w[4, 16:32] = 3.0
    w[5] = -w[5].abs()
    w[6] = w[6].abs()
    w[7, :] = -0.0
    out["zeros_constants_signs"] = w
    # Ties: a group of range -1..14 (scale 1 for 4 bits asym) holding k + 0.5; zero-point ties.
    t = torch.randn(rows, cols, generator=g)
    t[:, 0], t[:, 1] = -1.0, 14.0
    t[:, 2:10] = torch.tensor([0.5, 1.5, 2.5, 3.5, -0.5, 4.5, 5.5, 12.5])
    t[8:16, 0] = -0.5
    t[8:16, 1] = 14.5
    t[16:24, 0] = -2.5
    t[16:24, 1] = 12.5
    out["ties"] = t
    m = torch.randn(rows, cols, generator=g)
    m[:8] *= 1e30
    m[8:16] *= 1e-30
    m[16:24] *= 6e4
    m[24:] *= 1e-6
    out["magnitudes"] = m
    return out


def gptq_cases(rec):
    run = lambda scheme: (lambda w: peers.gptq_quantize(scheme, w))  # noqa: E731
    for scheme in ["gptq:int4,group=32", "gptq:int4,group=32,asym", "gptq:int8,group=32,asym",
                   "gptq:int8,group=32", "gptq:int4,group=-1,asym,zeros=v2", "gptq:int4,group=16,asym,zeros=v2"]:
        for name, w in weights(1).items():
            if name == "magnitudes" and scheme != "gptq:int4,group=32,asym":
                continue
            if name == "normal" and scheme in ("gptq:int8,group=32", "gptq:int4,group=16,asym,zeros=v2"):
                continue
            if name == "zeros_constants_signs" and scheme not in ("gptq:int4,group=32", "gptq:int4,group=32,asym"):
                continue
            rec.record(f"{name}/float32", scheme, w, run(scheme))
    for dtype in (torch.float16, torch.bfloat16):
        for name, w in weights(2).items():
            if name == "magnitudes":
                w = w.clamp(-6e4, 6e4)
            if name == "normal" and dtype == torch.bfloat16:
                continue
            rec.record(f"{name}/{ONNX[dtype]}", "gptq:int4,group=32,asym", w.to(dtype), run("gptq:int4,group=32,asym"))
    w16 = weights(3)["normal"].to(torch.float16)
    rec.record("normal/FLOAT16", "gptq:int8,group=64,asym", w16, run("gptq:int8,group=64,asym"))
    # Dimensions that are not multiples of 32 go through pack_original (partial words).
    odd = torch.randn(12, 48, generator=torch.Generator().manual_seed(4))
    rec.record("odd_shape/float32", "gptq:int4,group=16,asym", odd, run("gptq:int4,group=16,asym"))
    rec.record("odd_shape/float32", "gptq:int8,group=16", odd, run("gptq:int8,group=16"))
    # TorchLinear's group sizes are -1 and powers of two from 16 to 1024.
    rec.record("group_12/float32", "gptq:int4,group=12,asym", odd[:, :36], run("gptq:int4,group=12,asym"))
    # act-order: a permutation of equal groups, and uneven groups (one left empty).
    g = torch.Generator().manual_seed(5)
    w = torch.randn(32, 64, generator=g)
    perm = torch.randperm(64, generator=g)
    g_idx = torch.empty(64, dtype=torch.int32)
    g_idx[perm] = torch.arange(64, dtype=torch.int32) // 16
    for scheme in ["gptq:int4,group=16,actorder", "gptq:int4,group=16,asym,actorder"]:
        rec.record("actorder_permuted/float32", scheme, w, lambda x, s=scheme: peers.gptq_quantize(s, x, g_idx.tolist()),
                   g_idx.tolist())
    uneven = [0] * 10 + [1] * 30 + [3] * 24
    rec.record("actorder_uneven/FLOAT16", "gptq:int4,group=16,asym,actorder", w.to(torch.float16),
               lambda x: peers.gptq_quantize("gptq:int4,group=16,asym,actorder", x, uneven), uneven)


def awq_cases(rec):
    run = lambda scheme: (lambda w: peers.awq_quantize(scheme, w))  # noqa: E731
    for dtype in (torch.float16, torch.float32, torch.bfloat16):
        for name, w in weights(11).items():
            if name == "magnitudes":
                w = w.clamp(-3e4, 3e4)
            rec.record(f"{name}/{ONNX[dtype]}", "awq:int4,group=32", w.to(dtype), run("awq:int4,group=32"))
    w = weights(12)["normal"].to(torch.float16)
    rec.record("normal/FLOAT16", "awq:int4,group=64", w, run("awq:int4,group=64"))
    # from_linear packs out_features // 32 * 4 words: fewer than 32 output rows leave none.
    odd = torch.randn(24, 48, generator=torch.Generator().manual_seed(13)).to(torch.float16)
    rec.record("refused_rows_24/FLOAT16", "awq:int4,group=16", odd, run("awq:int4,group=16"))
    # Refusals: a NaN, an infinity, a range that overflows float16.
    for name, value in [("nan", float("nan")), ("inf", float("inf"))]:
        x = weights(14)["normal"].to(torch.float16)
        x[3, 5] = value
        rec.record(f"refused_{name}/FLOAT16", "awq:int4,group=32", x, run("awq:int4,group=32"))
    x = weights(15)["normal"]
    x[2, 0], x[2, 1] = 60000.0, -60000.0
    rec.record("refused_range_overflow/float32", "awq:int4,group=32", x, run("awq:int4,group=32"))


def main():
    torch.set_num_threads(1)
    rec = Recorder("gptq")
    gptq_cases(rec)
    rec.write()
    rec = Recorder("awq")
    awq_cases(rec)
    rec.write()


if __name__ == "__main__":
    main()
