#!/usr/bin/env python3
"""Writes tests/data/integer/compressed_tensors/: compressed-tensors' integer weights as the live
package computes them, so that tests/integer_compressed_tensors.rs checks lowbit's
`compressed-tensors:int4|int8` row bit for bit without torch.

    target/blocks-venv/bin/python scripts/gen_integer_compressed_tensors_fixtures.py [--check]

For every case (a scheme, an input dtype and a weight): the qparams `calculate_qparams` gives for
the memoryless min/max of each group (torch.amin/amax in the weight's dtype), the codes of
`quantize(..., dtype=torch.int8)`, the tensors the compressor's `compress` leaves (in its order)
and the weight its `decompress` gives back; where the package raises, the exception's type and
message. Single-threaded torch; every run writes the same bytes. `--check` regenerates in memory
and exits 1 if the files differ. It refuses to run (exit 2) without the pinned packages.
"""

import argparse
import hashlib
import importlib.metadata
import json
import os
import sys
import warnings

PINS = {"torch": "2.15.0", "compressed-tensors": "0.20.0", "numpy": None}
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "integer", "compressed_tensors")


def fail(message):
    print(f"gen_integer_compressed_tensors_fixtures: {message}", file=sys.stderr)
    sys.exit(2)


def check_pins():
    versions = {}
    for name, pin in PINS.items():
        try:
            have = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            fail(f"{name} is not installed (pinned: {pin or 'any'})")
        if pin is not None and have != pin:
            fail(f"{name} {have} is installed, the fixtures are pinned to {pin}")
        versions[name] = have
    return versions


versions = check_pins()
warnings.filterwarnings("ignore")
import numpy as np  # noqa: E402
import torch  # noqa: E402

torch.set_num_threads(1)
from compressed_tensors.compressors.naive_quantized.base import IntQuantizationCompressor  # noqa: E402
from compressed_tensors.compressors.pack_quantized.base import PackedQuantizationCompressor  # noqa: E402
from compressed_tensors.quantization import QuantizationArgs, QuantizationScheme  # noqa: E402
from compressed_tensors.quantization.lifecycle.forward import dequantize, quantize  # noqa: E402
from compressed_tensors.quantization.quant_scheme import PRESET_SCHEMES  # noqa: E402
from compressed_tensors.quantization.utils.helpers import calculate_qparams  # noqa: E402

DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
TORCH_NAMES = {torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16", torch.int8: "i8",
               torch.int32: "i32", torch.int64: "i64"}


def parse_scheme(name):
    """lowbit's scheme name -> (QuantizationArgs, compressor, preset), from PRESET_SCHEMES."""
    head, *options = name.split(",")
    fmt = head.split(":")[1]
    bits = {"int4": 4, "int8": 8}[fmt]
    preset = {4: "W4A16", 8: "W8A16"}[bits]
    fields = PRESET_SCHEMES[preset]["weights"].model_dump()
    compressor = "pack-quantized"
    for o in options:
        key, _, value = o.partition("=")
        if key == "group":
            fields.update(strategy="group", group_size=int(value))
        elif key == "channel":
            fields.update(strategy="channel", group_size=None)
        elif key in ("sym", "asym"):
            fields.update(symmetric=key == "sym")
        elif key == "format":
            compressor = value
        else:
            raise ValueError(o)
    if not fields["symmetric"] and bits == 4 and fields["strategy"] == "group":
        preset = "W4A16_ASYM"
    return QuantizationArgs(**fields), compressor, preset


def min_max(w, args):
    """The memoryless min/max observer: torch.amin/amax per group (or row) in the weight's dtype."""
    rows, cols = w.shape
    if args.strategy == "group":
        g = args.group_size
        groups = torch.nn.functional.pad(w, (0, (-cols) % g)).reshape(rows, -1, g)
        return torch.amin(groups, dim=-1), torch.amax(groups, dim=-1)
    return torch.amin(w, dim=1, keepdim=True), torch.amax(w, dim=1, keepdim=True)


def compressor_of(args, compressor_name):
    if compressor_name == "pack-quantized":
        return PackedQuantizationCompressor, QuantizationScheme(targets=["Linear"], weights=args)
    # int-quantized is the compressor of integer weights with quantized activations (W8A8).
    return IntQuantizationCompressor, QuantizationScheme(
        targets=["Linear"], weights=args, input_activations=PRESET_SCHEMES["W8A8"]["input_activations"])


def peer_quantize(w, scheme_name):
    """What a user's weight becomes: qparams, then the compressor's compress (which quantizes)."""
    args, compressor_name, _ = parse_scheme(scheme_name)
    scale, zp = calculate_qparams(*min_max(w, args), args)
    compressor, scheme = compressor_of(args, compressor_name)
    return compressor.compress({"weight": w, "weight_scale": scale, "weight_zero_point": zp}, scheme)


