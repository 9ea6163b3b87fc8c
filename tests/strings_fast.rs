//! The fast string paths ([`TextWriter`], [`TextReader`], and `cast` through them) against the
//! exact code they stand in for ([`format_code`], [`parse_to_code`]), which is the definition:
//! every expected value here comes from the exact code, never from the fast path.
//!
//! - number -> text: every code of every source of 16 bits or fewer in every style; float32 over
//!   every top-16-bit pattern with five low halves; float64 random patterns and edge cases
//!   (subnormals, extremes, powers of two and ten, `%.8g` ties and their neighbours); 32- and
//!   64-bit integers.
//! - text -> number: the texts written above, random decimals of 1 to 30 digits with exponents
//!   near each format's overflow and underflow, exact midpoints between adjacent floats written
//!   out in full (and nudged), and texts the fast path must hand over (hex, whitespace, `_`,
//!   `inf`, `nan`, huge exponents, non-ASCII digits), for every grammar, float and integer targets
//!   and bool, with the options that change the answer (saturate, round_mode, profile).
//!
//! The ignored `sweep_*` tests compare the fast float32 writer with a second, independent method
//! (Rust's own formatting) over all 2^32 inputs, and settle every disagreement with the exact code.

#[path = "support/progress.rs"]
mod progress;
use lowbit::cast;
use lowbit::profile::NumberStyle;
use lowbit::profile::StringGrammar;
use lowbit::strings::{format_code, parse_to_code, TextReader, TextWriter};
use lowbit::Profile;
use lowbit::{CastOptions, DType, RoundMode, Tensor};
use rayon::prelude::*;

const STYLES: [NumberStyle; 3] = [NumberStyle::Spec, NumberStyle::Numpy, NumberStyle::PrintfG8];
const GRAMMARS: [StringGrammar; 3] = [StringGrammar::Spec, StringGrammar::Python, StringGrammar::Strtod];

#[path = "support/rng.rs"]
mod rng;
use rng::Rng;

/// The fast writer's texts for `codes` against `format_code` of each, in parallel chunks.
fn check_writer(dtype: DType, style: NumberStyle, codes: &[u64]) {
    codes.par_chunks(4096).for_each(|chunk| {
        let tensor = Tensor::from_codes(dtype, vec![chunk.len()], chunk).unwrap();
        let raw = tensor.raw().unwrap();
        let texts = TextWriter::new(dtype, style, chunk.len()).unwrap().texts(raw, chunk.len()).unwrap();
        for (&code, text) in chunk.iter().zip(&texts) {
            let expected = format_code(dtype, code, style).unwrap();
            assert_eq!(text, &expected, "{dtype} code {code:#x} in {style:?}");
        }
    });
}

fn narrow_sources() -> Vec<DType> {
    DType::ALL
        .into_iter()
        .filter(|d| d.bits().is_some_and(|b| b <= 16) && d.kind() != lowbit::Kind::Complex)
        .filter(|d| !matches!(d, DType::Undefined | DType::String))
        .collect()
}

// ---- number -> text -----------------------------------------------------------------------------

#[test]
fn every_code_of_every_source_of_16_bits_or_fewer() {
    let sources = narrow_sources();
    assert_eq!(sources.len(), 19, "{sources:?}");
    for dtype in sources {
        let codes: Vec<u64> = (0..=dtype.code_mask()).collect();
        for style in STYLES {
            check_writer(dtype, style, &codes);
        }
    }
}

/// Every top-16-bit pattern with these low halves (the last one random per pattern).
fn float32_sample() -> Vec<u64> {
    let mut rng = Rng(0x51F7_2024);
    (0..=0xFFFFu64)
        .flat_map(|top| {
            let random = rng.next() & 0xFFFF;
            [0, 1, 0x8000, 0xFFFF, random].map(|low| top << 16 | low)
        })
        .collect()
}

#[test]
fn float32_every_top_half_with_five_low_halves() {
    let codes = float32_sample();
    for style in STYLES {
        check_writer(DType::Float, style, &codes);
    }
}

