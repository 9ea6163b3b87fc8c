#!/usr/bin/env python3
"""Compares lowbit's casts under a profile (`lowbit.cast(x, to, profile=...)`, the Python package
built from python/) with PyTorch 2.15.0's `Tensor.to(dtype)` on the CPU, bit for bit, and fails on
any difference or when it compared nothing.

Optional: not part of `cargo test`. Needs the venv of scripts/torch-venv.sh (torch 2.15.0, numpy,
ml_dtypes 0.6.0; torch's Linux wheel is a CUDA build of about 5 GB that runs on the CPU) with the
lowbit package built into it:
    PY=$(bash scripts/torch-venv.sh) && "$PY" -m pip install maturin \
        && PATH=$(dirname "$PY"):$PATH pip install --no-build-isolation ./python
    "$PY" scripts/crosscheck_torch.py [--profile NAME] [--random N] [--seed S] [--only SRC->TO]
                                     [--capability CAP] [--quiet]

The 18 dtypes both have (float64, float32, float16, bfloat16, the four float8 variants, E8M0,
int8..int64, uint8..uint64, bool), every pair, identity included. Inputs per source:
  - long: every bit pattern of a source of 16 bits or fewer; for the 32- and 64-bit sources the
    edges of scripts/crosscheck_common.py (specials, NaN payloads, integer boundaries, every float32
    pattern whose low 16 bits are 0000/7FFF/8000/8001, float64 double-rounding witnesses) and, in a
    tensor of their own, random patterns (seeded; the seed is printed). Each long tensor ends in a
    tail of 7 specials, so its length is never a multiple of 4, 8, 16 or 32 and a vectorised loop
    ends in a scalar tail.
  - short: tensors of every length from 1 to 17 made of the source's specials (NaN payloads,
    infinities, zeros, the largest values, values out of the integers' ranges), rotated so that each
    special sits at every position of every length: answers that depend on an element's position in
    a vector block or the scalar tail show up here.
Each element is counted in one class: nan, inf, out-of-range (beyond the target's range: integers
after truncation, floats beyond their largest finite value) or in-range.

torch has no saturate or round_mode: lowbit runs every attribute set of the target (float8:
saturate 1 and 0; E8M0: every round_mode too) and each must equal torch's one answer (a profile
that fixes them gives one answer for all). Where torch raises, nothing is compared for the pair and
the pair is listed.

torch picks its kernels by CPU capability at import, from $ATEN_CPU_CAPABILITY: the script runs
itself once per capability (default, avx2 and the machine's own unless --capability is given),
prints `torch.backends.cpu.get_cpu_capability()` for each, the counts per pair and class, and
which pairs' torch answers differ between capabilities. With `--profile torch`, the `default`
capability is compared with the profile `torch-default` (its NaN codes differ in eight pairs,
docs/research/torch_casts.md); every other profile is compared as given under every capability. Exit status 1 on any difference, on a run
that compared nothing, or on a capability run that failed.
"""
import argparse
import hashlib
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import warnings

import ml_dtypes
import numpy as np

import crosscheck_common as cc

PEER = "torch 2.15.0"
# The dtypes both have: torch's attribute name -> ONNX name.
DTYPES = {
    "float64": "DOUBLE", "float32": "FLOAT", "float16": "FLOAT16", "bfloat16": "BFLOAT16",
    "float8_e4m3fn": "FLOAT8E4M3FN", "float8_e5m2": "FLOAT8E5M2", "float8_e4m3fnuz": "FLOAT8E4M3FNUZ",
    "float8_e5m2fnuz": "FLOAT8E5M2FNUZ", "float8_e8m0fnu": "FLOAT8E8M0",
    "int8": "INT8", "int16": "INT16", "int32": "INT32", "int64": "INT64",
    "uint8": "UINT8", "uint16": "UINT16", "uint32": "UINT32", "uint64": "UINT64", "bool": "BOOL",
}
ONNX_TO_TORCH = {v: k for k, v in DTYPES.items()}
CLASSES = ("nan", "inf", "out-of-range", "in-range")
SHORT_LENGTHS = range(1, 18)
# Values every source gets in its short tensors (converted into the source type; NaN and the
# payloads added per format below).
SHORT_VALUES = [0.0, -0.0, 1.0, -1.0, 1.5, 2.5, -2.5, 300.0, -129.0, 65536.0, -2147483904.0, 5e9, -5e9, 1.9e19,
                -1e20, 1e300, np.inf, -np.inf, 448.0, 480.0, 57344.0, 61440.0, 1e-40, 2.0 ** -127]
CAPABILITIES = ("default", "avx2")
# The profile a capability's answers are compared with when --profile torch is given.
TORCH_PROFILE_BY_CAPABILITY = {"default": "torch-default"}


# ------------------------------------------------------------------------------------------------
# Inputs


