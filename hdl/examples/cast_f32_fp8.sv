// cast_f32_fp8: a small synthesizable cast unit, written for lowbit's testbench examples.
//
// float32 -> FLOAT8E4M3FN (1-4-3, bias 7, no infinity, NaN 0x7F/0xFF, max 448) or FLOAT8E5M2
// (1-5-2, bias 15, IEEE infinities and NaNs, max 57344), rounding to nearest even or toward zero,
// saturating or not, with IEEE 754 exception flags in TestFloat's layout:
//   flags[0] inexact, flags[1] underflow, flags[2] overflow, flags[3] infinite (never raised by a
//   conversion), flags[4] invalid.
// Tininess is judged after rounding (TestFloat's default). The semantics are lowbit's
// verification conversions (`lowbit::verify`, `lowbit.convert`):
//   * finite overflow: saturate or RTZ -> +-MAX; else E5M2 -> +-Inf, E4M3FN -> NaN of the sign;
//     flags overflow|inexact.
//   * +-Inf: E5M2 -> +-Inf (no flag) unless saturating; otherwise +-MAX (saturate) or NaN
//     (E4M3FN), with invalid.
//   * NaN: the target's quiet NaN of the same sign; a signalling NaN (quiet bit clear) raises
//     invalid.
//
// Purely combinational: the testbenches set the inputs and read the outputs a moment later.
//
// `define LOWBIT_PLANT_BUG plants a bug for the testbenches to catch: ties round away from zero
// instead of to the even neighbour (wrong on half of the exact ties, right everywhere else).
module cast_f32_fp8 (
    input  logic [31:0] a,         // float32 operand
    input  logic        to_e5m2,   // 0: FLOAT8E4M3FN, 1: FLOAT8E5M2
    input  logic        rtz,       // 0: nearest even, 1: toward zero
    input  logic        saturate,  // 1: overflow and infinities give +-MAX
    output logic [7:0]  result,
    output logic [4:0]  flags
);
    localparam logic [4:0] INEXACT = 5'd1, UNDERFLOW = 5'd2, OVERFLOW = 5'd4, INVALID = 5'd16;

    logic        sign;
    logic [7:0]  exp_in;
    logic [22:0] frac;
    assign sign   = a[31];
    assign exp_in = a[30:23];
    assign frac   = a[22:0];

    // Target parameters.
    logic [3:0]  mant_bits;    // 3 or 2
    logic signed [9:0] bias;   // 7 or 15
    logic [11:0] max_code;     // largest finite magnitude code: 0x7E or 0x7B
    logic [6:0]  nan_code;     // quiet NaN magnitude: 0x7F or 0x7E
    always_comb begin
        mant_bits = to_e5m2 ? 4'd2 : 4'd3;
        bias      = to_e5m2 ? 10'sd15 : 10'sd7;
        max_code  = to_e5m2 ? 12'h07B : 12'h07E;
        nan_code  = to_e5m2 ? 7'h7E : 7'h7F;
    end

    // The operand as sig * 2^(e - 23) with e the unbiased exponent (float32 subnormals: -126).
    logic        is_zero_or_sub, is_special;
    logic [23:0] sig;
    logic signed [9:0] e;
    assign is_zero_or_sub = exp_in == 8'd0;
    assign is_special     = exp_in == 8'hFF;
    assign sig = {~is_zero_or_sub, frac};
    assign e   = is_zero_or_sub ? -10'sd126 : $signed({2'b00, exp_in}) - 10'sd127;

    // Below the target's smallest normal exponent (1 - bias) the quantum stays that of the
    // subnormals: shift further by the difference.
    logic signed [9:0] emin;
    logic        subnormal;
    logic [9:0]  below;        // emin - e when subnormal
    logic [5:0]  shift;        // bits dropped from sig, clamped (25 or more drop all of it)
    assign emin      = 10'sd1 - bias;
    assign subnormal = e < emin;
    assign below     = subnormal ? 10'(emin - e) : 10'd0;
    always_comb begin
        if (below > 10'd31) shift = 6'd31;
        else shift = 6'(10'd23 - {6'd0, mant_bits} + below);
        if (shift > 6'd31) shift = 6'd31;
    end

    // At least 20 bits are dropped (23 - 3), so what is kept fits in 4 bits.
    /* verilator lint_off UNUSEDSIGNAL */
    logic [55:0] wide;
    /* verilator lint_on UNUSEDSIGNAL */
    logic [3:0]  kept;
    logic        round_bit, sticky, round_up;
    assign wide      = {sig, 32'd0} >> shift;
    assign kept      = wide[35:32];
    assign round_bit = wide[31];
    assign sticky    = |wide[30:0];
`ifdef LOWBIT_PLANT_BUG
    assign round_up  = !rtz && round_bit;
`else
    assign round_up  = !rtz && round_bit && (sticky || kept[0]);
`endif

    // The magnitude code: (biased exponent - 1) << mant_bits plus the kept significand with its
    // hidden bit, so a carry out of the fraction increments the exponent by itself.
    logic [9:0]  biased_minus_one;
    logic [11:0] exp_field, code;
    assign biased_minus_one = 10'(e + bias - 10'sd1);
    assign exp_field = subnormal ? 12'd0 : {2'd0, biased_minus_one} << mant_bits;
    assign code      = exp_field + {8'd0, kept} + {11'd0, round_up};

    logic inexact, overflow, tiny, carries_at_normal_precision;
    assign inexact  = round_bit || sticky;
    assign overflow = code > max_code;
    // Tiny after rounding: the value rounded to the normal precision (unbounded exponent) stays
    // below 2^emin. Only one binade below emin can reach it, when its M + 1 top fraction bits
    // are ones and rounding is to nearest.
    assign carries_at_normal_precision =
        !rtz && e == emin - 10'sd1 && (to_e5m2 ? &frac[22:20] : &frac[22:19]);
    assign tiny = subnormal && !carries_at_normal_precision;

    logic [6:0] max_mag;
    logic       quiet;
    assign max_mag = max_code[6:0];
    assign quiet   = frac[22];
    // always @* rather than always_comb: Icarus 11 warns ("sorry") on an always_comb that reads a
    // bit select of a port (here the sign, a[31]).
    always @* begin
        if (is_special && frac != 23'd0) begin
            result = {sign, nan_code};
            flags  = quiet ? 5'd0 : INVALID;
        end else if (is_special) begin
            if (to_e5m2 && !saturate) begin
                result = {sign, 7'h7C};
                flags  = 5'd0;
            end else begin
                result = {sign, saturate ? max_mag : nan_code};
                flags  = INVALID;
            end
        end else if (overflow) begin
            if (saturate || rtz) result = {sign, max_mag};
            else result = {sign, to_e5m2 ? 7'h7C : nan_code};
            flags = OVERFLOW | INEXACT;
        end else begin
            result = {sign, code[6:0]};
            flags  = (inexact ? INEXACT : 5'd0) | (inexact && tiny ? UNDERFLOW : 5'd0);
        end
    end
endmodule
