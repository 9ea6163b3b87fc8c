//! `checkpoint quantize` and `checkpoint which`: files quantized by the producers' own code
//! (tests/fixtures/checkpoints/quantize/, made by scripts/crosscheck_checkpoint_quantize.py
//! --write-fixtures with compressed-tensors 0.20.0, nvidia-modelopt 0.47.0 and gguf 0.19.0) are
//! reproduced byte for byte and named by `which`; hand-built weights give hand-computed bytes;
//! refusals name the tensor and write nothing.

#![cfg(feature = "checkpoint")]

use lowbit::checkpoint::{
    choose, overall, quantize_checkpoint, recognise, which, write_safetensors, Checkpoint, SafetensorsTensor, Selection,
};
use lowbit::quant::blocks::Scheme;
use lowbit::{DType, Error};
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/checkpoints/quantize").join(name)
}

const QUANTIZED: [&str; 2] = ["model.layers.0.mlp.up_proj.weight", "model.layers.0.self_attn.o_proj.weight"];

/// (scheme, the producer's file of the original quantized under it).
const PRODUCERS: [(&str, &str); 7] = [
    ("compressed-tensors:nvfp4", "compressed-tensors-nvfp4"),
    ("compressed-tensors:mxfp4", "compressed-tensors-mxfp4"),
    ("fp8:channel", "compressed-tensors-fp8-channel"),
    ("modelopt:nvfp4", "modelopt-nvfp4"),
    ("ggml:q8_0", "ggml-q8_0.gguf"),
    ("ggml:q4_0", "ggml-q4_0.gguf"),
    ("ggml:mxfp4", "ggml-mxfp4.gguf"),
];

fn quantize_original(scheme: &str, out: &Path) -> Checkpoint {
    let original = Checkpoint::open(fixture("original")).unwrap();
    let scheme = Scheme::parse(scheme).unwrap();
    quantize_checkpoint(&original, &scheme, &Selection::default(), out, 2, None, &mut |_, _| {}).unwrap();
    Checkpoint::open(out).unwrap()
}

#[test]
fn the_producers_files_are_reproduced_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    for (scheme, file) in PRODUCERS {
        let out = dir.path().join(if file.ends_with(".gguf") { file.to_string() } else { format!("{file}.out") });
        let ours = quantize_original(scheme, &out);
        let theirs = Checkpoint::open(fixture(file)).unwrap();
        let mut compared = 0;
        for w in recognise(&theirs).iter().filter(|w| w.scheme.is_some()) {
            assert!(QUANTIZED.contains(&w.name.as_str()), "{file}: {}", w.name);
            for name in w.tensors() {
                let (a, b) = (ours.tensor(name).unwrap(), theirs.tensor(name).unwrap());
                assert_eq!((a.stored, &a.shape), (b.stored, &b.shape), "{file}: {name}");
                assert_eq!(ours.bytes(a), theirs.bytes(b), "{file}: {name}");
                compared += b.len;
            }
        }
        assert!(compared > 0, "{file}: nothing compared");
        // Our file carries the same quantized weights under the same scheme.
        let schemes: Vec<_> = recognise(&ours).into_iter().filter_map(|w| w.scheme).collect();
        assert_eq!(schemes, [scheme, scheme], "{file}");
        // And compressed-tensors' own quantization_config (QuantizationConfig.model_dump).
        if file.starts_with("compressed-tensors") {
            let config = |c: &Checkpoint| c.config().unwrap()["quantization_config"].clone();
            assert_eq!(config(&ours), config(&theirs), "{file}");
        }
    }
}

#[test]
fn which_names_the_producer_of_each_file() {
    let original = Checkpoint::open(fixture("original")).unwrap();
    for (scheme, file) in PRODUCERS {
        let theirs = Checkpoint::open(fixture(file)).unwrap();
        let origins = which(&theirs, &original, &Selection::default(), 1, None, &mut |_, _| {}).unwrap();
        assert_eq!(origins.len(), 2, "{file}");
        let totals = overall(&origins);
        let best = &totals[0];
        assert_eq!((best.elements_matched, best.scales_matched), (best.elements, best.scales), "{file}");
        let exact: Vec<&str> = totals.iter().filter(|r| r.share() == 1.0).map(|r| r.scheme.as_str()).collect();
        assert!(exact.contains(&scheme), "{file}: {exact:?}");
    }
}

