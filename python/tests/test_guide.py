"""The Python tour of docs/guide/python.md runs as written, and what its comments say it gives is
what it gives."""

import pathlib
import re

import ml_dtypes
import numpy as np

import lowbit

GUIDE = pathlib.Path(__file__).resolve().parents[2] / "docs" / "guide" / "python.md"


def _python_blocks(text):
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_the_tour_runs_and_gives_what_its_comments_say():
    blocks = _python_blocks(GUIDE.read_text())
    assert len(blocks) == 1, "docs/guide/python.md has one Python tour"
    tour = blocks[0]
    results = {}
    namespace = {}
    # Each line alone, so a failure names it; the value of each expression line is kept.
    for number, line in enumerate(tour.splitlines(), 1):
        code = line.split("  #")[0].rstrip()
        if not code:
            continue
        try:
            results[code] = eval(compile(code, f"python.md tour line {number}", "eval"), namespace)
        except SyntaxError:
            exec(compile(code, f"python.md tour line {number}", "exec"), namespace)
    assert len(results) >= 9

    def result(prefix):
        found = [v for k, v in results.items() if k.startswith(prefix)]
        assert len(found) == 1, prefix
        return found[0]

    # "saturate=1 (ONNX's default): 448 448 448 2.5 2.75 nan"
    got = result('lowbit.cast(x, "float8_e4m3fn")').astype(np.float32)
    assert np.array_equal(got[:5], [448, 448, 448, 2.5, 2.75]) and np.isnan(got[5])
    # "ONNX raw_data, two elements per byte: [0, 32, 3]"
    assert result('lowbit.cast(x, "int4", packed=True)').tolist() == [0, 32, 3]
    # "[1, -2, 3] as ml_dtypes.int4"
    unpacked = result("lowbit.unpack(")
    assert unpacked.dtype == ml_dtypes.int4 and unpacked.astype(int).tolist() == [1, -2, 3]
    # "one code with its IEEE flags: (0x38, 1)"
    assert result("lowbit.convert(0x3F880000") == (0x38, 1)
    assert result('lowbit.info("e4m3fn")')[0] == 448.0
    assert "onnxruntime" in result('lowbit.info("e4m3fn")')[1]
    assert lowbit.PROFILES[0] == "spec"
