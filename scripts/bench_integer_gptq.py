"""Speed of lowbit's gptq and awq rows against GPTQModel 7.7.0 and AutoAWQ 0.2.9 on the CPU, one
thread each, in the same run: quantize (the producer: its round-to-nearest quantizer and packer;
lowbit: blocks.quantize, which computes the same codes) and dequantize to float16 of a 4096 x 4096
float16 weight (16M elements), the least thread CPU time of --runs runs.

    python scripts/bench_integer_gptq.py [--runs 3] [--rows 4096] [--cols 4096]

Needs the producers (scripts/gptq_awq_peers.py) and lowbit's Python package of this tree.
"""
import argparse
import pathlib
import sys
import threading
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import gptq_awq_peers as peers  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402
from torch import nn  # noqa: E402

from lowbit import blocks  # noqa: E402


def best(runs, fn):
    """The least CPU time of this thread over `runs` runs (torch and lowbit both compute on the
    calling thread here; a shared machine's waits are left out)."""
    times = []
    for _ in range(runs):
        start = time.thread_time()
        fn()
        times.append(time.thread_time() - start)
    return min(times)


def gptq_peer_quantize(w, scheme):
    bits, group, sym, desc_act, _ = peers.parse_gptq(scheme)
    qcfg = peers.RTNConfig(bits=bits, group_size=group, sym=sym, desc_act=desc_act)
    lin = nn.Linear(w.shape[1], w.shape[0], bias=False, dtype=w.dtype)
    lin.weight.data = w.clone()
    wq, scale, zero, gi, *_ = peers.RTN(lin, qcfg).quantize()
    lin.weight.data = wq
    layer = peers.TorchLinear(bits=bits, group_size=group, sym=sym, desc_act=desc_act, in_features=w.shape[1],
                              out_features=w.shape[0], bias=False, pack_dtype=torch.int32)
    peers.pack_module("l", {"l": layer}, scale, zero, gi, {"l": lin}, peers.TorchLinear, threading.Lock(),
                      quantize_config=qcfg)
    return layer


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--rows", type=int, default=4096)
    ap.add_argument("--cols", type=int, default=4096)
    args = ap.parse_args()
    torch.set_num_threads(1)
    n = args.rows * args.cols
    w = torch.from_numpy(np.random.default_rng(0).standard_normal((args.rows, args.cols)).astype(np.float16))
    x = w.numpy()
    rows = []

    scheme = "gptq:int4,group=128,asym"
    layer = gptq_peer_quantize(w, scheme)
    peers.convert_gptq_v1_to_v2_format_module(layer, bits=4, pack_dtype=torch.int32)
    layer.eval()
    peer_q = best(args.runs, lambda: gptq_peer_quantize(w, scheme))
    peer_d = best(args.runs, lambda: peers.TorchLinear.dequantize_weight(layer))
    q = blocks.quantize(x, scheme)
    ours_q = best(args.runs, lambda: blocks.quantize(x, scheme))
    ours_d = best(args.runs, lambda: q.dequantize(dtype=np.float16))
    rows.append((scheme, "GPTQModel RTN + pack_block / TorchLinear.dequantize_weight", peer_q, ours_q, peer_d, ours_d))

    scheme = "awq:int4,group=128"
    stored, _ = peers.awq_quantize(scheme, w)
    t = {k: torch.from_numpy(np.frombuffer(b, dtype=np.int32 if d == "INT32" else np.float16).reshape(s).copy())
         for k, (d, s, b) in stored.items()}
    peer_q = best(1, lambda: peers.awq_quantize(scheme, w))
    peer_d = best(args.runs, lambda: peers.dequantize_gemm(t["qweight"], t["qzeros"], t["scales"], 4, 128))
    q = blocks.quantize(x, scheme)
    ours_q = best(args.runs, lambda: blocks.quantize(x, scheme))
    ours_d = best(args.runs, lambda: q.dequantize(dtype=np.float16))
    rows.append((scheme, "AutoAWQ _apply_quant (one run) / dequantize_gemm", peer_q, ours_q, peer_d, ours_d))

    print(f"{args.rows} x {args.cols} float16 ({n / 1e6:.1f}M elements), one thread, best of {args.runs}; {peers.VERSIONS}")
    for scheme, peer, pq, oq, pd, od in rows:
        print(f"{scheme} ({peer}):")
        print(f"  quantize   lowbit {oq * 1e3:8.1f} ms ({n / oq / 1e9:.2f} G/s)  producer {pq * 1e3:9.1f} ms  x{pq / oq:.1f}")
        print(f"  dequantize lowbit {od * 1e3:8.1f} ms ({n / od / 1e9:.2f} G/s)  producer {pd * 1e3:9.1f} ms  x{pd / od:.1f}")


if __name__ == "__main__":
    main()
