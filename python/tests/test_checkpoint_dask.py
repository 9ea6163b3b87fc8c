"""A sharded checkpoint converted on a dask.distributed LocalCluster, one task per shard, with the
Python API (`lowbit.checkpoint.dequantize(..., shard=(k, n))`), as docs/guide/checkpoints.md shows: the n parts
hold every weight once, bit for bit what one whole dequantize writes. Skipped with a message when
dask is not installed (CI installs dask[distributed], pinned)."""

import json
import pathlib

import numpy as np
import pytest

import lowbit.checkpoint

safetensors_numpy = pytest.importorskip("safetensors.numpy", reason="the safetensors package (0.8.0) is not installed")
distributed = pytest.importorskip("dask.distributed", reason="dask[distributed] is not installed: the Dask example is not run")


def _sharded_checkpoint(folder: pathlib.Path) -> list:
    """Three safetensors shards and their index: gpt-oss MXFP4 experts and plain float tensors."""
    rng = np.random.default_rng(3)
    folder.mkdir()
    shards = {}
    for k in range(3):
        shards[f"model-0000{k + 1}-of-00003.safetensors"] = {
            f"model.layers.{k}.mlp.experts.down_proj_blocks": rng.integers(0, 256, size=(2, 4, 16), dtype=np.uint8),
            f"model.layers.{k}.mlp.experts.down_proj_scales": rng.integers(118, 136, size=(2, 4), dtype=np.uint8),
            f"model.layers.{k}.input_layernorm.weight": rng.standard_normal(64).astype(np.float32),
        }
    weight_map = {}
    for name, tensors in shards.items():
        safetensors_numpy.save_file(tensors, str(folder / name), metadata={"format": "pt"})
        weight_map.update({t: name for t in tensors})
    (folder / "model.safetensors.index.json").write_text(json.dumps({"metadata": {}, "weight_map": weight_map}))
    (folder / "config.json").write_text(json.dumps({"quantization_config": {"quant_method": "mxfp4"}}))
    return sorted({n.removesuffix("_blocks").removesuffix("_scales") for n in weight_map})


def test_dask_converts_a_sharded_checkpoint_one_task_per_shard(tmp_path):
    def convert_shard(source: str, out_dir: str, k: int, n: int) -> str:
        # Defined here, so that Dask ships it to the workers by value, as a user's script does.
        out = f"{out_dir}/part-{k}-of-{n}.safetensors"
        lowbit.checkpoint.dequantize(source, out, dtype="float16", shard=(k, n))
        return out

    names = _sharded_checkpoint(tmp_path / "model")
    whole = tmp_path / "whole.safetensors"
    lowbit.checkpoint.dequantize(tmp_path / "model", whole, dtype="float16")
    reference = safetensors_numpy.load_file(str(whole))
    assert sorted(reference) == names
    parts_dir = tmp_path / "parts"
    parts_dir.mkdir()
    n = 4
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            futures = client.map(convert_shard, [str(tmp_path / "model")] * n, [str(parts_dir)] * n, range(1, n + 1), [n] * n)
            parts = client.gather(futures)
    seen = {}
    for part in parts:
        for name, values in safetensors_numpy.load_file(part).items():
            assert name not in seen, f"{name} is in two shards"
            seen[name] = values
    assert sorted(seen) == names
    for name, values in seen.items():
        assert values.dtype == reference[name].dtype and values.shape == reference[name].shape, name
        assert values.tobytes() == reference[name].tobytes(), name
    # gpt-oss weights: [2, 4, 16] blocks -> [2, 128] values.
    assert seen["model.layers.0.mlp.experts.down_proj"].shape == (2, 128)
