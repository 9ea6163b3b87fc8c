"""Writes the hand-made hostile seeds of the `checkpoint` fuzz target into fuzz/seeds/checkpoint/
(plain Python, no dependency): damaged safetensors and GGUF files, one damage each, the same
kinds tests/checkpoint_files.rs checks the messages of.

    python3 scripts/gen_checkpoint_seeds.py fuzz/seeds/checkpoint
"""

import json
import os
import struct
import sys

out = sys.argv[1]
os.makedirs(out, exist_ok=True)


def safetensors(header, data=b""):
    text = header if isinstance(header, bytes) else json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + data


def entry(dtype, shape, start, end):
    return {"dtype": dtype, "shape": shape, "data_offsets": [start, end]}


def gguf(n_tensors, n_kv, body=b""):
    return b"GGUF" + struct.pack("<IQQ", 3, n_tensors, n_kv) + body


def gstr(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def info(name, dims, type_id, offset):
    return gstr(name) + struct.pack("<I", len(dims)) + b"".join(struct.pack("<Q", d) for d in dims) + struct.pack("<IQ", type_id, offset)


def padded(b, n=32):
    return b + b"\0" * (-len(b) % n)


seeds = {
    "st_good": safetensors({"__metadata__": {"format": "pt"}, "w": entry("F8_E4M3", [2], 0, 2), "q": entry("F4", [2, 2], 2, 4)}, bytes([0x38, 0xB8, 0x21, 0x43])),
    "st_header_past_end": struct.pack("<Q", 1000) + b"{}",
    "st_header_over_100mb": struct.pack("<Q", 200_000_000),
    "st_short": b"\x01\x02\x03",
    "st_bad_json": safetensors(b'{"t": }'),
    "st_deep_json": safetensors(b"[" * 200 + b"]" * 200),
    "st_duplicate": safetensors(b'{"t":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"t":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}', b"\x07"),
    "st_offset_past_data": safetensors({"a": entry("F32", [2], 0, 8)}, b"\0" * 4),
    "st_overlap": safetensors({"a": entry("F32", [1], 0, 4), "b": entry("F32", [1], 2, 6)}, b"\0" * 6),
    "st_hole": safetensors({"a": entry("F32", [1], 0, 4), "b": entry("F32", [1], 8, 12)}, b"\0" * 12),
    "st_shape_bytes": safetensors({"a": entry("F32", [3], 0, 8)}, b"\0" * 8),
    "st_shape_overflow": safetensors({"a": entry("U8", [2**32, 2**32], 0, 1)}, b"\0"),
    "st_sub_byte": safetensors({"a": entry("F4", [3], 0, 2)}, b"\0\0"),
    "st_f6": safetensors({"a": entry("F6_E3M2", [4], 0, 3)}, b"\0\0\0"),
    "st_unknown_dtype": safetensors({"a": entry("F7", [1], 0, 1)}, b"\0"),
    "st_huge_dims": safetensors({"a": entry("U8", [0] + [2**62] * 8, 0, 0)}),
    "gg_good": padded(gguf(2, 1, gstr("general.alignment") + struct.pack("<II", 4, 32) + info("q", [32, 2], 8, 0) + info("f", [3], 0, 96))) + bytes(range(68)) + b"\0" * 28 + b"\0" * 12,
    "gg_tensor_count": gguf(1 << 60, 0),
    "gg_kv_count": gguf(0, 2**64 - 1),
    "gg_string_length": gguf(0, 1, struct.pack("<QQQ", 1 << 40, 0, 0)),
    "gg_array_count": gguf(0, 1, gstr("k") + struct.pack("<IIQ", 9, 4, 1 << 50)),
    "gg_nested_array": gguf(0, 1, gstr("k") + struct.pack("<IIQ", 9, 9, 1) + struct.pack("<IQ", 4, 0)),
    "gg_alignment_3": gguf(0, 1, gstr("general.alignment") + struct.pack("<II", 4, 3)),
    "gg_alignment_huge": gguf(1, 1, gstr("general.alignment") + struct.pack("<II", 4, 1 << 31) + info("t", [1], 0, 0)),
    "gg_unknown_type": gguf(1, 0, info("t", [32], 4, 0)),
    "gg_five_dims": gguf(1, 0, info("t", [1, 1, 1, 1, 1], 0, 0)),
    "gg_block_mismatch": gguf(1, 0, info("t", [31], 8, 0)),
    "gg_bad_offset": padded(gguf(1, 0, info("t", [4], 0, 32))) + b"\0" * 64,
    "gg_truncated": padded(gguf(1, 0, info("t", [8], 0, 0))) + b"\0" * 20,
    "gg_int64_dims": gguf(1, 0, info("t", [1 << 40, 1 << 40], 0, 0)),
    "gg_version_2": b"GGUF" + struct.pack("<IQQ", 2, 0, 0),
    "gg_bool_2": gguf(0, 1, gstr("b") + struct.pack("<IB", 7, 2)),
}
for name, data in seeds.items():
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
print(len(seeds), "seeds")