/// Doubles that stress the writers: extremes, subnormals, powers of two and ten, the `%.8g`
/// ties (exact nine-digit decimals ending in 5) and their neighbours.
fn float64_edges() -> Vec<f64> {
    // The extremes, the largest subnormal and the float64 just below MAX.
    let mut v = vec![
        f64::MAX,
        f64::MIN_POSITIVE,
        5e-324,
        1e-323,
        f64::from_bits(0x000F_FFFF_FFFF_FFFF),
        f64::from_bits(0x7FEF_FFFF_FFFF_FFFE),
    ];
    v.extend((0..64).map(|i| f64::from_bits(1u64 << i.min(51))));
    v.extend((-1074..=1023).map(|e| 2f64.powi(e)));
    v.extend((-323..=308).map(|e| format!("1e{e}").parse::<f64>().unwrap()));
    v.extend((-30..=30).map(|e| format!("9.9999999e{e}").parse::<f64>().unwrap()));
    v.extend((-30..=30).map(|e| format!("9.99999995e{e}").parse::<f64>().unwrap()));
    // Exact ties at the ninth digit: integers and small dyadic fractions.
    v.extend([123456785.0, 999999995.0, 100000005.0, 1234567.25, 1234567.75, 12345678.5, 0.5, 2.5, 4.0625e-5]);
    v.extend((0..200).map(|i| f64::from(100_000_005 + 10 * i)));
    v.extend((0..200).map(|i| f64::from(4_000_001 + 2 * i) / 4.0)); // x.25 and x.75
    v.extend((0..200).map(|i| f64::from(20_000_001 + 2 * i) / 2.0)); // x.5 with eight digits before
                                                                     // The neighbours of positive finite values, by their bit patterns.
    let neighbours: Vec<f64> = v
        .iter()
        .flat_map(|&x| [f64::from_bits(x.to_bits() + 1), f64::from_bits(x.to_bits().saturating_sub(1))])
        .collect();
    v.extend(neighbours);
    v.retain(|x| x.is_finite());
    let negatives: Vec<f64> = v.iter().map(|x| -x).collect();
    v.extend(negatives);
    v.extend([0.0, -0.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, -f64::NAN, f64::from_bits(0x7FF0_0000_0000_0001)]);
    v
}

#[test]
fn float64_random_patterns_and_edges() {
    let mut rng = Rng(0xD0B1E);
    let mut codes: Vec<u64> = (0..60_000).map(|_| rng.next()).collect();
    // Values people write: a random double of moderate size.
    codes.extend((0..20_000).map(|_| ((rng.next() >> 11) as f64 / (1u64 << 53) as f64 * 2e6 - 1e6).to_bits()));
    codes.extend(float64_edges().into_iter().map(f64::to_bits));
    for style in STYLES {
        check_writer(DType::Double, style, &codes);
    }
}

#[test]
fn wide_integers() {
    let mut rng = Rng(77);
    for dtype in [DType::Int32, DType::Int64, DType::Uint32, DType::Uint64] {
        let mask = dtype.code_mask();
        let mut codes: Vec<u64> = (0..20_000).map(|_| rng.next() & mask).collect();
        codes.extend([0, 1, mask, mask >> 1, (mask >> 1) + 1, 9, 10, 99, 100]);
        for style in STYLES {
            check_writer(dtype, style, &codes);
        }
    }
}

#[test]
fn cast_to_string_uses_the_profile_style() {
    let codes: Vec<u64> = float32_sample().into_iter().step_by(7).collect();
    let input = Tensor::from_codes(DType::Float, vec![codes.len()], &codes).unwrap();
    for (profile, style) in [
        (Profile::Spec, NumberStyle::Spec),
        (Profile::OnnxReference, NumberStyle::Numpy),
        (Profile::OnnxRuntime, NumberStyle::PrintfG8),
        (Profile::OpenVino, NumberStyle::Spec),
    ] {
        let out = cast(&input, DType::String, &CastOptions::with_profile(profile)).unwrap();
        for (&code, text) in codes.iter().zip(out.strings().unwrap()) {
            assert_eq!(text, &format_code(DType::Float, code, style).unwrap(), "{profile:?} {code:#x}");
        }
    }
    // A small float16 cast (no table yet, or a table: the same texts either way).
    let small = Tensor::from_codes(DType::Float16, vec![3], &[0x3C00, 0x7E00, 0x8001]).unwrap();
    let out = cast(&small, DType::String, &CastOptions::default()).unwrap();
    assert_eq!(out.strings().unwrap(), ["1.0", "NaN", "-6e-08"]);
}

