"""Speed and memory of `lowbit checkpoint dequantize --threads 1` on generated checkpoints.

For each convention (gpt-oss MXFP4, ModelOpt NVFP4, compressed-tensors NVFP4, DeepSeek FP8) a
checkpoint of about --mib MiB of input is generated (random element bytes, scales the producers
can make); for GGUF (Q8_0, Q4_0, MXFP4, NVFP4) --mib MiB of float32 weights are quantized by
`lowbit checkpoint quantize --scheme ggml:*` (so the GGUF input is 4 to 7 times smaller). Each is
dequantized to --dtype with one thread, best wall time of --runs; reported: MB/s of input (1 MB = 10^6 bytes), user and system CPU seconds, peak resident memory of the process.
In the same session, interleaved: writing the output's bytes alone (1 MiB writes and a sync,
the floor of any dequantize that writes that file), and with --baseline BIN another lowbit binary
(e.g. one built from an earlier commit). The machine is shared: read the ratios, not the absolute
figures.

Only numpy and the standard library: python scripts/bench_checkpoint.py --bin PATH/TO/release/lowbit
"""

import argparse
import json
import os
import pathlib
import resource
import shutil
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np

ROWS, COLS = 4096, 8192  # one weight: 32 Mi elements


def _write(folder, tensors, config=None, hf_quant=None):
    """A safetensors file of (name, dtype, shape, numpy array) in a new folder."""
    header, offset = {}, 0
    for name, dtype, shape, array in tensors:
        n = array.nbytes
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + n]}
        offset += n
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    folder.mkdir(parents=True)
    with open(folder / "model.safetensors", "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for _, _, _, array in tensors:
            f.write(array.tobytes())
    if config is not None:
        (folder / "config.json").write_text(json.dumps(config))
    if hf_quant is not None:
        (folder / "hf_quant_config.json").write_text(json.dumps(hf_quant))


def _generate_gguf(kind, folder, mib, rng, binary):
    """A GGUF file of ggml blocks: about `mib` MiB of float32 weights (normal values) quantized
    by `lowbit checkpoint quantize --scheme ggml:TYPE`; returns its size."""
    count = max(1, mib * 2**20 // (ROWS * COLS * 4))
    tensors = [(f"blk.{k}.ffn_up.weight", "F32", [ROWS, COLS], rng.standard_normal((ROWS, COLS), dtype=np.float32)) for k in range(count)]
    _write(folder / "f32", tensors)
    out = folder / "model.gguf"
    subprocess.run([binary, "checkpoint", "quantize", str(folder / "f32"), "--scheme", "ggml:" + kind[len("gguf-"):], "--out", str(out)],
                   check=True, capture_output=True)
    shutil.rmtree(folder / "f32")
    return out.stat().st_size


def _generate(kind, folder, mib, rng, binary):
    """Returns the input bytes of the checkpoint written in `folder`."""
    if kind.startswith("gguf-"):
        return _generate_gguf(kind, folder, mib, rng, binary)
    fp4 = kind != "deepseek-fp8"
    weight_bytes = ROWS * COLS // 2 if fp4 else ROWS * COLS
    count = max(1, mib * 2**20 // weight_bytes)
    tensors = []
    for k in range(count):
        codes = rng.integers(0, 256, size=weight_bytes, dtype=np.uint8)
        if kind == "gpt-oss-mxfp4":
            g = COLS // 32
            tensors += [
                (f"model.layers.{k}.mlp.experts.down_proj_blocks", "U8", [ROWS, g, 16], codes),
                (f"model.layers.{k}.mlp.experts.down_proj_scales", "U8", [ROWS, g], rng.integers(110, 135, size=ROWS * g, dtype=np.uint8)),
            ]
        elif kind in ("modelopt-nvfp4", "compressed-tensors-nvfp4"):
            scales = rng.integers(0x08, 0x7E, size=ROWS * COLS // 16, dtype=np.uint8)
            if kind == "modelopt-nvfp4":
                tensors += [
                    (f"l.{k}.weight", "U8", [ROWS, COLS // 2], codes),
                    (f"l.{k}.weight_scale", "F8_E4M3", [ROWS, COLS // 16], scales),
                    (f"l.{k}.weight_scale_2", "F32", [], np.array([0.0123], dtype="<f4")),
                ]
            else:
                tensors += [
                    (f"l.{k}.weight_packed", "U8", [ROWS, COLS // 2], codes),
                    (f"l.{k}.weight_scale", "F8_E4M3", [ROWS, COLS // 16], scales),
                    (f"l.{k}.weight_global_scale", "F32", [1], np.array([81.25], dtype="<f4")),
                ]
        else:
            codes[(codes & 0x7F) == 0x7F] = 0  # no NaN elements
            inv = rng.uniform(1e-4, 1e-2, size=(ROWS // 128) * (COLS // 128)).astype("<f4")
            tensors += [
                (f"l.{k}.weight", "F8_E4M3", [ROWS, COLS], codes),
                (f"l.{k}.weight_scale_inv", "F32", [ROWS // 128, COLS // 128], inv),
            ]
    config = {
        "gpt-oss-mxfp4": {"quantization_config": {"quant_method": "mxfp4"}},
        "compressed-tensors-nvfp4": {"quantization_config": {"quant_method": "compressed-tensors", "format": "nvfp4-pack-quantized"}},
        "deepseek-fp8": {"quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128]}},
    }.get(kind)
    hf_quant = {"quantization": {"quant_algo": "NVFP4", "group_size": 16}} if kind == "modelopt-nvfp4" else None
    _write(folder, tensors, config, hf_quant)
    return sum(t[3].nbytes for t in tensors)


def _run(binary, folder, out, dtype):
    """Wall seconds, user + system CPU seconds and peak RSS (MiB) of one dequantize."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([binary, "checkpoint", "dequantize", str(folder), "--out", str(out), "--dtype", dtype, "--threads", "1"], capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{binary} failed: {done.stderr}")
    size = out.stat().st_size
    out.unlink()
    return wall, (after.ru_utime - before.ru_utime), (after.ru_stime - before.ru_stime), size


# The conventions measured, in docs/guide/speed.md's order.
KINDS = ["gpt-oss-mxfp4", "modelopt-nvfp4", "compressed-tensors-nvfp4", "deepseek-fp8",
         "gguf-q8_0", "gguf-q4_0", "gguf-mxfp4", "gguf-nvfp4"]


def _write_only(out, size):
    """Wall seconds to write `size` bytes into a new file beside the output, 1 MiB at a time,
    and sync it (as lowbit does before renaming its output into place): the floor any
    dequantize writing that output stands on."""
    chunk = os.urandom(1 << 20)
    start = time.perf_counter()
    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        left = size
        while left > 0:
            left -= os.write(fd, chunk[: min(left, len(chunk))])
        os.fsync(fd)
    finally:
        os.close(fd)
    wall = time.perf_counter() - start
    out.unlink()
    return wall


def _peak_rss(binary, folder, out, dtype):
    """Peak RSS in MiB of one dequantize: wait4's rusage of that child alone. subprocess starts
    it with vfork/posix_spawn, so the child's high-water mark does not include this process's
    memory (a plain fork's copy would count the generated arrays)."""
    child = subprocess.Popen([binary, "checkpoint", "dequantize", str(folder), "--out", str(out), "--dtype", dtype, "--threads", "1"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    if status != 0:
        raise SystemExit(f"{binary} failed with status {status}")
    out.unlink()
    return usage.ru_maxrss / 1024


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", required=True, help="the lowbit binary measured")
    parser.add_argument("--baseline", help="another lowbit binary, measured in the same session")
    parser.add_argument("--mib", type=int, default=1024, help="input size per checkpoint")
    parser.add_argument("--dtype", default="bf16", choices=["f32", "bf16", "f16"])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--dir", help="where checkpoints and outputs go (default: the system's temporary folder)")
    parser.add_argument("--only", choices=KINDS, help="one convention")
    parser.add_argument("--generate", nargs=3, metavar=("KIND", "FOLDER", "SEED"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.generate:
        kind, folder, seed = args.generate
        print(_generate(kind, pathlib.Path(folder), args.mib, np.random.default_rng(int(seed)), args.bin))
        return
    binaries = [("lowbit", args.bin)] + ([("baseline", args.baseline)] if args.baseline else [])
    seed = 27
    print(f"| convention | input MB | output MB | lowbit MB/s of input | user s | sys s | MB of input per user CPU-second | MB of input per CPU-second | peak RSS MiB | write-only MB/s of input | lowbit / write-only |"
          + (" baseline MB/s | lowbit / baseline |" if args.baseline else ""))
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|" + ("---:|---:|" if args.baseline else ""))
    for kind in KINDS if not args.only else [args.only]:
        work = pathlib.Path(tempfile.mkdtemp(dir=args.dir, prefix="lowbit-bench-"))
        try:
            # Generated in a child process: this one stays small, so that a child's peak RSS
            # (which a fork starts from this process's) measures lowbit alone.
            made = subprocess.run([sys.executable, __file__, "--generate", kind, str(work / "in"), str(seed), "--mib", str(args.mib), "--bin", args.bin],
                                  capture_output=True, text=True, check=True)
            size = int(made.stdout)
            out = work / "out.safetensors"
            best = {name: (float("inf"), 0.0, 0.0, 0) for name, _ in binaries}
            write_only = float("inf")
            for _ in range(args.runs):
                for name, binary in binaries:
                    measured = _run(binary, work / "in", out, args.dtype)
                    if measured[0] < best[name][0]:
                        best[name] = measured
                write_only = min(write_only, _write_only(out, best["lowbit"][3]))
            peak = _peak_rss(args.bin, work / "in", out, args.dtype)
            wall, user, system, out_size = best["lowbit"]
            row = (f"| {kind} | {size / 1e6:.0f} | {out_size / 1e6:.0f} | {size / 1e6 / wall:.0f} | {user:.2f} | {system:.2f} | {size / 1e6 / user:.0f} | {size / 1e6 / (user + system):.0f} | {peak:.0f} |"
                   f" {size / 1e6 / write_only:.0f} | {write_only / wall:.2f}x |")
            if args.baseline:
                base = best["baseline"][0]
                row += f" {size / 1e6 / base:.0f} | {base / wall:.1f}x |"
            print(row, flush=True)
        finally:
            shutil.rmtree(work)


if __name__ == "__main__":
    main()
