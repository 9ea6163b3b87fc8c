//! STRING tensors in one buffer ([`lowbit::Texts`]): a float tensor cast to STRING and the
//! strings cast back, under every profile, against the exact per-element code (`format_code` for
//! every text, `parse_to_code` of that text for every code read back), which is the definition the
//! fast paths are held to.

use lowbit::cast;
use lowbit::strings::{format_code, parse_to_code};
use lowbit::Profile;
use lowbit::Texts;
use lowbit::{CastOptions, DType, Tensor};

#[path = "support/rng.rs"]
mod rng;
use rng::Rng;

/// Casts `codes` of `dtype` to STRING and back under every profile and compares each text and
/// each code read back with the exact code.
fn round_trip(dtype: DType, codes: &[u64]) {
    let input = Tensor::from_codes(dtype, vec![codes.len()], codes).unwrap();
    for profile in Profile::ALL {
        let opts = CastOptions::with_profile(profile);
        let style = profile.policy().for_cast(dtype, DType::String).strings.number_style;
        let grammar = profile.policy().for_cast(DType::String, dtype).strings.grammar;
        let texts = cast(&input, DType::String, &opts).unwrap();
        let arena = texts.strings().unwrap();
        assert_eq!(arena.len(), codes.len());
        for (i, (&code, text)) in codes.iter().zip(arena).enumerate() {
            let expected = format_code(dtype, code, style).unwrap();
            assert_eq!(text, expected, "{profile:?} {dtype} element {i} code {code:#x}");
        }
        // Some texts do not read back (onnxruntime's strtod refuses subnormal doubles): the whole
        // cast is then the first such element's error, and the others are read back on their own.
        let exact: Vec<_> = arena.iter().map(|text| parse_to_code(text, dtype, grammar, &opts)).collect();
        let whole = cast(&texts, dtype, &opts);
        match exact.iter().position(Result::is_err) {
            Some(first) => {
                let err = whole.unwrap_err().to_string();
                assert!(err.contains(&format!("element {first}:")), "{profile:?} {dtype}: {err}");
            }
            None => assert!(whole.is_ok(), "{profile:?} {dtype}"),
        }
        let readable: Texts = arena.iter().zip(&exact).filter(|(_, e)| e.is_ok()).map(|(t, _)| t).collect();
        let expected: Vec<u64> = exact.into_iter().filter_map(Result::ok).collect();
        let readable = Tensor::from_strings(vec![readable.len()], readable).unwrap();
        let back = cast(&readable, dtype, &opts).unwrap();
        for (i, (text, &code)) in readable.strings().unwrap().iter().zip(&expected).enumerate() {
            assert_eq!(back.code(i), Some(code), "{profile:?} {dtype} text {text:?}");
        }
    }
}

#[test]
fn every_float16_pattern() {
    let codes: Vec<u64> = (0..=0xFFFF).collect();
    round_trip(DType::Float16, &codes);
}

#[test]
fn float32_sample() {
    let mut codes: Vec<u64> = vec![
        0x0000_0000, // +0
        0x8000_0000, // -0
        0x7F80_0000, // +Inf
        0xFF80_0000, // -Inf
        0x7FC0_0000, // quiet NaN
        0xFFC0_0001, // negative NaN with a payload
        0x7F80_0001, // signalling NaN
        0x0000_0001, // smallest subnormal
        0x807F_FFFF, // largest subnormal, negative
        0x0080_0000, // smallest normal
        0x7F7F_FFFF, // largest finite
        0xFF7F_FFFF, // most negative finite
        0x3F80_0000, // 1
        0x38D1_B717, // float32 nearest 1e-4 (below it)
        0x4974_2400, // 1e6: the spec layout turns scientific here
        0x4974_23FF, // just below 1e6
    ];
    let mut rng = Rng(0x05EE_DF32);
    codes.extend((0..20_000).map(|_| rng.next() & 0xFFFF_FFFF));
    // Values in the everyday range, where the positional layout is taken as written.
    codes.extend((0..20_000).map(|_| {
        let x = (((rng.next() >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * 2e3) as f32;
        u64::from(x.to_bits())
    }));
    round_trip(DType::Float, &codes);
}

#[test]
fn float64_sample() {
    let mut codes: Vec<u64> = vec![
        0,
        1 << 63,               // -0
        0x7FF0_0000_0000_0000, // +Inf
        0xFFF0_0000_0000_0000, // -Inf
        0x7FF8_0000_0000_0000, // quiet NaN
        0xFFF0_0000_0000_0001, // negative signalling NaN
        1,                     // smallest subnormal
        0x000F_FFFF_FFFF_FFFF, // largest subnormal
        0x0010_0000_0000_0000, // smallest normal
        0x7FEF_FFFF_FFFF_FFFF, // largest finite
        0xFFEF_FFFF_FFFF_FFFF, // most negative finite
        0x4341_C379_37E0_8000, // 1e16: the spec layout turns scientific here
        0x3F1A_36E2_EB1C_432D, // float64 nearest 1e-4
        0x3FB9_9999_9999_999A, // 0.1
    ];
    let mut rng = Rng(0x05EE_DF64);
    codes.extend((0..20_000).map(|_| rng.next()));
    codes.extend((0..20_000).map(|_| (((rng.next() >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * 2e3).to_bits()));
    round_trip(DType::Double, &codes);
}

#[test]
fn texts_build_from_strings_and_compare() {
    // The constructors of a STRING tensor: owned strings, borrowed ones, an iterator.
    let owned = Tensor::from_strings(vec![2], vec!["1.5".to_string(), "é".to_string()]).unwrap();
    let borrowed = Tensor::from_strings(vec![2], &["1.5", "é"][..]).unwrap();
    let collected = Tensor::from_strings(vec![2], ["1.5", "é"].into_iter().collect::<Texts>()).unwrap();
    assert_eq!(owned, borrowed);
    assert_eq!(owned, collected);
    let texts = owned.strings().unwrap();
    // "1.5" is 3 bytes and "é" is 2 (U+00E9 in UTF-8: C3 A9).
    assert_eq!(texts.text_len(), 5);
    assert_eq!(texts.heap_bytes(), 5 + 2 * std::mem::size_of::<usize>() as u64);
    assert_eq!(texts, ["1.5", "é"]);
    assert_eq!(texts.to_vec(), vec!["1.5".to_string(), "é".to_string()]);
    // 1.5 = 0x3FC00000 as float32 (sign 0, exponent 127, fraction 0x400000).
    let floats = cast(&owned.reshape(vec![2]).unwrap(), DType::Float, &CastOptions::with_profile(Profile::OnnxRuntime));
    // "é" is not a number under strtod: an error that names the element.
    assert!(floats.unwrap_err().to_string().contains("element 1"));
    let one = Tensor::from_strings(vec![1], vec!["1.5".to_string()]).unwrap();
    assert_eq!(cast(&one, DType::Float, &CastOptions::default()).unwrap().code(0), Some(0x3FC0_0000));
}
