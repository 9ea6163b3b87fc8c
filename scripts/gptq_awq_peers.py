"""GPTQModel 7.7.0 and AutoAWQ 0.2.9 run live, as their own functions quantize, pack and dequantize
one linear layer's weight on the CPU: what scripts/gen_integer_gptq_fixtures.py records and
scripts/crosscheck_gptq.py / scripts/crosscheck_awq.py compare lowbit with.

Install (pure Python, into a venv with torch 2.15 and transformers):
    pip install --no-deps gptqmodel==7.7.0 autoawq==0.2.9 accelerate threadpoolctl logbar tokenicer \
        device-smi defuser
Three of their imports are not needed on this path and are stood in for here: `pcre` (GPTQModel's
regex module, a C extension: Python's `re` does what its import-time patterns need), and `PIL`,
`datasets` and `pyarrow` (model definitions and calibration data, never called).

GPTQModel: RTN.quantize (rtn.py, Quantizer.find_params per group), the weight replaced by its
dequantized value in the weight's dtype as WeightOnlyProcessor does, then utils/model.py
pack_module (pack_impl "auto" on a CPU: PackableQuantLinear.pack_block, whose C++ extension is
skipped by GPTQMODEL_DISABLE_PACK_EXT=1: the Python path, the same float32 arithmetic for finite
weights; pack_original where a dimension is not a multiple of 32) and its v2 -> v1 qzeros
conversion; dequantize: TorchLinear after convert_gptq_v1_to_v2_format_module, dequantize_weight.
act-order (desc_act) with a given g_idx: Quantizer.find_params over each group's columns, as GPTQ's
act-order quantizes each group's columns together (the Hessian updates are out of scope).

AutoAWQ: AwqQuantizer._apply_quant on a module holding the layer (`.half()`,
pseudo_quantize_tensor with zero_point=True, WQLinear_GEMM.from_linear), dequantize_gemm.
"""
import importlib.abc
import importlib.machinery
import os
import re
import sys
import threading
import types

os.environ.setdefault("GPTQMODEL_DISABLE_PACK_EXT", "1")


def _stand_ins():
    pcre = types.ModuleType("pcre")
    pcre.compile, pcre.escape, pcre.split, pcre.Pattern = re.compile, re.escape, re.split, re.Pattern
    pcre.Flag = types.SimpleNamespace(CASELESS=re.I, DOTALL=re.S, MULTILINE=re.M)
    sys.modules.setdefault("pcre", pcre)
    unused = {"PIL", "datasets", "pyarrow"}

    class Unused(types.ModuleType):
        def __getattr__(self, name):
            if name.startswith("__"):
                raise AttributeError(name)
            return type(name, (), {})

    class Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
        def find_spec(self, fullname, path, target=None):
            if fullname.split(".")[0] in unused:
                return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
            return None

        def create_module(self, spec):
            return Unused(spec.name)

        def exec_module(self, module):
            module.__path__ = []

    sys.meta_path.insert(0, Finder())


_stand_ins()

import numpy as np  # noqa: E402
import torch  # noqa: E402
from torch import nn  # noqa: E402

import awq  # noqa: E402
from awq.modules.linear.gemm import WQLinear_GEMM  # noqa: E402,F401
from awq.quantize.quantizer import AwqQuantizer  # noqa: E402
from awq.utils.packing_utils import dequantize_gemm  # noqa: E402
import gptqmodel  # noqa: E402
from gptqmodel.nn_modules.qlinear.torch import TorchLinear  # noqa: E402
from gptqmodel.quantization.config import RTNConfig  # noqa: E402
from gptqmodel.quantization.quantizer import Quantizer  # noqa: E402
from gptqmodel.quantization.rtn import RTN  # noqa: E402
from gptqmodel.utils.model import convert_gptq_v1_to_v2_format_module, pack_module  # noqa: E402

VERSIONS = {"gptqmodel": gptqmodel.__version__, "autoawq": awq.__version__, "torch": torch.__version__}
TORCH_DTYPE = {"FLOAT": torch.float32, "FLOAT16": torch.float16, "BFLOAT16": torch.bfloat16}


def parse_gptq(scheme):
    """(bits, group_size, sym, desc_act, zeros) of a lowbit gptq scheme name."""
    head, *opts = scheme.split(",")
    bits = {"gptq:int4": 4, "gptq:int8": 8}[head]
    group, sym, desc_act, zeros = 128, True, False, "v1"
    for o in opts:
        k, _, v = o.partition("=")
        if k == "group":
            group = int(v)
        elif k in ("sym", "asym"):
            sym = k == "sym"
        elif k == "actorder":
            desc_act = True
        elif k == "zeros":
            zeros = v
    return bits, group, sym, desc_act, zeros


def _tensor_bytes(t):
    return t.contiguous().cpu().numpy().tobytes()