def peer(w, scheme_name):
    args, compressor_name, preset = parse_scheme(scheme_name)
    scale, zp = calculate_qparams(*min_max(w, args), args)
    q = quantize(w, scale, zp, args, dtype=torch.int8)
    compressor, scheme = compressor_of(args, compressor_name)
    stored = compressor.compress({"weight": w, "weight_scale": scale, "weight_zero_point": zp}, scheme)
    # decompress's arithmetic (unpack, then dequantize), called directly: decompress itself raises
    # on some shapes (recorded below).
    deq = dequantize(q, scale, None if args.symmetric else zp, args)
    out = {"preset": preset, "scale": scale, "zero_point": zp, "q": q, "stored": stored, "dequantized": deq}
    try:
        back = compressor.decompress(dict(stored), scheme)["weight"]
        if not torch.equal(back.view(torch.uint8 if back.dtype == torch.float32 else torch.int16),
                           deq.view(torch.uint8 if deq.dtype == torch.float32 else torch.int16)):
            raise SystemExit(f"decompress and dequantize differ: {scheme}")
    except RuntimeError as e:
        out["decompress_refusal"] = {"type": type(e).__name__, "message": str(e)}
    return out


class Blob:
    def __init__(self):
        self.data = bytearray()
        self.seen = {}

    def add(self, t):
        if isinstance(t, torch.Tensor):
            t = t.detach().contiguous()
            dtype = TORCH_NAMES[t.dtype]
            arr = (t.view(torch.int16) if t.dtype == torch.bfloat16 else t).numpy()
            raw = np.ascontiguousarray(arr).astype(arr.dtype.newbyteorder("<")).tobytes()
            shape = list(t.shape)
        else:
            raise TypeError(type(t))
        key = hashlib.sha256(raw).hexdigest()
        if key not in self.seen:
            self.seen[key] = len(self.data)
            self.data += raw
            self.data += b"\0" * ((-len(self.data)) % 8)
        return {"dtype": dtype, "shape": shape, "offset": self.seen[key], "nbytes": len(raw)}


def random_weight(rows, cols, seed):
    g = torch.Generator().manual_seed(seed)
    w = torch.randn(rows, cols, generator=g) * torch.exp(torch.randn(rows, 1, generator=g))
    return w


def edge_weight(dtype):
    """40 rows of 16: one kind of edge per row (groups of 8 and whole rows both see them)."""
    big = {torch.float32: 3e38, torch.float16: 60000.0, torch.bfloat16: 3e38}[dtype]
    tiny = {torch.float32: 1e-44, torch.float16: 6e-8, torch.bfloat16: 1e-39}[dtype]
    rows = []
    rows.append([0.0] * 16)  # zeros
    rows.append([-0.0] * 8 + [0.0] * 8)  # signed zeros
    rows.append([1.25] * 16)  # a constant positive group
    rows.append([-3.0] * 16)  # a constant negative group
    rows.append([float("nan")] + [1.0] * 15)  # NaN in the first group
    rows.append([1.0] * 15 + [float("nan")])  # NaN in the second group
    rows.append([float("inf")] + [1.0, -2.0] * 7 + [0.5])
    rows.append([float("-inf")] + [1.0, -2.0] * 7 + [0.5])
    rows.append([float("inf"), float("-inf")] + [1.0] * 14)
    rows.append([big, -big] + [1.0] * 6 + [big] * 4 + [-big] * 4)  # huge: max - min overflows
    rows.append([tiny, -tiny] + [0.0] * 6 + [tiny * 3] * 8)  # subnormal scales
    # Exact ties of the integer rounding: amax 7.5 gives scale 1 (int4 symmetric), so k + 0.5 ties.
    rows.append([7.5, 0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.5] + [7.5, 4.5, 5.5, 6.5, -3.5, -4.5, -5.5, -6.5])
    # Asymmetric ties: min -7.5, max 7.5 -> scale 1, zero point -8 + 7.5 = -0.5 (rounds to -0).
    rows.append([-7.5, 7.5, 0.5, 1.5, -0.5, 2.5, -2.5, 3.5] + [-7.5, 7.5, 4.5, -4.5, 5.5, -5.5, 6.5, 0.0])
    # int8 ties: amax 127.5 -> scale 1.
    rows.append([127.5, 0.5, 1.5, -0.5, -1.5, 2.5, 100.5, -100.5] + [-127.5, 127.5, 0.5, -0.5, 64.5, -64.5, 3.5, 0.0])
    rows.append([0.1 * k - 0.7 for k in range(16)])
    rows.append([1e-3 * (k - 8) for k in range(16)])
    rows.append([5.0] + [0.0] * 15)  # one outlier
    rows.append([-5.0] + [0.0] * 15)
    rows.append([2.0 ** -20 * (k + 1) for k in range(16)])
    rows.append([2.0 ** 20 * (k - 3) for k in range(16)])
    while len(rows) < 40:
        k = len(rows)
        rows.append([float(((k * 7 + j * 13) % 29) - 14) / 3.0 for j in range(16)])
    # NaN rows past the first 32 (torch's vector loops have a scalar tail).
    rows[36] = [float("nan")] * 16
    rows[38] = [2.0] * 8 + [float("nan")] + [2.0] * 7
    return torch.tensor(rows, dtype=torch.float32).to(dtype)


