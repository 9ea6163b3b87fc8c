//! `ort:matmulnbits` against onnxruntime 1.31.1, recorded by scripts/gen_integer_ort_fixtures.py
//! into tests/data/integer/ort/cases.json: every byte of `MatMulNBitsQuantizer`'s B, scales and
//! zero_points (none for symmetric quantization), and the weight the `MatMulNBits` node
//! multiplies by, read off the node run on the identity (Y = W_deq^T). That product is exact
//! but for the sign of zero (a sum of products keeps none) and rows holding a NaN or an infinity
//! (0 * Inf poisons the row): zeros are compared by value and such rows are counted apart, their
//! codes and scales compared byte for byte. Counts what it compared and fails on zero.

use lowbit::quant::blocks::{self, Scheme, StoredTensor};
use lowbit::DType;
use serde_json::Value;

fn hex(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

fn dtype(name: &str) -> DType {
    match name {
        "FLOAT" => DType::Float,
        "FLOAT16" => DType::Float16,
        "BFLOAT16" => DType::Bfloat16,
        other => panic!("dtype {other}"),
    }
}

fn shape(v: &Value) -> Vec<usize> {
    v.as_array().unwrap().iter().map(|d| d.as_u64().unwrap() as usize).collect()
}

fn peer_tensors(case: &Value, dt: DType) -> Vec<StoredTensor> {
    let mut out = vec![
        StoredTensor {
            name: "B".into(),
            dtype: DType::Uint8,
            shape: shape(&case["B_shape"]),
            data: hex(case["B"].as_str().unwrap()),
        },
        StoredTensor {
            name: "scales".into(),
            dtype: dt,
            shape: shape(&case["scales_shape"]),
            data: hex(case["scales"].as_str().unwrap()),
        },
    ];
    if let Some(z) = case.get("zero_points") {
        out.push(StoredTensor {
            name: "zero_points".into(),
            dtype: DType::Uint8,
            shape: shape(&case["zero_points_shape"]),
            data: hex(z.as_str().unwrap()),
        });
    }
    out
}

/// Our dequantized (N, K) weight against the node's product with the identity, (K, N).
fn compare_product(ours: &[u8], product: &[u8], dt: DType, n: usize, k: usize) -> (usize, usize, Vec<String>) {
    let w = if dt == DType::Float { 4 } else { 2 };
    let value = |b: &[u8]| -> (f64, u64) {
        if w == 4 {
            let bits = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            (f64::from(f32::from_bits(bits)), u64::from(bits))
        } else {
            let bits = u16::from_le_bytes([b[0], b[1]]);
            (f64::from(half::f16::from_bits(bits).to_f32()), u64::from(bits))
        }
    };
    let (mut compared, mut poisoned, mut bad) = (0, 0, Vec::new());
    for row in 0..n {
        // 0 * Inf = NaN: a row holding a NaN or an infinity (in the node's float32) makes its
        // whole column NaN; such a row must hold one in ours too.
        let all_nan = (0..k).all(|j| value(&product[(j * n + row) * w..]).0.is_nan());
        if all_nan && (0..k).any(|j| !value(&ours[(row * k + j) * w..]).0.is_finite()) {
            poisoned += 1;
            continue;
        }
        for j in 0..k {
            let (a, abits) = value(&ours[(row * k + j) * w..]);
            let (b, bbits) = value(&product[(j * n + row) * w..]);
            compared += 1;
            let same = if a == 0.0 { b == 0.0 } else { abits == bbits };
            if !same && bad.len() < 5 {
                bad.push(format!("W[{row}, {j}]: lowbit {abits:#x} ({a}), onnxruntime {bbits:#x} ({b})"));
            }
        }
    }
    (compared, poisoned, bad)
}

#[test]
fn ort_matmulnbits_matches_recordings() {
    let path = format!("{}/tests/data/integer/ort/cases.json", env!("CARGO_MANIFEST_DIR"));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let (mut compared, mut poisoned_rows, mut failures) = (0usize, 0usize, Vec::new());
    for case in
        doc["cases"].as_array().unwrap().iter().filter(|c| c["kind"] != "node" && c["kind"] != "dequantizelinear")
    {
        let name = case["name"].as_str().unwrap();
        let dt = dtype(case["dtype"].as_str().unwrap());
        let [n, k] = shape(&case["shape"])[..] else { panic!("{name}: shape") };
        let sym = if case["sym"].as_bool().unwrap() { ",sym" } else { "" };
        let scheme = Scheme::parse(&format!("ort:matmulnbits,bits={},block={}{sym}", case["bits"], case["block"]))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(case.get("refusal").is_none(), "{name}: the peer refused: {}", case["refusal"]);
        let peer = peer_tensors(case, dt);
        if case["kind"] == "quantize" {
            let input = hex(case["input"].as_str().unwrap());
            let q = blocks::quantize_weight(dt, &input, &[n, k], &scheme, None).unwrap();
            let ours = blocks::storage(&q).unwrap();
            assert_eq!(ours.len(), peer.len(), "{name}: tensors");
            for (o, p) in ours.iter().zip(&peer) {
                compared += 1;
                if o != p {
                    let at = o.data.iter().zip(&p.data).position(|(a, b)| a != b);
                    let show = at.map(|i| (o.data[i], p.data[i]));
                    failures
                        .push(format!("{name}: {} differs (first byte {at:?}: lowbit, onnxruntime {show:?})", o.name));
                }
            }
        }
        let back = blocks::from_storage(&peer, &scheme, &[n, k]).unwrap();
        // Random bytes (the dequantize cases) hold padding nibbles the quantizer never writes.
        compared += 1;
        if case["kind"] == "quantize" && blocks::storage(&back).unwrap() != peer {
            failures.push(format!("{name}: from_storage then storage is not the peer's bytes"));
        }
        if let Some(product) = case.get("identity_product") {
            let ours = blocks::dequantize_as(&back, dt).unwrap();
            let (c, p, bad) = compare_product(&ours, &hex(product.as_str().unwrap()), dt, n, k);
            compared += c;
            poisoned_rows += p;
            failures.extend(bad.into_iter().map(|b| format!("{name}: {b}")));
        }
    }
    assert!(failures.is_empty(), "{} differ:\n{}", failures.len(), failures.join("\n"));
    assert!(compared > 1000, "compared {compared}");
    eprintln!("ort: {compared} comparisons, {poisoned_rows} rows with a NaN or infinity compared by bytes only");
}

/// `lowbit run`'s MatMulNBits on nodes whose sums are exact in float32 (small integer A,
/// power-of-two scales and bias): onnxruntime's output is the exact sum rounded once, whatever
/// its kernels' order, so it must equal lowbit's bit for bit.
#[test]
fn matmulnbits_node_matches_onnxruntime_where_its_sums_are_exact() {
    use lowbit::onnx::runner::Model;
    use lowbit::{Profile, Tensor};
    let path = format!("{}/tests/data/integer/ort/cases.json", env!("CARGO_MANIFEST_DIR"));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut compared = 0;
    for case in doc["cases"].as_array().unwrap().iter().filter(|c| c["kind"] == "node") {
        let name = case["name"].as_str().unwrap();
        let dt = dtype(case["dtype"].as_str().unwrap());
        let model = Model::from_bytes(&hex(case["model"].as_str().unwrap())).unwrap();
        let a = Tensor::from_raw(dt, shape(&case["A_shape"]), hex(case["A"].as_str().unwrap())).unwrap();
        let inputs = std::collections::HashMap::from([("A".to_string(), a)]);
        let out = model.run(&inputs, Profile::OnnxRuntime).unwrap_or_else(|e| panic!("{name}: {e}"));
        let y = &out[0].1;
        assert_eq!(y.shape(), shape(&case["Y_shape"]), "{name}");
        assert_eq!(y.raw().unwrap(), hex(case["Y"].as_str().unwrap()), "{name}: Y differs");
        compared += y.len();
    }
    assert!(compared > 0);
    eprintln!("MatMulNBits: {compared} outputs equal");
}

/// `DequantizeLinear` of INT4 and UINT4 weights blocked along K, as MatMulNBitsQuantizer's QDQ
/// form writes them, run by onnxruntime: lowbit's runner gives the same bits.
#[test]
fn blocked_int4_dequantizelinear_matches_onnxruntime() {
    use lowbit::onnx::runner::Model;
    use lowbit::Profile;
    let path = format!("{}/tests/data/integer/ort/cases.json", env!("CARGO_MANIFEST_DIR"));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut compared = 0;
    for case in doc["cases"].as_array().unwrap().iter().filter(|c| c["kind"] == "dequantizelinear") {
        let name = case["name"].as_str().unwrap();
        let model = Model::from_bytes(&hex(case["model"].as_str().unwrap())).unwrap();
        let out = model
            .run(&std::collections::HashMap::new(), Profile::OnnxRuntime)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let y = &out[0].1;
        assert_eq!(y.shape(), shape(&case["Y_shape"]), "{name}");
        assert_eq!(y.raw().unwrap(), hex(case["Y"].as_str().unwrap()), "{name}: W differs");
        compared += y.len();
    }
    assert!(compared > 0);
    eprintln!("DequantizeLinear int4 blocks: {compared} values equal");
}
