#!/usr/bin/env bash
# Builds the DPI-C testbench (tb_cast.sv) with Verilator against lowbit's C library twice: on the
# correct unit, which must pass, and with LOWBIT_PLANT_BUG (ties away from zero), which must fail
# with mismatches: its summary line must count conversions compared and at least one mismatch, and
# it must end on that mismatch (a crash, or a failure before the comparisons, is not a caught bug).
# Then the block-scheme entry points (tb_blocks.sv: values derived by hand) must pass.
# Exits 0 only if all three outcomes are as expected.
#   bash hdl/examples/verilator/run.sh [+cases=N] [+seed=S]   (plusargs go to both runs)
# Needs Verilator 5 (Debian: apt-get install verilator), a C++ compiler and cargo.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
build=${LOWBIT_VERILATOR_BUILD:-$here/obj_dir}

# The C library (liblowbit_capi.so) and its header.
cargo build --release --quiet --manifest-path "$root/Cargo.toml" -p lowbit-capi
lib="$target/release"

build_one() { # name, extra verilator options
    local name=$1
    shift
    verilator --binary --timing -j 2 -Wno-fatal --top-module tb_cast -Mdir "$build/$name" \
        -CFLAGS "-I$root/include" \
        -LDFLAGS "-L$lib -llowbit_capi -Wl,-rpath,$lib" \
        "$@" "$root/hdl/lowbit_dpi.sv" "$root/hdl/lowbit_dpi.c" "$here/../cast_f32_fp8.sv" "$here/tb_cast.sv" \
        > "$build/$name.build.log" 2>&1 || { cat "$build/$name.build.log"; return 1; }
}

mkdir -p "$build"
build_one correct
build_one bug +define+LOWBIT_PLANT_BUG
verilator --binary --timing -j 2 -Wno-fatal --top-module tb_blocks -Mdir "$build/blocks" \
    -CFLAGS "-I$root/include" \
    -LDFLAGS "-L$lib -llowbit_capi -Wl,-rpath,$lib" \
    "$root/hdl/lowbit_dpi.sv" "$root/hdl/lowbit_dpi.c" "$here/tb_blocks.sv" \
    > "$build/blocks.build.log" 2>&1 || { cat "$build/blocks.build.log"; exit 1; }

echo "== the correct unit (must pass)"
"$build/correct/Vtb_cast" "$@"

echo "== the unit with the planted bug (must fail with mismatches)"
if "$build/bug/Vtb_cast" "$@" > "$build/bug.log" 2>&1; then
    cat "$build/bug.log"
    echo "the planted bug was NOT caught" >&2
    exit 1
fi
cat "$build/bug.log"
# The testbench's own summary: "N conversions compared with lowbit through DPI-C (seed S), M mismatches",
# then the $fatal "M of N conversions differ from lowbit".
summary=$(sed -n 's/^\([0-9]*\) conversions compared with lowbit through DPI-C (seed [0-9]*), \([0-9]*\) mismatches$/\1 \2/p' "$build/bug.log")
read -r compared mismatches <<< "${summary:-0 0}"
if [ "$compared" -eq 0 ] || [ "$mismatches" -eq 0 ] \
    || ! grep -q "$mismatches of $compared conversions differ from lowbit" "$build/bug.log"; then
    echo "the bug run failed, but not on a mismatch ($compared compared, $mismatches mismatches)" >&2
    exit 1
fi
echo "planted bug caught: $mismatches of $compared conversions differ from lowbit"

echo "== block schemes through DPI-C (must pass)"
"$build/blocks/Vtb_blocks"
