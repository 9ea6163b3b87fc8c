//! bitsandbytes' 4-bit weights (`bnb:nf4|fp4[,blocksize=N][,nested]`) against values recorded
//! from bitsandbytes 0.50.2's CPU backend by scripts/gen_integer_bnb_fixtures.py: every stored
//! tensor byte for byte (packed codes, maxima, nested scales, tables, the quant_state JSON),
//! dequantize in float32, float16 and bfloat16 bit for bit, storage read back, and torch's
//! float32 mean that gives the nested offset.

use lowbit::quant::blocks::{dequantize_as, from_storage, quantize_weight, storage, Scheme, StoredTensor};
use lowbit::DType;
use serde_json::Value;

fn fixtures() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/integer/bnb/fixtures.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

fn fnv1a64(data: &[u8]) -> String {
    let mut h: u64 = 0xCBF2_9CE4_8422_2325;
    for &b in data {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01B3);
    }
    format!("{h:016x}")
}

/// Where `bytes` first differ from recorded hex (for the failure message).
fn first_difference(recorded: &str, bytes: &[u8]) -> String {
    if recorded.starts_with("fnv1a64:") {
        return "(recorded as a digest)".into();
    }
    let want = unhex(recorded);
    match want.iter().zip(bytes).position(|(a, b)| a != b) {
        Some(i) => format!(
            "at byte {i}: {:02x?} recorded, {:02x?} computed",
            &want[i..(i + 4).min(want.len())],
            &bytes[i..(i + 4).min(bytes.len())]
        ),
        None => format!("{} bytes recorded, {} computed", want.len(), bytes.len()),
    }
}

/// Whether `bytes` are the recorded ones (hex, or the digest of long ones).
fn same(recorded: &str, bytes: &[u8]) -> bool {
    match recorded.strip_prefix("fnv1a64:") {
        Some(digest) => fnv1a64(bytes) == digest,
        None => unhex(recorded) == bytes,
    }
}

/// The script's `lcg`: a 32-bit LCG's top 24 bits as a fraction, less 0.5, times `scale`.
fn lcg(seed: u32, n: usize, scale: f32) -> Vec<f32> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            ((s >> 8) as f32 / 16_777_216.0 - 0.5) * scale
        })
        .collect()
}

fn dtype(name: &str) -> DType {
    match name {
        "FLOAT" => DType::Float,
        "FLOAT16" => DType::Float16,
        "BFLOAT16" => DType::Bfloat16,
        "UINT8" => DType::Uint8,
        other => panic!("dtype {other}"),
    }
}

fn shape(v: &Value) -> Vec<usize> {
    v.as_array().unwrap().iter().map(|d| d.as_u64().unwrap() as usize).collect()
}

const OUTPUTS: [(&str, DType); 3] =
    [("float32", DType::Float), ("float16", DType::Float16), ("bfloat16", DType::Bfloat16)];

#[derive(Default)]
struct Tally {
    compared: usize,
    failures: Vec<String>,
}

impl Tally {
    fn check(&mut self, ok: bool, what: impl FnOnce() -> String) {
        self.compared += 1;
        if !ok {
            self.failures.push(what());
        }
    }
}

