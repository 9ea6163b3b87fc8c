//! `mlx:affine` against MLX 0.32.4's CPU quantize and dequantize, recorded by
//! scripts/gen_integer_mlx_fixtures.py into tests/data/integer/mlx/cases.json: every byte of
//! the packed uint32 weight, the scales and biases (in the input's dtype) and the dequantized
//! values (the scales' dtype), NaN codes and the sign of zero included; the peer's refusals
//! refused. Counts what it compared and fails on zero.

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

fn scheme_name(case: &Value) -> String {
    format!("mlx:affine,bits={},group={}", case["bits"], case["group"])
}

fn peer_tensors(case: &Value) -> Vec<StoredTensor> {
    let dt = dtype(case["dtype"].as_str().unwrap());
    vec![
        StoredTensor {
            name: "weight".into(),
            dtype: DType::Uint32,
            shape: shape(&case["weight_shape"]),
            data: hex(case["weight"].as_str().unwrap()),
        },
        StoredTensor {
            name: "scales".into(),
            dtype: dt,
            shape: shape(&case["scales_shape"]),
            data: hex(case["scales"].as_str().unwrap()),
        },
        StoredTensor {
            name: "biases".into(),
            dtype: dt,
            shape: shape(&case["scales_shape"]),
            data: hex(case["biases"].as_str().unwrap()),
        },
    ]
}

#[test]
fn mlx_affine_matches_recordings() {
    let path = format!("{}/tests/data/integer/mlx/cases.json", env!("CARGO_MANIFEST_DIR"));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let (mut compared, mut refusals, mut failures) = (0usize, 0usize, Vec::new());
    for case in doc["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let dt = dtype(case["dtype"].as_str().unwrap());
        let shp = shape(&case["shape"]);
        let scheme = Scheme::parse(&scheme_name(case));
        if case.get("refusal").is_some() {
            let input = hex(case["input"].as_str().unwrap());
            let refused = scheme.and_then(|s| blocks::quantize_weight(dt, &input, &shp, &s, None)).is_err();
            assert!(refused, "{name}: MLX refuses it, lowbit quantized it");
            refusals += 1;
            continue;
        }
        let scheme = scheme.unwrap_or_else(|e| panic!("{name}: {e}"));
        let expected_deq = hex(case["dequantized"].as_str().unwrap());
        let peer = peer_tensors(case);
        if case["kind"] == "quantize" {
            let input = hex(case["input"].as_str().unwrap());
            let q = blocks::quantize_weight(dt, &input, &shp, &scheme, None).unwrap();
            let ours = blocks::storage(&q).unwrap();
            for (o, p) in ours.iter().zip(&peer) {
                compared += 1;
                if o != p {
                    let at = o.data.iter().zip(&p.data).position(|(a, b)| a != b);
                    failures.push(format!("{name}: {} differs (first byte {at:?})", o.name));
                }
            }
            compared += 1;
            if blocks::dequantize_as(&q, dt).unwrap() != expected_deq {
                failures.push(format!("{name}: dequantize of lowbit's quantized weight differs"));
            }
        }
        let back = blocks::from_storage(&peer, &scheme, &shp).unwrap();
        compared += 1;
        let ours = blocks::dequantize_as(&back, dt).unwrap();
        if ours != expected_deq {
            let width = if dt == DType::Float { 4 } else { 2 };
            let at = ours.iter().zip(&expected_deq).position(|(a, b)| a != b).map(|b| b / width);
            let show = |v: &[u8], i: usize| hex_of(&v[i * width..(i + 1) * width]);
            let detail = at.map(|i| format!("element {i}: lowbit {} mlx {}", show(&ours, i), show(&expected_deq, i)));
            failures.push(format!("{name}: dequantize of MLX's tensors differs ({detail:?})"));
        }
        compared += 1;
        assert_eq!(blocks::storage(&back).unwrap(), peer, "{name}: from_storage then storage is not the peer's bytes");
    }
    assert!(failures.is_empty(), "{} of {compared} differ:\n{}", failures.len(), failures.join("\n"));
    assert!(compared > 0 && refusals == 3, "compared {compared}, refusals {refusals}");
    eprintln!("mlx: {compared} comparisons, {refusals} refusals");
}

fn hex_of(b: &[u8]) -> String {
    b.iter().rev().map(|x| format!("{x:02x}")).collect()
}
