"""lowbit.blocks' bitsandbytes 4-bit schemes (bnb:nf4|fp4[,blocksize=N][,nested]) against the
outputs of bitsandbytes 0.50.2's CPU backend recorded by scripts/gen_integer_bnb_fixtures.py
(tests/data/integer/bnb/fixtures.json): storage() byte for byte, dequantize(dtype) bit for bit,
from_storage of the peer's own tensors, elements and scales as the producer holds them."""

import json
import pathlib

import ml_dtypes
import numpy as np
import pytest

import lowbit.blocks as lb

DATA = pathlib.Path(__file__).resolve().parents[2] / "tests" / "data" / "integer" / "bnb" / "fixtures.json"
DOC = json.loads(DATA.read_text())
NUMPY = {"FLOAT": np.float32, "FLOAT16": np.float16, "BFLOAT16": ml_dtypes.bfloat16, "UINT8": np.uint8}
OUTPUTS = {"float32": np.float32, "float16": np.float16, "bfloat16": ml_dtypes.bfloat16}


def fnv1a64(data):
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def same(recorded, data):
    if recorded.startswith("fnv1a64:"):
        return fnv1a64(data) == recorded[len("fnv1a64:"):]
    return bytes.fromhex(recorded) == data


def lcg(seed, n, scale):
    out = np.empty(n, dtype=np.float32)
    s = seed
    for i in range(n):
        s = (s * 1664525 + 1013904223) & 0xFFFFFFFF
        out[i] = ((s >> 8) / 16777216.0 - 0.5) * scale
    return out


def raw(a):
    return np.ascontiguousarray(a).reshape(-1).view(np.uint8).tobytes()


def weight(case):
    shape = tuple(case["shape"])
    if case["input"] is not None:
        return np.frombuffer(bytes.fromhex(case["input"]), dtype=NUMPY[case["dtype"]]).reshape(shape)
    seed, scale = case["lcg"]
    return lcg(seed, int(np.prod(shape)), scale).reshape(shape)


CASES = DOC["quantize"]


@pytest.mark.parametrize("case", CASES, ids=[c["label"] for c in CASES])
def test_quantize_storage_dequantize(case):
    w = weight(case)
    q = lb.quantize(w, case["scheme"])
    stored = q.storage()
    want = case["storage"]
    assert list(stored) == [t["name"] for t in want]
    for t in want:
        a = stored[t["name"]]
        assert a.dtype == NUMPY[t["dtype"]], t["name"]
        assert list(a.shape) == t["shape"], t["name"]
        assert same(t["hex"], raw(a)), t["name"]
    for key, dt in OUTPUTS.items():
        d = q.dequantize(dt)
        assert d.dtype == dt and d.shape == w.shape
        assert same(case["dequantized"][key], raw(d)), key
    # The element codes are the nibbles of the packed weight, first high; the scales are the
    # stored absmax (float32 maxima, or the nested byte codes).
    packed = stored["weight"].reshape(-1)
    nibbles = np.stack([packed >> 4, packed & 15], axis=1).reshape(-1)[: w.size]
    assert np.array_equal(q.elements.reshape(-1), nibbles)
    assert raw(q.scales) == raw(stored["absmax"])
    assert q.zero_points is None
    # The peer's own tensors read back and dequantize alike.
    peer = {t["name"]: np.frombuffer(bytes.fromhex(t["hex"]), dtype=NUMPY[t["dtype"]]).reshape(t["shape"])
            for t in want if not t["hex"].startswith("fnv1a64:")}
    if len(peer) == len(want):
        back = lb.from_storage(peer, case["scheme"], w.shape)
        assert {k: raw(v) for k, v in back.storage().items()} == {k: raw(v) for k, v in peer.items()}
        # A NaN offset reads back from the JSON as float("nan"), not the bits in memory.
        if b"NaN" not in raw(peer[want[-1]["name"]]):
            assert same(case["dequantized"]["float32"], raw(back.dequantize(np.float32)))


def test_compared_enough():
    assert len(CASES) >= 30 and len(DOC["dequantize"]) >= 8


@pytest.mark.parametrize("bad", ["bnb:nf4,blocksize=16", "bnb:fp8", "bnb:nf4,nested=yes", "bnb:nf4,group=64"])
def test_bad_names_refused(bad):
    with pytest.raises(Exception):
        lb.quantize(np.zeros((2, 64), np.float32), bad)


def test_bad_storage_refused():
    q = lb.quantize(np.linspace(-1, 1, 128, dtype=np.float32).reshape(2, 64), "bnb:fp4,nested")
    stored = q.storage()
    short = dict(stored, weight=stored["weight"][:-1])
    with pytest.raises(Exception, match="weight"):
        lb.from_storage(short, "bnb:fp4,nested", (2, 64))
    with pytest.raises(Exception, match="quant_state"):
        lb.from_storage({k: v for k, v in stored.items() if not k.startswith("quant_state")}, "bnb:fp4,nested", (2, 64))
    with pytest.raises(Exception):
        lb.from_storage(stored, "bnb:fp4", (2, 64))