#[test]
fn bad_input_is_an_error() {
    let writer = TextWriter::new(DType::Float, NumberStyle::Spec, 3).unwrap();
    assert!(writer.texts(&[0; 11], 3).is_err());
    assert_eq!(writer.texts(&[0; 12], 3).unwrap(), ["0.0", "0.0", "0.0"]);
    assert!(TextWriter::new(DType::Int4, NumberStyle::Spec, 3).unwrap().texts(&[0; 1], 3).is_err());
    assert!(TextWriter::new(DType::Complex128, NumberStyle::Spec, 1).unwrap().texts(&[0; 16], 1).is_err());
    assert!(TextWriter::new(DType::String, NumberStyle::Spec, 1).unwrap().texts(&[], 1).is_err());
    let reader = TextReader::new(DType::Complex64, StringGrammar::Spec, &CastOptions::default());
    assert!(reader.code("1").is_err());
}

// ---- text -> number -----------------------------------------------------------------------------

/// The targets and options a string is read into: every float format (E8M0 with each round
/// mode), integers of several widths, bool; saturate both ways where it matters.
fn parse_targets() -> Vec<(DType, CastOptions)> {
    let mut targets = Vec::new();
    for profile in Profile::ALL {
        let base = CastOptions::with_profile(profile);
        for dtype in [
            DType::Float,
            DType::Double,
            DType::Float16,
            DType::Bfloat16,
            DType::Float8E4M3FN,
            DType::Float8E5M2FNUZ,
            DType::Float4E2M1,
            DType::Float6E3M2,
            DType::Int8,
            DType::Uint16,
            DType::Int32,
            DType::Int64,
            DType::Uint64,
            DType::Int4,
            DType::Uint2,
            DType::Bool,
        ] {
            targets.push((dtype, base));
        }
        targets.push((DType::Float8E4M3FN, CastOptions { saturate: false, ..base }));
        for round_mode in [RoundMode::Up, RoundMode::Down, RoundMode::Nearest] {
            targets.push((DType::Float8E8M0, CastOptions { round_mode, ..base }));
            targets.push((DType::Float8E8M0, CastOptions { round_mode, saturate: false, ..base }));
        }
    }
    targets
}

/// The fast reader against `parse_to_code` (value or error) for every text, grammar and target.
fn check_reader(texts: &[String], targets: &[(DType, CastOptions)]) {
    targets.par_iter().for_each(|(dtype, opts)| {
        for grammar in GRAMMARS {
            let reader = TextReader::new(*dtype, grammar, opts);
            for text in texts {
                let expected = parse_to_code(text, *dtype, grammar, opts);
                assert_eq!(reader.code(text), expected, "{text:?} as {dtype} ({grammar:?}, {opts:?})");
            }
        }
    });
}

/// Texts the writers produce: float32 and float64 in every style.
fn written_texts() -> Vec<String> {
    let mut texts = Vec::new();
    let codes: Vec<u64> = float32_sample().into_iter().step_by(251).collect();
    for style in STYLES {
        texts.extend(codes.iter().map(|&c| format_code(DType::Float, c, style).unwrap()));
    }
    let mut rng = Rng(5);
    for style in STYLES {
        texts.extend((0..300).map(|_| format_code(DType::Double, rng.next(), style).unwrap()));
    }
    texts
}

#[test]
fn written_texts_read_back() {
    let texts = written_texts();
    assert!(texts.len() > 4_000);
    check_reader(&texts, &parse_targets());
}

/// A random decimal of 1 to 30 significant digits, point anywhere, exponent near `center`.
fn random_decimal(rng: &mut Rng, center: i64) -> String {
    let ndigits = 1 + rng.below(30) as usize;
    let mut digits: String = (0..ndigits).map(|_| char::from(b'0' + rng.below(10) as u8)).collect();
    if rng.below(4) == 0 {
        digits.insert(0, char::from(b'1' + rng.below(9) as u8));
    }
    let point = rng.below(digits.len() as u64 + 1) as usize;
    let mut text = String::new();
    match rng.below(4) {
        0 => text.push('-'),
        1 if rng.below(2) == 0 => text.push('+'),
        _ => {}
    }
    text.push_str(&digits[..point]);
    if point < digits.len() || rng.below(2) == 0 {
        text.push('.');
    }
    text.push_str(&digits[point..]);
    // The value is about 10^(point + exponent - 1).
    let exponent = center + rng.below(9) as i64 - 4 - point as i64 + 1;
    match rng.below(5) {
        0 => {}
        1 => text.push_str(&format!("e{exponent}")),
        2 => text.push_str(&format!("E{exponent:+}")),
        _ => text.push_str(&format!("e{exponent}")),
    }
    text
}

