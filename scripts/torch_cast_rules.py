#!/usr/bin/env python3
"""Prints the witness tables of docs/research/torch_casts.md: for each rule where PyTorch's CPU casts
differ from lowbit's profiles, a few inputs with torch's answer under each CPU capability (alone in
a 1-element tensor, where the scalar loop converts it, and as element 0 of a 64-element tensor of
copies, where a vector loop does) and the answers of lowbit's profiles (ONNX default attributes:
saturate=1, round_mode=up).

Optional, like scripts/crosscheck_torch.py, whose venv it uses (torch 2.15.0 and the lowbit
package built into it):
    PY=$(bash scripts/torch-venv.sh) && "$PY" scripts/torch_cast_rules.py [--rule NAME]
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np

import crosscheck_common as cc
import crosscheck_torch as ct

PROFILES = ("spec", "ml-dtypes", "onnxruntime", "xla")
CAPABILITIES = ("default", "avx2", "native")
F32 = lambda v: int(np.float32(v).view(np.uint32))  # noqa: E731
F64 = lambda v: int(np.float64(v).view(np.uint64))  # noqa: E731

# rule -> [(src, to, [codes])]
RULES = {
    "float64-through-float32": [
        ("DOUBLE", "FLOAT16", [F64(1 + 2 ** -11 + 2 ** -30)]),
        ("DOUBLE", "BFLOAT16", [F64(1 + 2 ** -8 + 2 ** -30)]),
        ("DOUBLE", "FLOAT8E4M3FN", [F64(1.0625 + 2 ** -30)]),
        ("DOUBLE", "FLOAT8E8M0", [F64(1.5 - 2 ** -30)]),
        ("INT64", "BFLOAT16", [16842753]),
    ],
    "float8-saturation": [
        ("FLOAT", "FLOAT8E4M3FN", [F32(464.0), F32(1e10), F32(np.inf), F32(-np.inf)]),
        ("FLOAT", "FLOAT8E5M2", [F32(61440.0), F32(1e10), F32(np.inf)]),
        ("FLOAT", "FLOAT8E4M3FNUZ", [F32(248.0), F32(1e10), F32(np.inf)]),
        ("FLOAT", "FLOAT8E5M2FNUZ", [F32(61440.0), F32(np.inf)]),
    ],
    "e5m2-nan": [
        ("FLOAT", "FLOAT8E5M2", [0x7FC00000, 0xFFC00000]),
        ("FLOAT16", "FLOAT8E5M2", [0x7E00, 0xFC01]),
        ("FLOAT8E4M3FNUZ", "FLOAT8E5M2", [0x80]),
    ],
    "e8m0": [
        ("FLOAT", "FLOAT8E8M0", [F32(0.0), F32(-4.0), F32(-0.75), F32(1.5), F32(3.0 * 2 ** -128), 0x00500000,
                                 0x7F7FFFFF, F32(np.inf), 0x7FC00000]),
        ("INT32", "FLOAT8E8M0", [0, 0xFFFFFFFF, 3, 0x17FFFFFF]),
    ],
    "narrow-nan-to-wide": [
        ("FLOAT8E4M3FN", "FLOAT", [0x7F, 0xFF]),
        ("FLOAT8E5M2", "FLOAT", [0x7D, 0xFE]),
        ("FLOAT8E4M3FNUZ", "FLOAT", [0x80]),
        ("FLOAT8E5M2FNUZ", "DOUBLE", [0x80]),
        ("FLOAT8E8M0", "FLOAT", [0xFF]),
        ("FLOAT8E8M0", "FLOAT16", [0xFF]),
        ("FLOAT8E4M3FN", "BFLOAT16", [0xFF]),
    ],
    "nan-payloads": [
        ("FLOAT16", "FLOAT", [0x7C01, 0x7E00, 0xFE00]),
        ("FLOAT16", "DOUBLE", [0x7C01, 0xFE00]),
        ("BFLOAT16", "FLOAT", [0x7F81, 0xFFC1]),
        ("FLOAT", "BFLOAT16", [0x7FC00000, 0xFF800001]),
        ("DOUBLE", "BFLOAT16", [0x7FF8000000000000]),
        ("FLOAT", "FLOAT16", [0x7F800001, 0xFFC00000]),
        ("FLOAT16", "BFLOAT16", [0x7C01, 0xFE00]),
        ("BFLOAT16", "FLOAT16", [0x7F81, 0xFFC0]),
    ],
    "float-to-integer": [
        ("DOUBLE", "UINT8", [F64(4294967295.0), F64(-1.0), F64(2.0 ** 40 + 7)]),
        ("FLOAT", "INT8", [F32(300.0), F32(5e9), F32(np.nan)]),
        ("FLOAT", "INT64", [F32(np.nan), F32(np.inf), F32(1e20)]),
        ("FLOAT", "UINT64", [F32(np.nan), F32(-1.0), F32(-5e9), F32(1e20), F32(np.inf)]),
        ("DOUBLE", "UINT64", [F64(-1.0), F64(2.0 ** 64)]),
    ],
    "float-to-uint32": [
        ("FLOAT", "UINT32", [F32(np.nan), F32(-np.inf), F32(np.inf), F32(-2147483904.0), F32(5e9)]),
        ("DOUBLE", "UINT32", [F64(np.nan), F64(-1e10)]),
        ("FLOAT16", "UINT32", [0x7E00, 0xFC00, 0x7C00]),
        ("BFLOAT16", "UINT32", [0x7FC0, 0xFF80, 0xCF01]),
    ],
    "float8-specials-to-integer": [
        ("FLOAT8E5M2", "INT8", [0x7C, 0xFC, 0x7E]),
        ("FLOAT8E5M2", "INT32", [0x7C, 0xFC, 0x7E]),
        ("FLOAT8E5M2", "UINT64", [0x7C, 0xFC, 0x7E]),
        ("FLOAT8E4M3FN", "INT32", [0x7F]),
        ("FLOAT8E4M3FNUZ", "INT64", [0x80]),
    ],
    "float8-to-float8": [
        ("FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", [0x7E, 0x80, 0x7F]),
        ("FLOAT8E5M2", "FLOAT8E4M3FN", [0x7C, 0x7B]),
        ("FLOAT8E5M2FNUZ", "FLOAT8E4M3FNUZ", [0x7F]),
        ("FLOAT8E8M0", "FLOAT8E5M2", [0xFE, 0x00]),
    ],
    "float8-to-bool": [
        ("FLOAT8E4M3FN", "BOOL", [0x80]),
        ("FLOAT8E8M0", "BOOL", [0x00]),
    ],
}


def child(rules):
    import torch
    out = {"capability": torch.backends.cpu.get_cpu_capability(), "answers": {}}
    for name in rules:
        for src, to, codes in RULES[name]:
            scalar, vector = [], []
            for c in codes:
                scalar.append(int(ct.torch_cast(torch, src, to, np.array([c], dtype=np.uint64))[0]))
                vector.append(int(ct.torch_cast(torch, src, to, np.array([c] * 64, dtype=np.uint64))[0]))
            out["answers"][f"{name}|{src}|{to}"] = {"scalar": scalar, "vector": vector}
    print(json.dumps(out))


def show(code, dtype):
    return ct._hex(code, dtype)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rule", default="", help="only this rule")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    rules = [r for r in RULES if not args.rule or r == args.rule]
    if args.child:
        return child(rules)
    import lowbit
    torch_runs = {}
    for cap in CAPABILITIES:
        env = dict(os.environ)
        env.pop("ATEN_CPU_CAPABILITY", None)
        if cap != "native":
            env["ATEN_CPU_CAPABILITY"] = cap
        cmd = [sys.executable, __file__, "--child"] + (["--rule", args.rule] if args.rule else [])
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
        torch_runs[cap] = json.loads(p.stdout)
    caps = [f"{c} ({torch_runs[c]['capability']})" if c == "native" else c for c in CAPABILITIES]
    for name in rules:
        print(f"\n#### {name}\n")
        print("| input | torch scalar | torch vector | " + " | ".join(PROFILES) + " |")
        print("|---|---|---|" + "---|" * len(PROFILES))
        for src, to, codes in RULES[name]:
            key = f"{name}|{src}|{to}"
            for i, c in enumerate(codes):
                cells = []
                for part in ("scalar", "vector"):
                    answers = [torch_runs[cap]["answers"][key][part][i] for cap in CAPABILITIES]
                    if len(set(answers)) == 1:
                        cells.append(show(answers[0], to))
                    else:
                        cells.append(", ".join(f"{cap}: {show(a, to)}" for cap, a in zip(caps, answers)))
                for profile in PROFILES:
                    codes_in = np.array([c], dtype=np.uint64)
                    ours = ct.lowbit_cast(lowbit, src, to, codes_in, profile, None, None)
                    cells.append(show(ours[0], to))
                print(f"| {src} {show(c, src)} -> {to} | " + " | ".join(cells) + " |")
    print(f"\n(torch capabilities: {', '.join(caps)}; lowbit {lowbit.__version__}, ONNX default attributes)")


if __name__ == "__main__":
    sys.exit(main())
