/* The C ABI from C: compiled with the system cc against include/lowbit.h and the library, run by
 * capi/tests/c_program.rs. Every expected value is derived by hand in the comment beside it. */
#include "lowbit.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int failures = 0;
static int checks = 0;

#define CHECK(cond)                                                                        \
    do {                                                                                   \
        checks++;                                                                          \
        if (!(cond)) {                                                                     \
            failures++;                                                                    \
            fprintf(stderr, "%s:%d: FAILED: %s (last error: %s)\n", __FILE__, __LINE__, #cond, \
                    lowbit_last_error_message());                                          \
        }                                                                                  \
    } while (0)

static lowbit_format format(const char *text) {
    lowbit_format f = 0;
    int status = lowbit_format_parse(text, &f);
    if (status != LOWBIT_OK) {
        fprintf(stderr, "lowbit_format_parse(%s) = %d: %s\n", text, status, lowbit_last_error_message());
        failures++;
    }
    return f;
}

/* One conversion: result and flags must both match. */
static void expect(lowbit_format from, lowbit_format to, uint64_t bits, const lowbit_options *o,
                   uint64_t want, uint8_t want_flags, int line) {
    uint8_t flags = 0xEE;
    uint64_t got = lowbit_convert(from, to, bits, o, &flags);
    checks++;
    if (got != want || flags != want_flags) {
        failures++;
        fprintf(stderr, "line %d: %#llx -> got %#llx flags %#x, want %#llx flags %#x (%s)\n", line,
                (unsigned long long)bits, (unsigned long long)got, flags, (unsigned long long)want,
                want_flags, lowbit_last_error_message());
    }
}
#define EXPECT(from, to, bits, o, want, flags) expect(from, to, bits, o, want, flags, __LINE__)

static lowbit_format F32, F16, E4M3, E4M3_IEEE, E8M0, INT8, UINT8, INT16, INT32, E2M1;

struct job {
    int round;
    uint64_t want;
    int ok;
};

/* Many threads, each with its own mode, on the same handles: no shared rounding state. */
static void *convert_many(void *arg) {
    struct job *job = arg;
    lowbit_options o = lowbit_options_default();
    o.round = job->round;
    job->ok = 1;
    for (int i = 0; i < 100000; i++) {
        uint8_t flags = 0;
        if (lowbit_convert(F32, E4M3, 0x3F980000u, &o, &flags) != job->want || flags != LOWBIT_FLAG_INEXACT)
            job->ok = 0;
    }
    return NULL;
}