#[test]
fn random_decimals_near_every_format_edge() {
    // Decimal exponents of the overflow and underflow edges: float64, float32, float16,
    // bfloat16 (as float32), E4M3FN (448, 2^-9), E5M2 (57344, 2^-16), E2M1, E8M0 (2^±127), and
    // everyday magnitudes.
    let centers = [308, -308, -323, 38, -38, -45, 4, -5, -8, 2, -3, -5, 0, 1, -1, 5, 18, 19, 20, -20, 22, 23, -22];
    let mut rng = Rng(0xDEC1);
    let texts: Vec<String> =
        centers.iter().flat_map(|&c| (0..300).map(|_| random_decimal(&mut rng, c)).collect::<Vec<_>>()).collect();
    check_reader(&texts, &parse_targets());
}

/// The exact decimal expansion of `significand * 2^exponent` (a dyadic rational), in full.
fn exact_decimal(significand: u64, exponent: i32) -> String {
    // Work in base 10^9 limbs, least significant first: simple and exact.
    let mut limbs: Vec<u64> = vec![significand % 1_000_000_000, significand / 1_000_000_000];
    let mut scale = 0i32; // the value is limbs * 10^scale
    let mul = |limbs: &mut Vec<u64>, m: u64| {
        let mut carry = 0u64;
        for limb in limbs.iter_mut() {
            let v = *limb * m + carry;
            *limb = v % 1_000_000_000;
            carry = v / 1_000_000_000;
        }
        while carry > 0 {
            limbs.push(carry % 1_000_000_000);
            carry /= 1_000_000_000;
        }
    };
    if exponent >= 0 {
        for _ in 0..exponent {
            mul(&mut limbs, 2);
        }
    } else {
        // x / 2^k = x * 5^k / 10^k
        for _ in 0..-exponent {
            mul(&mut limbs, 5);
        }
        scale = exponent;
    }
    while limbs.len() > 1 && limbs[limbs.len() - 1] == 0 {
        limbs.pop();
    }
    let mut digits = limbs.last().unwrap().to_string();
    for limb in limbs.iter().rev().skip(1) {
        digits.push_str(&format!("{limb:09}"));
    }
    if scale == 0 {
        return digits;
    }
    let point = digits.len() as i32 + scale;
    if point <= 0 {
        format!("0.{}{digits}", "0".repeat((-point) as usize))
    } else {
        format!("{}.{}", &digits[..point as usize], &digits[point as usize..])
    }
}

#[test]
fn exact_decimal_expansions() {
    assert_eq!(exact_decimal(1, -1), "0.5");
    assert_eq!(exact_decimal(3, -3), "0.375");
    assert_eq!(exact_decimal(5, 3), "40");
    assert_eq!(exact_decimal(1, -10), "0.0009765625");
    assert_eq!(exact_decimal(1_234_567_891_234, 0), "1234567891234");
}

/// Midpoints between adjacent floats of several formats, exactly (and a hair above and below,
/// by a digit far down), from the decoded values: `(2k + 1) * 2^(e - 1)` for consecutive codes.
fn midpoint_texts() -> Vec<String> {
    let mut texts = Vec::new();
    let mut push_around = |text: String| {
        let above = if text.contains('.') { format!("{text}000000001") } else { format!("{text}.000000001") };
        texts.push(above);
        if let Some(stripped) = text.strip_suffix('5') {
            // One unit below in the last place of the midpoint's own digits: "..5" -> "..49999".
            texts.push(format!("{stripped}49999999999"));
        }
        texts.push(text);
    };
    // float16: every midpoint (mantissa 11 bits, unbiased exponents -24..15).
    for code in (0u16..0x7BFF).step_by(7) {
        let a = half_value(code);
        let b = half_value(code + 1);
        let (sig, exp) = a;
        let (sig_b, exp_b) = b;
        let (lo, hi, e) = common(sig, exp, sig_b, exp_b);
        push_around(exact_decimal(lo + hi, e - 1));
    }
    // float32 and float64: a sample of midpoints (the float64 ones are long, for the exact path).
    let mut rng = Rng(0x3D);
    for _ in 0..1000 {
        let bits = (rng.next() as u32) & 0x7F7F_FFFF;
        let (sig, exp) = f32_parts(bits);
        push_around(exact_decimal(2 * sig + 1, exp - 1));
    }
    for _ in 0..40 {
        let bits = rng.next() & 0x7FEF_FFFF_FFFF_FFFF;
        let fraction = bits & ((1 << 52) - 1);
        let field = (bits >> 52) as i32;
        let (sig, exp) = if field == 0 { (fraction, -1074) } else { (fraction | 1 << 52, field - 1075) };
        push_around(exact_decimal(2 * sig + 1, exp - 1));
    }
    // The largest finite floats' upper midpoints (the overflow thresholds).
    push_around(exact_decimal(2 * 0xFF_FFFF + 1, 104 - 1));
    push_around(exact_decimal(2 * 0x7FF + 1, 5 - 1));
    texts
}

