#!/usr/bin/env python3
"""Compares lowbit's block-scaled recipes (`lowbit.blocks`, the Python package built from python/)
with the live implementations they reproduce, bit for bit, on fresh random and edge data, and fails
on any difference or when it compared nothing.

Optional: not part of `cargo test` or CI (torch's Linux wheel is a CUDA build of about 5 GB; CI
checks the recipes against the recorded runs in tests/data/blocks/ instead). Needs a venv with the
pinned peers and the lowbit package built into it:

    python3 -m venv target/blocks-venv
    target/blocks-venv/bin/pip install torch==2.15.0 torchao==0.18.0 compressed-tensors==0.20.0 \\
        nvidia-modelopt==0.47.0 gguf==0.19.0 safetensors==0.8.0 numpy==2.4.6 ml_dtypes==0.6.0 maturin
    PATH=$PWD/target/blocks-venv/bin:$PATH target/blocks-venv/bin/pip install --no-build-isolation ./python
    target/blocks-venv/bin/python scripts/crosscheck_blocks.py [--only TEXT] [--rows N] [--seed S]
    target/blocks-venv/bin/python scripts/crosscheck_blocks.py --self-test

The peers are called exactly as scripts/gen_block_fixtures.py calls them (its functions are
imported, and its version check: another version of a peer is refused, exit 2): torchao 0.18.0
(`to_mx`/`to_dtype` in four scale modes, `NVFP4Tensor`), nvidia-modelopt 0.47.0 (`NVFP4QTensor`),
compressed-tensors 0.20.0 (NVFP4, MXFP4, FP8 per tensor/channel/group/tile), gguf 0.19.0's numpy
port of ggml's blocks (Q8_0, Q4_0, MXFP4 both ways, as lowbit's gguf-py:* rows; NVFP4 decode of random
blocks, as ggml:nvfp4; ggml's own C is scripts/crosscheck_ggml.py's). DeepSeek's FP8
kernels are Triton (CUDA only) and have no live check here; ocp:* is checked against gfloat by
scripts/crosscheck_mx.py.

Per scheme and input dtype (float32, and bfloat16 where the peer takes it), inputs are:
  * random: seeded normal values whose magnitude changes per 16 elements over float32's whole
    range (2^-140 .. 2^120) or a narrow one (2^-20 .. 2^20), 1 % heavy tails;
  * edge: the edge rows of the fixtures (zeros, -0.0, NaN, +-Inf, float32 subnormals and
    maximum, amax at and next to powers of two, element and scale ties, ...), and random blocks
    with such values put at random places;
  * schemes with a per-tensor scale take each edge row as a tensor of its own, and explicit
    global scales (1, 0, Inf, NaN and random ones) where the recipe takes one;
  * a short last block: where the peer refuses it, lowbit must refuse it too.
Compared: `quantize(x, scheme)`'s element codes, scales, global scale, its `dequantize()` and
`to_bytes()` (where the peer has a packed form), and `from_arrays` of the peer's own codes and
scales, dequantized (so decoding is checked apart from encoding). Every value is compared bit for
bit: NaN codes, NaN payloads and the sign of zero included (the rows model what the peers write on
x86-64). A peer's exception counts only where it is a declared refusal (its type and message in
DECLARED_REFUSALS, and lowbit refuses too); any other exception is a difference. The port is a producer of its own (what convert_hf_to_gguf.py writes): every block is compared
with lowbit's gguf-py:* rows, the packed GGUF bytes included.

Prints, per scheme, the elements and blocks compared and the differences; exit status 1 on any
difference, on a scheme that compared nothing, and when nothing at all was compared (`--self-test`
shows that an empty selection and an injected difference both fail).
"""
import argparse
import sys
import warnings

import ml_dtypes
import numpy as np

import crosscheck_common as cc
import crosscheck_record
import gen_block_fixtures as peers

# The refusals each peer declares (the rows' `short_block` answers): the exception's type and the
# start of its message. lowbit must refuse the same inputs; any other exception is a difference.
DECLARED_REFUSALS = {
    "torchao:": [("AssertionError", "the last dimension of shape"),
                 ("AssertionError", "K dim must be divisible by block_size")],
    "modelopt:": [("RuntimeError", "shape '[")],
    "compressed-tensors:": [("ValueError", "tensor column shape must be divisble by the given group_size")],
    "fp8:": [("ValueError", "tensor column shape must be divisble by the given group_size")],
    "ggml:": [("QuantError", "Can't quantize tensor with shape")],
    "gguf-py:": [("QuantError", "Can't quantize tensor with shape")],
}