def float_specials(src):
    """Codes of the short tensors' values in `src`, NaN payloads and both signs included."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        vals = np.array(SHORT_VALUES, dtype=np.float64)
        if src in cc.INTEGER_RANGE:
            lo, hi = cc.INTEGER_RANGE[src]
            ints = {int(v) for v in vals if np.isfinite(v) and lo <= v <= hi}
            ints |= {lo, hi, lo + 1, hi - 1, 0, 1, min(hi, 255), min(hi, 256), min(hi, 65535), min(hi, 16777217),
                     min(hi, 2147483647), min(hi, 2 ** 53 + 1), max(lo, -1), max(lo, -65535)}
            return sorted(cc._unsigned(sorted(ints), cc.BITS[src]).tolist())
        codes = cc.array_codes(src, vals.astype(cc.NP[src])).tolist()
    bits = cc.BITS[src]
    top = (1 << bits) - 1
    if src == "FLOAT":
        codes += [0x7FC00000, 0xFFC00000, 0x7F800001, 0xFF800001, 0x7FA00000, 0x7FFFFFFF]
    elif src == "DOUBLE":
        codes += [0x7FF8000000000000, 0xFFF8000000000000, 0x7FF0000000000001, 0xFFF0000000000001,
                  0x7FF4000000000000, 0x7FFFFFFFFFFFFFFF]
    elif src == "FLOAT16":
        codes += [0x7C01, 0xFC01, 0x7E00, 0xFE00, 0x7D00, 0x7FFF, 0xFFFF]
    elif src == "BFLOAT16":
        codes += [0x7F81, 0xFF81, 0x7FC0, 0xFFC0, 0x7FA0, 0x7FFF, 0xFFFF]
    else:
        codes += [top, top >> 1, 1 << (bits - 1), (top >> 1) - 1, top - 1, 1, 0x80 | 1]
    return sorted(set(int(c) & top for c in codes))


def inputs(src, random_n, rng):
    """[(group, codes)]: the long tensors of the source."""
    if cc.BITS[src] <= 16:
        return [("long", cc.patterns(src, 0, rng))]
    edges = cc.patterns(src, 0, rng)
    rand = cc._random(cc.BITS[src], random_n, rng)
    rand = np.concatenate([rand, cc._tail(src)]) if random_n else rand
    return [("long", edges), ("random", rand)]


def short_tensors(src):
    """Tensors of 1..17 elements, rotating the specials so that each sits at every position."""
    s = float_specials(src)
    if src == "BOOL":
        s = [0, 1]
    m = len(s)
    out = []
    for n in SHORT_LENGTHS:
        for k in range(m):
            out.append(np.array([s[(i + k) % m] for i in range(n)], dtype=np.uint64))
    return out


def classify(src, to, codes):
    """Each element's class index into CLASSES."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        if src in cc.INTEGER_RANGE:
            x = cc.to_array(src, codes).astype(np.float64) if src != "BOOL" else codes.astype(np.float64)
            if src in ("INT64", "UINT64"):  # exact comparisons for the 64-bit integers
                vals = [int(v) for v in cc.to_array(src, codes).tolist()]
                x = np.array(vals, dtype=object)
        else:
            x = cc.to_array(src, codes).astype(np.float64)
    cls = np.full(len(codes), 3, dtype=np.int64)
    if x.dtype != object:
        nan = np.isnan(x)
        inf = np.isinf(x)
        cls[nan] = 0
        cls[inf] = 1
        finite = ~(nan | inf)
    else:
        finite = np.ones(len(codes), dtype=bool)
    if to in cc.INTEGER_RANGE and to != "BOOL":
        lo, hi = cc.INTEGER_RANGE[to]
        if x.dtype == object:
            out = np.array([not (lo <= v <= hi) for v in x], dtype=bool)
        else:
            with np.errstate(invalid="ignore"):
                t = np.trunc(np.where(finite, x, 0.0))
            out = finite & ((t < lo) | (t > hi))
        cls[out] = 2
    elif to in cc.FLOATS and to not in ("DOUBLE",):
        big = float(ml_dtypes.finfo(cc.NP[to]).max)
        if x.dtype == object:
            out = np.array([abs(v) > big for v in x], dtype=bool)
        else:
            out = finite & (np.abs(np.where(finite, x, 0.0)) > big)
        cls[out] = 2
    return cls


# ------------------------------------------------------------------------------------------------
# The peers