/// A float16 code as (significand, exponent).
fn half_value(code: u16) -> (u64, i32) {
    let field = i32::from(code >> 10);
    let fraction = u64::from(code & 0x3FF);
    if field == 0 {
        (fraction, -24)
    } else {
        (fraction | 0x400, field - 25)
    }
}

fn f32_parts(bits: u32) -> (u64, i32) {
    let field = ((bits >> 23) & 0xFF) as i32;
    let fraction = u64::from(bits & 0x7F_FFFF);
    if field == 0 {
        (fraction, -149)
    } else {
        (fraction | 0x80_0000, field - 150)
    }
}

/// Two dyadic values on a common exponent: (a, b, e) with values a * 2^e and b * 2^e.
fn common(a: u64, ea: i32, b: u64, eb: i32) -> (u64, u64, i32) {
    let e = ea.min(eb);
    (a << (ea - e), b << (eb - e), e)
}

#[test]
fn midpoints_written_out_in_full() {
    let texts = midpoint_texts();
    let targets: Vec<(DType, CastOptions)> = parse_targets()
        .into_iter()
        .filter(|(d, _)| {
            matches!(
                d,
                DType::Float
                    | DType::Double
                    | DType::Float16
                    | DType::Bfloat16
                    | DType::Float8E4M3FN
                    | DType::Float8E8M0
            )
        })
        .collect();
    check_reader(&texts, &targets);
}

#[test]
fn texts_the_fast_path_hands_over() {
    let mut texts: Vec<String> = [
        "0x1p3",
        "0X1.8P1",
        "-0x.8p-2",
        "0x",
        " 1",
        "1 ",
        "\t2.5\n",
        "1_000",
        "1__0",
        "_1",
        "inf",
        "-Infinity",
        "INF",
        "nan",
        "-NaN",
        "nan(123)",
        "nan(0x7)",
        "nan(",
        "1e999999",
        "-1e-999999",
        "1e400",
        "1e-400",
        "2.2250738585072012e-308",
        "2.2250738585072014e-308",
        "4.9e-324",
        "1e-320",
        "١٢",
        "٣.٥",
        "+",
        "-",
        "",
        ".",
        "e5",
        "1e",
        "1.5e+",
        "1.5e-",
        "1,5",
        "1.2.3",
        "1e5.5",
        "12abc",
        "-3.7",
        "++1",
        "-+1",
        "0001",
        "000.000",
        "-0",
        "-0.0",
        "+.5",
        "5.",
        "true",
        "TRUE",
        "False",
        "yes",
        "0",
        "1",
        "2",
        "\0",
        "1\0",
        "  ",
        "99999999999999999999",
        "18446744073709551615",
        "18446744073709551616",
        "-9223372036854775808",
        "9223372036854775807",
        "9223372036854775808",
        "-1",
        "255",
        "256",
        "-129",
        "127",
        "1e19",
        "1.9e19",
        "65504",
        "65520",
        "65519.99",
        "3.4028235e38",
        "3.4028236e38",
        "340282356779733661637539395458142568448",
        "1e-45",
        "7e-46",
        "1.4e-45",
        "0.5",
        "1.5",
        "2.5",
        "-2.5",
        "7.5",
        "8",
        "448",
        "464",
        "480",
        "57344",
        "1e-5",
        "1.5258789e-5",
    ]
    .map(str::to_string)
    .to_vec();
    texts.push("1".repeat(70));
    texts.push(format!("0.{}1", "0".repeat(80)));
    texts.push(format!("{}e-60", "7".repeat(60)));
    texts.push("12345678901234567890123456789".to_string());
    check_reader(&texts, &parse_targets());
}

#[test]
fn integer_texts() {
    let mut rng = Rng(0x1A7);
    let mut texts = Vec::new();
    for _ in 0..1000 {
        let magnitude = rng.next() >> rng.below(64);
        let sign = if rng.below(2) == 0 { "-" } else { "" };
        texts.push(format!("{sign}{magnitude}"));
        texts.push(format!("{sign}{}.{}", magnitude % 1000, rng.below(1000)));
        texts.push(format!("{sign}{}e{}", magnitude % 100, rng.below(20)));
    }
    let targets: Vec<(DType, CastOptions)> =
        parse_targets().into_iter().filter(|(d, _)| !matches!(d.kind(), lowbit::Kind::Float(_))).collect();
    check_reader(&texts, &targets);
}

