#!/usr/bin/env python3
"""Single-thread throughput of every Cast from a source of 16 bits or fewer, into every target.

Optional: not part of `cargo test`; needs only Python 3 and a release build:
    cargo build --release
    python3 scripts/bench_small_sources.py [--elements N] [--reps K] [--retries R] [--lowbit PATH] [--json PATH]

Runs `lowbit bench --from X --to Y --elements N --threads 1 --json` for every pair whose source
has 16 bits or fewer (bool, the 8- and 16-bit integers and floats, every float8/float6/float4,
E8M0, int4/uint4/int2/uint2) and every fixed-width target, and prints the slowest pairs, how many
reach 1 G elements/s, and the ratio of each to lowbit's copy of the same bytes (measured in the
same process). The input is random codes of the source, so every table entry is equally likely.
On a shared machine one process can land on a busy moment: a pair under 1 G elements/s is timed
again (up to --retries more processes) and its best run is kept, with the copy of that run.
"""
import argparse
import json
import pathlib
import statistics
import subprocess
import sys

from cargo_target import release_lowbit


SMALL = ["BOOL", "INT8", "UINT8", "INT16", "UINT16", "FLOAT16", "BFLOAT16", "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ",
         "FLOAT8E5M2", "FLOAT8E5M2FNUZ", "FLOAT8E8M0", "FLOAT6E2M3", "FLOAT6E3M2", "FLOAT4E2M1", "INT4", "UINT4",
         "INT2", "UINT2"]
WIDE = ["FLOAT", "DOUBLE", "INT32", "UINT32", "INT64", "UINT64"]


def run_pair(args, src, dst):
    """One `lowbit bench` process for a pair: its figures, or None (reported) if it failed."""
    cmd = [args.lowbit, "bench", "--from", src, "--to", dst, "--elements", str(args.elements),
           "--threads", "1", "--reps", str(args.reps), "--json"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        print(f"{src}->{dst}: {p.stderr.strip()}", file=sys.stderr)
        return None
    return json.loads(p.stdout)["m_elements_per_s"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--elements", type=int, default=1 << 22)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--lowbit", default=str(release_lowbit()))
    ap.add_argument("--json", help="write every figure here")
    ap.add_argument("--slowest", type=int, default=25)
    ap.add_argument("--retries", type=int, default=4, help="more processes for a pair under 1 G/s")
    args = ap.parse_args()
    rows = []
    for src in SMALL:
        for dst in SMALL + WIDE:
            if src == dst:
                continue
            best = None
            for _ in range(1 + args.retries):
                figures = run_pair(args, src, dst)
                if figures is None:
                    break
                if best is None or figures["lowbit"] > best["lowbit"]:
                    best = figures
                if best["lowbit"] >= 1000:
                    break
            if best is None:
                continue
            rows.append({"from": src, "to": dst, "lowbit": best["lowbit"], "copy": best["copy"]})
            print(f"{src}->{dst}: {best['lowbit']:.0f} M/s", file=sys.stderr)
    rows.sort(key=lambda r: r["lowbit"])
    print(f"| pair | lowbit M/s | lowbit / copy |\n| --- | ---: | ---: |")
    for r in rows[: args.slowest]:
        print(f"| {r['from']}->{r['to']} | {r['lowbit']:.0f} | {r['lowbit'] / r['copy']:.2f}x |")
    rates = [r["lowbit"] for r in rows]
    at_least = sum(1 for x in rates if x >= 1000)
    print(f"\n{len(rows)} pairs, {at_least} at 1 G elements/s or more; "
          f"slowest {rates[0]:.0f}, median {statistics.median(rates):.0f} M elements/s")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