def torch_cast(torch, src, to, codes):
    """torch's `Tensor.to` of the codes, as codes."""
    bits = cc.BITS[src]
    if src == "BOOL":
        x = torch.from_numpy(codes.astype(np.bool_))
    else:
        signed = {8: np.uint8, 16: np.int16, 32: np.int32, 64: np.int64}[bits]
        carrier = torch.from_numpy(codes.astype({8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}[bits])
                                   .view(signed).copy())
        x = carrier.view(getattr(torch, ONNX_TO_TORCH[src]))
    y = x.to(getattr(torch, ONNX_TO_TORCH[to]))
    if to == "BOOL":
        return y.view(torch.uint8).numpy().astype(np.uint64)
    tbits = cc.BITS[to]
    carrier = {8: torch.uint8, 16: torch.int16, 32: torch.int32, 64: torch.int64}[tbits]
    unsigned = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}[tbits]
    return y.contiguous().view(carrier).numpy().view(unsigned).astype(np.uint64)


def lowbit_cast(lowbit, src, to, codes, profile, saturate, round_mode):
    kwargs = {"profile": profile, "threads": 1}
    if saturate is not None:
        kwargs["saturate"] = bool(saturate)
    if round_mode is not None:
        kwargs["round_mode"] = round_mode
    y = lowbit.cast(cc.to_array(src, codes), to, **kwargs)
    return cc.array_codes(to, y)


# ------------------------------------------------------------------------------------------------
# One capability


class PairTally:
    """Counts per (pair, attribute set): compared and differing per group and class, and examples."""

    def __init__(self):
        self.rows = {}  # key -> {(group, class): [compared, differing]}
        self.examples = {}  # key -> [text]
        self.raises = {}  # pair -> message

    def add(self, key, group, cls, diff, src, to, codes, theirs, ours, where=""):
        row = self.rows.setdefault(key, {})
        for c in range(len(CLASSES)):
            sel = cls == c
            n = int(sel.sum())
            if n:
                cell = row.setdefault((group, CLASSES[c]), [0, 0])
                cell[0] += n
                cell[1] += int((diff & sel).sum())
        bad = np.nonzero(diff)[0]
        ex = self.examples.setdefault(key, [])
        for i in bad[:max(0, 4 - len(ex))]:
            ex.append(f"{group}{where} element {i}: {src} {_hex(codes[i], src)} ({CLASSES[cls[i]]}) -> torch "
                      f"{_hex(theirs[i], to)}, lowbit {_hex(ours[i], to)}")

    def totals(self):
        compared = sum(c[0] for row in self.rows.values() for c in row.values())
        differing = sum(c[1] for row in self.rows.values() for c in row.values())
        return compared, differing


