//! The scalar fast path (float32 into 8 bits or fewer through the library's flag split table)
//! gives the core's answers: `lowbit_convert` against `lowbit::verify::Converter` on every
//! top-16-bit float32 pattern with three low halves, for every deterministic mode, tininess rule
//! and saturation, into six targets (flush on the target included).

use lowbit::round::{RoundingMode, Tininess};
use lowbit::verify::{Converter, Format, VerifyOptions};
use lowbit_capi::*;

mod support;
use support::format;

#[test]
fn float32_into_narrow_formats_matches_the_core() {
    let f32_ = format("float32");
    let targets = ["e4m3", "e5m2", "e4m3,special=ieee", "float4e2m1", "e2m3,subnormal=flush", "float8e8m0"];
    let modes = [
        (LOWBIT_RNE, RoundingMode::NearestEven),
        (LOWBIT_RTZ, RoundingMode::TowardZero),
        (LOWBIT_RDN, RoundingMode::TowardNegative),
        (LOWBIT_RUP, RoundingMode::TowardPositive),
        (LOWBIT_RMM, RoundingMode::NearestTiesAway),
        (LOWBIT_ROD, RoundingMode::ToOdd),
        (LOWBIT_RAZ, RoundingMode::AwayFromZero),
    ];
    let tininess = [
        (LOWBIT_TININESS_BEFORE, Tininess::BeforeRounding),
        (LOWBIT_TININESS_AFTER, Tininess::AfterRounding),
        (LOWBIT_TININESS_DELIVERED, Tininess::Delivered),
    ];
    let mut compared = 0u64;
    for text in targets {
        let to = format(text);
        let core_to = Format::parse(text).unwrap();
        for (round, mode) in modes {
            for (tiny, rule) in tininess {
                for saturate in [0u8, 1] {
                    let options = lowbit_options { round, tininess: tiny, saturate, ..lowbit_options_default() };
                    let core = Converter::new(
                        &Format::parse("float32").unwrap(),
                        &core_to,
                        &VerifyOptions { mode, tininess: rule, saturate: saturate == 1 },
                    );
                    for top in 0..1u64 << 16 {
                        for low in [0u64, 0x8000, 0x0001] {
                            let bits = top << 16 | low;
                            let mut flags = 0;
                            // SAFETY: readable options and a writable flag byte.
                            let code = unsafe { lowbit_convert(f32_, to, bits, &options, &mut flags) };
                            let (want, status) = core.convert(bits, 0);
                            assert_eq!((code, flags), (want, status.bits()), "{bits:#010x} -> {text} {options:?}");
                            compared += 1;
                        }
                    }
                }
            }
        }
    }
    assert_eq!(compared, (6 * 7 * 3 * 2 * 3) << 16);
}
