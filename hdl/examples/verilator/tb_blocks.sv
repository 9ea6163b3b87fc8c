// tb_blocks: block-scaled schemes through DPI-C (lowbit_dpi's lowbit_dpi_blocks_*), with values
// derived by hand. ggml Q8_0, one block of 32 with x[0] = 1.0: d = 1/127 in float16 is 0x2008
// (2^-7 * 1.0078125), stored little-endian before 32 int8 codes, x[0] / d rounds to 127; back,
// 127 * d = 0.99993896484375 = 1 - 2^-14, float32 0x3F7FFC00. OCP MXFP4 of x[0] = 6.0: E2M1 code 7
// in the low nibble of byte 0, E8M0 scale 0x7F (2^0) after the 16 element bytes. Ends with $finish
// when every check holds, $fatal otherwise.
module tb_blocks;
    import lowbit_dpi::*;

    // Fixed-size arrays: Verilator 5.006 passes those to DPI open arrays (dynamic arrays crash it).
    int unsigned x[32], y[32];
    byte unsigned layout[64], short_layout[8], exact[34];
    int written, status, checks = 0, failures = 0;

    task automatic check(input bit ok, input string what);
        checks++;
        if (!ok) begin
            failures++;
            $display("FAILED: %s (%s)", what, lowbit_last_error_message());
        end
    endtask

    initial begin
        foreach (x[i]) x[i] = 0;
        x[0] = 32'h3F80_0000;
        status = lowbit_dpi_blocks_quantize("ggml:q8_0", x, layout, written);
        check(status == LOWBIT_OK && written == 34, "ggml:q8_0 quantize writes 34 bytes");
        check(layout[0] == 8'h08 && layout[1] == 8'h20 && layout[2] == 8'd127 && layout[3] == 0,
              "ggml:q8_0 d = 0x2008, first code 127");
        status = lowbit_dpi_blocks_quantize("ggml:q8_0", x, short_layout, written);
        check(status == LOWBIT_ERR_SIZE && written == 34, "a layout array too small: LOWBIT_ERR_SIZE and the size needed");
        foreach (exact[i]) exact[i] = layout[i];
        status = lowbit_dpi_blocks_dequantize("ggml:q8_0", exact, y);
        check(status == LOWBIT_OK && y[0] == 32'h3F7F_FC00 && y[1] == 0, "ggml:q8_0 dequantize 127 * d");
        status = lowbit_dpi_blocks_dequantize("ggml:q8_0", layout, y);
        check(status == LOWBIT_ERR_DATA, "a layout of the wrong size: LOWBIT_ERR_DATA");
        status = lowbit_dpi_blocks_quantize("ggml:q9_0", x, layout, written);
        check(status == LOWBIT_ERR_FORMAT, "an unknown scheme: LOWBIT_ERR_FORMAT");
        x[0] = 32'h40C0_0000;
        status = lowbit_dpi_blocks_quantize("ocp:mxfp4", x, layout, written);
        check(status == LOWBIT_OK && written == 17 && layout[0] == 8'h07 && layout[1] == 0 && layout[16] == 8'h7F,
              "ocp:mxfp4 of 6.0: code 7, scale 0x7F");
        $display("%0d block checks through DPI-C, %0d failures", checks, failures);
        if (failures != 0 || checks == 0) $fatal(1, "%0d of %0d block checks failed", failures, checks);
        $finish;
    end
endmodule
