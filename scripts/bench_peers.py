#!/usr/bin/env python3
"""Single-thread Cast throughput of lowbit against ml_dtypes (numpy) and onnxruntime, on the same bytes.

Optional: not part of `cargo test`. Set up the peers' virtual environment first (idempotent; prints
the interpreter to use) and build the release binary:
    PY=$(bash scripts/peers-venv.sh)
    cargo build --release
    "$PY" scripts/bench_peers.py [--pairs FROM:TO,...] [--elements N] [--string-elements M]
                                 [--rounds R] [--reps K] [--json PATH] [--lowbit PATH]

For every pair, `lowbit bench --from FROM --to TO --elements N --threads 1 --json --write-input FILE`
measures lowbit and writes the exact input it measured (ONNX raw_data layout, or a JSON array for
STRING). The peers are then timed on those bytes:
  * ml_dtypes: numpy `astype` into a new array, and `np.copyto` into a preallocated one (sub-byte
    types are one element per byte there, so the nibbles are unpacked first);
  * onnxruntime: a one-node Cast model, one thread, graph optimisations off, IO binding with
    preallocated input and output OrtValues filled with the raw bytes, so packed types go in as is.
lowbit is a separate process, so instead of one process timing all three the runs are interleaved:
in each round every system runs once (the peers K times each), in an order that rotates from round
to round, and the best of all rounds is kept, so machine drift hits every system alike. Every lowbit
run rewrites its input and the script checks it is the same bytes as the first one.

Prints a markdown table of M elements/s (stdout; progress goes to stderr) and, with --json, all the
figures including every sample and lowbit's own copy and reference-path figures.

With --blocks (in the torch venv of scripts/crosscheck_blocks.py; onnx is not needed there), the
block-scaled recipes instead: `lowbit bench --scheme S` against the implementation each scheme
reproduces, quantize and dequantize timed apart on the same float32 bytes (torchao, ModelOpt and
compressed-tensors on torch's CPU path with one thread, gguf's numpy code). The peers allocate their
outputs, so the ratios use lowbit's calls that allocate theirs too: the crate's (`lowbit bench`) and,
where lowbit's Python package is installed in this interpreter, `lowbit.blocks` timed in this process
beside the peer. lowbit's dequantize into a reused buffer (`dequantize_into`) and its copy and fill
baselines are printed beside them.

With --quantize, the quantization rows instead (see `quantize_main`): QuantizeLinear float32 ->
INT8, INT4, UINT4, FLOAT8E4M3FN with one scale and with blocks of 32 along the last axis, timed in
lowbit (`lowbit bench --quantize`, in process), the onnx reference (`ReferenceEvaluator` on a
one-node model, on --reference-elements elements, default all) and onnxruntime (one-node model, one
thread, IO binding); and MX quantize/dequantize (`lowbit bench --mx`) against the naive numpy
formula (ml_dtypes element types, one byte per element, no packing).
"""
import argparse
import ctypes
import json
import os
import pathlib
import platform
import subprocess
import sys
import tempfile
import time

import ml_dtypes
import numpy as np

try:
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper
    from onnx.reference import ReferenceEvaluator

    import onnx_dtypes  # scripts/onnx_dtypes.py

    T = TensorProto
    # STRING too: the benchmark times numpy's str conversions.
    NP = {**onnx_dtypes.NP, T.STRING: np.str_}
    BITS = onnx_dtypes.BITS
    # Cast accepts every dtype from opset 23 on except these, which came later.
    FIRST_OPSET = {T.FLOAT8E8M0: 24, T.INT2: 25, T.UINT2: 25, T.FLOAT6E2M3: 28, T.FLOAT6E3M2: 28}
except ImportError:  # --blocks runs in the torch venv, which has no onnx peers
    onnx = None

ROOT = pathlib.Path(__file__).resolve().parent.parent
DEFAULT_PAIRS = ("FLOAT:FLOAT8E4M3FN,FLOAT:FLOAT8E5M2,FLOAT:FLOAT16,FLOAT:BFLOAT16,FLOAT:FLOAT4E2M1,"
                 "FLOAT:INT4,FLOAT:FLOAT8E8M0,FLOAT8E4M3FN:FLOAT,FLOAT16:FLOAT,BFLOAT16:FLOAT,INT4:FLOAT,"
                 "FLOAT4E2M1:FLOAT,FLOAT:STRING,STRING:FLOAT")
PEERS = ("ml_dtypes_astype", "ml_dtypes_copyto", "onnxruntime")
SYSTEMS = ("lowbit",) + PEERS + ("lowbit_copy", "lowbit_reference")  # the last two: lowbit's own baselines


def name(t):
    return T.DataType.Name(t)


def parse_pairs(text):
    pairs = []
    for item in text.split(","):
        try:
            src, to = (T.DataType.Value(part.strip().upper()) for part in item.split(":"))
        except ValueError:
            raise argparse.ArgumentTypeError(f"{item!r} is not FROM:TO with ONNX dtype names")
        if src not in NP or to not in NP or src == to:
            raise argparse.ArgumentTypeError(f"{item}: no Cast to measure between these dtypes")
        pairs.append((src, to))
    return pairs