#[test]
fn which_tells_the_nvfp4_global_scale_conventions_apart() {
    // ModelOpt stores a decode scale amax/2688, compressed-tensors an encode scale 2688/amax:
    // the other recipe's per-tensor scale never matches, so each file has one exact recipe family.
    let original = Checkpoint::open(fixture("original")).unwrap();
    for (file, right, wrong) in [
        ("compressed-tensors-nvfp4", "compressed-tensors:nvfp4", "modelopt:nvfp4"),
        ("modelopt-nvfp4", "modelopt:nvfp4", "compressed-tensors:nvfp4"),
    ] {
        let totals = overall(
            &which(
                &Checkpoint::open(fixture(file)).unwrap(),
                &original,
                &Selection::default(),
                2,
                None,
                &mut |_, _| {},
            )
            .unwrap(),
        );
        let share = |s: &str| totals.iter().find(|r| r.scheme == s).unwrap().share();
        assert_eq!(share(right), 1.0, "{file}");
        assert!(share(wrong) < 1.0, "{file}");
        assert!(
            lowbit::checkpoint::summary(&totals).starts_with(&format!("this file was made by {}", totals[0].scheme))
        );
    }
}

#[test]
fn which_names_each_mx_scale_mode_lowbit_writes() {
    let dir = tempfile::tempdir().unwrap();
    let original = Checkpoint::open(fixture("original")).unwrap();
    for scheme in ["ocp:mxfp4", "torchao:mxfp4,scale=even", "torchao:mxfp4,scale=rceil", "deepseek:fp8,scale_fmt=ue8m0"]
    {
        let out = dir.path().join(scheme.replace([':', ',', '='], "_"));
        let ours = quantize_original(scheme, &out);
        let totals = overall(&which(&ours, &original, &Selection::default(), 2, None, &mut |_, _| {}).unwrap());
        let exact: Vec<&str> = totals.iter().filter(|r| r.share() == 1.0).map(|r| r.scheme.as_str()).collect();
        assert!(exact.contains(&scheme), "{scheme}: {exact:?}");
    }
}

#[test]
fn the_default_choice_leaves_embeddings_and_norms() {
    let original = Checkpoint::open(fixture("original")).unwrap();
    let choices = choose(&original, &Scheme::parse("modelopt:nvfp4").unwrap(), &Selection::default()).unwrap();
    let quantized: Vec<&str> = choices.iter().filter(|c| c.quantized).map(|c| c.name.as_str()).collect();
    let mut want = QUANTIZED.to_vec();
    want.sort_unstable();
    let mut got = quantized.clone();
    got.sort_unstable();
    assert_eq!(got, want);
}

/// `quantize_checkpoint` of `scheme` over the tensors `only` selects, one thread, no shard, no
/// progress.
fn quantize_selected(
    ckpt: &Checkpoint,
    scheme: &str,
    only: &Selection,
    out: &Path,
) -> lowbit::Result<lowbit::checkpoint::QuantizeReport> {
    quantize_checkpoint(ckpt, &Scheme::parse(scheme).unwrap(), only, out, 1, None, &mut |_, _| {})
}

/// A one-tensor float32 checkpoint `w.weight` of `shape`.
fn hand_built(dir: &Path, shape: &[usize], values: &[f32]) -> Checkpoint {
    let path = dir.join("hand.safetensors");
    let t = SafetensorsTensor { name: "w.weight".into(), dtype: DType::Float, shape: shape.to_vec() };
    write_safetensors(&path, &[t], &[], |_, out| {
        for v in values {
            out.write_all(&v.to_le_bytes()).map_err(|e| Error::io(&path, e))?;
        }
        Ok(())
    })
    .unwrap();
    Checkpoint::open(&path).unwrap()
}

