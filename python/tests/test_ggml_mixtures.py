"""lowbit.checkpoint.quantize with `ggml:FTYPE`: llama.cpp's mixture of that ftype, compared with
the file llama.cpp's llama_model_quantize wrote (tests/fixtures/ggml_mixtures, recorded by
scripts/gen_llama_mixture_fixtures.py)."""

import hashlib
import json
import pathlib

import pytest

import lowbit
import lowbit.checkpoint

REPO = pathlib.Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "ggml_mixtures"


def recorded(ftype, imatrix):
    runs = json.loads((FIXTURES / "llama_mixtures.json").read_text())["runs"]
    return next(r for r in runs if r["ftype"] == ftype and r["imatrix"] == imatrix)


@pytest.mark.parametrize("ftype, imatrix", [("Q8_0", False), ("F16", False), ("BF16", True)])
def test_the_mixture_is_llama_cpps_file(tmp_path, ftype, imatrix):
    out = tmp_path / "out.gguf"
    report = lowbit.checkpoint.quantize(FIXTURES / "llama-f16.gguf", f"ggml:{ftype}", out,
                                        imatrix=FIXTURES / "imatrix.gguf" if imatrix else None)
    run = recorded(ftype, imatrix)
    assert [t["name"] for t in report["tensors"]] == [t[0] for t in run["tensors"]]
    assert [t["why"] for t in report["tensors"]] == [f"ggml {t[1]}" for t in run["tensors"]]
    assert hashlib.sha256(out.read_bytes()).hexdigest() == run["file_sha256"]


def test_a_mixture_needing_an_importance_matrix_is_refused_and_writes_nothing(tmp_path):
    out = tmp_path / "out.gguf"
    with pytest.raises(Exception, match="importance matrix"):
        lowbit.checkpoint.quantize(FIXTURES / "llama-f16.gguf", "ggml:IQ2_XXS", out)
    assert not out.exists()