/// The options `cast` reads STRING -> `to` with: where the profile hands the pair to `spec`,
/// spec's rules for the attributes (its grammar stays the profile's).
fn cast_options(opts: &CastOptions, to: DType) -> CastOptions {
    if opts.profile.policy().falls_back(DType::String, to) {
        CastOptions { profile: Profile::Spec, ..*opts }
    } else {
        *opts
    }
}

/// `cast` from STRING against `parse_to_code` per element: the same codes, or the error of the
/// first element that has one, with its index.
fn check_cast_from_strings(texts: &[String], to: DType, opts: &CastOptions) {
    let input = Tensor::from_strings(vec![texts.len()], texts.to_vec()).unwrap();
    let grammar = opts.profile.policy().for_cast(DType::String, to).strings.grammar;
    let opts = &cast_options(opts, to);
    let expected: Result<Vec<u64>, (usize, lowbit::Error)> =
        texts.iter().enumerate().map(|(i, t)| parse_to_code(t, to, grammar, opts).map_err(|e| (i, e))).collect();
    match (cast(&input, to, opts), expected) {
        (Ok(out), Ok(codes)) => {
            let got = out.codes().unwrap();
            if let Some(i) = (0..codes.len()).find(|&i| got[i] != codes[i]) {
                panic!(
                    "{:?} -> {to}: element {i} {:?} read as {:#x}, expected {:#x}",
                    opts.profile, texts[i], got[i], codes[i]
                );
            }
            assert_eq!(got.len(), codes.len());
        }
        (Err(err), Err((i, e))) => assert_eq!(err.to_string(), format!("Cast: element {i}: {e}")),
        (got, expected) => panic!("{:?} -> {to}: {got:?}, expected {expected:?}", opts.profile),
    }
}

#[test]
fn cast_from_string_matches_element_by_element() {
    let texts = written_texts();
    let numeric: Vec<String> = texts.iter().filter(|t| !t.to_ascii_lowercase().contains("n")).cloned().collect();
    for profile in Profile::ALL {
        let opts = CastOptions::with_profile(profile);
        for to in
            [DType::Float, DType::Double, DType::Float16, DType::Float8E5M2, DType::Bool, DType::Int4, DType::Int32]
        {
            check_cast_from_strings(&texts, to, &opts);
            check_cast_from_strings(&numeric, to, &opts);
        }
    }
    let bad = Tensor::from_strings(vec![3], vec!["1.5".into(), "2.5".into(), "x".into()]).unwrap();
    let err = cast(&bad, DType::Float, &CastOptions::default()).unwrap_err().to_string();
    assert!(err.contains("element 2"), "{err}");
}

/// Every text form of the tests above (the writers' float32 and float64 texts in every style,
/// random decimals near every format edge, midpoints written out in full, the texts the fast path
/// hands over) and texts that repeat (the spelled-out specials, which the tensor reader remembers),
/// read as one tensor: the tensor reader takes each text from the tensor's one buffer, next to
/// the texts around it, and must read it as `parse_to_code` does.
fn every_text_form() -> Vec<String> {
    let mut texts = written_texts();
    let mut rng = Rng(0xB0F);
    for center in [38, -38, -45, 4, -5, 0, 2, 19, 22, -22, 308, -308] {
        texts.extend((0..150).map(|_| random_decimal(&mut rng, center)));
    }
    texts.extend(midpoint_texts().into_iter().step_by(3));
    let specials = ["NaN", "INF", "-INF", "nan", "-Infinity", "inf", "+inf", "nan(7)", "1e400", "0x1p3", " 1"];
    // Interleaved with ordinary texts, so that every special comes back after others.
    let ordinary: Vec<String> = texts.iter().step_by(5).cloned().collect();
    for (i, text) in ordinary.into_iter().enumerate() {
        texts.push(specials[i % specials.len()].to_string());
        texts.push(text);
    }
    // Short texts last: the last texts of the buffer have nothing after them to read.
    texts.extend(["7", "-1.5", "2e3", ".5"].map(str::to_string));
    texts
}