def gptq_quantize(scheme, w, g_idx=None):
    """GPTQModel's tensors for weight `w` (a torch tensor, out x in): a dict name -> (ONNX dtype,
    shape, bytes) in TorchLinear's order, and the dequantized weight (out x in float16 bytes)."""
    bits, group, sym, desc_act, zeros_format = parse_gptq(scheme)
    out_f, in_f = w.shape
    qcfg = RTNConfig(bits=bits, group_size=group, sym=sym, desc_act=desc_act)
    lin = nn.Linear(in_f, out_f, bias=False, dtype=w.dtype)
    lin.weight.data = w.clone()
    if g_idx is None and not desc_act:
        wq, scale, zero, gi, *_ = RTN(lin, qcfg).quantize()
    else:
        effective = group if group != -1 else in_f
        gi = torch.as_tensor(g_idx if g_idx is not None else [i // effective for i in range(in_f)], dtype=torch.int32)
        groups = max(int(gi.max()) + 1, (in_f + effective - 1) // effective)
        quantizer = Quantizer(qcfg=qcfg, name="layer")
        quantizer.configure(perchannel=True)
        weights = lin.weight.data.clone().float()
        wq = torch.empty_like(weights)
        scale = torch.zeros(out_f, groups)
        zero = torch.zeros(out_f, groups)
        for g in range(groups):
            cols = (gi == g).nonzero().flatten()
            block = weights[:, cols] if len(cols) else torch.zeros(out_f, 1)
            quantizer.find_params(block, weight=True)
            if len(cols):
                wq[:, cols] = quantizer.quantize(block)
            scale[:, g] = quantizer.scale.flatten()
            zero[:, g] = quantizer.zero.flatten()
        wq = wq.to(w.dtype)
    lin.weight.data = wq
    layer = TorchLinear(bits=bits, group_size=group, sym=sym, desc_act=desc_act, in_features=in_f,
                        out_features=out_f, bias=False, pack_dtype=torch.int32)
    pack_module("layer", {"layer": layer}, scale, zero, gi, {"layer": lin}, TorchLinear, threading.Lock(),
                quantize_config=qcfg)
    tensors = {name: getattr(layer, name).detach().clone() for name in ("qweight", "qzeros", "scales", "g_idx")}
    v1 = tensors["qzeros"].clone()
    loaded = TorchLinear(bits=bits, group_size=group, sym=sym, desc_act=desc_act, in_features=in_f,
                         out_features=out_f, bias=False, pack_dtype=torch.int32)
    for name, t in tensors.items():
        setattr(loaded, name, t.clone())
    convert_gptq_v1_to_v2_format_module(loaded, bits=bits, pack_dtype=torch.int32)
    if zeros_format == "v2":
        tensors["qzeros"] = loaded.qzeros.detach().clone()
    else:
        tensors["qzeros"] = v1
    loaded.eval()
    dequantized = TorchLinear.dequantize_weight(loaded).T
    onnx = {torch.int32: "INT32", torch.float16: "FLOAT16"}
    stored = {n: (onnx[t.dtype], list(t.shape), _tensor_bytes(t)) for n, t in tensors.items()}
    return stored, _tensor_bytes(dequantized.to(torch.float16))


def gptq_dequantize(scheme, stored, shape):
    """TorchLinear.dequantize_weight of stored tensors (name -> (dtype, shape, bytes)), out x in."""
    bits, group, sym, desc_act, zeros_format = parse_gptq(scheme)
    out_f, in_f = shape
    layer = TorchLinear(bits=bits, group_size=group, sym=sym, desc_act=desc_act, in_features=in_f,
                        out_features=out_f, bias=False, pack_dtype=torch.int32)
    np_dtype = {"INT32": np.int32, "FLOAT16": np.float16}
    for name, (dtype, dims, raw) in stored.items():
        setattr(layer, name, torch.from_numpy(np.frombuffer(raw, dtype=np_dtype[dtype]).reshape(dims).copy()))
    if zeros_format == "v1":
        convert_gptq_v1_to_v2_format_module(layer, bits=bits, pack_dtype=torch.int32)
    layer.eval()
    return _tensor_bytes(TorchLinear.dequantize_weight(layer).T.to(torch.float16))


def parse_awq(scheme):
    head, *opts = scheme.split(",")
    assert head == "awq:int4", scheme
    group = 128
    for o in opts:
        k, _, v = o.partition("=")
        if k == "group":
            group = int(v)
    return group


def awq_quantize(scheme, w):
    """AutoAWQ's WQLinear_GEMM tensors for weight `w` (out x in) and dequantize_gemm's values (out
    x in float16 bytes)."""
    group = parse_awq(scheme)
    out_f, in_f = w.shape
    quantizer = AwqQuantizer.__new__(AwqQuantizer)
    quantizer.w_bit, quantizer.group_size, quantizer.zero_point, quantizer.version = 4, group, True, "gemm"
    holder = nn.Module()
    holder.layer = nn.Linear(in_f, out_f, bias=False, dtype=w.dtype)
    holder.layer.weight.data = w.clone()
    quantizer._apply_quant(holder, {"layer": holder.layer})
    q = holder.layer
    tensors = {name: getattr(q, name).detach().clone() for name in ("qweight", "qzeros", "scales")}
    onnx = {torch.int32: "INT32", torch.float16: "FLOAT16"}
    stored = {n: (onnx[t.dtype], list(t.shape), _tensor_bytes(t)) for n, t in tensors.items()}
    values = dequantize_gemm(tensors["qweight"], tensors["qzeros"], tensors["scales"], 4, group).T
    return stored, _tensor_bytes(values.to(torch.float16))


def awq_dequantize(scheme, stored, shape):
    group = parse_awq(scheme)
    np_dtype = {"INT32": np.int32, "FLOAT16": np.float16}
    t = {n: torch.from_numpy(np.frombuffer(raw, dtype=np_dtype[d]).reshape(dims).copy())
         for n, (d, dims, raw) in stored.items()}
    return _tensor_bytes(dequantize_gemm(t["qweight"], t["qzeros"], t["scales"], 4, group).T.to(torch.float16))
