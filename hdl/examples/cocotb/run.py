"""Runs the cocotb testbench (test_cast.py) on Icarus Verilog twice: on the correct unit, which
must pass, and on the unit built with LOWBIT_PLANT_BUG (ties away from zero), which must fail.
Exits 0 only if both outcomes are as expected. `--only correct|bug` runs one build and exits
with its own outcome (0 = passed).
"""

import argparse
import sys
from pathlib import Path

from cocotb_tools.check_results import get_results
from cocotb_tools.runner import get_runner

HERE = Path(__file__).resolve().parent
UNIT = HERE.parent / "cast_f32_fp8.sv"


def run(bug: bool, build_root: Path, seed: int) -> bool:
    """Builds and runs one variant; True if every test passed."""
    name = "bug" if bug else "correct"
    build_dir = build_root / name
    runner = get_runner("icarus")
    runner.build(
        sources=[UNIT],
        hdl_toplevel="cast_f32_fp8",
        defines={"LOWBIT_PLANT_BUG": 1} if bug else {},
        build_dir=build_dir,
        timescale=("1ns", "1ps"),
        always=True,
    )
    try:
        results = runner.test(
            test_module="test_cast",
            hdl_toplevel="cast_f32_fp8",
            build_dir=build_dir,
            test_dir=build_dir,
            seed=seed,
            extra_env={"PYTHONPATH": str(HERE)},
        )
    except SystemExit:  # the simulator itself failed
        return False
    tests, failed = get_results(results)
    print(f"cocotb on the {name} unit: {tests} test(s), {failed} failed")
    return tests > 0 and failed == 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", choices=["correct", "bug"])
    parser.add_argument("--build-dir", type=Path, default=HERE / "sim_build")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if args.only:
        return 0 if run(args.only == "bug", args.build_dir, args.seed) else 1
    correct_passes = run(False, args.build_dir, args.seed)
    bug_fails = not run(True, args.build_dir, args.seed)
    print(f"correct unit passes: {correct_passes}; planted bug caught: {bug_fails}")
    return 0 if correct_passes and bug_fails else 1


if __name__ == "__main__":
    sys.exit(main())
