"""Runs the cocotb testbench (test_cast.py) on Icarus Verilog twice: on the correct unit, which
must pass having compared conversions and found no mismatch, and on the unit built with
LOWBIT_PLANT_BUG (ties away from zero), which must fail on at least one value that differs from
lowbit. The counts come from the results file the testbench writes once it has compared every
conversion; a run that ends otherwise (the simulator crashes, the test errors before comparing,
nothing compared) is neither a pass nor a caught bug. Exits 0 only if both outcomes are as
expected. `--only correct|bug` runs one build and exits with its own outcome (0 = passed).
"""

import argparse
import json
import sys
from pathlib import Path

from cocotb_tools.check_results import get_results
from cocotb_tools.runner import get_runner

HERE = Path(__file__).resolve().parent
UNIT = HERE.parent / "cast_f32_fp8.sv"


def run(bug: bool, build_root: Path, seed: int) -> str:
    """Builds and runs one variant: "passed" (tests ran, every one passed, conversions compared,
    none differed), "mismatches" (tests ran and failed, and the testbench compared conversions and
    found some that differ from lowbit) or "broken" (anything else: the simulator failed, no
    results, nothing compared, a failure without a mismatch or a mismatch without a failure)."""
    name = "bug" if bug else "correct"
    build_dir = build_root / name
    build_dir.mkdir(parents=True, exist_ok=True)
    results_file = build_dir / "lowbit_results.json"
    results_file.unlink(missing_ok=True)
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
            extra_env={"PYTHONPATH": str(HERE), "LOWBIT_COCOTB_RESULTS": str(results_file)},
        )
        tests, failed = get_results(results)
    except (RuntimeError, SystemExit) as e:  # the simulator itself failed, or wrote no results
        print(f"cocotb on the {name} unit: the simulation did not complete ({e})")
        return "broken"
    try:
        counts = json.loads(results_file.read_text())
        compared, mismatches = int(counts["compared"]), int(counts["mismatches"])
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"cocotb on the {name} unit: {tests} test(s), {failed} failed; no comparison counts ({e})")
        return "broken"
    print(f"cocotb on the {name} unit: {tests} test(s), {failed} failed; {compared} conversions compared "
          f"with lowbit, {mismatches} mismatches")
    if tests > 0 and compared > 0 and failed == 0 and mismatches == 0:
        return "passed"
    if tests > 0 and compared > 0 and failed > 0 and mismatches > 0:
        return "mismatches"
    return "broken"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", choices=["correct", "bug"])
    parser.add_argument("--build-dir", type=Path, default=HERE / "sim_build")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if args.only:
        return 0 if run(args.only == "bug", args.build_dir, args.seed) == "passed" else 1
    correct_passes = run(False, args.build_dir, args.seed) == "passed"
    bug_caught = run(True, args.build_dir, args.seed) == "mismatches"
    print(f"correct unit passes: {correct_passes}; planted bug caught on mismatches: {bug_caught}")
    return 0 if correct_passes and bug_caught else 1


if __name__ == "__main__":
    sys.exit(main())
