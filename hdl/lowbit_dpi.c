/* The C side of lowbit_dpi.sv: DPI-C passes `bit [63:0]` and `bit [4:0]` as arrays of 32-bit
 * words (svBitVecVal, least significant word first); lowbit's C ABI takes integers and an
 * options struct. Compile with the simulator's svdpi.h and lowbit's include/lowbit.h on the
 * include path; link liblowbit_capi. Simulators compile it as C or C++ (Verilator: C++), so the
 * DPI entry point keeps C linkage either way. */
#include <stdint.h>

#include "lowbit.h"
#include "svdpi.h"

static uint64_t word64(const svBitVecVal *v)
{
    return (uint64_t)v[0] | (uint64_t)v[1] << 32;
}

#ifdef __cplusplus
extern "C" {
#endif

int lowbit_dpi_convert(int from, int to, const svBitVecVal *operand, int round, int tininess,
                       svBit saturate, const svBitVecVal *random_bits, int random_width,
                       svBitVecVal *result, svBitVecVal *flags)
{
    lowbit_options options = lowbit_options_default();
    options.round = round;
    options.tininess = tininess;
    options.saturate = saturate ? 1 : 0;
    options.random_bits = word64(random_bits);
    options.random_width = (uint32_t)random_width;
    uint8_t raised = 0;
    uint64_t code = lowbit_convert((lowbit_format)from, (lowbit_format)to, word64(operand), &options, &raised);
    if (raised & LOWBIT_FLAG_ERROR) {
        result[0] = result[1] = 0;
        flags[0] = 0;
        return lowbit_last_error_code();
    }
    result[0] = (svBitVecVal)code;
    result[1] = (svBitVecVal)(code >> 32);
    flags[0] = raised;
    return LOWBIT_OK;
}

#ifdef __cplusplus
}
#endif