#[test]
fn which_tells_ggml_c_from_gguf_py_where_they_differ() {
    // Q8_0 block [200, NaN, 100, 0.5 ...]: ggml's C keeps a running MAX that the NaN resets (amax
    // 100, and 200 wraps to 0xFE), gguf-py's numpy max is NaN (d 0x7E00, every code 0). Q4_0's
    // all -0.0 block: C stores d = -0.0, gguf-py +0. A file written by either is reproduced in
    // full by its own row only.
    let dir = tempfile::tempdir().unwrap();
    let mut x = vec![0.5f32; 64];
    x[..3].copy_from_slice(&[200.0, f32::NAN, 100.0]);
    x[32..].fill(-0.0);
    let original = hand_built(dir.path(), &[2, 32], &x);
    for (format, blocks_differing) in [("q8_0", 1), ("q4_0", 2)] {
        let (c, port) = (format!("ggml:{format}"), format!("gguf-py:{format}"));
        for (made_by, other) in [(&c, &port), (&port, &c)] {
            let out = dir.path().join(format!("{}.gguf", made_by.replace(':', "-")));
            quantize_selected(&original, made_by, &Selection::default(), &out).unwrap();
            let file = Checkpoint::open(&out).unwrap();
            let totals = overall(&which(&file, &original, &Selection::default(), 1, None, &mut |_, _| {}).unwrap());
            let share = |s: &str| totals.iter().find(|r| r.scheme == s).unwrap_or_else(|| panic!("{s}")).share();
            assert_eq!(share(made_by), 1.0, "{made_by}: {totals:?}");
            assert!(share(other) < 1.0, "{other} on {made_by}'s file ({blocks_differing} blocks differ)");
            assert_eq!(totals[0].scheme, *made_by);
        }
    }
}

#[test]
fn a_hand_built_block_in_the_gpt_oss_layout() {
    // OCP MX: amax 6 -> scale 2^(floor(log2 6) - 2) = 1, E8M0 127; E2M1 codes 1.0 -> 2,
    // 2.0 -> 4, -0.5 -> 9, 6.0 -> 7, two a byte, low nibble first: 0x42, 0x79.
    let dir = tempfile::tempdir().unwrap();
    let mut x = [0.0f32; 32];
    x[..4].copy_from_slice(&[1.0, 2.0, -0.5, 6.0]);
    let ckpt = hand_built(dir.path(), &[1, 32], &x);
    let out = dir.path().join("mx");
    quantize_selected(&ckpt, "ocp:mxfp4", &Selection::default(), &out).unwrap();
    let q = Checkpoint::open(&out).unwrap();
    let blocks = q.tensor("w.weight_blocks").unwrap();
    assert_eq!(blocks.shape, [1, 1, 16]);
    let mut want = [0u8; 16];
    want[..2].copy_from_slice(&[0x42, 0x79]);
    assert_eq!(q.bytes(blocks), want);
    assert_eq!(q.bytes(q.tensor("w.weight_scales").unwrap()), [127]);
    let config = q.config().unwrap();
    assert_eq!(config["quantization_config"]["quant_method"], "mxfp4");
}

#[test]
fn a_hand_built_block_in_the_compressed_tensors_mxfp4_layout() {
    // compressed-tensors MXFP4: scale 2^(floor(log2 amax) - 2), stored as the E8M0 exponent.
    // Row 0: amax 6 -> 2^0, code 127; 1.0 -> 2, 2.0 -> 4, -0.5 -> 9, 6.0 -> 7: bytes 0x42, 0x79.
    // Row 1: amax 0.75 -> 2^(-1 - 2), code 124; 0.75 / 0.125 = 6 -> 7, -2 -> 0xC, 0.8 -> 1.0 = 2,
    // -0.08 -> -0 = 8 (the sign kept): bytes 0xC7, 0x82. Low nibble first, zeros after.
    let dir = tempfile::tempdir().unwrap();
    let mut x = [0.0f32; 64];
    x[..4].copy_from_slice(&[1.0, 2.0, -0.5, 6.0]);
    x[32..36].copy_from_slice(&[0.75, -0.25, 0.1, -0.01]);
    let ckpt = hand_built(dir.path(), &[2, 32], &x);
    let out = dir.path().join("ct-mxfp4");
    quantize_selected(&ckpt, "compressed-tensors:mxfp4", &Selection::default(), &out).unwrap();
    let q = Checkpoint::open(&out).unwrap();
    let names: Vec<&str> = q.tensors().iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["w.weight_packed", "w.weight_scale"]);
    let packed = q.tensor("w.weight_packed").unwrap();
    assert_eq!((packed.stored, &packed.shape[..]), (lowbit::checkpoint::StoredType::Plain(DType::Uint8), &[2, 16][..]));
    let mut want = [0u8; 32];
    want[..2].copy_from_slice(&[0x42, 0x79]);
    want[16..18].copy_from_slice(&[0xC7, 0x82]);
    assert_eq!(q.bytes(packed), want);
    let scale = q.tensor("w.weight_scale").unwrap();
    assert_eq!((scale.stored, &scale.shape[..]), (lowbit::checkpoint::StoredType::Plain(DType::Uint8), &[2, 1][..]));
    assert_eq!(q.bytes(scale), [127, 124]);
    // The config compressed-tensors' MXFP4A16 preset dumps (QuantizationConfig.model_dump).
    let config = &q.config().unwrap()["quantization_config"];
    assert_eq!(config["format"], "mxfp4-pack-quantized");
    assert_eq!(config["quant_method"], "compressed-tensors");
    assert_eq!(
        config["config_groups"]["group_0"]["weights"],
        serde_json::json!({ "num_bits": 4, "type": "float", "symmetric": true, "group_size": 32,
                            "strategy": "group", "dynamic": false, "scale_dtype": "torch.uint8" })
    );
    let weights = recognise(&q);
    assert_eq!(weights[0].scheme.as_deref(), Some("compressed-tensors:mxfp4"));
}