#[test]
fn quantize_storage_and_dequantize_match_bitsandbytes() {
    let doc = fixtures();
    let mut t = Tally::default();
    for case in doc["quantize"].as_array().unwrap() {
        let label = case["label"].as_str().unwrap();
        let scheme = Scheme::parse(case["scheme"].as_str().unwrap()).unwrap();
        let in_dtype = dtype(case["dtype"].as_str().unwrap());
        let dims = shape(&case["shape"]);
        let raw = match case["input"].as_str() {
            Some(h) => unhex(h),
            None => {
                let l = case["lcg"].as_array().unwrap();
                let n = dims.iter().product();
                lcg(l[0].as_u64().unwrap() as u32, n, l[1].as_f64().unwrap() as f32)
                    .iter()
                    .flat_map(|v| v.to_le_bytes())
                    .collect()
            }
        };
        let q = quantize_weight(in_dtype, &raw, &dims, &scheme, None).unwrap();
        let ours = storage(&q).unwrap();
        let want = case["storage"].as_array().unwrap();
        t.check(ours.len() == want.len(), || {
            format!("{label}: tensors {:?}", ours.iter().map(|s| s.name.clone()).collect::<Vec<_>>())
        });
        let mut back = Vec::new();
        for w in want {
            let name = w["name"].as_str().unwrap();
            let Some(s) = ours.iter().find(|s| s.name == name) else {
                t.check(false, || format!("{label}: no tensor {name}"));
                continue;
            };
            t.check(s.dtype == dtype(w["dtype"].as_str().unwrap()), || format!("{label}: {name} dtype {:?}", s.dtype));
            t.check(s.shape == shape(&w["shape"]), || format!("{label}: {name} shape {:?}", s.shape));
            let recorded = w["hex"].as_str().unwrap();
            t.check(same(recorded, &s.data), || {
                let text = if s.dtype == DType::Uint8 && name.starts_with("quant_state") {
                    String::from_utf8_lossy(&s.data).into_owned()
                } else {
                    String::new()
                };
                format!("{label}: {name} bytes differ {text}")
            });
            back.push(s.clone());
        }
        for (key, dt) in OUTPUTS {
            let got = dequantize_as(&q, dt).unwrap();
            let recorded = case["dequantized"][key].as_str().unwrap();
            t.check(same(recorded, &got), || {
                format!("{label}: dequantize {key} differs {}", first_difference(recorded, &got))
            });
        }
        // The stored tensors read back to the same codes, scales (NaN bits included) and dtype.
        let again = from_storage(&back, &scheme, &dims).unwrap();
        t.check(again.elements == q.elements && storage(&again).unwrap() == ours, || {
            format!("{label}: from_storage differs")
        });
    }
    assert!(t.failures.is_empty(), "{} of {} differ:\n{}", t.failures.len(), t.compared, t.failures.join("\n"));
    assert!(t.compared > 500, "compared {}", t.compared);
    println!("bnb quantize: {} comparisons", t.compared);
}

#[test]
fn dequantize_kernels_match_bitsandbytes() {
    let doc = fixtures();
    let mut t = Tally::default();
    for case in doc["dequantize"].as_array().unwrap() {
        let label = case["label"].as_str().unwrap();
        let scheme = Scheme::parse(case["scheme"].as_str().unwrap()).unwrap();
        let dims = shape(&case["shape"]);
        let weight = unhex(case["weight"].as_str().unwrap());
        let absmax = unhex(case["absmax"].as_str().unwrap());
        let format = case["scheme"].as_str().unwrap()[4..7].to_string();
        let tensors = stored_tensors(&scheme, &dims, &format, weight, absmax);
        let q = from_storage(&tensors, &scheme, &dims).unwrap();
        for (key, dt) in OUTPUTS {
            let got = dequantize_as(&q, dt).unwrap();
            let recorded = case["dequantized"][key].as_str().unwrap();
            t.check(same(recorded, &got), || format!("{label}: {key} differs {}", first_difference(recorded, &got)));
        }
    }
    assert!(t.failures.is_empty(), "{} of {} differ:\n{}", t.failures.len(), t.compared, t.failures.join("\n"));
    assert!(t.compared >= 24, "compared {}", t.compared);
}

