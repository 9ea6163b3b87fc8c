// tb_cast: the example cast unit (../cast_f32_fp8.sv) against lowbit through DPI-C (lowbit_dpi).
// Every mode of the unit (E4M3FN or E5M2, nearest even or toward zero, saturating or not) gets
// the special operands of both formats and random ones, and every result and flag is compared.
// Ends with $finish when all agree, with $fatal (a failing exit status) on any mismatch or when
// nothing was compared. Plusargs: +cases=N random operands per mode (default 20000), +seed=S.
module tb_cast;
    import lowbit_dpi::*;

    logic [31:0] a;
    logic        to_e5m2, rtz, saturate;
    logic [7:0]  result;
    logic [4:0]  flags;

    cast_f32_fp8 dut (.a(a), .to_e5m2(to_e5m2), .rtz(rtz), .saturate(saturate), .result(result), .flags(flags));

    int float32, targets[2];
    int unsigned checked = 0, mismatches = 0;
    longint unsigned state;

    // SplitMix64: the same operands on every simulator for a seed.
    function automatic longint unsigned next_random();
        longint unsigned z;
        state += 64'h9E37_79B9_7F4A_7C15;
        z = state;
        z = (z ^ (z >> 30)) * 64'hBF58_476D_1CE4_E5B9;
        z = (z ^ (z >> 27)) * 64'h94D0_49BB_1331_11EB;
        return z ^ (z >> 31);
    endfunction

    // Half of the operands in or near the two formats' ranges (2^-20 .. 2^17), half anywhere;
    // the fraction's low bits cleared at a random position, so exact ties come up often.
    function automatic bit [31:0] random_operand();
        longint unsigned r = next_random();
        bit [7:0] exponent = r[8] ? 8'(107 + 32'(r[7:0]) % 38) : r[16:9];
        bit [22:0] fraction = r[39:17] & ~((23'd1 << (32'(r[47:40]) % 24)) - 23'd1);
        return {r[63], exponent, fraction};
    endfunction

    // Values at the edges of both formats (positive; each is driven with both signs).
    bit [31:0] specials[$] = '{
        32'h0000_0000, 32'h3F80_0000, 32'h3FC0_0000,  // 0, 1, 1.5
        32'h3F88_0000, 32'h3F98_0000,                 // 1.0625, 1.1875: ties to even down and up
        32'h43E0_0000, 32'h43E0_8000, 32'h43E8_0000,  // E4M3FN: MAX 448, 449, the tie 464
        32'h43F0_0000, 32'h4400_0000,                 // 480 and 512: overflow
        32'h4760_0000, 32'h4770_0000, 32'h4780_0000,  // E5M2: MAX 57344, the tie 61440, 65536
        32'h5015_02F9,                                // 1e10
        32'h3C80_0000, 32'h3C00_0000, 32'h3B00_0000,  // 2^-6, 2^-7, 2^-9
        32'h3A80_0000, 32'h3AC0_0000,                 // 2^-10 (half of min), 3 * 2^-11
        32'h3880_0000, 32'h3780_0000, 32'h3700_0000,  // 2^-14, 2^-16, 2^-17
        32'h3740_0000,                                // 3 * 2^-18
        32'h3C78_0000, 32'h3870_0000,                 // round up to the smallest normal
        32'h0000_0001, 32'h007F_FFFF, 32'h0080_0000,  // float32 subnormals, its min normal
        32'h7F7F_FFFF, 32'h7F80_0000,                 // float32 MAX, infinity
        32'h7FC0_0000, 32'h7FFF_FFFF,                 // quiet NaNs
        32'h7F80_0001, 32'h7FA0_0000                  // signalling NaNs
    };

    task automatic check_one(input bit [31:0] operand);
        bit [63:0] want;
        bit [4:0]  want_flags;
        int        status;
        a = operand;
        #1;
        status = lowbit_dpi_convert(float32, targets[to_e5m2], {32'd0, operand},
                                    rtz ? LOWBIT_RTZ : LOWBIT_RNE, LOWBIT_TININESS_AFTER, saturate,
                                    64'd0, 0, want, want_flags);
        if (status != LOWBIT_OK) $fatal(1, "lowbit_dpi_convert: %s", lowbit_last_error_message());
        checked++;
        if (result !== want[7:0] || flags !== want_flags) begin
            mismatches++;
            if (mismatches <= 10)
                $display("MISMATCH a=%08h -> %s %s saturate=%0d: unit %02h flags %05b, lowbit %02h flags %05b",
                         operand, to_e5m2 ? "E5M2" : "E4M3FN", rtz ? "rtz" : "rne", saturate,
                         result, flags, want[7:0], want_flags);
        end
    endtask

    // The DPI path itself, on hand-computed values: a 64-bit operand (both svBitVecVal words),
    // the random word of stochastic rounding, and an error coming back as a status.
    task automatic check_package();
        int f64 = lowbit_format("float64"), e4m3 = lowbit_format("float8e4m3fn");
        bit [63:0] code;
        bit [4:0]  raised;
        int        status;
        // 1.0625 = 1.0001b: a tie between 1.000b (0x38) and 1.001b; nearest even keeps 0x38.
        status = lowbit_dpi_convert(f64, e4m3, 64'h3FF1_0000_0000_0000, LOWBIT_RNE, LOWBIT_TININESS_AFTER,
                                    1'b0, 64'd0, 0, code, raised);
        if (status != LOWBIT_OK || code != 64'h38 || raised != LOWBIT_FLAG_INEXACT)
            $fatal(1, "float64 1.0625 -> E4M3FN: status %0d, code %0h, flags %05b", status, code, raised);
        // Stochastic with 4 bits: the dropped bits 1000 plus random 8 reach 16, so it rounds up.
        status = lowbit_dpi_convert(f64, e4m3, 64'h3FF1_0000_0000_0000, LOWBIT_STOCHASTIC,
                                    LOWBIT_TININESS_AFTER, 1'b0, 64'd8, 4, code, raised);
        if (status != LOWBIT_OK || code != 64'h39 || raised != LOWBIT_FLAG_INEXACT)
            $fatal(1, "stochastic 1.0625 + 8/16: status %0d, code %0h, flags %05b", status, code, raised);
        // A code wider than float32 is refused, with a message.
        status = lowbit_dpi_convert(float32, e4m3, 64'h1_0000_0000, LOWBIT_RNE, LOWBIT_TININESS_AFTER,
                                    1'b0, 64'd0, 0, code, raised);
        if (status == LOWBIT_OK || lowbit_last_error_message() == "")
            $fatal(1, "a 33-bit float32 operand was accepted (status %0d)", status);
        $display("DPI-C package checks passed (refused as expected: %s)", lowbit_last_error_message());
    endtask

    initial begin
        int unsigned cases = 20000;
        longint unsigned seed = 1;
        void'($value$plusargs("cases=%d", cases));
        void'($value$plusargs("seed=%d", seed));
        state = seed;
        float32 = lowbit_format("float32");
        targets[0] = lowbit_format("float8e4m3fn");
        targets[1] = lowbit_format("float8e5m2");
        check_package();
        for (int mode = 0; mode < 8; mode++) begin
            {to_e5m2, rtz, saturate} = 3'(mode);
            foreach (specials[i]) begin
                check_one(specials[i]);
                check_one(specials[i] | 32'h8000_0000);
            end
            for (int unsigned i = 0; i < cases; i++) check_one(random_operand());
        end
        $display("%0d conversions compared with lowbit through DPI-C (seed %0d), %0d mismatches",
                 checked, seed, mismatches);
        if (checked == 0) $fatal(1, "nothing was compared");
        if (mismatches != 0) $fatal(1, "%0d of %0d conversions differ from lowbit", mismatches, checked);
        $finish;
    end
endmodule
