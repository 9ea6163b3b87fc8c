//! The recorded cases of an integer family (manifest.json + data.bin under tests/data/integer/gptq
//! and tests/data/integer/awq, made by scripts/gen_integer_gptq_fixtures.py from the live
//! producer) checked against lowbit: for every case the producer's tensors byte for byte from
//! `quantize_weight` + `storage`, its float16 dequantized weight from `dequantize_as`, the same
//! two from `from_storage` of its own tensors, and a refusal where the producer raised.

use lowbit::quant::blocks::{self, Scheme, StoredTensor};
use lowbit::DType;
use serde_json::Value;

/// What one family's cases compared.
#[derive(Debug, Default)]
pub struct Tally {
    pub cases: usize,
    pub tensor_bytes: usize,
    pub values: usize,
    pub refusals: usize,
}

fn slice<'a>(data: &'a [u8], at: &Value) -> &'a [u8] {
    let off = at[0].as_u64().unwrap() as usize;
    let len = at[1].as_u64().unwrap() as usize;
    &data[off..off + len]
}

fn dtype(name: &str) -> DType {
    DType::parse(name).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Where two byte strings first differ, for the message.
fn first_difference(a: &[u8], b: &[u8]) -> String {
    match a.iter().zip(b).position(|(x, y)| x != y) {
        Some(i) => format!("byte {i}: lowbit {:#04x}, producer {:#04x}", a[i], b[i]),
        None => format!("lengths {} and {}", a.len(), b.len()),
    }
}

pub fn check_family(family: &str) -> Tally {
    let dir = format!("{}/tests/data/integer/{family}", env!("CARGO_MANIFEST_DIR"));
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{dir}/manifest.json")).unwrap()).unwrap();
    let data = std::fs::read(format!("{dir}/data.bin")).unwrap();
    let mut tally = Tally::default();
    let mut failures = Vec::new();
    for case in manifest["cases"].as_array().unwrap() {
        let label = format!("{} {}", case["scheme"].as_str().unwrap(), case["name"].as_str().unwrap());
        let input_dtype = dtype(case["dtype"].as_str().unwrap());
        let shape: Vec<usize> =
            case["shape"].as_array().unwrap().iter().map(|d| d.as_u64().unwrap() as usize).collect();
        let raw = slice(&data, &case["input"]);
        let g_idx: Option<Vec<i32>> =
            case["g_idx"].as_array().map(|a| a.iter().map(|g| g.as_i64().unwrap() as i32).collect());
        tally.cases += 1;
        let quantized = Scheme::parse(case["scheme"].as_str().unwrap())
            .and_then(|s| blocks::quantize_weight(input_dtype, raw, &shape, &s, g_idx.as_deref()));
        if let Some(refusal) = case.get("refusal") {
            match quantized {
                Err(_) => tally.refusals += 1,
                Ok(_) => failures.push(format!("{label}: the producer raised {refusal}, lowbit quantized")),
            }
            continue;
        }
        let q = match quantized {
            Ok(q) => q,
            Err(e) => {
                failures.push(format!("{label}: lowbit refused: {e}"));
                continue;
            }
        };
        let expected: Vec<StoredTensor> = case["tensors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| StoredTensor {
                name: t["name"].as_str().unwrap().to_string(),
                dtype: dtype(t["dtype"].as_str().unwrap()),
                shape: t["shape"].as_array().unwrap().iter().map(|d| d.as_u64().unwrap() as usize).collect(),
                data: slice(&data, &t["data"]).to_vec(),
            })
            .collect();
        let values = slice(&data, &case["dequantized_float16"]);
        let reloaded = blocks::from_storage(&expected, &q.scheme, &shape);
        for (how, q) in [("quantize", Ok(q)), ("from_storage", reloaded)] {
            let q = match q {
                Ok(q) => q,
                Err(e) => {
                    failures.push(format!("{label} {how}: {e}"));
                    continue;
                }
            };
            match blocks::storage(&q) {
                Ok(got) => {
                    let names = |ts: &[StoredTensor]| ts.iter().map(|t| t.name.clone()).collect::<Vec<_>>();
                    if names(&got) != names(&expected) {
                        failures.push(format!(
                            "{label} {how}: tensors {:?}, producer {:?}",
                            names(&got),
                            names(&expected)
                        ));
                    }
                    for (g, e) in got.iter().zip(&expected) {
                        if g.dtype != e.dtype || g.shape != e.shape {
                            failures.push(format!(
                                "{label} {how} {}: {:?} {:?}, producer {:?} {:?}",
                                g.name, g.dtype, g.shape, e.dtype, e.shape
                            ));
                        } else if g.data != e.data {
                            failures.push(format!("{label} {how} {}: {}", g.name, first_difference(&g.data, &e.data)));
                        } else {
                            tally.tensor_bytes += g.data.len();
                        }
                    }
                }
                Err(e) => failures.push(format!("{label} {how} storage: {e}")),
            }
            match blocks::dequantize_as(&q, DType::Float16) {
                Ok(got) if got == values => tally.values += got.len() / 2,
                Ok(got) => failures.push(format!("{label} {how} dequantize: {}", first_difference(&got, values))),
                Err(e) => failures.push(format!("{label} {how} dequantize: {e}")),
            }
        }
    }
    assert!(failures.is_empty(), "{} differences:\n{}", failures.len(), failures.join("\n"));
    assert!(tally.values > 0 && tally.tensor_bytes > 0, "nothing compared: {tally:?}");
    tally
}
