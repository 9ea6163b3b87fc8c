"""Checks `lowbit checkpoint quantize` against the producers' own loaders and quantizers.

Run in a venv with the pinned producers (scripts/gen_block_fixtures.py's pins):
    pip install torch==2.15.0 compressed-tensors==0.20.0 nvidia-modelopt==0.47.0 gguf==0.19.0 \
        safetensors==0.8.0 numpy==2.4.6 ml_dtypes==0.6.0
    python scripts/crosscheck_checkpoint_quantize.py --lowbit target/release/lowbit

An original checkpoint (float32 and bfloat16 weights, an embedding, a norm, a head) is quantized
by `lowbit checkpoint quantize` under each scheme below; then, per quantized weight:
- the file's config is read by the producer (compressed-tensors' QuantizationConfig and its
  registered compressor for the config's `format`; ModelOpt's hf_quant_config.json `quant_algo`
  and `group_size`; gguf's GGUFReader for GGUF), the weight is decompressed by the producer's
  own code (compressed-tensors `*Compressor.decompress`, ModelOpt `NVFP4QTensor.dequantize`,
  `gguf.quants.dequantize`), and compared bit for bit with `lowbit checkpoint dequantize`;
- where the producer quantizes on a CPU (gguf's numpy Q8_0/Q4_0/MXFP4, compressed-tensors
  NVFP4, MXFP4 and FP8 (`fp8:tensor`, `fp8:channel`, `fp8:block=128x128`), ModelOpt NVFP4), its
  stored bytes are compared with the file's bytes;
- the FP8 schemes once more on a copy of the original holding +NaN and -NaN elements: element
  codes, scales and decompressed values compared as bits (a NaN equals only the same NaN code).
It prints what it compared, per check, and fails (exit 1) on any difference or when it compared
nothing.

With `--write-fixtures DIR` it writes instead the small fixtures of tests/checkpoint_quantize.rs:
`original/` (model.safetensors: float32 and bfloat16 weights, an embedding, a norm) and that
checkpoint quantized by the producers' own code, stored as each producer stores it:
`compressed-tensors-nvfp4/`, `compressed-tensors-mxfp4/` and `compressed-tensors-fp8-channel/`
(quantize_and_pack_fp4 / calculate_qparams + quantize, config.json from compressed-tensors'
QuantizationConfig),
`modelopt-nvfp4/` (NVFP4QTensor.quantize; hf_quant_config.json as ModelOpt's export writes it),
`ggml-q8_0.gguf`, `ggml-q4_0.gguf`, `ggml-mxfp4.gguf` (gguf.GGUFWriter, gguf.quants.quantize).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import warnings

import ml_dtypes
import numpy as np

warnings.filterwarnings("ignore")

PINS = {"torch": "2.15.0", "compressed-tensors": "0.20.0", "nvidia-modelopt": "0.47.0", "gguf": "0.19.0",
        "safetensors": "0.8.0"}

WEIGHTS = {
    "model.layers.0.mlp.down_proj.weight": ((64, 256), np.float32),
    "model.layers.0.self_attn.q_proj.weight": ((128, 128), "bfloat16"),
    "model.embed_tokens.weight": ((32, 64), np.float32),
    "model.norm.weight": ((64,), np.float32),
    "lm_head.weight": ((32, 64), np.float32),
}
QUANTIZED = ["model.layers.0.mlp.down_proj.weight", "model.layers.0.self_attn.q_proj.weight"]


def check_pins():
    from importlib.metadata import version
    for name, pin in PINS.items():
        if version(name) != pin:
            sys.exit(f"{name} {version(name)} is installed; this script checks {pin}")


def original(folder, rng, with_nan=False):
    import torch
    from safetensors.torch import save_file
    tensors = {}
    for name, (shape, dtype) in WEIGHTS.items():
        x = rng.standard_normal(shape) * np.exp(rng.uniform(-4, 4, shape[:-1] + (1,)))
        t = torch.from_numpy(x.astype(np.float32))
        tensors[name] = t.to(torch.bfloat16) if dtype == "bfloat16" else t
    # A zero row and a block holding one large value: the recipes' edge rules on a real file.
    tensors[QUANTIZED[0]][3] = 0.0
    tensors[QUANTIZED[0]][5, 17] = 3.0e4
    if with_nan:
        tensors[QUANTIZED[0]][7, 3] = float("nan")
        tensors[QUANTIZED[0]][9, 200] = -float("nan")
        tensors[QUANTIZED[1]][2, 40] = -float("nan")
    os.makedirs(folder, exist_ok=True)
    save_file(tensors, os.path.join(folder, "model.safetensors"), metadata={"format": "pt"})
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump({"model_type": "llama", "hidden_size": 64}, f)
    return {k: v.float().numpy() for k, v in tensors.items()}


class Tally:
    def __init__(self):
        self.compared = 0
        self.differ = []
        self.counts = {}

    def count(self, what, n):
        """Counted apart too, so the report shows each check's share."""
        self.counts[what] = self.counts.get(what, 0) + n

    def same(self, what, ours, theirs):
        ours, theirs = np.asarray(ours), np.asarray(theirs)
        if ours.shape != theirs.shape:
            self.differ.append(f"{what}: shapes {ours.shape} and {theirs.shape}")
            return
        a = ours.view(np.uint8).reshape(-1)
        b = theirs.view(np.uint8).reshape(-1)
        self.compared += ours.size
        self.count(what.split(" model.")[0], ours.size)
        if not np.array_equal(a, b):
            # Elements as their bits (a NaN shows its code), lowbit's first.
            width = ours.dtype.itemsize
            bits = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[width]
            x, y = ours.reshape(-1).view(bits), theirs.reshape(-1).view(bits)
            bad = np.flatnonzero(x != y)
            shown = ", ".join(f"element {k}: {int(x[k]):#0{2 * width + 2}x} vs {int(y[k]):#0{2 * width + 2}x}"
                              for k in bad[:3])
            self.differ.append(f"{what}: {bad.size} of {x.size} differ; {shown}")