def declared_refusal(scheme, error):
    """Whether `error` ("Type: message") is one of the scheme's peer's declared refusals."""
    for prefix, refusals in DECLARED_REFUSALS.items():
        if scheme.startswith(prefix):
            return any(error.startswith(f"{kind}: {text}") for kind, text in refusals)
    return False


# ---------------------------------------------------------------------------------------------
# Inputs


def wide_random(rng, rows, cols, low, high, dtype):
    """Normal values, magnitude 2^k per 16 elements with k in [low, high], 1 % times 50."""
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    k = rng.integers(low, high + 1, size=(rows, (cols + 15) // 16)).astype(np.float32)
    with np.errstate(over="ignore", under="ignore"):
        x *= np.repeat(np.exp2(k), 16, axis=1)[:, :cols]
        x[rng.random((rows, cols)) < 0.01] *= 50.0
    return x.astype(ml_dtypes.bfloat16) if dtype == "bf16" else x


SPECIALS = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 3.4028234663852886e38, -3.4028234663852886e38,
                     1e-45, -1e-40, 2.0 ** -126, 0.5, -0.75, 1.75, 3.5, -5.0, 6.0], dtype=np.float32)


def sprinkled(rng, rows, cols, dtype):
    """Random blocks with edge values (specials, ties under power-of-two scales) at random places."""
    x = wide_random(rng, rows, cols, -30, 30, "f32")
    n = rows * cols // 20
    where = rng.integers(0, rows * cols, size=n)
    values = rng.choice(SPECIALS, size=n) * np.exp2(rng.integers(-4, 5, size=n)).astype(np.float32)
    with np.errstate(all="ignore"):
        x.reshape(-1)[where] = values.astype(np.float32)
    return x.astype(ml_dtypes.bfloat16) if dtype == "bf16" else x


def edge_rows(block, dtype):
    """The fixtures' edge rows: [rows, block] with the motifs tiled."""
    return peers.edge_input(max(block, 16), dtype)