SCHEMES_RANDOM = [
    "compressed-tensors:int4",
    "compressed-tensors:int4,asym",
    "compressed-tensors:int4,group=32,asym",
    "compressed-tensors:int4,channel",
    "compressed-tensors:int4,channel,asym",
    "compressed-tensors:int8",
    "compressed-tensors:int8,asym",
    "compressed-tensors:int8,channel,format=int-quantized",
    "compressed-tensors:int8,group=64,asym,format=int-quantized",
    "compressed-tensors:int4,group=64,asym,format=int-quantized",
]
SCHEMES_EDGE = [
    "compressed-tensors:int4,group=8",
    "compressed-tensors:int4,group=8,asym",
    "compressed-tensors:int4,channel",
    "compressed-tensors:int4,channel,asym",
    "compressed-tensors:int8,group=8,asym",
    "compressed-tensors:int8,channel,format=int-quantized",
    "compressed-tensors:int8,group=16,asym,format=int-quantized",
]


def cases():
    """(case name, scheme, dtype name, weight)."""
    out = []
    for dname, dt in DTYPES.items():
        w = random_weight(6, 128, 7).to(dt)
        for s in SCHEMES_RANDOM:
            out.append((f"random_{dname}", s, dname, w))
        e = edge_weight(dt)
        for s in SCHEMES_EDGE:
            out.append((f"edge_{dname}", s, dname, e))
        # Channel packing of a row whose length is no multiple of 8, and 5 rows of zero points.
        odd = random_weight(5, 36, 11).to(dt)
        for s in ("compressed-tensors:int4,channel,asym", "compressed-tensors:int8,channel,asym"):
            out.append((f"odd_{dname}", s, dname, odd))
        # Groups of one element: torch's multiply runs one loop over the whole weight.
        out.append((f"edge_{dname}", "compressed-tensors:int4,group=1,format=int-quantized", dname, e))
        # Groups that do not divide the row: the package refuses.
        out.append((f"short_group_{dname}", "compressed-tensors:int4,group=128", dname, random_weight(2, 100, 3).to(dt)))
        # bfloat16's vector loop along a group of 40 (32 + a scalar tail of 8).
        nan40 = random_weight(9, 80, 5).to(dt)
        nan40[1, 3] = float("nan")
        nan40[2, 41] = float("inf")
        out.append((f"nan_group40_{dname}", "compressed-tensors:int4,group=40,asym", dname, nan40))
    return out


def generate():
    blob = Blob()
    records = []
    compared = 0
    for name, scheme, dname, w in cases():
        rec = {"case": name, "scheme": scheme, "dtype": dname, "input": blob.add(w)}
        try:
            r = peer(w, scheme)
        except Exception as e:  # recorded as the package's refusal
            rec["refusal"] = {"type": type(e).__name__, "message": str(e)}
            records.append(rec)
            continue
        rec["preset"] = r["preset"]
        rec["scale"] = blob.add(r["scale"])
        rec["zero_point"] = blob.add(r["zero_point"])
        rec["q"] = blob.add(r["q"])
        rec["stored"] = [dict(name=k, **blob.add(v)) for k, v in r["stored"].items()]
        rec["dequantized"] = blob.add(r["dequantized"])
        if "decompress_refusal" in r:
            rec["decompress_refusal"] = r["decompress_refusal"]
        compared += w.numel()
        records.append(rec)
    manifest = {
        "generator": "scripts/gen_integer_compressed_tensors_fixtures.py",
        "versions": versions,
        "functions": "compressed_tensors 0.20.0: calculate_qparams (per-group torch.amin/amax), "
                     "quantize(dtype=int8), PackedQuantizationCompressor / IntQuantizationCompressor "
                     "compress and decompress",
        "cases": records,
    }
    text = json.dumps(manifest, indent=1, sort_keys=True) + "\n"
    return text.encode(), bytes(blob.data), len(records), compared


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    manifest, data, n, elements = generate()
    if n == 0 or elements == 0:
        print("no case generated", file=sys.stderr)
        sys.exit(1)
    paths = {os.path.join(OUT, "manifest.json"): manifest, os.path.join(OUT, "data.bin"): data}
    if a.check:
        bad = [p for p, b in paths.items() if not os.path.exists(p) or open(p, "rb").read() != b]
        print(f"{n} cases, {elements} elements compared; {'differ: ' + ', '.join(bad) if bad else 'identical'}")
        sys.exit(1 if bad else 0)
    os.makedirs(OUT, exist_ok=True)
    for p, b in paths.items():
        with open(p, "wb") as f:
            f.write(b)
    print(f"{n} cases, {elements} elements written ({len(data)} bytes of arrays)")


if __name__ == "__main__":
    main()
