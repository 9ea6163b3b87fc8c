//! The `gptq` row against GPTQModel 7.7.0: the recorded cases of tests/data/integer/gptq (see
//! tests/support/integer_fixtures.rs; scripts/gen_integer_gptq_fixtures.py records them, and
//! scripts/crosscheck_gptq.py runs the producer live), then the row's refusals and the v1 zero
//! point rule by hand.

#[path = "support/integer_fixtures.rs"]
mod integer_fixtures;

use lowbit::quant::blocks::{self, Scheme, StoredTensor};
use lowbit::DType;

#[test]
fn gptqmodel_cases_bit_for_bit() {
    let tally = integer_fixtures::check_family("gptq");
    eprintln!("gptq: {tally:?}");
    assert!(tally.cases >= 20 && tally.refusals >= 1, "{tally:?}");
}

fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn quantize(scheme: &str, values: &[f32], shape: &[usize], g_idx: Option<&[i32]>) -> lowbit::Result<blocks::Quantized> {
    blocks::quantize_weight(DType::Float, &f32_bytes(values), shape, &Scheme::parse(scheme)?, g_idx)
}

#[test]
fn names_parse_with_defaults_and_refuse_the_rest() {
    let p = Scheme::parse("gptq:int4").unwrap();
    let p = p.integer().unwrap();
    assert_eq!((p.bits, p.group, p.symmetric, p.act_order, p.choice("zeros")), (4, Some(128), true, false, Some("v1")));
    let p = Scheme::parse("gptq:int8,group=-1,asym,actorder,zeros=v2").unwrap();
    let p = p.integer().unwrap();
    assert_eq!((p.bits, p.group, p.symmetric, p.act_order, p.choice("zeros")), (8, None, false, true, Some("v2")));
    for bad in [
        "gptq:int3",
        "gptq:int4,group=0",
        "gptq:int4,group=12",
        "gptq:int4,sym,asym",
        "gptq:int4,sym=1",
        "gptq:int4,zeros=v3",
        "gptq:int4,block=32",
    ] {
        assert!(Scheme::parse(bad).is_err(), "{bad}");
    }
}

#[test]
fn refusals_name_the_problem() {
    let mut w = vec![0.5f32; 2 * 16];
    w[19] = f32::NAN;
    let e = quantize("gptq:int4,group=16", &w, &[2, 16], None).unwrap_err().to_string();
    assert!(e.contains("weight[1, 3]"), "{e}");
    // A range whose float32 scale underflows to zero.
    let tiny = vec![f32::from_bits(1); 16];
    let e = quantize("gptq:int4,group=16,asym", &tiny, &[1, 16], None).unwrap_err().to_string();
    assert!(e.contains("row 0 group 0"), "{e}");
    assert!(quantize("gptq:int4,group=16", &[0.0; 24], &[1, 24], None).is_err(), "not whole groups");
    assert!(quantize("gptq:int4,group=16", &[0.0; 16], &[1, 16], Some(&[0; 16])).is_err(), "g_idx without actorder");
    let mut g_idx = [0i32; 32];
    g_idx[7] = 2;
    let e = quantize("gptq:int4,group=16,actorder", &[0.0; 32], &[1, 32], Some(&g_idx)).unwrap_err().to_string();
    assert!(e.contains("g_idx[7] = 2"), "{e}");
}

#[test]
fn v1_zero_points_borrow_across_fields() {
    // Asym int4: a row of 16 values from 0 to 15 (scale 1, zero point 0) and 7 rows of -1..14
    // (zero point 1). v2 words hold the zero points; v1 subtracts 0x11111111 from the word, so
    // the zero point 0 in field 0 borrows from field 1: 0x11111110 - 0x11111111 = 0xFFFFFFFF.
    let mut w = Vec::new();
    w.extend((0..16).map(|i| i as f32));
    for _ in 0..7 {
        w.extend((0..16).map(|i| i as f32 - 1.0));
    }
    for (zeros, word) in [("v2", 0x1111_1110u32), ("v1", 0xFFFF_FFFF)] {
        let q = quantize(&format!("gptq:int4,group=16,asym,zeros={zeros}"), &w, &[8, 16], None).unwrap();
        assert_eq!(q.extras.as_ref().unwrap().zero_points.as_deref(), Some(&[0, 1, 1, 1, 1, 1, 1, 1][..]));
        let stored = blocks::storage(&q).unwrap();
        let qzeros = stored.iter().find(|t| t.name == "qzeros").unwrap();
        assert_eq!(qzeros.data, word.to_le_bytes(), "{zeros}");
        // Loading adds the word back: the zero points return whole.
        let back = blocks::from_storage(&stored, &q.scheme, &[8, 16]).unwrap();
        assert_eq!(back.extras.as_ref().unwrap().zero_points, q.extras.as_ref().unwrap().zero_points);
    }
}

#[test]
fn from_storage_checks_every_tensor_first() {
    let scheme = Scheme::parse("gptq:int4,group=16").unwrap();
    let q = quantize("gptq:int4,group=16", &[0.25; 8 * 32], &[8, 32], None).unwrap();
    let stored = blocks::storage(&q).unwrap();
    let names: Vec<&str> = stored.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["qweight", "qzeros", "scales", "g_idx"]);
    for (i, t) in stored.iter().enumerate() {
        let mut short = stored.clone();
        short[i].data.pop();
        assert!(blocks::from_storage(&short, &scheme, &[8, 32]).is_err(), "{} one byte short", t.name);
        let missing: Vec<StoredTensor> = stored.iter().filter(|u| u.name != t.name).cloned().collect();
        assert!(blocks::from_storage(&missing, &scheme, &[8, 32]).is_err(), "{} missing", t.name);
    }
    let mut odd = stored.clone();
    odd.last_mut().unwrap().data[0] = 1; // g_idx[0] = 1: not i // group without actorder
    assert!(blocks::from_storage(&odd, &scheme, &[8, 32]).is_err());
    assert!(blocks::from_storage(&stored, &scheme, &[0, 32]).is_err());
    let mut bad = q.clone();
    bad.elements[3] = 16;
    assert!(blocks::dequantize_as(&bad, DType::Float16).is_err(), "a code above 15");
}
