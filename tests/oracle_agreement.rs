//! The core against the independent oracle (`tests/support/oracle.rs`, exact big-integer
//! arithmetic written from the `spec` rules of tables/profiles.md, sharing no code with `src/`).

#[path = "support/harness.rs"]
mod harness;
#[path = "support/oracle.rs"]
mod oracle;

use harness::option_sets;
use lowbit::strings::value_to_exact_decimal;
use lowbit::DType;
use lowbit::{convert_code, decode_element, CastOptions, Element};
use oracle::{OFormat, OMode, OValue};
use rayon::prelude::*;
use std::path::Path;

fn oformat(d: DType) -> OFormat {
    harness::oformat(d).unwrap_or_else(|| panic!("no oracle format for {d}"))
}

/// The oracle's `spec` answer; NaN payloads between IEEE formats are not the oracle's business.
fn oracle_cast(from: DType, to: DType, code: u64, saturate: bool, mode: OMode) -> u64 {
    harness::oracle_cast(from, to, code, &CastOptions::saturating(saturate), mode).expect("the oracle has a say")
}

fn check_source_patterns(from: DType, patterns: &[u64]) -> usize {
    DType::NARROW
        .par_iter()
        .map(|&to| {
            let mut checked = 0;
            for (opts, omode) in option_sets(to) {
                for &code in patterns {
                    let got = convert_code(from, to, code, &opts).unwrap();
                    let v = match from {
                        DType::Float16 => oracle::value_from_f16_bits(code as u16),
                        DType::Bfloat16 => oracle::value_from_bf16_bits(code as u16),
                        DType::Float => oracle::value_from_f32_bits(code as u32),
                        DType::Double => oracle::value_from_f64_bits(code),
                        _ => unreachable!(),
                    };
                    let want = oracle::encode(oformat(to), &v, opts.saturate, omode);
                    assert_eq!(
                        got, want,
                        "{from} {code:#x} -> {to} saturate={} round_mode={:?}: lowbit {got:#x}, oracle {want:#x}",
                        opts.saturate, opts.round_mode
                    );
                    checked += 1;
                }
            }
            checked
        })
        .sum()
}

#[test]
fn every_narrow_code_decodes_exactly() {
    for d in DType::NARROW {
        for code in 0..=d.code_mask() {
            let ov = oracle::decode(oformat(d), code);
            let ours = match decode_element(d, code).unwrap() {
                Element::Float(v) => value_to_exact_decimal(&v),
                Element::Int(i) => i.to_string(),
                Element::Bool(_) => unreachable!(),
            };
            assert_eq!(ours, oracle::exact_decimal(&ov), "{d} code {code:#x}");
            for wide in [DType::Float, DType::Float16, DType::Bfloat16, DType::Double] {
                let got = convert_code(d, wide, code, &CastOptions::default()).unwrap();
                let want = oracle_cast(d, wide, code, false, OMode::NearestEven);
                assert_eq!(got, want, "{d} code {code:#x} -> {wide}");
            }
        }
    }
}

#[test]
fn every_float16_and_bfloat16_pattern_into_every_narrow_format() {
    let all: Vec<u64> = (0..=u64::from(u16::MAX)).collect();
    assert_eq!(check_source_patterns(DType::Float16, &all), 65536 * 32);
    assert_eq!(check_source_patterns(DType::Bfloat16, &all), 65536 * 32);
}

/// Low 16 bits 0x0000, 0x7FFF, 0x8000, 0x8001: every rounding midpoint of every format of 16 bits
/// or fewer (their ulps are multiples of 2^16 float32 ulps), and one step either side of it.
#[test]
fn float32_midpoints_into_every_narrow_format() {
    let patterns: Vec<u64> =
        (0..=0xFFFFu64).flat_map(|high| [0x0000, 0x7FFF, 0x8000, 0x8001].map(|low| high << 16 | low)).collect();
    assert_eq!(check_source_patterns(DType::Float, &patterns), 4 * 65536 * 32);
}

/// float64 inputs: the double-rounding witnesses of research §5, values one float64 ulp either side
/// of every narrow-format midpoint (where rounding through float32 goes wrong), and specials.
#[test]
fn float64_inputs_are_rounded_once() {
    let mut values: Vec<f64> = vec![
        1.0625 + 2f64.powi(-30),
        464.00000001,
        0.25 + 2f64.powi(-40),
        1e300,
        -1e300,
        5e-324,
        -5e-324,
        0.0,
        -0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        -f64::NAN,
        f64::MAX,
        2f64.powi(-127),
        2f64.powi(-128) * 1.5,
        2f64.powi(127) * 1.5,
    ];
    // Midpoints between neighbouring float16 values cover every narrow format's midpoints too.
    for h in 0..0x7BFFu16 {
        let lo = half::f16::from_bits(h).to_f64();
        let hi = half::f16::from_bits(h + 1).to_f64();
        let mid = (lo + hi) / 2.0; // exact: both are float16 values, far inside float64's range
        for x in [mid, f64::from_bits(mid.to_bits() + 1), f64::from_bits(mid.to_bits() - 1)] {
            values.push(x);
            values.push(-x);
        }
    }
    let patterns: Vec<u64> = values.iter().map(|x| x.to_bits()).collect();
    check_source_patterns(DType::Double, &patterns);
    // And into the IEEE formats (NaN payload rules are not the oracle's business: skip NaN).
    for &bits in patterns.iter().filter(|b| !f64::from_bits(**b).is_nan()) {
        for to in [DType::Float, DType::Float16, DType::Bfloat16] {
            let got = convert_code(DType::Double, to, bits, &CastOptions::default()).unwrap();
            let want = oracle::encode(oformat(to), &oracle::value_from_f64_bits(bits), false, OMode::NearestEven);
            assert_eq!(got, want, "f64 {bits:016x} -> {to}");
        }
    }
}