#[test]
fn a_hand_built_block_in_the_modelopt_layout() {
    // ModelOpt: global decode scale amax / (6 * 448) = 1/448; block scale amax_b / (6 * G) = 448
    // (E4M3 0x7E); elements x / (448 / 448) = x: 6 -> 7, 3 -> 5, -1.5 -> 0xB.
    let dir = tempfile::tempdir().unwrap();
    let mut x = [0.0f32; 16];
    x[..3].copy_from_slice(&[6.0, 3.0, -1.5]);
    let ckpt = hand_built(dir.path(), &[1, 16], &x);
    let out = dir.path().join("nvfp4");
    quantize_selected(&ckpt, "modelopt:nvfp4", &Selection::default(), &out).unwrap();
    let q = Checkpoint::open(&out).unwrap();
    assert_eq!(q.bytes(q.tensor("w.weight").unwrap()), [0x57, 0x0B, 0, 0, 0, 0, 0, 0]);
    assert_eq!(q.bytes(q.tensor("w.weight_scale").unwrap()), [0x7E]);
    assert_eq!(q.bytes(q.tensor("w.weight_scale_2").unwrap()), (1.0f32 / 448.0).to_le_bytes());
    assert_eq!(q.quant_config().unwrap()["quantization"]["quant_algo"], "W4A16_NVFP4");
}