int main(void) {
    F32 = format("float32");
    F16 = format("f16");
    E4M3 = format("e4m3"); /* FLOAT8E4M3FN: bias 7, no infinity, NaN 0x7F, max 448 = 0x7E */
    E4M3_IEEE = format("e4m3,special=ieee"); /* bias 7, Inf 0x78, max 240 = 0x77 */
    E8M0 = format("float8e8m0");
    INT8 = format("int8");
    UINT8 = format("uint8");
    INT16 = format("int16");
    INT32 = format("int32");
    E2M1 = format("float4e2m1");
    lowbit_options o = lowbit_options_default();

    /* The defaults the issue names. */
    CHECK(o.round == LOWBIT_RNE && o.tininess == LOWBIT_TININESS_AFTER && o.saturate == 0);
    CHECK(o.profile == LOWBIT_PROFILE_SPEC && o.onnx_cast == 0 && o.flush == 0);
    /* TestFloat's flag layout. */
    CHECK(LOWBIT_FLAG_INEXACT == 1 && LOWBIT_FLAG_UNDERFLOW == 2 && LOWBIT_FLAG_OVERFLOW == 4);
    CHECK(LOWBIT_FLAG_INFINITE == 8 && LOWBIT_FLAG_INVALID == 16);
    /* One format, one handle. */
    CHECK(format("e4m3,special=ieee") == E4M3_IEEE && format("float8e4m3fn") == E4M3);
    uint32_t width = 0;
    CHECK(lowbit_format_width(E2M1, &width) == LOWBIT_OK && width == 4);
    size_t bytes = 0;
    CHECK(lowbit_format_bytes(E2M1, 3, &bytes) == LOWBIT_OK && bytes == 2); /* two per byte */

    /* 1.5 = 1.1b * 2^0: exponent 0+7 = 0111, fraction 100 -> 0 0111 100 = 0x3C, exact. */
    EXPECT(F32, E4M3, 0x3FC00000u, &o, 0x3C, 0);
    /* 1.1875 = 1.0011b (0x3F980000): 3 fraction bits keep 001, drop exactly half (1). */
    EXPECT(F32, E4M3, 0x3F980000u, &o, 0x3A, LOWBIT_FLAG_INEXACT); /* tie -> even 010: 1.25 */
    o.round = LOWBIT_RTZ;
    EXPECT(F32, E4M3, 0x3F980000u, &o, 0x39, LOWBIT_FLAG_INEXACT); /* 001: 1.125 */
    o.round = LOWBIT_RMM;
    EXPECT(F32, E4M3, 0x3F980000u, &o, 0x3A, LOWBIT_FLAG_INEXACT); /* tie away: 1.25 */
    o.round = LOWBIT_ROD;
    EXPECT(F32, E4M3, 0x3F980000u, &o, 0x39, LOWBIT_FLAG_INEXACT); /* 001 is odd already */
    o.round = LOWBIT_RDN;
    EXPECT(F32, E4M3, 0xBF980000u, &o, 0xBA, LOWBIT_FLAG_INEXACT); /* -1.1875 down: -1.25 */
    o.round = LOWBIT_RUP;
    EXPECT(F32, E4M3, 0xBF980000u, &o, 0xB9, LOWBIT_FLAG_INEXACT); /* up: -1.125 */
    o.round = LOWBIT_RAZ;
    EXPECT(F32, E4M3, 0x3F940000u, &o, 0x3A, LOWBIT_FLAG_INEXACT); /* 1.00101b (1.15625) away: 1.010 */
    /* Stochastic, 1 random bit: the dropped top bit (1) plus the random bit carries iff it is 1. */
    o.round = LOWBIT_STOCHASTIC;
    o.random_width = 1;
    o.random_bits = 0;
    EXPECT(F32, E4M3, 0x3F980000u, &o, 0x39, LOWBIT_FLAG_INEXACT);
    o.random_bits = 1;
    EXPECT(F32, E4M3, 0x3F980000u, &o, 0x3A, LOWBIT_FLAG_INEXACT);
    o = lowbit_options_default();

    /* Overflow: 300 (0x43960000) > 240 + 16/2 on e4m3,special=ieee: +Inf 0x78, OVERFLOW|INEXACT;
     * saturating: MAX 0x77, same flags. */
    EXPECT(F32, E4M3_IEEE, 0x43960000u, &o, 0x78, LOWBIT_FLAG_OVERFLOW | LOWBIT_FLAG_INEXACT);
    o.saturate = 1;
    EXPECT(F32, E4M3_IEEE, 0x43960000u, &o, 0x77, LOWBIT_FLAG_OVERFLOW | LOWBIT_FLAG_INEXACT);
    /* FLOAT8E4M3FN has no infinity: 1000 (0x447A0000) > 448 + 32/2 gives NaN 0x7F unsaturated,
     * MAX 0x7E saturated; OVERFLOW|INEXACT both. */
    EXPECT(F32, E4M3, 0x447A0000u, &o, 0x7E, LOWBIT_FLAG_OVERFLOW | LOWBIT_FLAG_INEXACT);
    o.saturate = 0;
    EXPECT(F32, E4M3, 0x447A0000u, &o, 0x7F, LOWBIT_FLAG_OVERFLOW | LOWBIT_FLAG_INEXACT);
    /* +Inf (0x7F800000) into e4m3,special=ieee: +Inf, exact; saturating: MAX and INVALID. */
    EXPECT(F32, E4M3_IEEE, 0x7F800000u, &o, 0x78, 0);
    o.saturate = 1;
    EXPECT(F32, E4M3_IEEE, 0x7F800000u, &o, 0x77, LOWBIT_FLAG_INVALID);
    o.saturate = 0;

    /* Tininess: 2^-6 - 2^-11 = 1.1111b * 2^-7 (0x3C780000) is below the smallest normal 2^-6;
     * on the subnormal grid (step 2^-9) it is 7.75 steps -> 8 steps = 2^-6 = code 0x08.
     * Rounded to 4 significant bits with unbounded exponent it is 2^-6: not tiny after rounding
     * (INEXACT only), tiny before (UNDERFLOW|INEXACT). */
    EXPECT(F32, E4M3_IEEE, 0x3C780000u, &o, 0x08, LOWBIT_FLAG_INEXACT);
    o.tininess = LOWBIT_TININESS_BEFORE;
    EXPECT(F32, E4M3_IEEE, 0x3C780000u, &o, 0x08, LOWBIT_FLAG_UNDERFLOW | LOWBIT_FLAG_INEXACT);
    o.tininess = LOWBIT_TININESS_AFTER;
    /* 2^-10 (0x3A800000) is half a subnormal step (2^-9): tie -> 0 (even), tiny and inexact. */
    EXPECT(F32, E4M3_IEEE, 0x3A800000u, &o, 0x00, LOWBIT_FLAG_UNDERFLOW | LOWBIT_FLAG_INEXACT);

    /* Flush. 2^-20 (0x35800000) is float16's subnormal 2^-20 / 2^-24 = 16 steps: 0x0010, exact;
     * with FTZ it becomes +0 with UNDERFLOW|INEXACT. The float32 subnormal 0x00000001 (2^-149)
     * is far below float16's half step: +0, UNDERFLOW|INEXACT; with DAZ it reads as +0: exact. */
    EXPECT(F32, F16, 0x35800000u, &o, 0x0010, 0);
    o.flush = LOWBIT_FLUSH_RESULTS;
    EXPECT(F32, F16, 0x35800000u, &o, 0x0000, LOWBIT_FLAG_UNDERFLOW | LOWBIT_FLAG_INEXACT);
    o.flush = 0;
    EXPECT(F32, F16, 0x00000001u, &o, 0x0000, LOWBIT_FLAG_UNDERFLOW | LOWBIT_FLAG_INEXACT);
    o.flush = LOWBIT_FLUSH_OPERANDS;
    EXPECT(F32, F16, 0x00000001u, &o, 0x0000, 0);
    o.flush = 0;

    /* NaNs: a signalling float32 NaN (0x7FA00000: quiet bit clear, payload top bits 01) into
     * float16: INVALID, quieted (0x7E00) with the top payload bits kept (0x7E00 | 0x100). */
    EXPECT(F32, F16, 0x7FA00000u, &o, 0x7F00, LOWBIT_FLAG_INVALID);
    /* A quiet NaN (0x7FC00000) is no exception: 0x7E00. */
    EXPECT(F32, F16, 0x7FC00000u, &o, 0x7E00, 0);

    /* Float to integer. 2.5 (0x40200000): nearest even 2, ties away 3, INEXACT. */
    EXPECT(F32, INT8, 0x40200000u, &o, 0x02, LOWBIT_FLAG_INEXACT);
    o.round = LOWBIT_RMM;
    EXPECT(F32, INT8, 0x40200000u, &o, 0x03, LOWBIT_FLAG_INEXACT);
    o.round = LOWBIT_RNE;
    /* 200 (0x43480000) > 127: INVALID; x86's integer indefinite 0x80, or 0x7F saturating. */
    EXPECT(F32, INT8, 0x43480000u, &o, 0x80, LOWBIT_FLAG_INVALID);
    /* -1 (0xBF800000) into uint8: INVALID, all ones unsaturated. */
    EXPECT(F32, UINT8, 0xBF800000u, &o, 0xFF, LOWBIT_FLAG_INVALID);
    o.saturate = 1;
    EXPECT(F32, INT8, 0x43480000u, &o, 0x7F, LOWBIT_FLAG_INVALID);
    /* NaN saturating: 0, INVALID. */
    EXPECT(F32, INT8, 0x7FC00000u, &o, 0x00, LOWBIT_FLAG_INVALID);
    o.saturate = 0;

    /* Integer to float. int8 -3 (0xFD) = -1.1b * 2^1: 1 1000 100 = 0xC4, exact. */
    EXPECT(INT8, E4M3, 0xFD, &o, 0xC4, 0);
    /* int32 2049 = 2^11 + 1 into float16 (11 significant bits): a tie between 2048 and 2050 ->
     * 2048 (even) = exponent 11+15 = 11010 -> 0x6800, INEXACT. */
    EXPECT(INT32, F16, 2049, &o, 0x6800, LOWBIT_FLAG_INEXACT);
    /* int16 1000 into FLOAT8E4M3FN saturating: MAX 0x7E, OVERFLOW|INEXACT. */
    o.saturate = 1;
    EXPECT(INT16, E4M3, 1000, &o, 0x7E, LOWBIT_FLAG_OVERFLOW | LOWBIT_FLAG_INEXACT);
    o.saturate = 0;

    /* ONNX Cast (values only, flags 0). float32 3.0 into FLOAT8E8M0: round_mode up -> 4 = 2^2,
     * code 127 + 2 = 0x81; down -> 2 = 0x80. FLOAT8E4M3FN 1000 with saturate=1: 448 = 0x7E. */
    o.onnx_cast = 1;
    o.saturate = 1;
    EXPECT(F32, E8M0, 0x40400000u, &o, 0x81, 0);
    o.round = LOWBIT_RTZ;
    EXPECT(F32, E8M0, 0x40400000u, &o, 0x80, 0);
    o.round = LOWBIT_RNE;
    EXPECT(F32, E4M3, 0x447A0000u, &o, 0x7E, 0);
    int32_t profile = -1;
    CHECK(lowbit_profile_parse("onnxruntime", &profile) == LOWBIT_OK && profile == LOWBIT_PROFILE_ONNXRUNTIME);
    o.profile = profile;
    EXPECT(F32, E4M3, 0x3FC00000u, &o, 0x3C, 0);
    /* ONNX Cast needs ONNX dtypes on both sides. */
    uint8_t flags = 0;
    CHECK(lowbit_convert(F32, E4M3_IEEE, 0x3FC00000u, &o, &flags) == 0 && flags == LOWBIT_FLAG_ERROR);
    CHECK(lowbit_last_error_code() == LOWBIT_ERR_UNSUPPORTED);
    o = lowbit_options_default();

    /* Arrays. 1.5, -3.0, 5.0 into FLOAT4E2M1 (bias 1): 1.5 = 0 01 1 = 0x3, -3 = 1 10 1 = 0xD,
     * 5 a tie between 4 (0x6) and 6 (0x7) -> 0x6, INEXACT. Two per byte, low nibble first. */
    float src[3] = {1.5f, -3.0f, 5.0f};
    uint8_t dst[2] = {0xAA, 0xAA}, array_flags[3] = {9, 9, 9};
    CHECK(lowbit_convert_n(F32, E2M1, src, dst, 3, &o, array_flags) == LOWBIT_OK);
    CHECK(dst[0] == 0xD3 && dst[1] == 0x06);
    CHECK(array_flags[0] == 0 && array_flags[1] == 0 && array_flags[2] == LOWBIT_FLAG_INEXACT);
    /* Through the plans (ONNX Cast): the same codes, no flags. */
    o.onnx_cast = 1;
    memset(dst, 0xAA, sizeof dst);
    CHECK(lowbit_convert_n(F32, E2M1, src, dst, 3, &o, array_flags) == LOWBIT_OK);
    CHECK(dst[0] == 0xD3 && dst[1] == 0x06 && array_flags[2] == 0);
    o.onnx_cast = 0;
    CHECK(lowbit_convert_n(F32, E2M1, src, src, 3, &o, NULL) == LOWBIT_ERR_UNSUPPORTED); /* overlap */

    /* A dump line. 1.1875 -> 0x39 is what round toward zero gives; under nearest even 0x3A was
     * due: one ulp toward zero; the flags (INEXACT) agree. */
    lowbit_verdict v;
    CHECK(lowbit_check_line(F32, E4M3, "3F980000 39 01", &o, 0, &v) == LOWBIT_OK);
    CHECK(v.mismatch == 1 && v.value_class == LOWBIT_CLASS_ONE_ULP_TOWARD_ZERO && v.expected == 0x3A);
    CHECK(v.missing_flags == 0 && v.extra_flags == 0 && v.has_flags == 1);
    CHECK(strcmp(lowbit_class_name(v.value_class), "one_ulp_toward_zero") == 0);
    /* The line's own mode word: under rtz it is right. */
    CHECK(lowbit_check_line(F32, E4M3, "rtz 3F980000 39 01", &o, 0, &v) == LOWBIT_OK && v.mismatch == 0);
    /* The right value with a flag too many: 1.5 is exact, the line's INEXACT is extra. */
    CHECK(lowbit_check_line(F32, E4M3, "3FC00000 3C 01", &o, 0, &v) == LOWBIT_OK);
    CHECK(v.mismatch == 1 && v.value_class == LOWBIT_CLASS_NONE && v.extra_flags == LOWBIT_FLAG_INEXACT);
    CHECK(lowbit_check_line(F32, E4M3, "# a comment", &o, 0, &v) == LOWBIT_OK && v.skipped == 1);
    CHECK(lowbit_check_line(F32, E4M3, "3FC00000 zz", &o, 0, &v) == LOWBIT_ERR_LINE);
    CHECK(lowbit_class_name(99) == NULL);

    /* Errors: a code, a message, never a crash. */
    lowbit_format bad = 7;
    CHECK(lowbit_format_parse("float7", &bad) == LOWBIT_ERR_FORMAT && bad == 7);
    CHECK(strlen(lowbit_last_error_message()) > 0 && lowbit_last_error_code() == LOWBIT_ERR_FORMAT);
    CHECK(lowbit_format_parse("e4m3,bias=x", &bad) == LOWBIT_ERR_FORMAT);
    CHECK(lowbit_format_parse(NULL, &bad) == LOWBIT_ERR_NULL);
    CHECK(lowbit_format_parse("f32", NULL) == LOWBIT_ERR_NULL);
    /* 0x100 has a bit above E4M3's 8. */
    flags = 0;
    CHECK(lowbit_convert(E4M3, F32, 0x100, &o, &flags) == 0 && flags == LOWBIT_FLAG_ERROR);
    CHECK(lowbit_last_error_code() == LOWBIT_ERR_BITS);
    uint64_t result = 0;
    CHECK(lowbit_convert_checked(E4M3, F32, 0x100, &o, &result, &flags) == LOWBIT_ERR_BITS);
    /* 0x3C as E4M3 = 1.5 = 0x3FC00000. */
    CHECK(lowbit_convert_checked(E4M3, F32, 0x3C, &o, &result, &flags) == LOWBIT_OK && result == 0x3FC00000u);
    CHECK(lowbit_convert(F32, E4M3, 0, NULL, &flags) == 0 && flags == LOWBIT_FLAG_ERROR);
    CHECK(lowbit_last_error_code() == LOWBIT_ERR_NULL);
    CHECK(lowbit_convert(0, E4M3, 0, &o, &flags) == 0 && lowbit_last_error_code() == LOWBIT_ERR_HANDLE);
    CHECK(lowbit_convert(F32, 12345, 0, &o, &flags) == 0 && lowbit_last_error_code() == LOWBIT_ERR_HANDLE);
    o.round = 5; /* RISC-V's reserved frm */
    CHECK(lowbit_convert(F32, E4M3, 0, &o, &flags) == 0 && lowbit_last_error_code() == LOWBIT_ERR_OPTIONS);
    o.round = LOWBIT_STOCHASTIC;
    o.random_width = 0;
    CHECK(lowbit_convert(F32, E4M3, 0, &o, &flags) == 0 && lowbit_last_error_code() == LOWBIT_ERR_OPTIONS);
    o = lowbit_options_default();
    o.saturate = 2;
    CHECK(lowbit_convert(F32, E4M3, 0, &o, &flags) == 0 && lowbit_last_error_code() == LOWBIT_ERR_OPTIONS);
    o = lowbit_options_default();
    CHECK(lowbit_convert_n(F32, E2M1, NULL, dst, 3, &o, NULL) == LOWBIT_ERR_NULL);
    CHECK(lowbit_check_line(F32, E4M3, NULL, &o, 0, &v) == LOWBIT_ERR_NULL);

    /* Block schemes over their names. ggml Q8_0, one block of 32 with x[0] = 1: d = 1/127 rounded
     * to float16 is 0x2008 (2^-7 * 1.0078125), stored little-endian before the 32 int8 codes;
     * x[0] * (1/d) rounds to 127. Back: 127 * 0.00787353515625 = 131064/131072 = 0.99993896484375. */
    {
        float x[32] = {1.0f};
        size_t shape[1] = {32};
        uint8_t layout[64];
        size_t written = 0;
        CHECK(lowbit_blocks_quantize("ggml:q8_0", x, shape, 1, -1, NULL, NULL, 0, &written) == LOWBIT_ERR_SIZE &&
              written == 34);
        CHECK(lowbit_blocks_quantize("ggml:q8_0", x, shape, 1, -1, NULL, layout, sizeof layout, &written) ==
                  LOWBIT_OK &&
              written == 34);
        int zeros = 1;
        for (int i = 3; i < 34; i++) zeros &= layout[i] == 0;
        CHECK(layout[0] == 0x08 && layout[1] == 0x20 && layout[2] == 127 && zeros);
        float back[32];
        CHECK(lowbit_blocks_dequantize("ggml:q8_0", layout, 34, shape, 1, -1, back) == LOWBIT_OK);
        CHECK(back[0] == 0.99993896484375f && back[1] == 0.0f);
        /* Layout sizes are checked; unknown schemes are format errors. */
        CHECK(lowbit_blocks_dequantize("ggml:q8_0", layout, 33, shape, 1, -1, back) == LOWBIT_ERR_DATA);
        CHECK(lowbit_blocks_quantize("ggml:q9_0", x, shape, 1, -1, NULL, layout, sizeof layout, &written) ==
              LOWBIT_ERR_FORMAT);
        /* OCP MXFP4, x[0] = 6: the shared exponent floor(log2 6) - 2 = 0 is E8M0 0x7F; 6 is E2M1 0x7,
         * packed low nibble first (ONNX's FLOAT4E2M1 packing) in 16 bytes, the scale after them. */
        float y[32] = {6.0f};
        CHECK(lowbit_blocks_quantize("ocp:mxfp4", y, shape, 1, -1, NULL, layout, sizeof layout, &written) ==
                  LOWBIT_OK &&
              written == 17 && layout[0] == 0x07 && layout[1] == 0 && layout[16] == 0x7F);
        CHECK(lowbit_blocks_dequantize("ocp:mxfp4", layout, 17, shape, 1, -1, back) == LOWBIT_OK && back[0] == 6.0f);
    }

    /* Dot products. 2^24 + 1 + 1 (against ones) in float32 codes: exact 2^24 + 2 (0x4B800001),
     * summed in float32 in order 2^24 (0x4B800000, both ones lost to ties-to-even). */
    {
        lowbit_format f32;
        CHECK(lowbit_format_parse("float32", &f32) == LOWBIT_OK);
        uint64_t a[3] = {0x4B800000, 0x3F800000, 0x3F800000}, b[3] = {0x3F800000, 0x3F800000, 0x3F800000};
        uint64_t r = 0;
        lowbit_accumulation exact, seq, bad;
        CHECK(lowbit_accumulation_parse("exact", &exact) == LOWBIT_OK && exact.kind == LOWBIT_DOT_EXACT);
        CHECK(lowbit_accumulation_parse("sequential-fp32", &seq) == LOWBIT_OK && seq.kind == LOWBIT_DOT_SEQUENTIAL);
        CHECK(lowbit_accumulation_parse("kahan", &bad) == LOWBIT_ERR_FORMAT);
        CHECK(lowbit_matmul_t(f32, a, b, 1, 1, 3, exact, f32, &r) == LOWBIT_OK && r == 0x4B800001);
        CHECK(lowbit_matmul_t(f32, a, b, 1, 1, 3, seq, f32, &r) == LOWBIT_OK && r == 0x4B800000);
        CHECK(lowbit_matmul_t(f32, NULL, b, 1, 1, 3, exact, f32, &r) == LOWBIT_ERR_NULL);
        /* The same model as a struct: an fma chain in float32 rounding toward zero. */
        lowbit_accumulation fma = {LOWBIT_DOT_FMA, f32, LOWBIT_RTZ};
        CHECK(lowbit_matmul_t(f32, a, b, 1, 1, 3, fma, f32, &r) == LOWBIT_OK && r == 0x4B800000);
        /* Two MXFP4 blocks of 32 ones (E2M1 0x2 = 1.0, packed 0x22; E8M0 0x7F = 1, then 0x80 = 2):
         * the dot product is 32 * 1 * 2 = 64 (0x42800000). */
        uint8_t ones[17], twos[17];
        for (int i = 0; i < 16; i++) ones[i] = twos[i] = 0x22;
        ones[16] = 0x7F;
        twos[16] = 0x80;
        CHECK(lowbit_matmul_t_blocks("ocp:mxfp4", ones, 17, "ocp:mxfp4", twos, 17, 1, 1, 32, seq, f32, &r) ==
                  LOWBIT_OK &&
              r == 0x42800000);
        CHECK(lowbit_matmul_t_blocks("ocp:mxfp4", ones, 16, "ocp:mxfp4", twos, 17, 1, 1, 32, seq, f32, &r) ==
              LOWBIT_ERR_DATA);
    }

    /* Threads: RNE and RTZ at once on the same handles. */
    struct job jobs[4] = {{LOWBIT_RNE, 0x3A, 0}, {LOWBIT_RTZ, 0x39, 0}, {LOWBIT_RMM, 0x3A, 0}, {LOWBIT_ROD, 0x39, 0}};
    pthread_t threads[4];
    for (int i = 0; i < 4; i++) pthread_create(&threads[i], NULL, convert_many, &jobs[i]);
    for (int i = 0; i < 4; i++) {
        pthread_join(threads[i], NULL);
        CHECK(jobs[i].ok);
    }

    printf("%d checks, %d failures\n", checks, failures);
    return failures == 0 && checks > 0 ? 0 : 1;
}
