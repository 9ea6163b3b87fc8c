"""Python = CLI: every bad argument raises lowbit.Error (or a subclass) with the library's message,
the same message the command line prints for the same mistake (both call lowbit::arguments). The
CLI's messages are read from the built `lowbit` binary when it is there (CI builds it before the
Python tests); the Python side is checked against hand-written messages either way."""

import subprocess

import ml_dtypes  # noqa: F401  (registers the dtypes numpy needs for the quantized outputs)
import numpy as np
import pytest

import lowbit
from lowbit_binary import lowbit_binary


def _binary():
    """The `lowbit` binary of this checkout: $LOWBIT_BIN, else release or debug under cargo's
    target directory (lowbit_binary.py)."""
    return lowbit_binary(("release", "debug"))


def _cli_error(args, tmp_path):
    """The CLI's error message for `args` (run in tmp_path, which holds x.pb)."""
    binary = _binary()
    if binary is None:
        pytest.skip("no lowbit binary built in this checkout (cargo build --release)")
    out = subprocess.run([str(binary), *args], cwd=tmp_path, capture_output=True, text=True)
    assert out.returncode != 0
    return out.stderr


def _library_message(error):
    """The library's part of a message: what follows `op: `."""
    return str(error).split(": ", 1)[1]


def _x_pb(tmp_path):
    # A TensorProto of two FLOATs [1.0, 2.0]: dims [2] (0x0A 0x01 0x02), data_type 1 (0x10 0x01),
    # raw_data 8 bytes (0x4A 0x08 ...).
    raw = np.array([1.0, 2.0], np.float32).tobytes()
    (tmp_path / "x.pb").write_bytes(bytes([0x0A, 0x01, 0x02, 0x10, 0x01, 0x4A, 0x08]) + raw)


X = np.array([1.0, 2.0], np.float32)


def test_a_zero_scale_is_refused_as_the_cli_refuses_it(tmp_path):
    with pytest.raises(lowbit.Error) as python:
        lowbit.quantize_linear(X, 0.0, np.int8(0))
    message = _library_message(python.value)
    assert message == "y_scale is 0.0: a scale must be positive and finite"
    with pytest.raises(lowbit.Error, match="x_scale element 1 is -1.0"):
        lowbit.dequantize_linear(np.array([1, 2], np.int8), np.array([1.0, -1.0], np.float32), axis=0)
    _x_pb(tmp_path)
    assert message in _cli_error(["quantize", "x.pb", "--scale", "0", "--to", "int8", "--out", "q.pb"], tmp_path)


@pytest.mark.parametrize(
    "zero_point,out_type,expected",
    [
        (300, "int8", 'y_zero_point "300": out of the range of INT8, [-128, 127]'),
        (-1, None, 'y_zero_point "-1": out of the range of UINT8, [0, 255]'),
        (1.5, "int8", 'y_zero_point "1.5": not an integer; a INT8 zero point is an integer in [-128, 127]'),
    ],
)
def test_number_zero_points_are_checked_as_the_cli_checks_them(tmp_path, zero_point, out_type, expected):
    with pytest.raises(lowbit.Error) as python:
        lowbit.quantize_linear(X, 1.0, zero_point, output_dtype=out_type)
    assert not isinstance(python.value, OverflowError)
    message = _library_message(python.value)
    assert message == expected
    _x_pb(tmp_path)
    args = ["quantize", "x.pb", "--scale", "1", "--zero-point", str(zero_point), "--out", "q.pb"]
    if out_type:
        args += ["--to", out_type]
    assert message in _cli_error(args, tmp_path)


def test_a_number_zero_point_that_fits_is_its_code():
    # 2.0 / 1.0 + 3 = 5 and 1.0 + 3 = 4 in int8; the number takes the output type.
    assert lowbit.quantize_linear(X, 1.0, 3, output_dtype="int8").tolist() == [4, 5]
    assert lowbit.dequantize_linear(np.array([4, 5], np.int8), 1.0, 3).tolist() == [1.0, 2.0]


@pytest.mark.parametrize("threads", [0, -1])
def test_threads_below_one_are_refused_as_the_cli_refuses_them(tmp_path, threads):
    with pytest.raises(lowbit.Error) as python:
        lowbit.cast(X, "float8_e4m3fn", threads=threads)
    message = _library_message(python.value)
    assert message == f"{threads} is not a thread count; give at least 1 (or leave it out for every core)"
    assert message in _cli_error(["cast", "--from", "f32", "--to", "e4m3fn", f"--threads={threads}"], tmp_path)


def test_threads_that_are_not_integers_are_lowbit_errors():
    for bad in (2.5, 10**30, True):
        with pytest.raises(lowbit.Error, match="threads"):
            lowbit.cast(X, "float8_e4m3fn", threads=bad)


def test_block_sizes_below_one_are_refused_as_the_cli_refuses_them(tmp_path):
    with pytest.raises(lowbit.Error) as python:
        lowbit.mx.quantize(np.ones(8, np.float32), "mxfp4", block_size=0)
    message = _library_message(python.value)
    assert message == "0 is not a block size; a block holds at least 1 element"
    _x_pb(tmp_path)
    args = ["quantize", "x.pb", "--scale", "s.pb", "--block-size", "0", "--out", "e.pb"]
    assert message in _cli_error(args, tmp_path)
    with pytest.raises(lowbit.Error, match="-4 is not a block size"):
        lowbit.mx.quantize(np.ones(8, np.float32), "mxfp4", block_size=-4)


def test_negative_dimensions_are_the_library_message():
    with pytest.raises(lowbit.ShapeError) as python:
        lowbit.unpack(np.zeros(2, np.uint8), "int4", (2, -1))
    assert _library_message(python.value) == "shape [2, -1]: dimension 1 is negative (-1); a dimension is 0 or more"


def test_info_json_of_the_command_line_has_the_keys_and_values_of_lowbit_info():
    """`lowbit info --json` and lowbit.info describe a dtype with the same keys and values (but
    `numpy`, which only Python has)."""
    import json
    import subprocess

    import pytest

    import lowbit
    from lowbit_binary import lowbit_binary

    binary = lowbit_binary()
    if binary is None:
        pytest.skip("no lowbit binary built for this checkout")
    compared = 0
    for name in ("e4m3fn", "bf16", "int4", "uint64", "float8e8m0", "e3m4,special=fn", "int1"):
        out = subprocess.run([str(binary), "info", name, "--json"], capture_output=True, text=True, check=True)
        cli = json.loads(out.stdout)
        py = lowbit.info(name)
        py.pop("numpy")
        assert cli == py, name
        compared += 1
    assert compared == 7


def test_dir_of_lowbit_holds_its_api_and_no_borrowed_modules():
    import lowbit

    leaked = {"np", "os", "sys", "math", "operator", "annotations", "Any", "Dict", "List", "Optional",
              "Sequence", "Tuple", "Union", "ml_dtypes", "numpy"}
    public = {name for name in dir(lowbit) if not name.startswith("_")}
    assert not public & leaked, sorted(public & leaked)
    # Every public name is in __all__, or a submodule, or a dtype table.
    extra = public - set(lowbit.__all__) - {"mx", "blocks", "checkpoint"}
    assert not extra, sorted(extra)