def inputs_for(scheme, block, dtypes, rng, rows):
    """(case, input) pairs for a scheme."""
    tile = scheme.endswith("x128") or "tile=128x128" in scheme
    out = []
    for dt in dtypes:
        if tile:
            out += [(f"random_wide_{dt}", wide_random(rng, 260, 264, -100, 100, dt)),
                    (f"sprinkled_{dt}", sprinkled(rng, 132, 256, dt))]
            continue
        cols = block * 8
        out += [(f"random_wide_{dt}", wide_random(rng, rows, cols, -140, 120, dt)),
                (f"random_narrow_{dt}", wide_random(rng, rows, cols, -20, 20, dt))]
        names, x = edge_rows(block, dt)
        if scheme in peers.PER_TENSOR_SCALE:
            out += [(f"edge_{dt}/{name}", x[i:i + 1]) for i, name in enumerate(names)]
            out += [(f"sprinkled_{dt}/{i}", sprinkled(rng, 1, cols, dt)) for i in range(8)]
        else:
            out += [(f"edge_{dt}", x), (f"sprinkled_{dt}", sprinkled(rng, rows, cols, dt))]
    if not tile:
        out.append(("short_last_block_f32", wide_random(rng, 2, block * 2 + block // 2, -20, 20, "f32")))
    return out


def global_scales(rng):
    """Explicit second-level scales: the special ones and random ones."""
    return [1.0, 0.0, float("inf"), float("nan")] + [float(np.float32(np.exp2(rng.uniform(-20, 5))))
                                                     for _ in range(3)]


# ---------------------------------------------------------------------------------------------
# Comparison


class BlockTally(cc.Tally):
    """crosscheck_common's tally (differences, refusals), counting elements and blocks."""

    def __init__(self, peer, scheme):
        super().__init__(peer)
        self.scheme = scheme
        self.blocks = 0

    def same_codes(self, key, ours, theirs, inputs):
        """Codes (or bytes) equal, every bit."""
        ours = np.asarray(ours).astype(np.int64).reshape(-1)
        theirs = np.asarray(theirs).astype(np.int64).reshape(-1)
        if not self._sizes(key, ours, theirs):
            return
        self._count(key, len(ours), np.nonzero(ours != theirs)[0], inputs, ours, theirs)

    def same_values(self, key, ours, theirs, inputs):
        """float32 values bit for bit (NaN payloads and signs included)."""
        with np.errstate(all="ignore"):
            ours = np.asarray(ours, dtype=np.float32).reshape(-1)
            theirs = np.asarray(theirs, dtype=np.float32).reshape(-1)
        if not self._sizes(key, ours, theirs):
            return
        differ = np.nonzero(ours.view(np.uint32) != theirs.view(np.uint32))[0]
        self._count(key, len(ours), differ, inputs, ours.view(np.uint32), theirs.view(np.uint32))

    def _sizes(self, key, ours, theirs):
        if len(ours) == len(theirs):
            return True
        self.differences += max(len(ours), len(theirs))
        self.lines.append(f"{key}: lowbit gave {len(ours)} values, {self.peer} {len(theirs)}")
        return False

    def report(self, profile):
        for line in self.lines:
            print("DIFF", line)
        print(f"{self.scheme} vs {self.peer}: {self.compared:,} values in {self.blocks:,} blocks compared, "
              f"{self.differences:,} differences; {self.refused_both:,} "
              f"refused by both")
        if self.compared == 0:
            print(f"FAIL {self.scheme}: nothing was compared")
            return 1
        return 1 if self.differences else 0


def float_scales(result):
    """The peer's scales as float32 values (ggml's float16 and compressed-tensors' bfloat16 bits)."""
    s = np.asarray(result["scales"])
    hint = result.get("scales_dtype")
    if hint == "f16":
        return s.astype(np.uint16).view(np.float16).astype(np.float32)
    if hint == "bf16":
        return s.astype(np.uint16).view(ml_dtypes.bfloat16).astype(np.float32)
    return s.astype(np.float32)


def dequantize_dtype(scheme):
    """compressed-tensors' decompression gives bfloat16 (docs/research/block_recipes.md)."""
    return ml_dtypes.bfloat16 if scheme.startswith("compressed-tensors:") else np.float32


def compare_case(tally, scheme, key, x, theirs, global_scale, inject):
    """lowbit's quantize, dequantize, to_bytes and from_arrays against the peer's result."""
    kwargs = {} if global_scale is None else {"global_scale": global_scale}
    try:
        with np.errstate(all="ignore"):
            q = lowbit.blocks.quantize(x, scheme, **kwargs)
    except Exception as e:  # lowbit refuses where the peer quantized
        tally.lowbit_refused(key, x.size, f"{type(e).__name__}: {e}")
        return
    tally.blocks += int(np.size(theirs["scales"]))
    flat = np.asarray(x, dtype=np.float32).reshape(-1)
    blocks = np.arange(np.size(theirs["scales"]))
    elements = np.array(q.elements, copy=True)
    if inject == "element":
        elements.reshape(-1)[0] ^= 1
    elif inject == "nan-code":
        # One NaN code changed to another NaN code of the format (E5M2 0x7F <-> 0x7E): a
        # comparison that treats NaNs as one class would not see it.
        flat_codes = elements.reshape(-1)
        nan_at = np.nonzero((flat_codes & 0x7F) >= 0x7D)[0]
        if len(nan_at):
            flat_codes[nan_at[0]] ^= 1
    tally.same_codes(f"{key} elements", elements, theirs["elements"], flat)
    if np.asarray(q.scales).dtype == np.uint8:
        tally.same_codes(f"{key} scales (input: block index)", q.scales, theirs["scales"], blocks)
    else:
        tally.same_values(f"{key} scales (input: block index)", np.asarray(q.scales).astype(np.float32),
                          float_scales(theirs), blocks)
    if "global_scale" in theirs:
        ours = np.array([] if q.global_scale is None else [q.global_scale], dtype=np.float32)
        tally.same_values(f"{key} global scale", ours, theirs["global_scale"], flat)
    if "dequantized" in theirs:
        dtype = dequantize_dtype(scheme)
        tally.same_values(f"{key} dequantize", np.asarray(q.dequantize(dtype=dtype), dtype=np.float32),
                          theirs["dequantized"], flat)
        try:
            g = theirs.get("global_scale")
            back = lowbit.blocks.from_arrays(np.asarray(theirs["elements"], dtype=np.uint8).reshape(x.shape),
                                             _peer_scales(q, theirs), scheme,
                                             global_scale=None if g is None else float(g[0]))
            tally.same_values(f"{key} from_arrays(peer codes).dequantize",
                              np.asarray(back.dequantize(dtype=dtype), dtype=np.float32),
                              theirs["dequantized"], flat)
        except Exception as e:
            tally.lowbit_refused(f"{key} from_arrays", x.size, f"{type(e).__name__}: {e}")
    if "bytes" in theirs and not theirs.get("padded"):
        packed = np.asarray(theirs["bytes"], dtype=np.uint8).reshape(-1)
        try:
            ours = np.frombuffer(q.to_bytes(), dtype=np.uint8)
        except Exception as e:
            tally.lowbit_refused(f"{key} to_bytes", x.size, f"{type(e).__name__}: {e}")
            return
        if not scheme.startswith("gguf-py:"):
            # lowbit's ONNX layout is the packed elements, then the scales (and the per-tensor
            # scale); the peer's packed elements are its first part.
            ours = ours[:len(packed)]
        tally.same_codes(f"{key} to_bytes", ours, packed, np.arange(len(packed)))


def _peer_scales(q, theirs):
    """The peer's scales in the array type of lowbit's (codes, or float values)."""
    if np.asarray(q.scales).dtype == np.uint8:
        return np.asarray(theirs["scales"], dtype=np.uint8).reshape(np.shape(q.scales))
    return float_scales(theirs).astype(np.asarray(q.scales).dtype).reshape(np.shape(q.scales))


def run_scheme(scheme, block, dtypes, fn, impl, rng, rows, inject):
    tally = BlockTally(impl.split(" ")[0] + " " + impl.split(" ")[1], scheme)
    cases = [(case, x, fn, None) for case, x in inputs_for(scheme, block, dtypes, rng, rows)]
    if scheme in peers.GLOBAL_CASES:
        for g in global_scales(rng):
            for case, x in (("random_narrow_f32", wide_random(rng, 4, 64, -20, 20, "f32")),
                            ("sprinkled_f32", sprinkled(rng, 1, 64, "f32"))):
                cases.append((f"{case}_global_{g:g}", x, peers.GLOBAL_CASES[scheme](g), g))
    # torchao's explicit per-tensor scale goes with `torchao:nvfp4` (`global=amax` computes it).
    explicit_scheme = "torchao:nvfp4" if scheme == "torchao:nvfp4,global=amax" else scheme
    for case, x, f, g in cases:
        key = f"{scheme} {case}"
        try:
            with np.errstate(all="ignore"):
                theirs = f(x)
        except Exception as e:  # a declared refusal of the peer: lowbit must refuse this input too
            error = peers.error_text(e)
            if not declared_refusal(scheme, error):
                tally.differences += x.size
                tally.lines.append(f"{key}: {tally.peer} raised undeclared {error[:200]}")
                continue
            kwargs = {} if g is None else {"global_scale": g}
            try:
                lowbit.blocks.quantize(x, explicit_scheme if g is not None else scheme, **kwargs)
                refused = False
            except Exception:
                refused = True
            tally.refused(key, x.size, refused, error)
            continue
        if "dequantize_error" in theirs and not declared_refusal(scheme, theirs["dequantize_error"]):
            tally.differences += x.size
            tally.lines.append(f"{key}: {tally.peer}'s dequantize raised undeclared {theirs['dequantize_error'][:200]}")
            continue
        if "dequantize_error" in theirs:
            # ModelOpt pads a short last block and then cannot dequantize it: lowbit refusing the
            # block (the recipe's declared answer) counts as refused by both; codes, if lowbit
            # gives them, are compared.
            theirs.pop("dequantized", None)
            try:
                lowbit.blocks.quantize(x, scheme)
            except Exception:
                tally.refused(key, x.size, True, theirs["dequantize_error"])
                continue
        if tuple(np.shape(theirs["elements"])) != tuple(x.shape):
            # ModelOpt pads a short last block with zeros: its codes for the elements that exist
            # are compared (the padding changes no block maximum), its padded bytes are not.
            theirs["elements"] = np.asarray(theirs["elements"])[..., :x.shape[-1]]
            theirs["padded"] = True
        compare_case(tally, explicit_scheme if g is not None else scheme, key, x, theirs, g, inject)
    return tally


def ggml_nvfp4_decode(rng, inject):
    """ggml NVFP4 blocks of random bytes: gguf's dequantize against lowbit's from_bytes."""
    import gguf

    tally = BlockTally("gguf 0.19.0", "ggml:nvfp4 (decode)")
    rows, superblocks = 16, 32
    raw = rng.integers(0, 256, size=(rows, superblocks * 36), dtype=np.uint8)
    with np.errstate(all="ignore"):
        theirs = gguf.quants.dequantize(raw, gguf.GGMLQuantizationType.NVFP4).reshape(rows, superblocks * 64)
    try:
        q = lowbit.blocks.from_bytes(raw.tobytes(), "ggml:nvfp4", (rows, superblocks * 64))
        ours = np.array(q.dequantize(dtype=np.float32), copy=True)
    except Exception as e:
        tally.lowbit_refused("ggml:nvfp4 random bytes", theirs.size, f"{type(e).__name__}: {e}")
        return tally
    if inject:
        ours.reshape(-1)[0] = np.nextafter(ours.reshape(-1)[0], np.float32(np.inf))
    tally.blocks += rows * superblocks * 4
    tally.same_values("ggml:nvfp4 random bytes dequantize", ours, theirs, raw.reshape(-1))
    return tally


# Schemes the fixture generator records that lowbit.blocks does not offer (none today).
NOT_IN_LOWBIT = {}


def selected(only):
    out = []
    for scheme, block, dtypes, fn, impl in peers.schemes():
        if peers.reference_of(scheme) != "live" and not scheme.startswith("ggml:"):
            continue  # DeepSeek: a transcription, not a live implementation
        if scheme == "ggml:nvfp4":
            continue
        # The generator names gguf's port by the ggml type; lowbit's row for the port is gguf-py:*.
        scheme = scheme.replace("ggml:", "gguf-py:")
        if only not in scheme:
            continue
        if scheme in NOT_IN_LOWBIT:
            print(f"{scheme}: not compared ({NOT_IN_LOWBIT[scheme]})")
            continue
        out.append((scheme, block or 128, dtypes, fn, impl))
    return out


def run(args, inject=False):
    """Every selected scheme; returns (exit status, values compared)."""
    rng = np.random.default_rng(args.seed)
    status, total = 0, 0
    chosen = selected(args.only)
    tallies = [run_scheme(*entry, rng, args.rows, inject) for entry in chosen]
    if args.only in "ggml:nvfp4 (decode)":
        tallies.append(ggml_nvfp4_decode(rng, inject))
    for tally in tallies:
        status |= tally.report(tally.scheme)
        total += tally.compared
    if total == 0:
        print("FAIL: nothing was compared (a typo in --only?)")
        status = 1
    if getattr(args, "record", False) and total:
        options = " ".join(f"--{k} {v}" for k, v in (("only", args.only), ("rows", args.rows)) if v)
        crosscheck_record.record("crosscheck_blocks.py", peers.versions, args.seed, options,
                                 [{"what": f"`{t.scheme}` vs {t.peer}", "compared": t.compared, "blocks": t.blocks,
                                   "differences": t.differences} for t in tallies])
    return status, total


def self_test(args):
    """An empty selection must fail; so must every ggml-port scheme with one flipped element code,
    and torchao's E5M2 row with one NaN code changed to another NaN code; the E5M2 row as it is
    must pass."""
    def once(only, inject=False):
        return run(argparse.Namespace(only=only, seed=args.seed, rows=args.rows), inject=inject)

    print("self-test: nothing selected")
    results = [("empty selection", once("NO_SUCH_SCHEME")[0], 1)]
    for scheme in ("gguf-py:q8_0", "gguf-py:q4_0", "gguf-py:mxfp4"):
        print(f"self-test: one element code flipped in every case of {scheme}")
        results.append((f"{scheme} flipped", once(scheme, "element")[0], 1))
    print("self-test: one NaN code changed in every case of torchao:mxfp8e5m2,scale=floor")
    results.append(("E5M2 NaN code changed", once("torchao:mxfp8e5m2,scale=floor", "nan-code")[0], 1))
    print("self-test: torchao:mxfp8e5m2,scale=floor as it is")
    clean, compared = once("torchao:mxfp8e5m2,scale=floor")
    results.append(("clean run", clean if compared > 0 else 1, 0))
    ok = all(got == want for _, got, want in results)
    print(f"self-test {'passed' if ok else 'FAILED'}: " + ", ".join(f"{name} exit {got} (must be {want})"
                                                                      for name, got, want in results))
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default="", help="only schemes whose name contains this")
    ap.add_argument("--rows", type=int, default=16, help="rows of blocks per random input")
    ap.add_argument("--seed", type=int, default=20261126)
    ap.add_argument("--record", action="store_true",
                    help="write the figures into docs/crosschecks.json and docs/crosschecks.md")
    ap.add_argument("--self-test", action="store_true",
                    help="show that an empty comparison and an injected difference fail")
    args = ap.parse_args()
    versions = peers.check_pins()  # exit 2 on a missing package or another version
    peers.versions = versions
    peers.import_peers()
    global lowbit
    import lowbit
    import lowbit.blocks  # noqa: F401

    warnings.filterwarnings("ignore")
    print("peers: " + ", ".join(f"{k} {v}" for k, v in versions.items()) + f"; seed {args.seed}", flush=True)
    sys.exit(self_test(args) if args.self_test else run(args)[0])


lowbit = None  # imported after the version check

if __name__ == "__main__":
    main()
