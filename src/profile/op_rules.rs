//! The policy enums of the ops the profile table configures (Range, Slice, strings). They live
//! with the table, not with the ops, so the table depends on no op and every op depends on it.

/// How ONNX Range counts its elements (profile table row `range.count`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RangeCount {
    /// `max(ceil((limit - start) / delta), 0)` on the exact values.
    Exact,
    /// numpy's `arange` length (see the module docs).
    Numpy,
    /// `ceil((f64(limit) - f64(start)) / f64(delta))`, each operand converted to float64 first.
    DoubleOperands,
}

/// How ONNX Range computes its values (row `range.values`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RangeValues {
    /// `start + i*delta` exact, rounded once to T.
    Exact,
    /// numpy's `arange` fill (see the module docs), then rounded to T.
    Numpy,
    /// `y = start; repeat { emit y; y = y + delta }` in T.
    RepeatedAddition,
}

/// How OpenVINO's Range (versions 1 and 4) behaves (row `range.openvino`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpenVinoRange {
    /// The Range-4 text, computed exactly and rounded once.
    Text,
    /// OpenVINO 2026.4's core reference (constant folding, the template plugin).
    CoreReference,
}

/// What happens when `axes` names an axis twice (row `slice.repeated_axes`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RepeatedAxes {
    /// An error (Slice-13 calls it undefined; shape inference and onnxruntime reject it).
    Error,
    /// The later entry replaces the earlier one (numpy basic slicing in the onnx reference).
    LastWins,
}

/// How numbers are written (row `strings.number_style`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NumberStyle {
    /// The `spec` profile: the shortest digits that round-trip in the source type (nearest-even,
    /// as if the exponent range were unbounded above), the closest to the exact value among
    /// those, an exact tie going to the even last digit. Positional iff `x == 0` or
    /// `1e-4 <= |x| < 10^P` (P = 16 for float64, 6 for float32, 3 for every narrower float),
    /// with a fractional part always (`3.0`, `-0.0`); otherwise `d.ddde±XX` with at least two
    /// exponent digits. `NaN`, `INF`, `-INF` (the spec's literals); bool `True`/`False`;
    /// integers in decimal.
    Spec,
    /// numpy's `astype(str)` (the onnx reference): the digits and layout of [`NumberStyle::Spec`],
    /// but `nan`, `inf`, `-inf`.
    Numpy,
    /// onnxruntime: C's `%.8g` of the value as a double; `NaN`, `INF`, `-INF`; bool `1`/`0`;
    /// integers in decimal.
    PrintfG8,
}

/// How strings are read (row `strings.grammar`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StringGrammar {
    /// The `spec` profile. Floats: ASCII whitespace trimmed, optional sign, decimal or scientific
    /// notation (`1e-5`, `1E8`, `.5`, `5.`), or `inf`, `infinity`, `nan` in any case; anything
    /// else is an error. The exact decimal value is rounded once to the target. Integers: the same
    /// grammar without `inf`/`nan`, truncated toward zero, an error outside the target's range.
    /// Bool: `true`/`false` in any case, or a number (nonzero and NaN are true).
    Spec,
    /// The onnx reference: Python's `float()` (parsed to float64, then narrowed) and `int()`
    /// grammars (underscores between digits, Unicode whitespace and decimal digits); an integer
    /// outside the target's range is an error; bool is "non-empty".
    Python,
    /// onnxruntime: `std::stod` (prefix parse, trailing garbage ignored, hex floats, `nan(...)`,
    /// `ERANGE` is an error) then float32 then the target; `std::stoll`/`std::stoull` then the
    /// low bits for integers; `std::stod` then `roundf` then the low bits for int4/uint4/int2/
    /// uint2; `std::stoull(s) != 0` for bool.
    Strtod,
}
