"""Bounded memory: `lowbit checkpoint compare` and `dequantize` on a generated sparse-file
checkpoint (DeepSeek FP8 layout: FLOAT8E4M3FN weights of zeros with float32 scale_inv tiles)
keep the peak resident memory of the process (ru_maxrss of the child) under a fixed bound
whatever the checkpoint's size. The size is LOWBIT_CHECKPOINT_GB (default 1; docs/guide/speed.md's
figure is for 8), the bound 1 GB."""

import json
import os
import resource
import struct
import subprocess

import pytest
from lowbit_binary import lowbit_binary

ROWS = COLS = 8192  # one 64 MiB FP8 weight, 64 x 64 scale tiles of 128 x 128


def _binary():
    return lowbit_binary(("release",))


def _sparse_checkpoint(folder, gigabytes, scale_bytes):
    """A DeepSeek-style checkpoint of `gigabytes` GiB, its weights holes of the file (zeros)."""
    folder.mkdir()
    count = gigabytes * 16
    header, offset = {}, 0
    for k in range(count):
        header[f"layers.{k}.weight"] = {"dtype": "F8_E4M3", "shape": [ROWS, COLS], "data_offsets": [offset, offset + ROWS * COLS]}
        offset += ROWS * COLS
        n = (ROWS // 128) * (COLS // 128) * 4
        header[f"layers.{k}.weight_scale_inv"] = {"dtype": "F32", "shape": [ROWS // 128, COLS // 128], "data_offsets": [offset, offset + n]}
        offset += n
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    path = folder / "model.safetensors"
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        start = f.tell()
        for k in range(count):
            info = header[f"layers.{k}.weight_scale_inv"]
            f.seek(start + info["data_offsets"][0])
            f.write(scale_bytes * (ROWS // 128) * (COLS // 128))
        f.truncate(start + offset)
    (folder / "config.json").write_text(json.dumps({"quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128]}}))
    return path


def _peak_rss_mb(args):
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    out = subprocess.run(args, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    # ru_maxrss of children is the largest of any child so far (KiB on Linux).
    return out, max(after, before) / 1024


@pytest.mark.skipif(not hasattr(resource, "RUSAGE_CHILDREN") or os.uname().sysname != "Linux", reason="ru_maxrss in KiB is Linux's")
def test_compare_and_dequantize_stay_under_1_gb(tmp_path):
    binary = _binary()
    if binary is None:
        pytest.skip("no release lowbit binary in this checkout (cargo build --release)")
    gigabytes = int(os.environ.get("LOWBIT_CHECKPOINT_GB", "1"))
    a = _sparse_checkpoint(tmp_path / "a", gigabytes, struct.pack("<f", 1.0))
    b = _sparse_checkpoint(tmp_path / "b", gigabytes, struct.pack("<f", 2.0))
    # The scales differ, so every weight is decoded on both sides; zeros decode to zeros.
    out, peak = _peak_rss_mb([str(binary), "checkpoint", "compare", "--json", str(a.parent), str(b.parent)])
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr
    report = json.loads(out.stdout)
    assert report["identical"] and len(report["weights"]) == gigabytes * 16
    assert all(not w["identical_bits"] and w["differing"] == 0 for w in report["weights"])
    assert peak < 1024, f"compare of {gigabytes} GiB: peak RSS {peak:.0f} MiB"
    # dequantize to bfloat16 (twice the input written): bounded by the pieces too.
    out, peak = _peak_rss_mb([str(binary), "checkpoint", "dequantize", str(a.parent), "--out", str(tmp_path / "o.safetensors"), "--dtype", "bf16", "--threads", "1"])
    assert out.returncode == 0, out.stderr
    assert os.path.getsize(tmp_path / "o.safetensors") > 2 * gigabytes * 2**30
    assert peak < 1024, f"dequantize of {gigabytes} GiB: peak RSS {peak:.0f} MiB"
