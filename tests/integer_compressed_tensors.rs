//! The `compressed-tensors:int4|int8` row against compressed-tensors 0.20.0 itself: every case
//! of tests/data/integer/compressed_tensors/manifest.json (made by
//! scripts/gen_integer_compressed_tensors_fixtures.py with torch 2.15.0, single-threaded). Per
//! case: the element codes of `quantize`, the scales' bits and the zero points of
//! `calculate_qparams`, every tensor the compressor saves (name, order, dtype, shape, bytes), the
//! dequantized weight's bits in the weight's dtype (NaN payloads and signs of zero included), and
//! `from_storage` of the saved tensors back to the same codes and values; where the package
//! raised, lowbit refuses with the same words. The test counts what it compared and fails on zero.

use lowbit::quant::blocks::{self, Quantized, Scales, Scheme, StoredTensor};
use lowbit::DType;
use serde_json::Value;

struct Data {
    manifest: Value,
    blob: Vec<u8>,
}

impl Data {
    fn load() -> Data {
        let dir = format!("{}/tests/data/integer/compressed_tensors", env!("CARGO_MANIFEST_DIR"));
        let manifest = serde_json::from_str(&std::fs::read_to_string(format!("{dir}/manifest.json")).unwrap()).unwrap();
        Data { manifest, blob: std::fs::read(format!("{dir}/data.bin")).unwrap() }
    }

    /// An array's bytes, shape and dtype.
    fn array(&self, a: &Value) -> (Vec<u8>, Vec<usize>, DType) {
        let offset = a["offset"].as_u64().unwrap() as usize;
        let nbytes = a["nbytes"].as_u64().unwrap() as usize;
        let shape = a["shape"].as_array().unwrap().iter().map(|d| d.as_u64().unwrap() as usize).collect();
        (self.blob[offset..offset + nbytes].to_vec(), shape, dtype(a["dtype"].as_str().unwrap()))
    }
}

fn dtype(name: &str) -> DType {
    match name {
        "f32" => DType::Float,
        "f16" => DType::Float16,
        "bf16" => DType::Bfloat16,
        "i8" => DType::Int8,
        "i32" => DType::Int32,
        "i64" => DType::Int64,
        other => panic!("dtype {other}"),
    }
}

fn scale_bytes(s: &Scales) -> Vec<u8> {
    match s {
        Scales::Float32(v) => v.iter().flat_map(|x| x.to_bits().to_le_bytes()).collect(),
        Scales::Float16(v) | Scales::Bfloat16(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        Scales::Codes(v) => v.clone(),
    }
}

/// Compares `q` with the case's recorded arrays; returns the elements compared.
fn check_quantized(data: &Data, case: &Value, q: &Quantized, what: &str) -> usize {
    let label = format!("{} {} {} ({what})", case["case"], case["scheme"], case["dtype"]);
    let bits = q.scheme.integer().unwrap().bits;
    let mask = ((1u32 << bits) - 1) as u8;
    let (codes, _, _) = data.array(&case["q"]);
    let want: Vec<u8> = codes.iter().map(|&c| c & mask).collect();
    assert_eq!(q.elements, want, "{label}: element codes");
    let (scales, _, scale_dtype) = data.array(&case["scale"]);
    assert_eq!(q.scales.dtype(&q.scheme), scale_dtype, "{label}: scale dtype");
    assert_eq!(scale_bytes(&q.scales), scales, "{label}: scales");
    let (zp, _, _) = data.array(&case["zero_point"]);
    let zero_points = q.extras.as_ref().and_then(|e| e.zero_points.clone());
    if q.scheme.integer().unwrap().symmetric {
        assert_eq!(zero_points, None, "{label}: a symmetric scheme keeps no zero points");
        assert!(zp.iter().all(|&z| z == 0), "{label}: the package's symmetric zero points are 0");
    } else {
        let want: Vec<i32> = zp.iter().map(|&z| i32::from(z as i8)).collect();
        assert_eq!(zero_points, Some(want), "{label}: zero points");
    }
    let (deq, _, deq_dtype) = data.array(&case["dequantized"]);
    assert_eq!(blocks::dequantize_as(q, deq_dtype).unwrap(), deq, "{label}: dequantized");
    q.elements.len()
}

#[test]
fn compressed_tensors_integer_fixtures() {
    let data = Data::load();
    let cases = data.manifest["cases"].as_array().unwrap();
    let (mut compared, mut refused, mut stored_bytes) = (0usize, 0usize, 0usize);
    for case in cases {
        let scheme = Scheme::parse(case["scheme"].as_str().unwrap()).unwrap();
        let (raw, shape, input) = data.array(&case["input"]);
        let got = blocks::quantize_weight(input, &raw, &shape, &scheme, None);
        if let Some(refusal) = case.get("refusal") {
            let message = refusal["message"].as_str().unwrap();
            let e = got.expect_err("the package refused this case");
            assert!(e.to_string().contains(message), "{}: {e} does not say {message}", case["case"]);
            refused += 1;
            continue;
        }
        let q = got.unwrap_or_else(|e| panic!("{} {}: {e}", case["case"], case["scheme"]));
        compared += check_quantized(&data, case, &q, "quantize");
        let stored = blocks::storage(&q).unwrap();
        let want: Vec<StoredTensor> = case["stored"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                let (data, shape, dtype) = data.array(t);
                StoredTensor { name: t["name"].as_str().unwrap().to_string(), dtype, shape, data }
            })
            .collect();
        assert_eq!(stored, want, "{} {}: storage", case["case"], case["scheme"]);
        stored_bytes += want.iter().map(|t| t.data.len()).sum::<usize>();
        let back = blocks::from_storage(&want, &scheme, &shape).unwrap();
        compared += check_quantized(&data, case, &back, "from_storage");
    }
    println!("{compared} elements compared, {refused} refusals, {stored_bytes} stored bytes equal");
    assert!(compared > 0 && refused > 0 && stored_bytes > 0, "nothing compared");
}