/// A checkpoint's tensors for chosen codes and maxima (float32 weight, not nested).
fn stored_tensors(
    scheme: &Scheme,
    dims: &[usize],
    format: &str,
    weight: Vec<u8>,
    absmax: Vec<u8>,
) -> Vec<StoredTensor> {
    let doc = fixtures();
    let table = unhex(doc["tables"][format].as_str().unwrap());
    let params = scheme.integer().unwrap();
    let json = format!(
        "{{\"quant_type\": \"{format}\", \"blocksize\": {}, \"dtype\": \"float32\", \"shape\": [{}, {}]}}",
        params.group.unwrap(),
        dims[0],
        dims[1]
    );
    vec![
        StoredTensor { name: "weight".into(), dtype: DType::Uint8, shape: vec![weight.len(), 1], data: weight },
        StoredTensor { name: "absmax".into(), dtype: DType::Float, shape: vec![absmax.len() / 4], data: absmax },
        StoredTensor { name: "quant_map".into(), dtype: DType::Float, shape: vec![16], data: table },
        StoredTensor {
            name: format!("quant_state.bitsandbytes__{format}"),
            dtype: DType::Uint8,
            shape: vec![json.len()],
            data: json.into_bytes(),
        },
    ]
}

#[test]
fn nested_offset_is_torch_float32_mean() {
    // The offset of a nested weight whose maxima are `values`: one block of 32 per maximum,
    // holding the maximum and zeros.
    let doc = fixtures();
    let mut compared = 0;
    for m in doc["means"].as_array().unwrap() {
        let values: Vec<f32> = match m["input"].as_str() {
            Some(h) => unhex(h).chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect(),
            None => {
                let l = m["lcg"].as_array().unwrap();
                let n = l[0].as_u64().unwrap() as usize;
                lcg(n as u32, n, l[1].as_f64().unwrap() as f32).iter().map(|v| v.abs()).collect()
            }
        };
        let mut w = vec![0.0f32; values.len() * 32];
        for (i, v) in values.iter().enumerate() {
            w[i * 32] = *v;
        }
        let raw: Vec<u8> = w.iter().flat_map(|v| v.to_le_bytes()).collect();
        let scheme = Scheme::parse("bnb:nf4,blocksize=32,nested").unwrap();
        let q = quantize_weight(DType::Float, &raw, &[values.len(), 32], &scheme, None).unwrap();
        let offset = q.extras.as_ref().unwrap().nested.as_ref().unwrap().offset;
        let want = unhex(m["mean"].as_str().unwrap());
        assert_eq!(offset.to_le_bytes().to_vec(), want, "mean of {} values", values.len());
        compared += 1;
    }
    assert!(compared >= 10);
}

#[test]
fn names_and_bad_storage_are_refused() {
    for bad in ["bnb:nf4,blocksize=16", "bnb:nf4,blocksize=x", "bnb:int4", "bnb:fp4,nested=1", "bnb:nf4,group=64"] {
        assert!(Scheme::parse(bad).is_err(), "{bad}");
    }
    let scheme = Scheme::parse("bnb:nf4").unwrap();
    let raw: Vec<u8> = (0..128).flat_map(|i| (i as f32 * 0.1 - 3.0).to_le_bytes()).collect();
    let q = quantize_weight(DType::Float, &raw, &[2, 64], &scheme, None).unwrap();
    let good = storage(&q).unwrap();
    // A short weight, a missing state, a state of another shape: typed errors, no panic.
    let mut short = good.clone();
    short[0].data.pop();
    assert!(from_storage(&short, &scheme, &[2, 64]).is_err());
    let without: Vec<StoredTensor> = good.iter().filter(|s| !s.name.starts_with("quant_state")).cloned().collect();
    assert!(from_storage(&without, &scheme, &[2, 64]).is_err());
    assert!(from_storage(&good, &scheme, &[4, 32]).is_err());
    assert!(from_storage(&good, &Scheme::parse("bnb:nf4,nested").unwrap(), &[2, 64]).is_err());
    let mut garbled = good.clone();
    let last = garbled.len() - 1;
    garbled[last].data[0] = b'[';
    let err = from_storage(&garbled, &scheme, &[2, 64]).unwrap_err().to_string();
    assert!(err.contains("byte 0"), "{err}");
    // A huge claimed shape is refused before anything is allocated for it.
    assert!(from_storage(&good, &scheme, &[usize::MAX / 2, 64]).is_err());
}