def lowbit(binary, *args):
    done = subprocess.run([binary, *args], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"lowbit {' '.join(args)} failed: {done.stderr}")


def load(path):
    from safetensors.torch import load_file
    return load_file(path)


def check_compressed_tensors(tally, folder, ours, label=""):
    from compressed_tensors.compressors.base import BaseCompressor
    from compressed_tensors.quantization import QuantizationConfig
    with open(os.path.join(folder, "config.json")) as f:
        config = QuantizationConfig.model_validate(json.load(f)["quantization_config"])
    compressor = BaseCompressor.get_value_from_registry(config.format)
    scheme = config.config_groups["group_0"]
    stored = load(os.path.join(folder, "model.safetensors"))
    for name in QUANTIZED:
        prefix = name.removesuffix("weight")
        local = {k.removeprefix(prefix): v for k, v in stored.items() if k.startswith(prefix)}
        restored = compressor.decompress(local, scheme)["weight"]
        tally.same(f"{config.format} {label}{name} decompressed ({restored.dtype})", as_numpy(ours[name].to(restored.dtype)),
                   as_numpy(restored))
    return stored


def as_numpy(t):
    import torch
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy()
    return t.numpy()


def check_ct_nvfp4_quantizer(tally, stored, originals):
    """compressed-tensors' own NVFP4 quantization of the originals (as scripts/gen_block_fixtures.py
    calls it) gives the file's bytes."""
    import torch
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import gen_block_fixtures as peers
    peers.import_peers()
    for name, t in originals.items():
        if WEIGHTS[name][1] == "bfloat16":
            t = t.astype(ml_dtypes.bfloat16)
        theirs = peers.compressed_tensors_nvfp4(t, "amax")
        prefix = name.removesuffix("weight")
        tally.same(f"compressed-tensors NVFP4 {name} packed", stored[prefix + "weight_packed"].numpy(), theirs["bytes"])
        tally.same(f"compressed-tensors NVFP4 {name} scales", stored[prefix + "weight_scale"].view(torch.uint8).numpy(),
                   theirs["scales"])
        tally.same(f"compressed-tensors NVFP4 {name} global", stored[prefix + "weight_global_scale"].numpy(),
                   theirs["global_scale"])


