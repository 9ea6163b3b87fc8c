//! `quant::blocks` against the live implementations: every case of tests/data/blocks/manifest.json
//! (made by scripts/gen_block_fixtures.py from torchao, ModelOpt, compressed-tensors and gguf;
//! DeepSeek's cases are a transcription, see the fixtures' README). For every case: the element
//! codes, the scales, the per-tensor scale, the packed bytes where the implementation has them and
//! the dequantized values, bit for bit; refusals where the implementation raised. The test counts
//! what it compared and fails on zero.
//!
//! Every value is compared bit for bit: element codes, scale codes and float scales, packed
//! bytes and dequantized values, NaN codes, NaN payloads and the sign of zero included. The NaNs
//! the implementations write on x86-64 are the rows' (the `torch` profile's casts, the NaN a
//! product of two NaNs keeps, the bits of a NaN block maximum taken through torch's vectorized
//! max, torch's bfloat16 NaN in the vectorized loop and in its scalar tail). The rows of gguf's numpy
//! port (`"reference": "gguf-port"`, the `ggml:*` quantize cases) are checked against lowbit's
//! `gguf-py:*` rows, every row (the `differs_from_ggml_c` rows included: the port is a producer of
//! its own); ggml's C is checked live by scripts/crosscheck_ggml.py.

use lowbit::quant::blocks::{self, Quantized, Scales, Scheme};
use serde_json::Value;
use std::collections::BTreeMap;

/// Schemes recorded in the fixtures that lowbit does not offer (none today).
const NOT_OFFERED: &[&str] = &[];

/// Cases whose dequantized values lowbit does not reproduce (their elements, scales and packed
/// bytes are compared); none today.
const DEQUANTIZED_NOT_REPRODUCED: &[(&str, &str)] = &[];

struct Data {
    manifest: Value,
    dir: String,
}

impl Data {
    fn load() -> Data {
        let dir = format!("{}/tests/data/blocks", env!("CARGO_MANIFEST_DIR"));
        let manifest = serde_json::from_str(&std::fs::read_to_string(format!("{dir}/manifest.json")).unwrap()).unwrap();
        Data { manifest, dir }
    }

    fn bytes(&self, file: &str, array: &Value) -> (Vec<u8>, Vec<usize>, String) {
        let raw = std::fs::read(format!("{}/{file}", self.dir)).unwrap();
        let offset = array["offset"].as_u64().unwrap() as usize;
        let nbytes = array["nbytes"].as_u64().unwrap() as usize;
        let shape = array["shape"].as_array().unwrap().iter().map(|d| d.as_u64().unwrap() as usize).collect();
        (raw[offset..offset + nbytes].to_vec(), shape, array["dtype"].as_str().unwrap().to_string())
    }
}

fn u16s(b: &[u8]) -> Vec<u16> {
    b.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect()
}

