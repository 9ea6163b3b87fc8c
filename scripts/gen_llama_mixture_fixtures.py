#!/usr/bin/env python3
"""Records what llama.cpp's `llama_model_quantize` writes for every quantization mixture
(`llama_ftype`), as the fixtures of lowbit's `ggml:<FTYPE>` mixtures (`tests/ggml_mixtures.rs`).

The peer is llama.cpp as the PyPI package llama-cpp-python 0.3.36 vendors it (llama.cpp commit
LLAMA_CPP_COMMIT below, read from the sdist's `vendor/llama.cpp` submodule), built from source
for the CPU with no BLAS, and called through that package's ctypes binding:

    python3 -m venv venv
    venv/bin/pip install cmake ninja numpy gguf==0.19.0
    CMAKE_ARGS="-DGGML_BLAS=OFF -DGGML_CUDA=OFF -DGGML_METAL=OFF -DGGML_VULKAN=OFF \
      -DGGML_OPENMP=OFF -DLLAMA_CURL=OFF -DGGML_NATIVE=OFF" venv/bin/pip install llama-cpp-python==0.3.36
    venv/bin/python scripts/gen_llama_mixture_fixtures.py

It writes, under tests/fixtures/ggml_mixtures/:
- `llama-f16.gguf`: the input, a small deterministic llama-architecture model (16 layers, so that
  the layer-position rules `use_more_bits`, `n_layer/8` and `n_layer/16` all pick different
  layers; 2-D weights in F16 except `output.weight` and one `ffn_down` in F32; rows of 256
  except `ffn_down` (96: a multiple of 32, not of 256, so the K- and I-quants fall back) and
  two `ffn_down` of 80 (not a multiple of 32: F16). llama.cpp's quantizer reads only the
  hyper-parameters and the tensors' names and shapes, not the architecture's tensor shapes, so
  the tensors can be small (8 rows).
- `imatrix.gguf`: an importance matrix in llama-imatrix's GGUF form (`NAME.in_sum2`,
  `NAME.counts`), and what llama-quantize's loader makes of it (in_sum2 / counts) is what is
  passed to `llama_model_quantize`.
- `llama_mixtures.json`: per ftype, without and with the importance matrix: whether llama.cpp
  quantized or refused (and its message), the output file's size and sha256, the header's
  sha256 (everything before the data section), the metadata (key, type, value, in order), and
  per tensor: name, ggml type, dimensions (innermost first), data offset and the sha256 of its
  bytes.

`--ggml-py` (run under a Python with ggml-py 0.10.1, e.g. target/blocks-venv) quantizes a few
tensors to Q4_K and IQ4_XS with ggml-py's `ggml_quantize_chunk` and compares them with llama.cpp's
bytes recorded in `llama_mixtures.json`, writing `ggml_py_compare.json`.
"""

import argparse
import ctypes
import hashlib
import json
import pathlib
import sys

import numpy as np

LLAMA_CPP_PYTHON = "0.3.36"
LLAMA_CPP_COMMIT = "0c1e57098bba43ac29e6e3b677cdceebdd22334f"
GGUF_PY = "0.19.0"
ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "ggml_mixtures"

N_LAYER = 16
N_EMBD = 256
N_FF = 96
N_VOCAB = 64
ROWS = 8

# llama.h's llama_ftype values and llama-quantize's names for them.
FTYPES = [
    ("F32", 0), ("F16", 1), ("Q4_0", 2), ("Q4_1", 3), ("Q8_0", 7), ("Q5_0", 8), ("Q5_1", 9),
    ("Q2_K", 10), ("Q3_K_S", 11), ("Q3_K_M", 12), ("Q3_K_L", 13), ("Q4_K_S", 14), ("Q4_K_M", 15),
    ("Q5_K_S", 16), ("Q5_K_M", 17), ("Q6_K", 18), ("IQ2_XXS", 19), ("IQ2_XS", 20), ("Q2_K_S", 21),
    ("IQ3_XS", 22), ("IQ3_XXS", 23), ("IQ1_S", 24), ("IQ4_NL", 25), ("IQ3_S", 26), ("IQ3_M", 27),
    ("IQ2_S", 28), ("IQ2_M", 29), ("IQ4_XS", 30), ("IQ1_M", 31), ("BF16", 32), ("TQ1_0", 36),
    ("TQ2_0", 37), ("MXFP4_MOE", 38), ("NVFP4", 39), ("Q1_0", 40), ("Q2_0", 41),
]


