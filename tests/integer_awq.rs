//! The `awq` row against AutoAWQ 0.2.9: the recorded cases of tests/data/integer/awq (see
//! tests/support/integer_fixtures.rs; scripts/gen_integer_gptq_fixtures.py records them, and
//! scripts/crosscheck_awq.py runs the producer live), then the layout's interleave and the row's
//! refusals by hand.

#[path = "support/integer_fixtures.rs"]
mod integer_fixtures;

use lowbit::quant::blocks::{self, Scheme};
use lowbit::DType;

#[test]
fn autoawq_cases_bit_for_bit() {
    let tally = integer_fixtures::check_family("awq");
    eprintln!("awq: {tally:?}");
    assert!(tally.cases >= 10 && tally.refusals >= 3, "{tally:?}");
}

fn quantize(scheme: &str, values: &[f32], shape: &[usize]) -> lowbit::Result<blocks::Quantized> {
    let raw: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    blocks::quantize_weight(DType::Float, &raw, shape, &Scheme::parse(scheme)?, None)
}

#[test]
fn words_interleave_output_columns() {
    // Every output row o is 0, 15, then o % 16: the group's range 0..15 gives scale 1 and zero
    // point 0, so the codes are the values. Field k of a word holds output column 8c + ORDER[k],
    // ORDER = [0, 2, 4, 6, 1, 3, 5, 7]: input column 2's first word reads, from the low nibble
    // up, 0 2 4 6 1 3 5 7 (0x75316420), its second 8 10 12 14 9 11 13 15 (0xFDB9ECA8).
    let (rows, cols) = (32, 16);
    let mut w = vec![0f32; rows * cols];
    for o in 0..rows {
        w[o * cols + 1] = 15.0;
        for j in 2..cols {
            w[o * cols + j] = (o % 16) as f32;
        }
    }
    let q = quantize("awq:int4,group=16", &w, &[rows, cols]).unwrap();
    let stored = blocks::storage(&q).unwrap();
    assert_eq!(stored.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["qweight", "qzeros", "scales"]);
    let qweight = &stored[0];
    assert_eq!(qweight.shape, [16, 4]);
    let word = |i: usize, c: usize| {
        let at = 4 * (i * 4 + c);
        u32::from_le_bytes([qweight.data[at], qweight.data[at + 1], qweight.data[at + 2], qweight.data[at + 3]])
    };
    assert_eq!(word(2, 0), 0x7531_6420);
    assert_eq!(word(2, 1), 0xFDB9_ECA8);
    assert_eq!(word(1, 3), 0xFFFF_FFFF);
    assert_eq!(stored[2].data[..2], [0x00, 0x3C], "scale 1.0 in float16");
}

#[test]
fn refusals_name_the_problem() {
    assert!(Scheme::parse("awq:int8").is_err());
    assert!(Scheme::parse("awq:int4,group=0").is_err());
    assert!(Scheme::parse("awq:int4,sym").is_err());
    assert!(quantize("awq:int4,group=16", &[0.0; 16 * 32], &[16, 32]).is_err(), "16 output rows");
    assert!(quantize("awq:int4,group=16", &[0.0; 32 * 24], &[32, 24]).is_err(), "not whole groups");
    let mut w = vec![1.0f32; 32 * 16];
    w[16 * 5 + 4] = 70000.0; // infinite in float16
    let e = quantize("awq:int4,group=16", &w, &[32, 16]).unwrap_err().to_string();
    assert!(e.contains("weight[5, 4]"), "{e}");
    let mut w = vec![1.0f32; 32 * 16];
    w[16 * 3] = 40000.0;
    w[16 * 3 + 1] = -40000.0;
    let e = quantize("awq:int4,group=16", &w, &[32, 16]).unwrap_err().to_string();
    assert!(e.contains("row 3 group 0"), "{e}");
}
