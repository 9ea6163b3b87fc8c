// lowbit_dpi: lowbit as a SystemVerilog reference model, through DPI-C over its C ABI
// (include/lowbit.h). Link the simulation with liblowbit_capi and compile lowbit_dpi.c (the
// shim that turns DPI's bit vectors into the C ABI's integers and options) with it.
//
// Every call is stateless: no global rounding mode or flag word, so many DUT instances and
// threads can call it at once. Formats are parsed once into handles:
//
//   import lowbit_dpi::*;
//   int f32 = lowbit_format("float32"), e4m3 = lowbit_format("e4m3");
//   bit [63:0] want; bit [4:0] want_flags;
//   if (lowbit_dpi_convert(f32, e4m3, 64'(operand), LOWBIT_RNE, LOWBIT_TININESS_AFTER, 1'b0,
//                          64'd0, 0, want, want_flags) != LOWBIT_OK)
//     $fatal(1, "lowbit: %s", lowbit_last_error_message());
package lowbit_dpi;
    // Status codes (0 is success; the others are the C ABI's LOWBIT_ERR_* values).
    localparam int LOWBIT_OK = 0;
    localparam int LOWBIT_ERR_FORMAT = -2;   // an unknown format or scheme name
    localparam int LOWBIT_ERR_SIZE = -9;     // an array too small (or a size that overflows)
    localparam int LOWBIT_ERR_DATA = -11;    // data that does not fit a block scheme

    // Rounding modes (the C ABI's values).
    localparam int LOWBIT_RNE = 0;         // nearest, ties to even
    localparam int LOWBIT_RTZ = 1;         // toward zero
    localparam int LOWBIT_RDN = 2;         // toward -infinity
    localparam int LOWBIT_RUP = 3;         // toward +infinity
    localparam int LOWBIT_RMM = 4;         // nearest, ties away from zero
    localparam int LOWBIT_ROD = 6;         // round to odd
    localparam int LOWBIT_STOCHASTIC = 8;  // random_width random bits added below the kept bits
    localparam int LOWBIT_RAZ = 9;         // away from zero

    // When a result is tiny, for the underflow flag.
    localparam int LOWBIT_TININESS_BEFORE = 0;
    localparam int LOWBIT_TININESS_AFTER = 1;      // TestFloat's and SoftFloat's default
    localparam int LOWBIT_TININESS_DELIVERED = 2;

    // Flag bits in TestFloat's layout, which is also RISC-V's fflags (NV DZ OF UF NX, NX bit 0).
    localparam bit [4:0] LOWBIT_FLAG_INEXACT = 5'd1;
    localparam bit [4:0] LOWBIT_FLAG_UNDERFLOW = 5'd2;
    localparam bit [4:0] LOWBIT_FLAG_OVERFLOW = 5'd4;
    localparam bit [4:0] LOWBIT_FLAG_INFINITE = 5'd8;
    localparam bit [4:0] LOWBIT_FLAG_INVALID = 5'd16;

    // The C ABI's own functions, where DPI's types are C's: a format's handle from its name or
    // description ("float32", "e4m3" = FLOAT8E4M3FN, "int8", "e4m3,special=ieee", ...), its code
    // width, and the message of the last failing call on this thread.
    import "DPI-C" function int lowbit_format_parse(input string text, output int handle);
    import "DPI-C" function int lowbit_format_width(input int handle, output int unsigned bits);
    import "DPI-C" function string lowbit_last_error_message();

    // One code `operand` (its low width(from) bits; the rest must be zero) converted from
    // `from` into `to`; `result` gets the code, `flags` the exceptions. `random_bits` and
    // `random_width` (1 to 63) serve LOWBIT_STOCHASTIC only. Returns LOWBIT_OK or the C ABI's
    // error code (bad handle, operand wider than its format, bad options); then
    // lowbit_last_error_message() says why, and result and flags are zero.
    import "DPI-C" function int lowbit_dpi_convert(
        input  int        from,
        input  int        to,
        input  bit [63:0] operand,
        input  int        round,
        input  int        tininess,
        input  bit        saturate,
        input  bit [63:0] random_bits,
        input  int        random_width,
        output bit [63:0] result,
        output bit [4:0]  flags
    );

    // Block-scaled schemes by name ("ocp:mxfp4", "ggml:q8_0", "modelopt:nvfp4", ...; `lowbit
    // schemes` lists them) on a 1-D tensor of float32 bit patterns, blocked along it. Quantize
    // writes the scheme's storage layout (the bytes lowbit.blocks' to_bytes() gives) into
    // `layout`, which must be sized first (`written` gets the byte count; a too small array
    // gives LOWBIT_ERR_SIZE, and `written` says what is needed); dequantize reads a layout and
    // fills `y_bits`, sized to the element count. Both return LOWBIT_OK or the C ABI's error
    // code (LOWBIT_ERR_FORMAT for an unknown scheme, LOWBIT_ERR_DATA for a layout of the wrong
    // size or an input the scheme's implementation refuses).
    import "DPI-C" function int lowbit_dpi_blocks_quantize(
        input  string       scheme,
        input  int unsigned x_bits[],
        output byte unsigned layout[],
        output int          written
    );
    import "DPI-C" function int lowbit_dpi_blocks_dequantize(
        input  string        scheme,
        input  byte unsigned layout[],
        output int unsigned  y_bits[]
    );

    // The handle of a format; a name lowbit does not know stops the simulation with its message.
    function automatic int lowbit_format(input string text);
        int handle;
        if (lowbit_format_parse(text, handle) != LOWBIT_OK)
            $fatal(1, "lowbit_format(\"%s\"): %s", text, lowbit_last_error_message());
        return handle;
    endfunction
endpackage