#[test]
fn cast_from_strings_reads_every_text_form_as_the_exact_code() {
    let texts = every_text_form();
    assert!(texts.len() > 10_000, "{}", texts.len());
    for profile in Profile::ALL {
        let opts = CastOptions::with_profile(profile);
        for to in [
            DType::Float,
            DType::Double,
            DType::Float16,
            DType::Bfloat16,
            DType::Float8E4M3FN,
            DType::Float4E2M1,
            DType::Int8,
            DType::Uint64,
            DType::Int4,
            DType::Bool,
        ] {
            // The texts each reads (compared code by code), then all of them (the first error).
            let grammar = opts.profile.policy().for_cast(DType::String, to).strings.grammar;
            let readable: Vec<String> = texts
                .iter()
                .filter(|t| parse_to_code(t, to, grammar, &cast_options(&opts, to)).is_ok())
                .cloned()
                .collect();
            assert!(readable.len() > 100, "{profile:?} {to}: {} readable", readable.len());
            check_cast_from_strings(&readable, to, &opts);
            check_cast_from_strings(&texts, to, &opts);
        }
    }
}

/// The benchmark's texts (`lowbit bench --from STRING`): shortest float32 texts of values of
/// everyday size, with NaN and the infinities now and then.
#[test]
fn cast_from_strings_reads_shortest_float32_texts_as_the_exact_code() {
    let mut rng = Rng(0x5EED);
    let texts: Vec<String> = (0..200_000)
        .map(|i| {
            let bits = match i % 997 {
                0 => 0x7FC0_0000,
                1 => 0x7F80_0000,
                2 => 0xFF80_0000,
                // Exponent fields 100 to 163: about 2^-27 to 2^36.
                _ => (rng.next() as u32 & 0x807F_FFFF) | ((100 + rng.below(64) as u32) << 23),
            };
            format_code(DType::Float, u64::from(bits), NumberStyle::Spec).unwrap()
        })
        .collect();
    for profile in Profile::ALL {
        check_cast_from_strings(&texts, DType::Float, &CastOptions::with_profile(profile));
    }
}

// ---- sweeps over all 2^32 float32 (ignored: minutes) ----------------------------------------------

/// Buffers the second methods reuse, so that a sweep allocates nothing per element.
#[derive(Default)]
struct Scratch {
    rust: String,
    digits: Vec<u8>,
    out: Vec<u8>,
}

/// Rust's `{e}`-style text of `x` split into its significant digits (into `scratch.digits`) and
/// decimal exponent.
fn rust_digits(scratch: &mut Scratch, x: std::fmt::Arguments<'_>) -> i32 {
    use std::fmt::Write;
    scratch.rust.clear();
    scratch.rust.write_fmt(x).unwrap();
    let (mantissa, exponent) = scratch.rust.split_once('e').unwrap();
    scratch.digits.clear();
    scratch.digits.extend(mantissa.bytes().filter(u8::is_ascii_digit));
    exponent.parse().unwrap()
}

/// `d.ddd` (the point only if there is more than one digit), `e`, sign, two or three digits.
fn push_scientific(out: &mut Vec<u8>, digits: &[u8], exponent: i32) {
    out.push(digits[0]);
    if digits.len() > 1 {
        out.push(b'.');
        out.extend_from_slice(&digits[1..]);
    }
    out.push(b'e');
    out.push(if exponent < 0 { b'-' } else { b'+' });
    let e = exponent.unsigned_abs();
    if e >= 100 {
        out.push(b'0' + (e / 100) as u8);
    }
    out.push(b'0' + (e / 10 % 10) as u8);
    out.push(b'0' + (e % 10) as u8);
}

/// Lays out Rust's shortest `{:e}` of a float32 as the `spec` style does: a second, independent
/// writer (Rust's digits, this file's layout). Rust breaks an exact tie between two shortest
/// candidates upward (1.00390625 -> `1.0039063`) where the style takes the even digit
/// (`1.0039062`): about 0.2% of all float32, each settled by the exact code.
fn spec_text_from_rust(x: f32, scratch: &mut Scratch) {
    let exponent = rust_digits(scratch, format_args!("{:e}", x.abs()));
    let Scratch { digits, out, .. } = scratch;
    out.clear();
    if x.is_sign_negative() {
        out.push(b'-');
    }
    if (1e-4..1e6).contains(&f64::from(x.abs())) {
        if exponent >= 0 {
            let int_len = exponent as usize + 1;
            if digits.len() > int_len {
                out.extend_from_slice(&digits[..int_len]);
                out.push(b'.');
                out.extend_from_slice(&digits[int_len..]);
            } else {
                out.extend_from_slice(digits);
                out.resize(out.len() + int_len - digits.len(), b'0');
                out.extend_from_slice(b".0");
            }
        } else {
            out.extend_from_slice(b"0.");
            out.resize(out.len() + (-exponent - 1) as usize, b'0');
            out.extend_from_slice(digits);
        }
    } else {
        push_scientific(out, digits, exponent);
    }
}