def check_ct_mxfp4_quantizer(tally, stored, originals):
    """compressed-tensors' own MXFP4 quantization of the originals (calculate_qparams,
    quantize_and_pack_fp4, MXFP4PackedCompressor's uint8 scale) gives the file's bytes; the
    compressor stores no global scale."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import gen_block_fixtures as peers
    peers.import_peers()
    for name, t in originals.items():
        if WEIGHTS[name][1] == "bfloat16":
            t = t.astype(ml_dtypes.bfloat16)
        theirs = peers.compressed_tensors_mxfp4(t)
        prefix = name.removesuffix("weight")
        tally.same(f"compressed-tensors MXFP4 {name} packed", stored[prefix + "weight_packed"].numpy(), theirs["bytes"])
        tally.same(f"compressed-tensors MXFP4 {name} scales", stored[prefix + "weight_scale"].numpy(), theirs["scales"])
        if prefix + "weight_global_scale" in stored:
            tally.differ.append(f"compressed-tensors MXFP4 {name}: a weight_global_scale MXFP4 does not store")


def check_ct_fp8_quantizer(tally, stored, originals, strategy, label):
    """compressed-tensors' own float-quantized FP8 quantization of the originals (calculate_qparams
    on the observer's min/max, then quantize to float8_e4m3fn, as scripts/gen_block_fixtures.py
    calls it) gives the file's element bytes and scale bytes, bit for bit: every NaN code and NaN
    scale compared as bits, no NaN counted equal to another."""
    import torch
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import gen_block_fixtures as peers
    peers.import_peers()
    for name, t in originals.items():
        if WEIGHTS[name][1] == "bfloat16":
            t = t.astype(ml_dtypes.bfloat16)
        theirs = peers.compressed_tensors_fp8(t, strategy)
        elements = stored[name].view(torch.uint8).numpy()
        scale = stored[name + "_scale"]
        scale = scale.view(torch.int16).numpy().view(np.uint16) if scale.dtype == torch.bfloat16 else scale.numpy()
        if (scale.dtype == np.uint16) != (theirs["scales_dtype"] == "bf16"):
            tally.differ.append(f"compressed-tensors FP8 {strategy} {label}{name}: scale dtype {stored[name + '_scale'].dtype}"
                                f", compressed-tensors' {theirs['scales_dtype']}")
            continue
        tally.same(f"compressed-tensors FP8 {strategy} {label}{name} elements", elements, theirs["elements"])
        tally.same(f"compressed-tensors FP8 {strategy} {label}{name} scales", scale, theirs["scales"])


def check_modelopt(tally, folder, ours, originals):
    import torch
    from modelopt.torch.quantization.qtensor.nvfp4_tensor import NVFP4QTensor
    with open(os.path.join(folder, "hf_quant_config.json")) as f:
        quant = json.load(f)["quantization"]
    if quant["quant_algo"] not in ("NVFP4", "W4A16_NVFP4"):
        sys.exit(f"hf_quant_config.json: quant_algo {quant['quant_algo']}")
    block = quant["group_size"]
    stored = load(os.path.join(folder, "model.safetensors"))
    for name in QUANTIZED:
        packed, scale, scale_2 = stored[name], stored[name + "_scale"], stored[name + "_scale_2"]
        shape = (packed.shape[0], packed.shape[1] * 2)
        q = NVFP4QTensor(torch.Size(shape), torch.float32, packed)
        restored = q.dequantize(dtype=torch.float32, scale=scale, double_scale=scale_2, block_sizes={-1: block})
        tally.same(f"ModelOpt {name} dequantized", as_numpy(ours[name]), as_numpy(restored))
        t = torch.from_numpy(originals[name])
        if WEIGHTS[name][1] == "bfloat16":
            t = t.to(torch.bfloat16)
        q2, s2, g2 = NVFP4QTensor.quantize(t, block)
        tally.same(f"ModelOpt {name} packed", packed.numpy(), q2._quantized_data.numpy())
        tally.same(f"ModelOpt {name} scales", scale.view(torch.uint8).numpy(), s2.view(torch.uint8).numpy())
        tally.same(f"ModelOpt {name} scale_2", scale_2.reshape(1).numpy(), g2.float().reshape(1).numpy())


def check_gguf(tally, path, ours, originals, qtype_name):
    import gguf
    reader = gguf.GGUFReader(path)
    qtype = gguf.GGMLQuantizationType[qtype_name]
    found = {t.name: t for t in reader.tensors}
    for name in QUANTIZED:
        t = found[name]
        if t.tensor_type != qtype:
            tally.differ.append(f"GGUF {name}: type {t.tensor_type.name}, not {qtype_name}")
            continue
        shape = tuple(int(d) for d in reversed(t.shape))
        restored = gguf.quants.dequantize(t.data, qtype).reshape(shape).astype(np.float32)
        tally.same(f"GGUF {qtype_name} {name} dequantized by gguf", as_numpy(ours[name]), restored)
        if qtype_name in ("Q8_0", "Q4_0", "MXFP4"):
            x = originals[name]
            theirs = gguf.quants.quantize(x, qtype)
            tally.same(f"GGUF {qtype_name} {name} blocks quantized by gguf", np.asarray(t.data).reshape(-1),
                       theirs.reshape(-1))


def run(binary, record=False):
    check_pins()
    tally = Tally()
    rng = np.random.default_rng(2711)
    with tempfile.TemporaryDirectory() as tmp:
        originals = original(os.path.join(tmp, "orig"), rng)
        originals = {k: originals[k] for k in QUANTIZED}
        for scheme in ["compressed-tensors:nvfp4", "compressed-tensors:mxfp4", "fp8:tensor", "fp8:channel", "fp8:block=128x128",
                       "modelopt:nvfp4"]:
            out = os.path.join(tmp, scheme.replace(":", "_").replace("=", "_"))
            lowbit(binary, "checkpoint", "quantize", os.path.join(tmp, "orig"), "--scheme", scheme, "--out", out)
            lowbit(binary, "checkpoint", "dequantize", out, "--out", out + ".f32.safetensors")
            ours = load(out + ".f32.safetensors")
            if scheme == "modelopt:nvfp4":
                check_modelopt(tally, out, ours, originals)
                continue
            stored = check_compressed_tensors(tally, out, ours)
            if scheme == "compressed-tensors:nvfp4":
                check_ct_nvfp4_quantizer(tally, stored, originals)
            if scheme == "compressed-tensors:mxfp4":
                check_ct_mxfp4_quantizer(tally, stored, originals)
            if scheme.startswith("fp8:"):
                check_ct_fp8_quantizer(tally, stored, originals, scheme.removeprefix("fp8:"), "")
        # The FP8 quantizers again on weights holding NaN (+NaN and -NaN, in one row and block):
        # the NaN element codes and any NaN scale are compared as bits, as every other code.
        nan_originals = original(os.path.join(tmp, "orig-nan"), np.random.default_rng(2711), with_nan=True)
        nan_originals = {k: nan_originals[k] for k in QUANTIZED}
        for scheme in ["fp8:tensor", "fp8:channel", "fp8:block=128x128"]:
            out = os.path.join(tmp, "nan_" + scheme.replace(":", "_").replace("=", "_"))
            lowbit(binary, "checkpoint", "quantize", os.path.join(tmp, "orig-nan"), "--scheme", scheme, "--out", out)
            lowbit(binary, "checkpoint", "dequantize", out, "--out", out + ".f32.safetensors")
            stored = check_compressed_tensors(tally, out, load(out + ".f32.safetensors"), "with NaN ")
            check_ct_fp8_quantizer(tally, stored, nan_originals, scheme.removeprefix("fp8:"), "with NaN ")
        for qtype in ["Q8_0", "Q4_0", "MXFP4"]:
            out = os.path.join(tmp, f"{qtype}.gguf")
            # gguf's numpy quantizers take float32: the bfloat16 weight is widened first by them too.
            lowbit(binary, "checkpoint", "quantize", os.path.join(tmp, "orig"), "--scheme", f"ggml:{qtype.lower()}",
                   "--out", out)
            lowbit(binary, "checkpoint", "dequantize", out, "--out", out + ".f32.safetensors")
            check_gguf(tally, out, load(out + ".f32.safetensors"), originals, qtype)
    for d in tally.differ:
        print("DIFFERENT", d)
    for what, n in tally.counts.items():
        print(f"  {what}: {n} compared")
    print(f"compared {tally.compared} elements/bytes, {len(tally.differ)} differences")
    if record and tally.compared:
        import crosscheck_record

        crosscheck_record.record(
            "crosscheck_checkpoint_quantize.py", dict(PINS), 2711, "",
            [{"what": f"{what}: stored elements, scales and bytes", "compared": n,
              "differences": sum(d.startswith(what) for d in tally.differ)} for what, n in tally.counts.items()])
    if tally.compared == 0 or tally.differ:
        sys.exit(1)


FIXTURE_WEIGHTS = {
    "model.layers.0.mlp.up_proj.weight": ((4, 64), np.float32),
    "model.layers.0.self_attn.o_proj.weight": ((2, 64), "bfloat16"),
    "model.embed_tokens.weight": ((3, 64), np.float32),
    "model.norm.weight": ((64,), np.float32),
}


def write_fixtures(folder):
    import gguf
    import torch
    from compressed_tensors.quantization import QuantizationConfig, QuantizationScheme
    from compressed_tensors.quantization.quant_scheme import PRESET_SCHEMES
    from modelopt.torch.quantization.qtensor.nvfp4_tensor import NVFP4QTensor
    from safetensors.torch import save_file
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import gen_block_fixtures as peers
    peers.import_peers()

    check_pins()
    rng = np.random.default_rng(27)
    tensors = {}
    for name, (shape, dtype) in FIXTURE_WEIGHTS.items():
        x = rng.standard_normal(shape) * np.exp(rng.uniform(-3, 3, shape[:-1] + (1,)))
        t = torch.from_numpy(x.astype(np.float32))
        tensors[name] = t.to(torch.bfloat16) if dtype == "bfloat16" else t
    up = "model.layers.0.mlp.up_proj.weight"
    tensors[up][1] = 0.0  # a zero row
    tensors[up][2, 5] = 1.0e3  # one block with a large value
    quantized = [up, "model.layers.0.self_attn.o_proj.weight"]
    kept = {k: v for k, v in tensors.items() if k not in quantized}
    base_config = {"model_type": "llama", "hidden_size": 64}

    def save(sub, state, config=None, extra=None):
        os.makedirs(os.path.join(folder, sub), exist_ok=True)
        save_file(state, os.path.join(folder, sub, "model.safetensors"), metadata={"format": "pt"})
        for file, content in ([("config.json", config)] if config else []) + (extra or []):
            with open(os.path.join(folder, sub, file), "w") as f:
                json.dump(content, f, indent=2, sort_keys=True)
                f.write("\n")

    save("original", tensors, base_config)

    def numpy_input(t):
        return t.view(torch.int16).numpy().view(ml_dtypes.bfloat16) if t.dtype == torch.bfloat16 else t.numpy()

    def ct_config(preset, fmt):
        scheme = QuantizationScheme(targets=["Linear"], **PRESET_SCHEMES[preset])
        config = QuantizationConfig(config_groups={"group_0": scheme}, ignore=["model.embed_tokens"], format=fmt,
                                    quantization_status="compressed")
        return dict(base_config, quantization_config=config.model_dump(mode="json"))

    state = dict(kept)
    for name in quantized:
        q = peers.compressed_tensors_nvfp4(numpy_input(tensors[name]), "amax")
        prefix = name.removesuffix("weight")
        state[prefix + "weight_packed"] = torch.from_numpy(q["bytes"])
        state[prefix + "weight_scale"] = torch.from_numpy(q["scales"]).view(torch.float8_e4m3fn)
        state[prefix + "weight_global_scale"] = torch.from_numpy(q["global_scale"])
    save("compressed-tensors-nvfp4", state, ct_config("NVFP4A16", "nvfp4-pack-quantized"))

    state = dict(kept)
    for name in quantized:
        q = peers.compressed_tensors_mxfp4(numpy_input(tensors[name]))
        prefix = name.removesuffix("weight")
        state[prefix + "weight_packed"] = torch.from_numpy(q["bytes"])
        state[prefix + "weight_scale"] = torch.from_numpy(q["scales"])
    save("compressed-tensors-mxfp4", state, ct_config("MXFP4A16", "mxfp4-pack-quantized"))

    state = dict(kept)
    for name in quantized:
        q = peers.compressed_tensors_fp8(numpy_input(tensors[name]), "channel")
        state[name] = torch.from_numpy(q["elements"]).view(torch.float8_e4m3fn)
        scales = q["scales"]
        state[name + "_scale"] = (torch.from_numpy(scales.view(np.int16)).view(torch.bfloat16)
                                  if q["scales_dtype"] == "bf16" else torch.from_numpy(scales))
    config = ct_config("FP8_DYNAMIC", "float-quantized")
    config["quantization_config"]["config_groups"]["group_0"]["input_activations"] = None
    save("compressed-tensors-fp8-channel", state, config)

    state = dict(kept)
    for name in quantized:
        q, scale, g = NVFP4QTensor.quantize(tensors[name], 16)
        state[name] = q._quantized_data
        state[name + "_scale"] = scale
        state[name + "_scale_2"] = g.float().reshape(())
    hf_quant = {"producer": {"name": "modelopt", "version": "0.47.0"},
                "quantization": {"quant_algo": "W4A16_NVFP4", "kv_cache_quant_algo": None, "group_size": 16,
                                 "exclude_modules": ["model.embed_tokens"]}}
    save("modelopt-nvfp4", state, None, [("hf_quant_config.json", hf_quant)])

    for qtype in ["Q8_0", "Q4_0", "MXFP4"]:
        writer = gguf.GGUFWriter(os.path.join(folder, f"ggml-{qtype.lower()}.gguf"), "llama")
        for name, t in tensors.items():
            x = t.float().numpy()
            if name in quantized:
                kind = gguf.GGMLQuantizationType[qtype]
                writer.add_tensor(name, gguf.quants.quantize(x, kind), raw_dtype=kind)
            else:
                writer.add_tensor(name, x)
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_tensors_to_file()
        writer.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lowbit", default="target/release/lowbit")
    parser.add_argument("--write-fixtures", metavar="DIR")
    parser.add_argument("--record", action="store_true",
                        help="write the figures into docs/crosschecks.json and docs/crosschecks.md")
    args = parser.parse_args()
    if args.write_fixtures:
        write_fixtures(args.write_fixtures)
    else:
        run(args.lowbit, args.record)


if __name__ == "__main__":
    main()