def tensor_specs():
    """(name, numpy shape (outermost first), numpy dtype) in the order the file stores them."""
    specs = [
        ("token_embd.weight", (N_VOCAB, N_EMBD), np.float16),
        ("output_norm.weight", (N_EMBD,), np.float32),
        ("output.weight", (N_VOCAB, N_EMBD), np.float32),
    ]
    for i in range(N_LAYER):
        ff = 80 if i in (6, 14) else N_FF
        down_dtype = np.float32 if i == 14 else np.float16
        specs += [
            (f"blk.{i}.attn_norm.weight", (N_EMBD,), np.float32),
            (f"blk.{i}.attn_q.weight", (ROWS, N_EMBD), np.float16),
            (f"blk.{i}.attn_k.weight", (ROWS, N_EMBD), np.float16),
            (f"blk.{i}.attn_v.weight", (ROWS, N_EMBD), np.float16),
            (f"blk.{i}.attn_output.weight", (ROWS, N_EMBD), np.float16),
            (f"blk.{i}.ffn_norm.weight", (N_EMBD,), np.float32),
            (f"blk.{i}.ffn_gate.weight", (ROWS, N_EMBD), np.float16),
            (f"blk.{i}.ffn_up.weight", (ROWS, N_EMBD), np.float16),
            (f"blk.{i}.ffn_down.weight", (ROWS, ff), down_dtype),
        ]
    return specs


def tensor_values(k, shape, dtype):
    """Deterministic weights: normal(0, 0.02) with one larger value in 64 and norms near 1."""
    rng = np.random.default_rng(1000 + k)
    if len(shape) == 1:
        return (1.0 + 0.1 * rng.standard_normal(shape)).astype(dtype)
    x = 0.02 * rng.standard_normal(shape)
    spikes = rng.random(shape) < 1 / 64
    x[spikes] *= 8
    return x.astype(dtype)


def write_model(path):
    import gguf

    w = gguf.GGUFWriter(str(path), "llama")
    w.add_name("lowbit mixture fixture")
    w.add_file_type(1)  # MOSTLY_F16, as convert_hf_to_gguf writes it
    w.add_context_length(128)
    w.add_embedding_length(N_EMBD)
    w.add_block_count(N_LAYER)
    w.add_feed_forward_length(N_FF)
    w.add_head_count(4)
    w.add_head_count_kv(2)  # n_gqa = 2: below the n_gqa >= 4 rules
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_dimension_count(64)
    w.add_vocab_size(N_VOCAB)
    w.add_array("general.tags", ["lowbit", "fixture"])
    for k, (name, shape, dtype) in enumerate(tensor_specs()):
        w.add_tensor(name, tensor_values(k, shape, dtype))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def imatrix_entries():
    """{tensor name: (in_sum2 float32[ne0], count)} for every 2-D weight but the embeddings."""
    out = {}
    for k, (name, shape, _) in enumerate(tensor_specs()):
        if len(shape) < 2 or name == "token_embd.weight":
            continue
        rng = np.random.default_rng(5000 + k)
        count = float(1 + k % 5)
        out[name] = ((0.05 + rng.random(shape[-1]) ** 3 * 4) * count).astype(np.float32), count
    return out


