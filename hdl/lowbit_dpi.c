/* The C side of lowbit_dpi.sv: DPI-C passes `bit [63:0]` and `bit [4:0]` as arrays of 32-bit
 * words (svBitVecVal, least significant word first) and open arrays (`x[]`) as handles; lowbit's
 * C ABI takes integers, an options struct and C arrays. Compile with the simulator's svdpi.h and lowbit's include/lowbit.h on the
 * include path; link liblowbit_capi. Simulators compile it as C or C++ (Verilator: C++), so the
 * DPI entry point keeps C linkage either way. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

/* Copies between an open array of `int unsigned` (float32 bit patterns) or `byte unsigned` and a
 * C buffer, element by element: a simulator need not lay an open array out contiguously. */
static void copy_words_in(const svOpenArrayHandle from, uint32_t *to, int n)
{
    for (int i = 0; i < n; i++) to[i] = *(const uint32_t *)svGetArrElemPtr1(from, svLow(from, 1) + i);
}

static void copy_words_out(const uint32_t *from, const svOpenArrayHandle to, int n)
{
    for (int i = 0; i < n; i++) *(uint32_t *)svGetArrElemPtr1(to, svLow(to, 1) + i) = from[i];
}

int lowbit_dpi_blocks_quantize(const char *scheme, const svOpenArrayHandle x_bits,
                               const svOpenArrayHandle layout, int *written)
{
    int n = svSize(x_bits, 1), capacity = svSize(layout, 1);
    uint32_t *x = (uint32_t *)malloc((size_t)(n > 0 ? n : 1) * sizeof(uint32_t));
    uint8_t *bytes = (uint8_t *)malloc((size_t)(capacity > 0 ? capacity : 1));
    size_t shape[1] = {(size_t)n}, made = 0;
    int status = LOWBIT_ERR_SIZE;
    *written = 0;
    if (x && bytes) {
        float *values = (float *)malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
        if (values) {
            copy_words_in(x_bits, x, n);
            memcpy(values, x, (size_t)n * sizeof(float));
            status = lowbit_blocks_quantize(scheme, values, shape, 1, -1, NULL, bytes, (size_t)capacity, &made);
            free(values);
        }
        *written = (int)made;
        if (status == LOWBIT_OK)
            for (int i = 0; i < (int)made; i++)
                *(uint8_t *)svGetArrElemPtr1(layout, svLow(layout, 1) + i) = bytes[i];
    }
    free(x);
    free(bytes);
    return status;
}

int lowbit_dpi_blocks_dequantize(const char *scheme, const svOpenArrayHandle layout, const svOpenArrayHandle y_bits)
{
    int len = svSize(layout, 1), n = svSize(y_bits, 1);
    uint8_t *bytes = (uint8_t *)malloc((size_t)(len > 0 ? len : 1));
    float *values = (float *)malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
    uint32_t *words = (uint32_t *)malloc((size_t)(n > 0 ? n : 1) * sizeof(uint32_t));
    size_t shape[1] = {(size_t)n};
    int status = LOWBIT_ERR_SIZE;
    if (bytes && values && words) {
        for (int i = 0; i < len; i++) bytes[i] = *(const uint8_t *)svGetArrElemPtr1(layout, svLow(layout, 1) + i);
        status = lowbit_blocks_dequantize(scheme, bytes, (size_t)len, shape, 1, -1, values);
        if (status == LOWBIT_OK) {
            memcpy(words, values, (size_t)n * sizeof(float));
            copy_words_out(words, y_bits, n);
        }
    }
    free(bytes);
    free(values);
    free(words);
    return status;
}

#ifdef __cplusplus
}
#endif