def unpack_codes(raw, bits, n):
    """Sub-byte codes from ONNX raw_data, one per byte (the layout ml_dtypes uses for them)."""
    b = np.frombuffer(raw, dtype=np.uint8)
    if bits == 6:
        # Four codes in three bytes as an LSB-first bit stream: read each group as a 24-bit word.
        groups = np.zeros(-(-len(b) // 3) * 3, dtype=np.uint8)
        groups[:len(b)] = b
        g = groups.reshape(-1, 3).astype(np.uint32)
        words = g[:, 0] | g[:, 1] << 8 | g[:, 2] << 16
        codes = (words[:, None] >> np.arange(0, 24, 6, dtype=np.uint32)) & 0x3F
    else:
        codes = (b[:, None] >> np.arange(0, 8, bits, dtype=np.uint8)) & ((1 << bits) - 1)
    return np.ascontiguousarray(codes.ravel()[:n], dtype=np.uint8)


class Input:
    """What lowbit measured, in the forms each peer takes."""

    def __init__(self, src, data, n):
        self.src, self.n = src, n
        if src == T.STRING:
            strings = json.loads(data)
            if len(strings) != n:
                raise RuntimeError(f"lowbit wrote {len(strings)} strings, expected {n}")
            self.raw = None
            self.array = np.array(strings, dtype=np.str_)
            # onnxruntime's Python API takes strings only as a numpy object array fed to run().
            self.objects = np.array(strings, dtype=object)
            return
        expected = (n * BITS[src] + 7) // 8
        if len(data) != expected:
            raise RuntimeError(f"lowbit wrote {len(data)} bytes of {name(src)}, expected {expected}")
        self.raw = data
        bits = BITS[src]
        if bits < 8:
            # ml_dtypes keeps a sub-byte value's code in the low bits of its byte, signed types too.
            self.array = unpack_codes(data, bits, n).view(NP[src])
        else:
            self.array = np.frombuffer(data, dtype=f"<u{bits // 8}").view(NP[src])


def ml_dtypes_peers(inp, to):
    """Two callables: astype into a fresh array, and copyto into one allocated here, once."""
    x = inp.array
    out = np.empty(inp.n, dtype=x[:1].astype(NP[to]).dtype)  # `<U32` for a float -> str cast
    return {"ml_dtypes_astype": lambda: x.astype(NP[to]),
            "ml_dtypes_copyto": lambda: np.copyto(out, x, casting="unsafe")}


def cast_model(src, to, opset):
    x = helper.make_tensor_value_info("x", src, ["n"])
    y = helper.make_tensor_value_info("y", to, ["n"])
    graph = helper.make_graph([helper.make_node("Cast", ["x"], ["y"], to=to)], "cast", [x], [y])
    opsets = [helper.make_opsetid("", opset)]
    m = helper.make_model(graph, opset_imports=opsets)
    # onnx stamps its newest IR version; the oldest that carries the opset is what onnxruntime expects.
    m.ir_version = helper.find_min_ir_version_for(opsets)
    return m


def onnxruntime_peer(inp, to, opset):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(cast_model(inp.src, to, opset).SerializeToString(), so,
                                providers=["CPUExecutionProvider"])
    if inp.src == T.STRING:
        # No string OrtValue can be made from Python ("only supported from non-string numpy
        # arrays"), so each run also turns the Python strs into std::strings.
        return lambda: sess.run(["y"], {"x": inp.objects})
    x = ort.OrtValue.ortvalue_from_shape_and_type([inp.n], inp.src)
    if x.tensor_size_in_bytes() != len(inp.raw):
        raise RuntimeError(f"onnxruntime holds {name(inp.src)} x{inp.n} in {x.tensor_size_in_bytes()} "
                           f"bytes, lowbit wrote {len(inp.raw)}")
    # onnxruntime packs sub-byte tensors as ONNX raw_data does, so the bytes go in unchanged.
    ctypes.memmove(x.data_ptr(), inp.raw, len(inp.raw))
    binding = sess.io_binding()
    binding.bind_ortvalue_input("x", x)
    if to == T.STRING:
        # Same restriction for the output: onnxruntime allocates the string tensor on every run.
        binding.bind_output("y")
    else:
        binding.bind_ortvalue_output("y", ort.OrtValue.ortvalue_from_shape_and_type([inp.n], to))
    return lambda: sess.run_with_iobinding(binding)


def m_per_s(fn, n):
    start = time.perf_counter()
    result = fn()  # kept until the clock has stopped, so freeing a fresh array is not timed
    elapsed = time.perf_counter() - start
    del result
    return n / elapsed / 1e6


def error_line(e):
    lines = str(e).strip().splitlines()
    return f"{type(e).__name__}: {lines[0] if lines else ''}"


class Lowbit:
    def __init__(self, path, workdir):
        self.path, self.workdir = path, workdir
        if not path.is_file():
            sys.exit(f"no lowbit binary at {path}: run `cargo build --release` or pass --lowbit")
        usage = subprocess.run([str(path), "bench", "--help"], capture_output=True, text=True).stdout
        if "--write-input" not in usage:
            sys.exit(f"{path} has no `bench --write-input`: it is older than this script")

    def run(self, src, to, n, run_index):
        """lowbit's JSON figures and the bytes it measured them on."""
        written = self.workdir / f"input-{run_index}"
        cmd = [str(self.path), "bench", "--from", name(src), "--to", name(to), "--elements", str(n),
               "--threads", "1", "--json", "--write-input", str(written)]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError(f"`{' '.join(cmd)}` exited {p.returncode}: {p.stderr.strip()}")
        report = json.loads(p.stdout)
        if (report["from"], report["to"], report["elements"]) != (name(src), name(to), n):
            raise RuntimeError(f"lowbit measured {report['from']}->{report['to']} x{report['elements']}")
        data = written.read_bytes()
        written.unlink()
        return report["m_elements_per_s"], data


def bench_pair(lowbit, src, to, n, rounds, reps):
    """Every sample of every system for one pair, plus why any system could not run."""
    samples = {k: [] for k in SYSTEMS}
    errors = {}
    opset = max([23] + [FIRST_OPSET.get(t, 23) for t in (src, to)])

    def run_lowbit(r):
        figures, data = lowbit.run(src, to, n, r)
        for key, sample_key in (("lowbit", "lowbit"), ("copy", "lowbit_copy"), ("reference", "lowbit_reference")):
            if key in figures:
                samples[sample_key].append(figures[key])
        return data

    first_input = run_lowbit(0)
    inp = Input(src, first_input, n)
    peers = {}
    for key, make in (("ml_dtypes", lambda: ml_dtypes_peers(inp, to)),
                      ("onnxruntime", lambda: {"onnxruntime": onnxruntime_peer(inp, to, opset)})):
        try:
            made = make()
            for fn in made.values():
                fn()  # warm-up: first-touch page faults, onnxruntime's first-run allocations
            peers.update(made)
        except Exception as e:  # this peer has no such cast (onnxruntime: NOT_IMPLEMENTED, ...)
            errors[key] = error_line(e)

    systems = [p for p in PEERS if p in peers] + ["lowbit"]
    for r in range(rounds):
        print(f"  {name(src)}->{name(to)}: round {r + 1}/{rounds}", file=sys.stderr)
        for system in systems[r % len(systems):] + systems[:r % len(systems)]:
            if system != "lowbit":
                samples[system] += [m_per_s(peers[system], n) for _ in range(reps)]
            elif r > 0:  # round 0's lowbit run is the one that wrote the input
                if run_lowbit(r) != first_input:
                    raise RuntimeError(f"lowbit's run {r} measured other input bytes than its run 0")
    return {"opset": opset, "samples": samples, "errors": errors}


def cpu_name():
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def fmt(v):
    if v is None:
        return "-"
    return f"{v:.0f}" if v >= 100 else f"{v:.1f}" if v >= 10 else f"{v:.2f}"


def table(results, args, versions):
    lines = [f"Single thread, M elements/s, best of {args.rounds} interleaved rounds (each peer runs {args.reps}x "
             f"a round, lowbit once: its figure is already its best of several); {args.elements} elements, "
             f"{args.string_elements} for STRING pairs; {cpu_name()}.", "",
             f"| pair | lowbit | ml_dtypes {versions['ml_dtypes']} (numpy {versions['numpy']}) "
             f"| onnxruntime {versions['onnxruntime']} | lowbit / best peer |",
             "| --- | ---: | ---: | ---: | ---: |"]
    for r in results:
        best = r["m_elements_per_s"]
        astype, copyto = best["ml_dtypes_astype"], best["ml_dtypes_copyto"]
        ml = None if astype is None and copyto is None else max(v for v in (astype, copyto) if v is not None)
        ml_cell = "-" if ml is None else f"{fmt(ml)} ({'astype' if ml == astype else 'copyto'})"
        ratio = r["lowbit_over_best_peer"]
        lines.append(f"| {r['pair']} | {fmt(best['lowbit'])} | {ml_cell} | {fmt(best['onnxruntime'])} "
                     f"| {'-' if ratio is None else f'{ratio:.2f}x'} |")

    pairs = {(r["from"], r["to"]) for r in results}
    later = ", ".join(f"{r['opset']} for {r['pair']}" for r in results if r["opset"] not in (None, 23))
    notes = ["ml_dtypes: the faster of numpy `astype` into a new array and `np.copyto` into a preallocated "
             "one. Pairs of numpy's own dtypes (FLOAT16, STRING, ...) are plain numpy casts; STRING means "
             "`astype(str)` (shortest repr) and `astype(np.float32)` from a `<U` array.",
             f"onnxruntime: one-node Cast, opset 23{f' ({later})' if later else ''}, one thread, graph "
             "optimisations off, IO binding with preallocated input and output OrtValues."]
    sub_byte = sorted({t for pair in pairs for t in pair if BITS.get(T.DataType.Value(t), 8) < 8})
    if sub_byte:
        notes.append(f"{', '.join(sub_byte)}: ml_dtypes holds one element per byte and so neither packs "
                     "nor unpacks; lowbit and onnxruntime read and write ONNX's packed layout.")
    if any(to == "STRING" for _, to in pairs):
        notes.append("-> STRING, onnxruntime: the input is bound but the output cannot be (no string OrtValue "
                     "can be made from Python), so onnxruntime allocates the string tensor in every run.")
    if any(src == "STRING" for src, _ in pairs):
        notes.append("STRING ->, onnxruntime: no IO binding (no string OrtValue can be made from Python): "
                     "`sess.run` with a numpy object array of str, so each run also converts the Python "
                     "strings to std::string and allocates the output.")
    for r in results:
        for system, message in r["errors"].items():
            notes.append(f"{r['pair']}, {system}: {message}")
    lines.append("")
    lines += [f"{i}. {note}" for i, note in enumerate(notes, 1)]
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------------
# Quantization rows (--quantize)
# ------------------------------------------------------------------------------------------------

QUANT_TARGETS = ("INT8", "INT4", "UINT4", "FLOAT8E4M3FN")
QUANT_BLOCK = 32
ROW = 1024  # lowbit bench's quantization input is [elements / 1024, 1024]
# What lowbit bench's scales are made from: 400 / the target's largest finite value.
LARGEST = {"INT8": 127, "UINT8": 255, "INT4": 7, "UINT4": 15, "INT16": 32767, "UINT16": 65535,
           "FLOAT8E4M3FN": 448, "FLOAT8E5M2": 57344}
# MX formats: ml_dtypes element type, emax of the element format, largest element magnitude.
MX = {"mxfp8e4m3": (ml_dtypes.float8_e4m3fn, 8, 448.0), "mxfp8e5m2": (ml_dtypes.float8_e5m2, 15, 57344.0),
      "mxfp6e2m3": (ml_dtypes.float6_e2m3fn, 2, 7.5), "mxfp6e3m2": (ml_dtypes.float6_e3m2fn, 4, 28.0),
      "mxfp4": (ml_dtypes.float4_e2m1fn, 2, 6.0), "mxint8": (None, 0, 127 / 64)}
# onnxruntime runs QuantizeLinear up to opset 25; output_dtype exists from 21.
QUANT_OPSET = 23


def linear_scales(to, count):
    """lowbit bench's scales (src/bin/lowbit/bench.rs `linear_scales`), in float32 arithmetic as there."""
    s0 = np.float32(400.0 / LARGEST[to])
    b = np.arange(count)
    return (s0 * (np.float32(1) + (b % 4).astype(np.float32) / np.float32(4))).astype(np.float32)


def quantize_model(to, rows, block):
    """QuantizeLinear(x [rows, 1024] FLOAT, scale initializer) -> `to` via output_dtype."""
    to_t = T.DataType.Value(to)
    if block is None:
        scale = linear_scales(to, 1).reshape(())
        attrs = {"output_dtype": to_t}
    else:
        scale = linear_scales(to, rows * (ROW // block)).reshape(rows, ROW // block)
        attrs = {"output_dtype": to_t, "axis": 1, "block_size": block}
    x = helper.make_tensor_value_info("x", T.FLOAT, [rows, ROW])
    y = helper.make_tensor_value_info("y", to_t, [rows, ROW])
    node = helper.make_node("QuantizeLinear", ["x", "scale"], ["y"], **attrs)
    graph = helper.make_graph([node], "q", [x], [y], initializer=[numpy_helper.from_array(scale, "scale")])
    opsets = [helper.make_opsetid("", QUANT_OPSET)]
    m = helper.make_model(graph, opset_imports=opsets)
    m.ir_version = helper.find_min_ir_version_for(opsets)
    return m


def lowbit_quant_run(lowbit, extra, n, written):
    cmd = [str(lowbit.path), "bench", *extra, "--elements", str(n), "--reps", "3", "--json",
           "--write-input", str(written)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"`{' '.join(cmd)}` exited {p.returncode}: {p.stderr.strip()}")
    report = json.loads(p.stdout)
    data = written.read_bytes()
    written.unlink()
    return report["m_elements_per_s"], data


def best_rate(fn, n, reps):
    fn()  # warm-up
    return max(m_per_s(fn, n) for _ in range(reps))


def bench_linear(lowbit, workdir, to, block, n, ref_n, rounds, reps):
    extra = ["--quantize", "--to", to] + ([] if block is None else ["--block-size", str(block)])
    samples = {"lowbit": [], "lowbit_copy": [], "onnxruntime": [], "onnx_reference": []}
    errors = {}
    figures, raw = lowbit_quant_run(lowbit, extra, n, workdir / "q-input")
    x = np.frombuffer(raw, dtype=np.float32).reshape(n // ROW, ROW)
    peers = {}
    try:
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        so.intra_op_num_threads = 1
        so.inter_op_num_threads = 1
        sess = ort.InferenceSession(quantize_model(to, n // ROW, block).SerializeToString(), so,
                                    providers=["CPUExecutionProvider"])
        xv = ort.OrtValue.ortvalue_from_numpy(x)
        yv = ort.OrtValue.ortvalue_from_shape_and_type([n // ROW, ROW], T.DataType.Value(to))
        binding = sess.io_binding()
        binding.bind_ortvalue_input("x", xv)
        binding.bind_ortvalue_output("y", yv)
        peers["onnxruntime"] = (lambda: sess.run_with_iobinding(binding), n)
    except Exception as e:
        errors["onnxruntime"] = error_line(e)
    try:
        ref_rows = max(1, ref_n // ROW)
        ref = ReferenceEvaluator(quantize_model(to, ref_rows, block))
        x_ref = np.ascontiguousarray(x[:ref_rows])
        peers["onnx_reference"] = (lambda: ref.run(None, {"x": x_ref}), ref_rows * ROW)
    except Exception as e:
        errors["onnx_reference"] = error_line(e)
    for key, (fn, count) in list(peers.items()):
        try:
            fn()
        except Exception as e:
            errors[key] = error_line(e)
            del peers[key]
    samples["lowbit"].append(figures["lowbit"])
    samples["lowbit_copy"].append(figures["copy"])
    systems = list(peers) + ["lowbit"]
    for r in range(rounds):
        print(f"  {to} {'one scale' if block is None else f'blocks of {block}'}: round {r + 1}/{rounds}",
              file=sys.stderr)
        for system in systems[r % len(systems):] + systems[:r % len(systems)]:
            if system == "lowbit":
                if r > 0:
                    figures, again = lowbit_quant_run(lowbit, extra, n, workdir / "q-input")
                    if again != raw:
                        raise RuntimeError("lowbit measured other input bytes than in its first run")
                    samples["lowbit"].append(figures["lowbit"])
                    samples["lowbit_copy"].append(figures["copy"])
            else:
                fn, count = peers[system]
                samples[system] += [m_per_s(fn, count) for _ in range(reps)]
    best = {k: max(v) if v else None for k, v in samples.items()}
    return {"to": to, "block_size": block, "elements": n, "reference_elements": max(1, ref_n // ROW) * ROW,
            "opset": QUANT_OPSET, "samples": samples, "errors": errors, "m_elements_per_s": best}


def numpy_mx(fmt, x):
    """The naive formula: per block of 32 along the last axis, X = 2^(floor(log2(amax)) - emax)
    clamped to [2^-127, 2^127]; elements = x / X clipped to the element's range, to its type."""
    elem, emax, largest = MX[fmt]
    blocks = x.reshape(x.shape[0], -1, QUANT_BLOCK)

    def quantize():
        with np.errstate(all="ignore"):
            amax = np.max(np.abs(blocks), axis=-1, keepdims=True)
            e = np.clip(np.floor(np.log2(amax)) - emax, -127, 127)
            scale = np.exp2(e).astype(np.float32)
            q = np.clip(blocks / scale, -largest, largest)
            codes = np.round(q * 64).astype(np.int8) if elem is None else q.astype(elem)
        return codes, scale

    codes, scale = quantize()

    def dequantize():
        values = codes.astype(np.float32) / np.float32(64) if elem is None else codes.astype(np.float32)
        return values * scale

    return quantize, dequantize


def bench_mx(lowbit, workdir, fmt, n, rounds, reps):
    samples = {"lowbit_quantize": [], "lowbit_dequantize": [], "lowbit_copy": [], "numpy_quantize": [],
               "numpy_dequantize": []}
    figures, raw = lowbit_quant_run(lowbit, ["--mx", fmt], n, workdir / "mx-input")
    x = np.frombuffer(raw, dtype=np.float32).reshape(n // ROW, ROW)
    quantize, dequantize = numpy_mx(fmt, x)
    for r in range(rounds):
        print(f"  {fmt}: round {r + 1}/{rounds}", file=sys.stderr)
        if r > 0:
            figures, _ = lowbit_quant_run(lowbit, ["--mx", fmt], n, workdir / "mx-input")
        samples["lowbit_quantize"].append(figures["lowbit"])
        samples["lowbit_dequantize"].append(figures["dequantize"])
        for k in ("dequantize_into", "copy", "fill", "fill_fresh"):
            samples[f"lowbit_{k}"].append(figures[k])
        samples["numpy_quantize"] += [m_per_s(quantize, n) for _ in range(reps)]
        samples["numpy_dequantize"] += [m_per_s(dequantize, n) for _ in range(reps)]
    best = {k: max(v) if v else None for k, v in samples.items()}
    return {"format": fmt, "elements": n, "samples": samples, "m_elements_per_s": best}


def ratio(a, b):
    return "-" if a is None or b is None else f"{a / b:.2f}x"


def quantize_dequantize_row(cells, best, peer, ours=("lowbit",)):
    """A table row: the cells, then for quantize and dequantize the peer's figure and each of
    `ours` (lowbit's faces) with its ratio to the peer."""
    figures = []
    for step in ("quantize", "dequantize"):
        theirs = best[f"{peer}_{step}"]
        figures.append(fmt(theirs))
        for face in ours:
            figures += [fmt(best[f"{face}_{step}"]), ratio(best[f"{face}_{step}"], theirs)]
    return "| " + " | ".join(list(cells) + figures) + " |"


def quantize_table(linear, mx, args, versions):
    lines = [f"Single thread, M elements/s, best of {args.rounds} interleaved rounds; {args.elements} float32 "
             f"elements as [{args.elements // ROW}, {ROW}] (the onnx reference: "
             f"{linear[0]['reference_elements'] if linear else '-'}); {cpu_name()}.", "",
             f"| QuantizeLinear FLOAT -> | scales | lowbit | onnx reference {versions['onnx']} "
             f"| onnxruntime {versions['onnxruntime']} | lowbit / reference | lowbit / onnxruntime | lowbit / copy |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in linear:
        b = r["m_elements_per_s"]
        scales = "one" if r["block_size"] is None else f"blocks of {r['block_size']}"
        lines.append(f"| {r['to']} | {scales} | {fmt(b['lowbit'])} | {fmt(b['onnx_reference'])} "
                     f"| {fmt(b['onnxruntime'])} | {ratio(b['lowbit'], b['onnx_reference'])} "
                     f"| {ratio(b['lowbit'], b['onnxruntime'])} | {ratio(b['lowbit'], b['lowbit_copy'])} |")
    if mx:
        lines += ["", f"| MX (blocks of {QUANT_BLOCK}) | numpy quantize | lowbit quantize | ratio "
                      "| numpy dequantize | lowbit dequantize | ratio |",
                  "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
        lines += [quantize_dequantize_row([r["format"]], r["m_elements_per_s"], "numpy") for r in mx]
    notes = [f"QuantizeLinear: one-node model, opset {QUANT_OPSET}, FLOAT x, FLOAT scale initializer "
             "(400 / the target's largest value; per block times 1, 1.25, 1.5, 1.75), no zero point, "
             "output_dtype; lowbit computes version 28 (`lowbit bench --quantize`, in process, output "
             "buffer allocated once); onnxruntime: one thread, optimisations off, IO binding; the onnx "
             "reference allocates its output each run.",
             "MX numpy: the spec's formula in numpy with ml_dtypes element types (one byte per element, "
             "not packed; MXINT8 as round(q * 64)); lowbit packs as ONNX does."]
    for r in linear:
        for system, message in r["errors"].items():
            notes.append(f"{r['to']} {'one scale' if r['block_size'] is None else 'blocked'}, {system}: {message}")
    lines.append("")
    lines += [f"{i}. {note}" for i, note in enumerate(notes, 1)]
    return "\n".join(lines)


def quantize_main(args, versions):
    linear, mx = [], []
    with tempfile.TemporaryDirectory(prefix="bench_peers-") as tmp:
        workdir = pathlib.Path(tmp)
        lowbit = Lowbit(args.lowbit, workdir)
        usage = subprocess.run([str(args.lowbit), "bench", "--help"], capture_output=True, text=True).stdout
        if "--quantize" not in usage:
            sys.exit(f"{args.lowbit} has no `bench --quantize`: it is older than this script")
        for to in args.quant_targets.split(","):
            for block in (None, QUANT_BLOCK):
                print(f"QuantizeLinear FLOAT->{to} {block}", file=sys.stderr)
                linear.append(bench_linear(lowbit, workdir, to.strip().upper(), block, args.elements,
                                           args.reference_elements, args.rounds, args.reps))
        for fmt_name in [f for f in args.mx_formats.split(",") if f]:
            print(f"MX {fmt_name}", file=sys.stderr)
            mx.append(bench_mx(lowbit, workdir, fmt_name.strip(), args.elements, args.rounds, args.reps))
    print(quantize_table(linear, mx, args, versions))
    if args.json:
        args.json.write_text(json.dumps({
            "versions": versions, "cpu": cpu_name(), "lowbit": str(args.lowbit), "elements": args.elements,
            "rounds": args.rounds, "reps": args.reps, "unit": "M elements/s", "quantize_linear": linear,
            "mx": mx}, indent=2, default=str) + "\n")
    return 0


# ------------------------------------------------------------------------------------------------
# Block-scaled recipes (--blocks)

# Each scheme's peer: its quantize and dequantize as the fixture generator and the live check call
# them (scripts/gen_block_fixtures.py), timed apart, on torch's CPU path with one thread.
BLOCK_SCHEMES = ("torchao:mxfp8e4m3,scale=floor;torchao:mxfp8e4m3,scale=rceil;torchao:mxfp4,scale=floor;"
                 "torchao:nvfp4;modelopt:nvfp4;compressed-tensors:nvfp4;ggml:q8_0;ggml:q4_0;ggml:mxfp4;"
                 "fp8:channel;fp8:block=128x128").split(";")


def block_peer(scheme, x):
    """(implementation, quantize, dequantize) of the live implementation of `scheme` on float32 x."""
    import torch

    torch.set_num_threads(1)
    t = torch.from_numpy(x)
    family, _, rest = scheme.partition(":")
    if family == "torchao" and rest != "nvfp4":
        from torchao.prototype.mx_formats.config import ScaleCalculationMode
        from torchao.prototype.mx_formats.mx_tensor import to_dtype, to_mx

        fmt, mode = rest.split(",scale=")
        elem = {"mxfp8e4m3": torch.float8_e4m3fn, "mxfp8e5m2": torch.float8_e5m2,
                "mxfp4": torch.float4_e2m1fn_x2}[fmt]
        scale, data = to_mx(t, elem, 32, ScaleCalculationMode(mode))
        return ("torchao 0.18.0 to_mx / to_dtype", lambda: to_mx(t, elem, 32, ScaleCalculationMode(mode)),
                lambda: to_dtype(data, scale, elem, 32, torch.float32))
    if scheme == "torchao:nvfp4":
        from torchao.prototype.mx_formats.nvfp4_tensor import NVFP4Tensor

        q = NVFP4Tensor.to_nvfp4(t)
        return ("torchao 0.18.0 NVFP4Tensor", lambda: NVFP4Tensor.to_nvfp4(t), lambda: q.dequantize(torch.float32))
    if scheme == "modelopt:nvfp4":
        from modelopt.torch.quantization.qtensor.nvfp4_tensor import NVFP4QTensor

        q, s, g = NVFP4QTensor.quantize(t, 16)
        return ("nvidia-modelopt 0.47.0 NVFP4QTensor", lambda: NVFP4QTensor.quantize(t, 16),
                lambda: q.dequantize(dtype=torch.float32, scale=s, double_scale=g, block_sizes={-1: 16}))
    if family in ("compressed-tensors", "fp8"):
        import gen_block_fixtures as gen  # its observer min/max and presets

        gen.torch, gen.np = torch, np
        if scheme == "compressed-tensors:nvfp4":
            from compressed_tensors.compressors.nvfp4.base import NVFP4PackedCompressor
            from compressed_tensors.compressors.nvfp4.helpers import quantize_and_pack_fp4
            from compressed_tensors.quantization import QuantizationScheme
            from compressed_tensors.quantization.utils.helpers import calculate_qparams, generate_gparam

            args = gen.ct_args("NVFP4")

            def quantize():
                g = generate_gparam(torch.amin(t), torch.amax(t))
                lo, hi = gen.group_min_max(t, 16)
                scale, _ = calculate_qparams(lo, hi, args, global_scale=g)
                return quantize_and_pack_fp4(t, scale, global_scale=g, group_size=16), scale, g

            packed, scale, g = quantize()
            stored = {"weight_packed": packed, "weight_scale": scale.to(torch.float8_e4m3fn), "weight_global_scale": g}
            qs = QuantizationScheme(targets=["Linear"], weights=args)
            return ("compressed-tensors 0.20.0 NVFP4", quantize, lambda: NVFP4PackedCompressor.decompress(stored, qs))
        from compressed_tensors.quantization.lifecycle.forward import dequantize, quantize as ct_quantize
        from compressed_tensors.quantization.utils.helpers import calculate_qparams

        def qparams():
            if rest == "channel":
                return gen.ct_args("FP8_DYNAMIC"), torch.amin(t, dim=1, keepdim=True), torch.amax(t, dim=1, keepdim=True)
            bh, bw = (int(v) for v in rest.split("=")[1].split("x"))
            tiles = t.reshape(t.shape[0] // bh, bh, t.shape[1] // bw, bw)
            return gen.ct_args("FP8_BLOCK", block_structure=[bh, bw]), torch.amin(tiles, dim=(1, 3)), \
                torch.amax(tiles, dim=(1, 3))

        def quantize():
            args, lo, hi = qparams()
            scale, zp = calculate_qparams(lo, hi, args)
            return ct_quantize(t, scale, zp, args, dtype=torch.float8_e4m3fn), scale, zp, args

        q, scale, zp, args = quantize()
        return ("compressed-tensors 0.20.0 float-quantized", quantize,
                lambda: dequantize(q, scale, zp, args, dtype=torch.float32))
    if family == "ggml":
        import gguf

        qtype = getattr(gguf.GGMLQuantizationType, rest.upper())
        blocks = gguf.quants.quantize(x, qtype)
        return ("gguf 0.19.0 (numpy)", lambda: gguf.quants.quantize(x, qtype),
                lambda: gguf.quants.dequantize(blocks, qtype))
    raise ValueError(f"no peer for {scheme}")


def python_face(scheme, x):
    """lowbit's Python package on the same array in this process, as a Python user calls it:
    (quantize, dequantize), or None where the package is not installed in this interpreter."""
    try:
        import lowbit
    except ImportError:
        return None
    q = lowbit.blocks.quantize(x, scheme)
    return lambda: lowbit.blocks.quantize(x, scheme), q.dequantize


def bench_blocks(lowbit, workdir, scheme, n, rounds, reps):
    samples = {"lowbit_quantize": [], "lowbit_dequantize": [], "lowbit_dequantize_into": [], "lowbit_copy": [],
               "lowbit_fill": [], "lowbit_fill_fresh": [], "peer_quantize": [], "peer_dequantize": [],
               "python_quantize": [], "python_dequantize": []}
    figures, raw = lowbit_quant_run(lowbit, ["--scheme", scheme], n, workdir / "blocks-input")
    x = np.frombuffer(raw, dtype=np.float32).reshape(n // ROW, ROW).copy()
    peer, quantize, dequantize = block_peer(scheme, x)
    python = python_face(scheme, x)
    for r in range(rounds):
        print(f"  {scheme}: round {r + 1}/{rounds}", file=sys.stderr)
        if r > 0:
            figures, again = lowbit_quant_run(lowbit, ["--scheme", scheme], n, workdir / "blocks-input")
            if again != raw:
                raise RuntimeError("lowbit measured other input bytes than in its first run")
        samples["lowbit_quantize"].append(figures["quantize"])
        samples["lowbit_dequantize"].append(figures["dequantize"])
        for k in ("dequantize_into", "copy", "fill", "fill_fresh"):
            samples[f"lowbit_{k}"].append(figures[k])
        with np.errstate(all="ignore"):
            samples["peer_quantize"] += [m_per_s(quantize, n) for _ in range(reps)]
            samples["peer_dequantize"] += [m_per_s(dequantize, n) for _ in range(reps)]
        if python is not None:
            samples["python_quantize"] += [m_per_s(python[0], n) for _ in range(reps)]
            samples["python_dequantize"] += [m_per_s(python[1], n) for _ in range(reps)]
    best = {k: max(v) if v else None for k, v in samples.items()}
    return {"scheme": scheme, "peer": peer, "elements": n, "samples": samples, "m_elements_per_s": best}


def blocks_main(args):
    import torch

    versions = {"numpy": np.__version__, "torch": torch.__version__, "python": platform.python_version()}
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench_peers-") as tmp:
        workdir = pathlib.Path(tmp)
        for scheme in [s.strip() for s in args.schemes.split(";") if s.strip()]:
            print(scheme, file=sys.stderr)
            rows.append(bench_blocks(Lowbit(args.lowbit, workdir), workdir, scheme, args.elements, args.rounds,
                                     args.reps))
    lines = [f"Single thread, {args.elements:,} float32 elements ([n / {ROW}, {ROW}]), M elements/s, best of "
             f"{args.rounds} rounds ({args.reps} peer runs each); {cpu_name()}; "
             + ", ".join(f"{k} {v}" for k, v in versions.items()), "",
             "The peers allocate their outputs, so the ratios compare lowbit's calls that allocate theirs too: "
             "`Rust` is `lowbit bench --scheme` (the crate's `quantize` and `dequantize`, a `Vec` each), "
             "`Python` is `lowbit.blocks.quantize(x, scheme)` and `q.dequantize()` in this process, beside the "
             "peer (numpy allocates the float32 output, asking for huge pages). `into buffer` is the crate's "
             "`dequantize_into` a reused float32 buffer (no fresh pages).",
             "",
             "| scheme | peer | peer quantize | Rust | ratio | Python | ratio | peer dequantize | Rust | ratio "
             "| Python | ratio | Rust into buffer |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    lines += [quantize_dequantize_row([r["scheme"], r["peer"]], r["m_elements_per_s"], "peer", ("lowbit", "python"))
              + f" {fmt(r['m_elements_per_s']['lowbit_dequantize_into'])} |" for r in rows]
    best = lambda k: max(v for r in rows for v in r["samples"][k])  # noqa: E731
    if rows:
        lines += ["", f"What one core moves here (lowbit's baselines, best over all runs): copy of the float32 input "
                  f"{fmt(best('lowbit_copy'))}, float32 fill of a reused buffer {fmt(best('lowbit_fill'))}, of a new "
                  f"buffer {fmt(best('lowbit_fill_fresh'))} M elements/s."]
    print("\n".join(lines))
    if args.json:
        args.json.write_text(json.dumps({"versions": versions, "cpu": cpu_name(), "lowbit": str(args.lowbit),
                                         "elements": args.elements, "rounds": args.rounds, "reps": args.reps,
                                         "unit": "M elements/s", "blocks": rows}, indent=2) + "\n")
    return 0


# ------------------------------------------------------------------------------------------------
# ggml's block types of lowbit's table (--ggml-codecs)


def ggml_codecs_main(args):
    """Each `ggml:` block type of lowbit's table (found as scripts/crosscheck_ggml.py finds them):
    dequantize of C's bytes by lowbit (`from_bytes(...).dequantize()`, Python, one thread), ggml's
    C `dequantize_row_*` (ctypes, numpy allocating the output) and gguf-py's numpy
    `gguf.quants.dequantize`; quantize by lowbit (`lowbit.blocks.quantize`) and ggml's C
    `quantize_row_*_ref` (no importance matrix). Needs ggml-py 0.10.1, gguf 0.19.0 and lowbit's
    Python package in this interpreter."""
    import gguf
    import lowbit
    import lowbit.blocks

    sys.path.insert(0, str(ROOT / "scripts"))
    import crosscheck_ggml as cg

    cg.GGML, cg.BASE = cg.load_ggml()
    cg.lowbit = lowbit
    cg.find_codecs()
    n = args.elements
    rng = np.random.default_rng(7)
    x = rng.standard_normal((n // ROW, ROW)).astype(np.float32)
    rows = []
    wanted = [s.strip() for s in args.schemes.split(";") if s.strip()] if args.schemes_given else list(cg.CODECS)
    for scheme in wanted:
        t, block, nbytes, to_float, _ = cg.CODECS[scheme]
        spelled = cg.BASE.ggml_type_name(t).decode()
        ref = getattr(cg.BASE, f"quantize_row_{spelled}_ref")
        ref.argtypes, ref.restype = cg.ROW_FN, None
        raw = np.zeros(n // block * nbytes, np.uint8)
        c_quantize = lambda: ref(x.ctypes.data_as(ctypes.c_void_p), raw.ctypes.data_as(ctypes.c_void_p), n)  # noqa: E731
        c_quantize()

        def c_dequantize():
            out = np.empty(n, np.float32)
            to_float(raw.ctypes.data_as(ctypes.c_void_p), out.ctypes.data_as(ctypes.c_void_p), n)
            return out

        qtype = getattr(gguf.GGMLQuantizationType, spelled.upper())
        gguf_dequantize = None
        try:
            gguf.quants.dequantize(raw.reshape(n // ROW, -1)[:4], qtype)
            gguf_dequantize = lambda: gguf.quants.dequantize(raw.reshape(n // ROW, -1), qtype)  # noqa: E731
        except NotImplementedError:
            pass
        data = raw.tobytes()
        ours = lowbit.blocks.from_bytes(data, scheme, (n // ROW, ROW))
        if not np.array_equal(np.asarray(ours.dequantize()).reshape(-1).view(np.uint32), c_dequantize().view(np.uint32)):
            raise RuntimeError(f"{scheme}: lowbit's dequantize differs from ggml's; no figures for it")
        figures = {
            "lowbit_dequantize": best_rate(lambda: lowbit.blocks.from_bytes(data, scheme, (n // ROW, ROW)).dequantize(),
                                           n, args.reps),
            "c_dequantize": best_rate(c_dequantize, n, args.reps),
            "gguf_dequantize": best_rate(gguf_dequantize, n, args.reps) if gguf_dequantize else None,
            "lowbit_quantize": best_rate(lambda: lowbit.blocks.quantize(x, scheme), n, args.reps),
            "c_quantize": best_rate(c_quantize, n, args.reps),
        }
        print(f"  {scheme}: {figures}", file=sys.stderr)
        rows.append({"scheme": scheme, "elements": n, "m_elements_per_s": figures})
    lines = [f"Single thread, {n:,} float32 elements ([n / {ROW}, {ROW}], normal), M elements/s, best of {args.reps}; "
             f"{cpu_name()}; ggml-py {cg.GGML_PY} (ggml's C), gguf {gguf.__version__ if hasattr(gguf, '__version__') else '0.19.0'}, "
             f"numpy {np.__version__}", "",
             "| scheme | dequantize: lowbit | ggml C | ratio | gguf numpy | ratio | quantize: lowbit | ggml C ref | ratio |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        f = r["m_elements_per_s"]
        lines.append(f"| `{r['scheme']}` | {fmt(f['lowbit_dequantize'])} | {fmt(f['c_dequantize'])} | "
                     f"{ratio(f['lowbit_dequantize'], f['c_dequantize'])} | {fmt(f['gguf_dequantize'])} | "
                     f"{ratio(f['lowbit_dequantize'], f['gguf_dequantize'])} | {fmt(f['lowbit_quantize'])} | "
                     f"{fmt(f['c_quantize'])} | {ratio(f['lowbit_quantize'], f['c_quantize'])} |")
    print("\n".join(lines))
    if args.json:
        args.json.write_text(json.dumps({"cpu": cpu_name(), "elements": n, "reps": args.reps, "unit": "M elements/s",
                                         "ggml_codecs": rows}, indent=2) + "\n")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=parse_pairs, help="comma-separated FROM:TO with ONNX dtype names")
    ap.add_argument("--elements", type=int, default=1 << 24)
    ap.add_argument("--string-elements", type=int, help="elements for pairs with STRING (default: N/16)")
    ap.add_argument("--rounds", type=int, default=5, help="rounds of every system (best kept)")
    ap.add_argument("--reps", type=int, default=3, help="runs of each peer per round")
    ap.add_argument("--json", type=pathlib.Path, help="also write every figure here")
    # The binary cargo builds: under CARGO_TARGET_DIR when it is set, as cargo itself does.
    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target")
    ap.add_argument("--lowbit", type=pathlib.Path, default=target / "release" / "lowbit")
    ap.add_argument("--quantize", action="store_true", help="the quantization rows instead of the Cast pairs")
    ap.add_argument("--quant-targets", default=",".join(QUANT_TARGETS),
                    help="QuantizeLinear output types (--quantize)")
    ap.add_argument("--mx-formats", default="mxfp8e4m3,mxfp4", help="MX formats (--quantize); empty for none")
    ap.add_argument("--reference-elements", type=int,
                    help="elements for the onnx reference (--quantize; a multiple of 1024; default --elements)")
    ap.add_argument("--blocks", action="store_true",
                    help="the block-scaled recipes instead (lowbit bench --scheme against torchao, ModelOpt, "
                         "compressed-tensors and gguf; run in the venv of scripts/crosscheck_blocks.py)")
    ap.add_argument("--schemes", default=";".join(BLOCK_SCHEMES), help="schemes (--blocks; semicolon-separated)")
    ap.add_argument("--ggml-codecs", action="store_true",
                    help="ggml's block types of lowbit's table (ggml:q4_k, ...) against ggml's C and gguf's numpy "
                         "(lowbit's Python package, ggml-py 0.10.1 and gguf 0.19.0 in this interpreter)")
    args = ap.parse_args()
    args.schemes_given = "--schemes" in sys.argv
    if args.ggml_codecs:
        if args.elements % ROW:
            ap.error(f"--ggml-codecs takes --elements as a multiple of {ROW}")
        return ggml_codecs_main(args)
    if args.blocks:
        if args.elements % ROW:
            ap.error(f"--blocks takes --elements as a multiple of {ROW}")
        return blocks_main(args)
    if onnx is None:
        sys.exit("the Cast and QuantizeLinear rows need onnx and onnxruntime (scripts/peers-venv.sh)")
    if args.pairs is None:
        args.pairs = parse_pairs(DEFAULT_PAIRS)
    if args.string_elements is None:
        args.string_elements = max(1, args.elements // 16)
    if min(args.elements, args.string_elements, args.rounds, args.reps) < 1:
        ap.error("--elements, --string-elements, --rounds and --reps must be positive")

    versions = {"numpy": np.__version__, "ml_dtypes": ml_dtypes.__version__,
                "onnxruntime": ort.__version__, "onnx": onnx.__version__, "python": platform.python_version()}
    if args.quantize:
        if args.reference_elements is None:
            args.reference_elements = args.elements
        if args.elements % ROW or args.reference_elements < ROW:
            ap.error(f"--quantize takes --elements as a multiple of {ROW} and --reference-elements >= {ROW}")
        return quantize_main(args, versions)
    results = []
    with tempfile.TemporaryDirectory(prefix="bench_peers-") as tmp:
        lowbit = Lowbit(args.lowbit, pathlib.Path(tmp))
        for src, to in args.pairs:
            n = args.string_elements if T.STRING in (src, to) else args.elements
            pair = f"{name(src)}->{name(to)}"
            print(pair, file=sys.stderr)
            try:
                r = bench_pair(lowbit, src, to, n, args.rounds, args.reps)
            except Exception as e:  # lowbit itself failed: no input, so no row worth measuring
                r = {"opset": None, "samples": {k: [] for k in SYSTEMS}, "errors": {"lowbit": error_line(e)}}
                print(f"  {r['errors']['lowbit']}", file=sys.stderr)
            best = {k: max(v) if v else None for k, v in r["samples"].items()}
            peer_best = max((best[p] for p in PEERS if best[p] is not None), default=None)
            results.append({"pair": pair, "from": name(src), "to": name(to), "elements": n, **r,
                            "m_elements_per_s": best,
                            "lowbit_over_best_peer": best["lowbit"] / peer_best
                            if best["lowbit"] is not None and peer_best else None})

    print(table(results, args, versions))
    if args.json:
        args.json.write_text(json.dumps({
            "versions": versions, "cpu": cpu_name(), "lowbit": str(args.lowbit), "elements": args.elements,
            "string_elements": args.string_elements, "rounds": args.rounds, "reps": args.reps,
            "unit": "M elements/s", "pairs": results}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