/// `%.8g` of a float32 from Rust's `{:.7e}` of the value as a double (correctly rounded; its
/// treatment of exact ties is not relied on: disagreements go to the exact code).
fn printf_g8_from_rust(x: f32, scratch: &mut Scratch) {
    let exponent = rust_digits(scratch, format_args!("{:.7e}", f64::from(x.abs())));
    let Scratch { digits, out, .. } = scratch;
    while digits.len() > 1 && digits.last() == Some(&b'0') {
        digits.pop();
    }
    out.clear();
    if x.is_sign_negative() {
        out.push(b'-');
    }
    if !(-4..8).contains(&exponent) {
        push_scientific(out, digits, exponent);
    } else if exponent >= 0 {
        let int_len = exponent as usize + 1;
        if digits.len() > int_len {
            out.extend_from_slice(&digits[..int_len]);
            out.push(b'.');
            out.extend_from_slice(&digits[int_len..]);
        } else {
            out.extend_from_slice(digits);
            out.resize(out.len() + int_len - digits.len(), b'0');
        }
    } else {
        out.extend_from_slice(b"0.");
        out.resize(out.len() + (-exponent - 1) as usize, b'0');
        out.extend_from_slice(digits);
    }
}

type SecondMethod = fn(f32, &mut Scratch);

/// The full sweep, or every `LOWBIT_SWEEP_TOP_STEP`-th top half (a quicker partial run).
fn sweep(style: NumberStyle, second: SecondMethod) {
    let step: u32 = std::env::var("LOWBIT_SWEEP_TOP_STEP").ok().and_then(|s| s.parse().ok()).unwrap_or(1).max(1);
    let disagreements = sweep_tops(style, second, (0..=0xFFFF).step_by(step as usize).collect());
    println!("{style:?}, every {step}th top half: {disagreements} disagreements, each settled by the exact code");
}

/// The sweep over the float32 patterns whose top 16 bits are in `tops`; returns the number of
/// disagreements with `second` (each one checked against the exact code).
fn sweep_tops(style: NumberStyle, second: SecondMethod, tops: Vec<u32>) -> usize {
    let progress = progress::Progress::new(format!("{style:?}"), tops.len() as u64);
    let disagreements: usize = tops
        .into_par_iter()
        .map(|top| {
            progress.add(1);
            let raw: Vec<u8> = (0..=0xFFFFu32).flat_map(|low| (top << 16 | low).to_le_bytes()).collect();
            let texts = TextWriter::new(DType::Float, style, 1 << 16).unwrap().texts(&raw, 1 << 16).unwrap();
            let mut settled = 0;
            let mut scratch = Scratch::default();
            for (low, text) in (0..=0xFFFFu32).zip(&texts) {
                let bits = top << 16 | low;
                let x = f32::from_bits(bits);
                if !x.is_finite() || x == 0.0 {
                    continue;
                }
                second(x, &mut scratch);
                if text.as_bytes() != scratch.out {
                    assert_eq!(text, &format_code(DType::Float, u64::from(bits), style).unwrap(), "{bits:#x}");
                    settled += 1;
                }
            }
            settled
        })
        .sum();
    disagreements
}

#[test]
fn sweep_sample_agrees_with_the_second_methods() {
    // A slice of the ignored sweeps, so that the second methods themselves stay honest: they
    // agree with the fast writer nearly everywhere.
    for (style, second) in
        [(NumberStyle::Spec, spec_text_from_rust as SecondMethod), (NumberStyle::PrintfG8, printf_g8_from_rust)]
    {
        let disagreements = sweep_tops(style, second, (0x3F80..=0x3F83).collect());
        assert!(disagreements < 100, "{style:?}: {disagreements}");
    }
}

#[test]
#[ignore = "all 2^32 float32: several minutes on two cores"]
fn sweep_all_float32_spec_style_against_rust_shortest() {
    sweep(NumberStyle::Spec, spec_text_from_rust);
}

#[test]
#[ignore = "all 2^32 float32: several minutes on two cores"]
fn sweep_all_float32_printf_g8_against_rust_exact_digits() {
    sweep(NumberStyle::PrintfG8, printf_g8_from_rust);
}