fn f32s(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

#[derive(Default)]
struct Tally {
    cases: usize,
    values: usize,
    failures: Vec<String>,
}

impl Tally {
    fn check(&mut self, ok: bool, what: impl FnOnce() -> String) {
        self.values += 1;
        if !ok {
            self.failures.push(what());
        }
    }

    /// float32 values bit for bit.
    fn check_f32(&mut self, a: f32, b: f32, what: impl FnOnce() -> String) {
        self.check(a.to_bits() == b.to_bits(), what);
    }
}

/// The scheme a case checks: gguf-py's numpy port made the `ggml:*` quantize cases
/// (`"reference": "gguf-port"`), which lowbit reproduces as the `gguf-py:*` rows (the `ggml:*` rows
/// are ggml's C, checked live by scripts/crosscheck_ggml.py); every other case its own.
fn case_scheme(name: &str, case: &Value) -> String {
    match (case["reference"].as_str(), name.strip_prefix("ggml:")) {
        (Some("gguf-port"), Some(format)) => format!("gguf-py:{format}"),
        _ => name.to_string(),
    }
}

fn compare(t: &mut Tally, label: &str, q: &Quantized, want: &BTreeMap<String, (Vec<u8>, Vec<usize>, String)>) {
    let (we, _, _) = &want["elements"];
    assert_eq!(q.elements.len(), we.len(), "{label}: element count");
    for (i, (&a, &b)) in q.elements.iter().zip(we).enumerate() {
        t.check(a == b, || format!("{label}: element {i}: lowbit {a:#x}, implementation {b:#x}"));
    }
    let (ws, _, sdtype) = &want["scales"];
    match (&q.scales, sdtype.as_str()) {
        (Scales::Codes(c), "u8") => {
            for (i, (&a, &b)) in c.iter().zip(ws).enumerate() {
                t.check(a == b, || format!("{label}: scale {i}: lowbit {a:#x}, implementation {b:#x}"));
            }
            assert_eq!(c.len(), ws.len(), "{label}: scale count");
        }
        (Scales::Float16(v), "f16") | (Scales::Bfloat16(v), "bf16") => {
            let w = u16s(ws);
            assert_eq!(v.len(), w.len(), "{label}: scale count");
            for (i, (&a, &b)) in v.iter().zip(&w).enumerate() {
                t.check(a == b, || format!("{label}: scale {i}: lowbit {a:#06x}, implementation {b:#06x}"));
            }
        }
        (Scales::Float32(v), "f32") => {
            let w = f32s(ws);
            assert_eq!(v.len(), w.len(), "{label}: scale count");
            for (i, (&a, &b)) in v.iter().zip(&w).enumerate() {
                t.check_f32(a, b, || format!("{label}: scale {i}: lowbit {a:e}, implementation {b:e}"));
            }
        }
        (s, d) => t.check(false, || format!("{label}: scales {s:?} where the implementation has {d}")),
    }
    match (want.get("global_scale"), q.global_scale) {
        (Some((g, _, _)), Some(a)) => {
            let b = f32s(g)[0];
            t.check_f32(a, b, || format!("{label}: global scale lowbit {a:e}, implementation {b:e}"));
        }
        (None, None) => {}
        (w, a) => t.check(false, || format!("{label}: global scale lowbit {a:?}, implementation {}", w.is_some())),
    }
    if let Some((wb, _, _)) = want.get("bytes") {
        let bytes = q.to_bytes().unwrap();
        // ONNX layouts: the fixture holds the packed elements, which come first.
        assert!(bytes.len() >= wb.len(), "{label}: {} bytes, the implementation's {}", bytes.len(), wb.len());
        for (i, (&a, &b)) in bytes.iter().zip(wb).enumerate() {
            t.check(a == b, || format!("{label}: byte {i}: lowbit {a:#04x}, implementation {b:#04x}"));
        }
    }
    if let Some((wd, _, _)) = want.get("dequantized") {
        let back = q.dequantize().unwrap();
        for (i, (&a, &b)) in back.iter().zip(&f32s(wd)).enumerate() {
            t.check_f32(a, b, || {
                format!(
                    "{label}: dequantized {i}: lowbit {a:e} ({:#x}), implementation {b:e} ({:#x})",
                    a.to_bits(),
                    b.to_bits()
                )
            });
        }
    }
}

#[test]
fn every_fixture_case() {
    let data = Data::load();
    let m = &data.manifest;
    let mut t = Tally::default();
    let mut not_offered = 0;
    let mut not_reproduced = 0;
    for s in m["schemes"].as_array().unwrap() {
        let name = s["scheme"].as_str().unwrap();
        if NOT_OFFERED.contains(&name) {
            not_offered += s["cases"].as_array().unwrap().len();
            continue;
        }
        let file = s["file"].as_str().unwrap();
        let axis = s["axis"].as_i64().unwrap();
        for case in s["cases"].as_array().unwrap() {
            let name = case_scheme(name, case);
            let scheme = Scheme::parse(&name).unwrap_or_else(|e| panic!("{name}: {e}"));
            let label = format!("{name} {}", case["case"].as_str().unwrap());
            let (input, shape, dtype) =
                data.bytes(m["inputs_file"].as_str().unwrap(), &m["inputs"][case["input"].as_str().unwrap()]);
            let mut want: BTreeMap<String, (Vec<u8>, Vec<usize>, String)> = case["arrays"]
                .as_object()
                .map(|a| a.iter().map(|(k, v)| (k.clone(), data.bytes(file, v))).collect())
                .unwrap_or_default();
            if DEQUANTIZED_NOT_REPRODUCED.contains(&(name.as_str(), case["case"].as_str().unwrap())) {
                not_reproduced += want.remove("dequantized").map_or(0, |d| d.0.len() / 4);
            }
            t.cases += 1;
            if case["direction"] == "dequantize" {
                let out_shape = want["elements"].1.clone();
                let q = blocks::from_bytes(&input, &scheme, &out_shape, axis).unwrap();
                compare(&mut t, &label, &q, &want);
                continue;
            }
            let explicit_global = case["case"].as_str().unwrap().contains("global_");
            let global = if explicit_global { want.get("global_scale").map(|g| f32s(&g.0)[0]) } else { None };
            let result = match dtype.as_str() {
                "f32" => blocks::quantize(&f32s(&input), &shape, &scheme, axis, global),
                "bf16" => {
                    let x: Vec<half::bf16> = u16s(&input).into_iter().map(half::bf16::from_bits).collect();
                    blocks::quantize(&x, &shape, &scheme, axis, global)
                }
                "f16" => {
                    let x: Vec<half::f16> = u16s(&input).into_iter().map(half::f16::from_bits).collect();
                    blocks::quantize(&x, &shape, &scheme, axis, global)
                }
                other => panic!("{label}: input dtype {other}"),
            };
            if case.get("error").is_some() || case.get("dequantize_error").is_some() {
                // The implementation refused (or, ModelOpt on a short block, could not dequantize
                // what it made): lowbit refuses at quantize, naming the rule.
                t.check(result.is_err(), || format!("{label}: the implementation raised, lowbit quantized"));
                continue;
            }
            let q = result.unwrap_or_else(|e| panic!("{label}: {e}"));
            compare(&mut t, &label, &q, &want);
        }
    }
    println!(
        "{} cases, {} values compared, {not_offered} cases of schemes not offered, {not_reproduced} dequantized \
         values not compared (DEQUANTIZED_NOT_REPRODUCED)",
        t.cases, t.values
    );
    let mut per_scheme: BTreeMap<String, Vec<&String>> = BTreeMap::new();
    for f in &t.failures {
        per_scheme.entry(f.split(' ').next().unwrap().to_string()).or_default().push(f);
    }
    for (scheme, fails) in &per_scheme {
        println!("{scheme}: {} differences", fails.len());
        let shown = if std::env::var_os("BLOCKS_ALL_DIFFERENCES").is_some() { fails.len() } else { 6 };
        for f in fails.iter().take(shown) {
            println!("    {f}");
        }
    }
    assert!(t.cases > 300 && t.values > 200_000, "too little compared: {} cases, {} values", t.cases, t.values);
    assert!(t.failures.is_empty(), "{} differences", t.failures.len());
}

/// compressed-tensors' FP8 weights of float16 models where NaN elements meet NaN scales, over
/// inner-loop lengths and tensor sizes that show torch's float16 multiply and float16 -> float32
/// widening keeping one NaN or another by place (recorded by scripts/gen_block_nan_fixtures.py).
#[test]
fn float16_nan_products_by_place() {
    let path = format!("{}/tests/data/blocks_nan/fp8_f16.json", env!("CARGO_MANIFEST_DIR"));
    let data: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let numbers = |v: &Value| v.as_array().unwrap().iter().map(|n| n.as_u64().unwrap()).collect::<Vec<u64>>();
    let (mut compared, mut differences) = (0usize, Vec::new());
    for case in data["cases"].as_array().unwrap() {
        let name = case["scheme"].as_str().unwrap();
        let shape: Vec<usize> = numbers(&case["shape"]).into_iter().map(|d| d as usize).collect();
        let x: Vec<half::f16> =
            numbers(&case["input_f16"]).into_iter().map(|h| half::f16::from_bits(h as u16)).collect();
        let q = blocks::quantize(&x, &shape, &Scheme::parse(name).unwrap(), -1, None).unwrap();
        let Scales::Float16(scales) = &q.scales else { panic!("{name}: float16 scales") };
        let got: Vec<u64> = q.elements.iter().map(|&c| u64::from(c)).collect();
        let got_scales: Vec<u64> = scales.iter().map(|&h| u64::from(h)).collect();
        let got_values: Vec<u64> = q.dequantize().unwrap().iter().map(|v| u64::from(v.to_bits())).collect();
        for (what, mine, theirs) in [
            ("elements", got, numbers(&case["elements"])),
            ("scales", got_scales, numbers(&case["scales_f16"])),
            ("dequantized", got_values, numbers(&case["dequantized_f32"])),
        ] {
            assert_eq!(mine.len(), theirs.len(), "{name} {shape:?} {what}");
            compared += mine.len();
            for (k, (a, b)) in mine.iter().zip(&theirs).enumerate() {
                if a != b {
                    differences.push(format!("{name} {shape:?} {what}[{k}]: lowbit {a:#x}, compressed-tensors {b:#x}"));
                }
            }
        }
    }
    println!("{compared} values compared");
    assert!(compared > 2000, "{compared}");
    assert!(differences.is_empty(), "{} differences:\n{}", differences.len(), differences.join("\n"));
}