/// Every integer dtype's extreme values into every narrow float, through the oracle's exact integers.
#[test]
fn integers_into_narrow_formats() {
    let sources: [(DType, &[i128]); 4] = [
        (DType::Int32, &[0, 1, -1, 3, 7, 255, 448, 449, 464, 465, 480, 57344, 61440, 16842753, i32::MIN as i128]),
        (DType::Int64, &[i64::MAX as i128, i64::MIN as i128, (1 << 40) + 3, -((1 << 40) + 3)]),
        (DType::Uint64, &[u64::MAX as i128, 1 << 63, (1 << 63) + (1 << 39)]),
        (DType::Int16, &[i16::MIN as i128, i16::MAX as i128, -200, 200]),
    ];
    for (from, values) in sources {
        for &i in values {
            let code = (i as u64) & from.code_mask();
            for to in DType::NARROW.into_iter().chain([DType::Float16, DType::Bfloat16, DType::Float]) {
                for saturate in [true, false] {
                    let got = convert_code(from, to, code, &CastOptions::saturating(saturate)).unwrap();
                    // `saturate` only applies to float8 targets (profile field `fixed_saturate`); E8M0's
                    // default round_mode is `up`.
                    let oracle_saturate = saturate && to.bits() == Some(8);
                    let mode = if to == DType::Float8E8M0 { OMode::Up } else { OMode::NearestEven };
                    let want =
                        oracle::encode_from_int_source(oformat(to), &OValue::from_i128(i), oracle_saturate, mode);
                    assert_eq!(got, want, "{from} {i} -> {to} saturate={saturate}");
                }
            }
        }
    }
}

fn parse_hex(s: &str) -> u64 {
    u64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap_or_else(|_| panic!("bad hex {s:?}"))
}

fn tables_dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tables"))
}

/// The committed `tables/<dtype>.csv` files, row by row, against the oracle.
#[test]
fn committed_code_tables_match_the_oracle() {
    for d in DType::NARROW {
        let text = std::fs::read_to_string(tables_dir().join(format!("{}.csv", d.file_name()))).unwrap();
        let mut rows = 0;
        for (line, code) in text.lines().skip(1).zip(0..) {
            let cols: Vec<&str> = line.split(',').collect();
            assert_eq!(parse_hex(cols[0]), code, "{d}: row order");
            let ov = oracle::decode(oformat(d), code);
            assert_eq!(cols[2], oracle::exact_decimal(&ov), "{d} {code:#x} value");
            for (col, wide) in [(3, DType::Float), (4, DType::Float16), (5, DType::Bfloat16)] {
                let want = oracle_cast(d, wide, code, false, OMode::NearestEven);
                assert_eq!(parse_hex(cols[col]), want, "{d} {code:#x} as {wide}");
            }
            rows += 1;
        }
        assert_eq!(rows, d.code_mask() + 1, "{d}: one row per code");
    }
}

/// Every entry of the committed `tables/cast/*.csv` files against the oracle.
#[test]
fn committed_cast_tables_match_the_oracle() {
    let pairs: Vec<(DType, DType)> =
        DType::NARROW.iter().flat_map(|&f| DType::NARROW.iter().map(move |&t| (f, t))).collect();
    let entries: usize = pairs
        .par_iter()
        .map(|&(from, to)| {
            let path = tables_dir().join("cast").join(format!("{}-{}.csv", from.file_name(), to.file_name()));
            let text = std::fs::read_to_string(&path).unwrap();
            let sets = option_sets(to);
            let mut n = 0;
            for (line, code) in text.lines().skip(1).zip(0..) {
                let cols: Vec<u64> = line.split(',').map(parse_hex).collect();
                assert_eq!(cols[0], code);
                assert_eq!(cols.len(), sets.len() + 1);
                for (col, (opts, omode)) in cols[1..].iter().zip(&sets) {
                    let want = if from == to {
                        code // an identity Cast is a copy
                    } else {
                        oracle_cast(from, to, code, opts.saturate, *omode)
                    };
                    assert_eq!(*col, want, "{} row {code:#x} saturate={} {:?}", path.display(), opts.saturate, omode);
                    n += 1;
                }
            }
            assert_eq!(n as u64, (from.code_mask() + 1) * sets.len() as u64);
            n
        })
        .sum();
    // 1976 codes of the 14 formats, each into 13 targets with 2 attribute sets and into E8M0 with 6.
    assert_eq!(entries, 1976 * (13 * 2 + 6));
}