def write_imatrix(path, entries):
    import gguf

    w = gguf.GGUFWriter(str(path), arch=None)
    # GGUFWriter adds general.architecture only when given one.
    w.add_string("general.type", "imatrix")
    w.add_array("imatrix.datasets", ["lowbit fixture"])
    w.add_uint32("imatrix.chunk_count", 1)
    w.add_uint32("imatrix.chunk_size", 512)
    for name, (sums, count) in entries.items():
        w.add_tensor(f"{name}.in_sum2", sums.reshape(1, -1))
        w.add_tensor(f"{name}.counts", np.array([[count]], dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def metadata_of(reader):
    import gguf

    rows = []
    for field in reader.fields.values():
        if field.name.startswith("GGUF."):
            continue
        t = gguf.GGUFValueType(field.types[0])
        if t == gguf.GGUFValueType.ARRAY:
            item = gguf.GGUFValueType(field.types[1])
            if item == gguf.GGUFValueType.STRING:
                values = [bytes(field.parts[i]).decode() for i in field.data]
            else:
                values = [field.parts[i].tolist()[0] for i in field.data]
            rows.append([field.name, "ARRAY", item.name, values])
        elif t == gguf.GGUFValueType.STRING:
            rows.append([field.name, t.name, bytes(field.parts[field.data[0]]).decode()])
        else:
            v = field.parts[field.data[0]].tolist()[0]
            if t in (gguf.GGUFValueType.FLOAT32, gguf.GGUFValueType.FLOAT64):
                # the bits, so that a float is compared exactly
                v = field.parts[field.data[0]].view(np.uint32 if t == gguf.GGUFValueType.FLOAT32 else np.uint64).tolist()[0]
            rows.append([field.name, t.name, v])
    return rows


def record_file(path):
    import gguf

    raw = path.read_bytes()
    reader = gguf.GGUFReader(str(path))
    tensors = []
    for t in reader.tensors:
        start = int(t.data_offset)
        data = raw[start : start + int(t.n_bytes)]
        tensors.append([t.name, gguf.GGMLQuantizationType(t.tensor_type).name, [int(d) for d in t.shape],
                        start - reader.data_offset, hashlib.sha256(data).hexdigest()])
    return {
        "file_size": len(raw),
        "file_sha256": hashlib.sha256(raw).hexdigest(),
        "data_offset": reader.data_offset,
        "header_sha256": hashlib.sha256(raw[: reader.data_offset]).hexdigest(),
        "metadata": metadata_of(reader),
        "tensors": tensors,
    }


class Llama:
    def __init__(self):
        import llama_cpp

        if llama_cpp.__version__ != LLAMA_CPP_PYTHON:
            sys.exit(f"llama-cpp-python {llama_cpp.__version__} is installed; these fixtures are pinned to {LLAMA_CPP_PYTHON}")
        self.lib = llama_cpp
        self.log = []

        @llama_cpp.llama_log_callback
        def on_log(level, text, user_data):
            self.log.append(text.decode(errors="replace"))

        self._on_log = on_log
        llama_cpp.llama_log_set(on_log, ctypes.c_void_p(0))
        llama_cpp.llama_backend_init()

    def quantize(self, src, dst, ftype, imatrix):
        lib = self.lib
        params = lib.llama_model_quantize_default_params()
        params.ftype = ftype
        params.nthread = 2
        keep = []
        if imatrix is not None:
            arr = (lib.llama_model_imatrix_data * (len(imatrix) + 1))()
            for i, (name, values) in enumerate(imatrix.items()):
                buf = np.ascontiguousarray(values, dtype=np.float32)
                keep.append(buf)
                arr[i].name = name.encode()
                arr[i].data = buf.ctypes.data_as(ctypes.POINTER(ctypes.c_float))
                arr[i].size = buf.size
            arr[len(imatrix)].name = None
            params.imatrix = arr
            keep.append(arr)
        self.log.clear()
        rc = lib.llama_model_quantize(str(src).encode(), str(dst).encode(), ctypes.byref(params))
        errors = [line.strip() for line in self.log if "failed to quantize" in line or "ERROR" in line
                  or "offending tensor" in line or "target type" in line]
        return rc, errors


def generate():
    OUT.mkdir(parents=True, exist_ok=True)
    model = OUT / "llama-f16.gguf"
    write_model(model)
    entries = imatrix_entries()
    write_imatrix(OUT / "imatrix.gguf", entries)
    # llama-quantize's load_imatrix: in_sum2 / counts in float32.
    imatrix = {name: (sums / np.float32(count)).astype(np.float32) for name, (sums, count) in entries.items()}

    llama = Llama()
    tmp = OUT / "tmp-out.gguf"
    runs = []
    for name, ftype in FTYPES:
        for with_imatrix in (False, True):
            if tmp.exists():
                tmp.unlink()
            rc, errors = llama.quantize(model, tmp, ftype, imatrix if with_imatrix else None)
            run = {"ftype": name, "id": ftype, "imatrix": with_imatrix}
            if rc == 0:
                run["status"] = "quantized"
                try:
                    run.update(record_file(tmp))
                except Exception as e:  # a ggml type newer than gguf-py's list
                    run["status"] = "quantized, unreadable by gguf-py"
                    run["messages"] = [f"{type(e).__name__}: {e}"]
            else:
                run["status"] = "refused"
                run["messages"] = errors
            print(f"{name:10} imatrix={with_imatrix!s:5} {run['status']} {errors[-1] if errors else ''}")
            runs.append(run)
    if tmp.exists():
        tmp.unlink()
    import gguf
    from importlib.metadata import version

    record = {
        "source": {
            "peer": f"llama.cpp {LLAMA_CPP_COMMIT} as vendored by llama-cpp-python {LLAMA_CPP_PYTHON}, "
                    "llama_model_quantize (llama.cpp's llama-quant.cpp) through the package's ctypes binding, "
                    "CPU build without BLAS, x86-64",
            "llama_cpp_commit": LLAMA_CPP_COMMIT,
            "llama_cpp_python": LLAMA_CPP_PYTHON,
            "gguf_py": version("gguf"),
            "script": "scripts/gen_llama_mixture_fixtures.py",
            "nthread": 2,
        },
        "input": {"file": model.name, "sha256": hashlib.sha256(model.read_bytes()).hexdigest(),
                  "imatrix": "imatrix.gguf"},
        "runs": runs,
    }
    (OUT / "llama_mixtures.json").write_text(json.dumps(record, indent=0, separators=(",", ":")) + "\n")
    print(f"{sum(r['status'] == 'quantized' for r in runs)} of {len(runs)} runs quantized")


def ggml_py_compare():
    """ggml-py 0.10.1's ggml_quantize_chunk on the same float32 rows llama.cpp quantized."""
    import ggml
    import gguf
    from importlib.metadata import version

    record = json.loads((OUT / "llama_mixtures.json").read_text())
    reader = gguf.GGUFReader(str(OUT / "llama-f16.gguf"))
    inputs = {t.name: np.array(t.data) for t in reader.tensors}
    entries = imatrix_entries()
    type_ids = {"Q4_K": 12, "IQ4_XS": 23}
    compared = []
    for run in record["runs"]:
        if run["status"] != "quantized" or run["ftype"] not in ("Q4_K_M", "Q4_K_S", "IQ4_XS"):
            continue
        for name, ty, dims, _, sha in run["tensors"]:
            if ty not in type_ids:
                continue
            x = np.ascontiguousarray(inputs[name].astype(np.float32))
            rows, n = x.shape
            qw = None
            keep = None
            if run["imatrix"] and name in entries:
                sums, count = entries[name]
                keep = (sums / np.float32(count)).astype(np.float32)
                qw = keep.ctypes.data_as(ctypes.POINTER(ctypes.c_float))
            block = {"Q4_K": 144, "IQ4_XS": 136}[ty]
            out = np.zeros(rows * n // 256 * block, dtype=np.uint8)
            ggml.ggml_quantize_chunk(type_ids[ty], x.ctypes.data_as(ctypes.POINTER(ctypes.c_float)),
                                     out.ctypes.data_as(ctypes.c_void_p), 0, rows, n, qw)
            mine = hashlib.sha256(out.tobytes()).hexdigest()
            compared.append({"ftype": run["ftype"], "imatrix": run["imatrix"], "tensor": name, "type": ty,
                             "equal": mine == sha, "llama_cpp_sha256": sha, "ggml_py_sha256": mine,
                             "ggml_py_first_block": out[:block].tobytes().hex()})
    equal = sum(c["equal"] for c in compared)
    # A few tensors in full (the first two of each ftype, with and without the matrix), every
    # difference, and the counts.
    shown, seen = [], {}
    for c in compared:
        key = (c["ftype"], c["imatrix"])
        seen[key] = seen.get(key, 0) + 1
        if seen[key] <= 2 or not c["equal"]:
            shown.append(c)
    result = {"ggml_py": version("ggml-py"), "llama_cpp_commit": LLAMA_CPP_COMMIT, "compared": len(compared),
              "equal": equal, "per_run": {f"{k[0]}{' + imatrix' if k[1] else ''}": n for k, n in seen.items()},
              "tensors": shown}
    (OUT / "ggml_py_compare.json").write_text(json.dumps(result, indent=1) + "\n")
    print(f"ggml-py {version('ggml-py')} vs llama.cpp {LLAMA_CPP_COMMIT[:10]}: {equal} of {len(compared)} tensors equal")
    if not compared:
        sys.exit("nothing compared")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ggml-py", action="store_true", help="compare ggml-py 0.10.1 with the recorded bytes")
    args = ap.parse_args()
    if args.ggml_py:
        ggml_py_compare()
    else:
        generate()


if __name__ == "__main__":
    main()