def _hex(code, dtype):
    digits = max(1, cc.BITS[dtype] // 4)
    return f"0x{int(code):0{digits}X}"


def run_capability(args):
    import torch
    import lowbit

    cap = torch.backends.cpu.get_cpu_capability()
    print(f"ATEN_CPU_CAPABILITY={os.environ.get('ATEN_CPU_CAPABILITY', '(unset)')}: torch {torch.__version__} "
          f"dispatches to {cap}; lowbit {lowbit.__version__} profile {args.profile}; seed {args.seed}", flush=True)
    if torch.__version__.split("+")[0] != "2.15.0":
        print(f"warning: torch {torch.__version__} is not the pinned 2.15.0", flush=True)
    torch.set_num_threads(1)
    rng = np.random.default_rng(args.seed)
    tally = PairTally()
    digests = {}
    names = list(DTYPES.values())
    for src in names:
        targets = [t for t in names if not args.only or args.only in f"{src}->{t}"]
        if not targets:
            continue
        long_inputs = inputs(src, args.random, rng)
        shorts = short_tensors(src)
        for to in targets:
            pair = f"{src}->{to}"
            try:
                torch_long = [torch_cast(torch, src, to, codes) for _, codes in long_inputs]
                torch_short = [torch_cast(torch, src, to, codes) for codes in shorts]
            except Exception as e:  # torch has no such cast
                tally.raises[pair] = cc.peer_error_text(e)
                continue
            h = hashlib.sha256()
            for a in torch_long + torch_short:
                h.update(a.tobytes())
            digests[pair] = h.hexdigest()
            long_cls = [classify(src, to, codes) for _, codes in long_inputs]
            short_cls = [classify(src, to, codes) for codes in shorts]
            for saturate, round_mode in cc.variants(to):
                key = pair if (saturate, round_mode) == (None, None) else \
                    f"{pair} saturate={saturate}" + (f" round_mode={round_mode}" if round_mode else "")
                for (group, codes), theirs, cls in zip(long_inputs, torch_long, long_cls):
                    ours = lowbit_cast(lowbit, src, to, codes, args.profile, saturate, round_mode)
                    tally.add(key, group, cls, ours != theirs, src, to, codes, theirs, ours)
                for codes, theirs, cls in zip(shorts, torch_short, short_cls):
                    ours = lowbit_cast(lowbit, src, to, codes, args.profile, saturate, round_mode)
                    tally.add(key, "short", cls, ours != theirs, src, to, codes, theirs, ours,
                              where=f"[{len(codes)} elements]")
        print(f"{src}: done", file=sys.stderr, flush=True)

    for key, row in tally.rows.items():
        compared = sum(c[0] for c in row.values())
        differing = sum(c[1] for c in row.values())
        if args.quiet and not differing:
            continue
        cells = ", ".join(f"{g} {c} {d:,}/{n:,}" for (g, c), (n, d) in sorted(row.items()))
        print(f"{key}: {compared:,} compared, {differing:,} differ [{cells}]")
        for line in tally.examples.get(key, []):
            print(f"  DIFF {line}")
    for pair, message in tally.raises.items():
        print(f"{pair}: torch raises ({message}); not compared")
    compared, differing = tally.totals()
    print(f"{cap}: profile {args.profile} vs {PEER} ({torch.__version__}): {compared:,} conversions compared in "
          f"{len(tally.rows)} pairs and attribute sets, {differing:,} differ; {len(tally.raises)} pairs torch raises "
          f"on", flush=True)
    if args.digest_file:
        pathlib.Path(args.digest_file).write_text(json.dumps({"capability": cap, "digests": digests,
                                                              "profile": args.profile, "compared": compared,
                                                              "differences": differing}))
    if compared == 0:
        print("nothing compared: failing", flush=True)
        return 1
    return 1 if differing else 0


# ------------------------------------------------------------------------------------------------
# Every capability


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--profile", default="torch", help="the lowbit profile compared (default torch)")
    ap.add_argument("--random", type=int, default=100000, help="random patterns per 32- or 64-bit source")
    ap.add_argument("--seed", type=int, default=20261126, help="seed of the random patterns")
    ap.add_argument("--only", default="", help="only pairs whose 'SRC->TO' (ONNX names) contains this")
    ap.add_argument("--capability", default="",
                    help="run under this ATEN_CPU_CAPABILITY only ('native': the machine's own); default: "
                         "default, avx2 and the machine's own")
    ap.add_argument("--quiet", action="store_true", help="print only the pairs with differences")
    ap.add_argument("--record", action="store_true",
                    help="write the figures into docs/crosschecks.json and docs/crosschecks.md")
    ap.add_argument("--digest-file", default="", help=argparse.SUPPRESS)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return run_capability(args)

    caps = [args.capability] if args.capability else list(CAPABILITIES) + ["native"]
    status = 0
    seen = {}
    with tempfile.TemporaryDirectory() as tmp:
        for cap in caps:
            env = dict(os.environ)
            env.pop("ATEN_CPU_CAPABILITY", None)
            if cap != "native":
                env["ATEN_CPU_CAPABILITY"] = cap
            digest = pathlib.Path(tmp) / f"{cap}.json"
            profile = TORCH_PROFILE_BY_CAPABILITY.get(cap, args.profile) if args.profile == "torch" else args.profile
            cmd = [sys.executable, __file__, "--child", "--profile", profile, "--random", str(args.random),
                   "--seed", str(args.seed), "--only", args.only, "--digest-file", str(digest)]
            if args.quiet:
                cmd.append("--quiet")
            print(f"=== ATEN_CPU_CAPABILITY={cap if cap != 'native' else '(unset: the machine own)'}", flush=True)
            rc = subprocess.run(cmd, env=env).returncode
            if rc != 0:
                status = 1
            if digest.exists():
                seen[cap] = json.loads(digest.read_text())
            else:
                print(f"{cap}: the run ended without a result (exit status {rc})", flush=True)
                status = 1
    if len(seen) > 1:
        dispatched = ", ".join(f"{c} -> {r['capability']}" for c, r in seen.items())
        pairs = sorted(set().union(*(r["digests"] for r in seen.values())))
        depends = []
        for p in pairs:
            groups = {}
            for cap, r in seen.items():
                groups.setdefault(r["digests"].get(p), []).append(r["capability"])
            if len(groups) > 1:
                depends.append(f"{p} ({' | '.join(' = '.join(g) for g in groups.values())})")
        print(f"torch's answers per capability ({dispatched}): {len(depends)} of {len(pairs)} pairs differ between "
              f"capabilities{': ' + ', '.join(depends) if depends else ''}")
    print("FAILED" if status else "OK: 0 differences")
    if args.record and seen:
        import crosscheck_record

        options = " ".join(o for o in (f"--random {args.random}", f"--only {args.only}" if args.only else "",
                                       f"--capability {args.capability}" if args.capability else "") if o)
        crosscheck_record.record(
            "crosscheck_torch.py", {PEER: ""}, args.seed, options,
            [{"what": f"`{r['profile']}` profile, ATEN_CPU_CAPABILITY {r['capability']}: every pair of torch's dtypes",
              "compared": r["compared"], "differences": r["differences"]} for r in seen.values()])
    return status


if __name__ == "__main__":
    sys.exit(main())