#[test]
fn refusals_name_the_tensor_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let original = Checkpoint::open(fixture("original")).unwrap();
    let out = dir.path().join("never");
    let only = Selection { only: Some(regex::Regex::new("norm").unwrap()), ..Selection::default() };
    match quantize_selected(&original, "modelopt:nvfp4", &only, &out) {
        Err(Error::Checkpoint { tensor: Some(t), message, .. }) => {
            assert_eq!(&*t, "\"model.norm.weight\"");
            assert!(message.contains("not a float weight of two or more dimensions"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    assert!(!out.exists());
    match quantize_selected(&original, "ocp:mxfp8e4m3", &Selection::default(), &out) {
        Err(Error::InvalidOp { message, .. }) => assert!(message.contains("no checkpoint convention"), "{message}"),
        other => panic!("{other:?}"),
    }
    assert!(!out.exists());
    // A block the row does not fill: --only naming it is an error (48 is not a multiple of 32).
    let ckpt = hand_built(dir.path(), &[1, 48], &[0.5; 48]);
    let only = Selection { only: Some(regex::Regex::new("w").unwrap()), ..Selection::default() };
    match quantize_selected(&ckpt, "ocp:mxfp4", &only, &out) {
        Err(Error::Checkpoint { tensor: Some(t), message, .. }) => {
            assert_eq!(&*t, "\"w.weight\"");
            assert!(message.contains("not a multiple of the block 32"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    assert!(!out.exists());
}

#[test]
fn the_command_line_names_the_recipe() {
    let done = std::process::Command::new(env!("CARGO_BIN_EXE_lowbit"))
        .args(["checkpoint", "which"])
        .arg(fixture("compressed-tensors-nvfp4"))
        .arg("--from")
        .arg(fixture("original"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&done.stdout);
    assert!(done.status.success(), "{text}");
    assert!(
        text.lines()
            .last()
            .unwrap()
            .starts_with("this file was made by compressed-tensors:nvfp4 (compressed-tensors 0.20.0), 100.000 %"),
        "{text}"
    );
}

#[test]
fn shards_split_the_tensors_between_them() {
    let original = Checkpoint::open(fixture("original")).unwrap();
    let scheme = Scheme::parse("modelopt:nvfp4").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let names = |out: &Path| -> Vec<String> {
        let mut n: Vec<String> = Checkpoint::open(out).unwrap().tensors().iter().map(|t| t.name.clone()).collect();
        n.sort();
        n
    };
    quantize_checkpoint(&original, &scheme, &Selection::default(), &dir.path().join("all"), 1, None, &mut |_, _| {})
        .unwrap();
    let mut both = Vec::new();
    for k in 1..=2 {
        let out = dir.path().join(format!("half{k}"));
        quantize_checkpoint(&original, &scheme, &Selection::default(), &out, 1, Some((k, 2)), &mut |_, _| {}).unwrap();
        let half = names(&out);
        assert_eq!(half.len(), 4, "{half:?}"); // two tensors each: one quantized weight (3 parts) + one kept
        both.extend(half);
    }
    both.sort();
    assert_eq!(both, names(&dir.path().join("all")));
}

#[test]
fn progress_is_reported_per_output_tensor_up_to_the_total() {
    let original = Checkpoint::open(fixture("original")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let scheme = Scheme::parse("modelopt:nvfp4").unwrap();
    let mut seen = Vec::new();
    let out = dir.path().join("q");
    quantize_checkpoint(&original, &scheme, &Selection::default(), &out, 1, None, &mut |k, n| seen.push((k, n)))
        .unwrap();
    // The output holds the written tensors; each is announced once, in order, with the total.
    let total = Checkpoint::open(&out).unwrap().tensors().len();
    assert_eq!(seen, (0..total).map(|k| (k, total)).collect::<Vec<_>>());
    let mut seen = Vec::new();
    let origins = which(
        &Checkpoint::open(fixture("modelopt-nvfp4")).unwrap(),
        &original,
        &Selection::default(),
        1,
        None,
        &mut |k, n| seen.push((k, n)),
    )
    .unwrap();
    let n = origins.len();
    assert_eq!(n, 2);
    assert_eq!(seen, (0..=n).map(|k| (k, n)).collect::<Vec<_>>());
}

/// With stderr a pipe (as here), no command draws a progress bar: stderr stays empty.
#[test]
fn the_commands_write_no_progress_text_into_a_pipe() {
    let dir = tempfile::tempdir().unwrap();
    let nvfp4 = fixture("compressed-tensors-nvfp4");
    let (quantized, converted, decoded) =
        (dir.path().join("q"), dir.path().join("c"), dir.path().join("d.safetensors"));
    let runs: Vec<Vec<std::ffi::OsString>> = vec![
        vec![
            "quantize".into(),
            fixture("original").into(),
            "--scheme".into(),
            "modelopt:nvfp4".into(),
            "--out".into(),
            quantized.clone().into(),
        ],
        vec!["which".into(), nvfp4.clone().into(), "--from".into(), fixture("original").into()],
        vec![
            "convert".into(),
            fixture("ggml-mxfp4.gguf").into(),
            "--to".into(),
            "gpt-oss".into(),
            "--out".into(),
            converted.into(),
        ],
        vec!["dequantize".into(), nvfp4.clone().into(), "--out".into(), decoded.into()],
        vec!["compare".into(), nvfp4.clone().into(), nvfp4.into()],
    ];
    for args in runs {
        let done =
            std::process::Command::new(env!("CARGO_BIN_EXE_lowbit")).arg("checkpoint").args(&args).output().unwrap();
        assert!(done.status.success(), "{args:?}: {}", String::from_utf8_lossy(&done.stderr));
        assert_eq!(String::from_utf8_lossy(&done.stderr), "", "{args:?}");
    }
    assert!(quantized.join("model.safetensors").exists());
}

/// The fixture array `key` of `scheme`'s case `case` in tests/data/blocks (recorded from the
/// implementations by scripts/gen_block_fixtures.py), with its input's bytes and shape.
fn block_fixture(scheme: &str, case: &str, key: &str) -> (Vec<u8>, Vec<usize>, Vec<u8>) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/blocks");
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    let slice = |file: &str, a: &serde_json::Value| {
        let raw = std::fs::read(dir.join(file)).unwrap();
        let (o, n) = (a["offset"].as_u64().unwrap() as usize, a["nbytes"].as_u64().unwrap() as usize);
        raw[o..o + n].to_vec()
    };
    let s = m["schemes"].as_array().unwrap().iter().find(|s| s["scheme"] == scheme).unwrap();
    let c = s["cases"].as_array().unwrap().iter().find(|c| c["case"] == case).unwrap();
    let input = &m["inputs"][c["input"].as_str().unwrap()];
    let shape = input["shape"].as_array().unwrap().iter().map(|d| d.as_u64().unwrap() as usize).collect();
    (slice(m["inputs_file"].as_str().unwrap(), input), shape, slice(s["file"].as_str().unwrap(), &c["arrays"][key]))
}

#[test]
fn float16_weights_quantize_as_the_implementations_quantize_them() {
    // A float16 weight, quantized by the schemes whose implementations take float16: the stored
    // elements and scales are the implementation's own (recorded on the same float16 input).
    let dir = tempfile::tempdir().unwrap();
    let (input, shape, _) = block_fixture("fp8:channel", "random_f16", "elements");
    let path = dir.path().join("half.safetensors");
    let t = SafetensorsTensor { name: "w.weight".into(), dtype: DType::Float16, shape: shape.clone() };
    write_safetensors(&path, &[t], &[], |_, out| out.write_all(&input).map_err(|e| Error::io(&path, e))).unwrap();
    let ckpt = Checkpoint::open(&path).unwrap();
    let only = Selection { only: Some(regex::Regex::new("w").unwrap()), ..Selection::default() };
    let mut compared = 0;
    for (scheme, elements, scale, scale_dtype) in [
        ("fp8:channel", "w.weight", "w.weight_scale", DType::Float16),
        ("fp8:group=128", "w.weight", "w.weight_scale", DType::Float16),
        ("compressed-tensors:nvfp4", "w.weight_packed", "w.weight_scale", DType::Float8E4M3FN),
        ("compressed-tensors:mxfp4", "w.weight_packed", "w.weight_scale", DType::Uint8),
    ] {
        let out = dir.path().join(scheme.replace([':', '=', ','], "_"));
        quantize_selected(&ckpt, scheme, &only, &out).unwrap_or_else(|e| panic!("{scheme}: {e}"));
        let q = Checkpoint::open(&out).unwrap();
        let key = if elements.ends_with("packed") { "bytes" } else { "elements" };
        for (name, key, dtype) in [(elements, key, None), (scale, "scales", Some(scale_dtype))] {
            let stored = q.tensor(name).unwrap_or_else(|| panic!("{scheme}: no {name}"));
            if let Some(d) = dtype {
                assert_eq!(stored.stored, lowbit::checkpoint::StoredType::Plain(d), "{scheme} {name}");
            }
            let want = block_fixture(scheme, "random_f16", key).2;
            assert_eq!(q.bytes(stored), &want[..], "{scheme} {name}");
            compared += want.len();
        }
    }
    assert!(compared > 2000, "{compared} bytes compared");
    // torchao refuses float16 (its to_mx asserts): so does lowbit, naming the ways out.
    let out = dir.path().join("never");
    match quantize_selected(&ckpt, "torchao:mxfp4,scale=rceil", &only, &out) {
        Err(Error::Checkpoint { tensor: Some(t), message, .. }) => {
            assert_eq!(&*t, "\"w.weight\"");
            assert!(message.contains("FLOAT16") && message.contains("--skip REGEX"), "{message}");
            assert!(message.contains("float32"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    assert!(!out.exists());
}