#[test]
fn storage_refuses_what_the_scheme_does_not_hold() {
    let scheme = Scheme::parse("compressed-tensors:int4,group=8,asym").unwrap();
    let w: Vec<u8> = (0..32).flat_map(|i| (i as f32 - 10.0).to_le_bytes()).collect();
    let q = blocks::quantize_weight(DType::Float, &w, &[2, 16], &scheme, None).unwrap();
    let stored = blocks::storage(&q).unwrap();
    // A tensor cut short, a missing one, a stray one, a wrong weight_shape: each named.
    let mut short = stored.clone();
    short[2].data.pop();
    let e = blocks::from_storage(&short, &scheme, &[2, 16]).unwrap_err().to_string();
    assert!(e.contains("weight_packed"), "{e}");
    let missing: Vec<_> = stored.iter().filter(|t| t.name != "weight_zero_point").cloned().collect();
    let e = blocks::from_storage(&missing, &scheme, &[2, 16]).unwrap_err().to_string();
    assert!(e.contains("weight_zero_point") && e.contains("missing"), "{e}");
    let mut stray = stored.clone();
    stray.push(StoredTensor { name: "bias".into(), dtype: DType::Float, shape: vec![2], data: vec![0; 8] });
    let e = blocks::from_storage(&stray, &scheme, &[2, 16]).unwrap_err().to_string();
    assert!(e.contains("bias"), "{e}");
    let e = blocks::from_storage(&stored, &scheme, &[4, 8]).unwrap_err().to_string();
    assert!(e.contains("weight_scale") || e.contains("weight_shape"), "{e}");
    // int-quantized: an int8 outside int4's range is named with its byte offset.
    let scheme = Scheme::parse("compressed-tensors:int4,group=8,format=int-quantized").unwrap();
    let q = blocks::quantize_weight(DType::Float, &w, &[2, 16], &scheme, None).unwrap();
    let mut stored = blocks::storage(&q).unwrap();
    stored[1].data[5] = 100;
    let e = blocks::from_storage(&stored, &scheme, &[2, 16]).unwrap_err().to_string();
    assert!(e.contains("byte 5") && e.contains("100"), "{e}");
    // A Quantized whose codes do not fit the bits.
    let mut q = q;
    q.elements[3] = 0x10;
    assert!(blocks::dequantize_as(&q, DType::Float).is_err());
    assert!(blocks::storage(&q).is_err());
}

#[test]
fn scheme_names() {
    for bad in [
        "compressed-tensors:int4,group=0",
        "compressed-tensors:int4,group=8,channel",
        "compressed-tensors:int4,sym,asym",
        "compressed-tensors:int4,format=packed",
        "compressed-tensors:int4,actorder",
    ] {
        assert!(Scheme::parse(bad).is_err(), "{bad}");
    }
    // The float recipes of the family stay theirs.
    assert!(Scheme::parse("compressed-tensors:nvfp4").unwrap().integer().is_none());
    let p = Scheme::parse("compressed-tensors:int8").unwrap();
    let p = p.integer().unwrap();
    assert_eq!((p.bits, p.group, p.symmetric), (8, Some(128), true));
}

/// Speed of quantize and dequantize on one thread (`cargo test --release --test
/// integer_compressed_tensors -- --ignored --nocapture`); scripts/crosscheck_compressed_tensors.py
/// `--bench` compares with the package in the same run.
#[test]
#[ignore]
fn speed() {
    let (rows, cols) = (4096usize, 4096usize);
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let values: Vec<f32> = (0..rows * cols)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5
        })
        .collect();
    for (dtype, raw) in [
        (DType::Float, values.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>()),
        (DType::Bfloat16, values.iter().flat_map(|v| ((v.to_bits() >> 16) as u16).to_le_bytes()).collect()),
    ] {
        for name in ["compressed-tensors:int4", "compressed-tensors:int4,asym", "compressed-tensors:int8,channel"] {
            let scheme = Scheme::parse(name).unwrap();
            let (mut tq, mut td) = (f64::MAX, f64::MAX);
            for _ in 0..3 {
                let t = std::time::Instant::now();
                let q = blocks::quantize_weight(dtype, &raw, &[rows, cols], &scheme, None).unwrap();
                tq = tq.min(t.elapsed().as_secs_f64());
                let t = std::time::Instant::now();
                let d = blocks::dequantize_as(&q, dtype).unwrap();
                td = td.min(t.elapsed().as_secs_f64());
                assert_eq!(d.len(), raw.len());
            }
            let n = (rows * cols) as f64;
            println!("{name} {dtype:?}: quantize {:.0} M/s, dequantize {:.0} M/s", n / tq / 1e6, n / td / 1e6);
        }
    }
}
