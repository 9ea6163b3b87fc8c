//! `checkpoint convert`: hand-built MXFP4 / NVFP4 files (gpt-oss, compressed-tensors, ModelOpt,
//! ggml) moved between conventions, with the bytes the target must hold computed by hand, and the
//! refusals naming the tensor and the element or scale the target cannot hold (nothing written).

#![cfg(feature = "checkpoint")]

use lowbit::checkpoint::{
    convert_checkpoint, write_gguf, write_safetensors, Checkpoint, GgmlType, GgufTensor, SafetensorsTensor, Selection,
};
use lowbit::{DType, Error};
use std::path::Path;

/// A safetensors file of `(name, dtype, shape, bytes)` at `dir/name`.
fn safetensors(dir: &Path, file: &str, tensors: &[(&str, DType, &[usize], Vec<u8>)]) -> Checkpoint {
    std::fs::create_dir_all(dir.join(file)).unwrap();
    let path = dir.join(file).join("model.safetensors");
    let list: Vec<SafetensorsTensor> = tensors
        .iter()
        .map(|(n, d, s, _)| SafetensorsTensor { name: n.to_string(), dtype: *d, shape: s.to_vec() })
        .collect();
    write_safetensors(&path, &list, &[], |k, out| out.write_all(&tensors[k].3).map_err(|e| Error::io(&path, e)))
        .unwrap();
    Checkpoint::open(dir.join(file)).unwrap()
}

/// gpt-oss MXFP4 `w` of shape [1, 32]: E2M1 codes 2, 4, 9, 7 (1.0, 2.0, -0.5, 6.0) then zeros,
/// two a byte low nibble first; scale E8M0 127 (1.0).
fn gpt_oss(dir: &Path, code5: u8) -> Checkpoint {
    let mut blocks = vec![0u8; 16];
    blocks[..3].copy_from_slice(&[0x42, 0x79, code5 << 4]);
    safetensors(
        dir,
        "gpt-oss",
        &[("w_blocks", DType::Uint8, &[1, 1, 16], blocks), ("w_scales", DType::Uint8, &[1, 1], vec![127])],
    )
}

#[test]
fn gpt_oss_mxfp4_becomes_ggml_blocks() {
    // ggml's block_mxfp4: the E8M0 byte, then 16 bytes with element j in the low nibble and
    // element j + 16 in the high nibble (ggml-common.h): [127, 2, 4, 9, 7, 0 x 12].
    let dir = tempfile::tempdir().unwrap();
    let ckpt = gpt_oss(dir.path(), 0);
    let out = dir.path().join("w.gguf");
    convert_checkpoint(&ckpt, "ggml", &out, &Selection::default(), 1, None, &mut |_, _| {}).unwrap();
    let g = Checkpoint::open(&out).unwrap();
    let t = g.tensor("w").unwrap();
    assert_eq!(t.stored, lowbit::checkpoint::StoredType::Ggml(GgmlType::from_name("MXFP4").unwrap()));
    assert_eq!(t.shape, [1, 32]);
    let mut want = vec![127u8, 2, 4, 9, 7];
    want.resize(17, 0);
    assert_eq!(g.bytes(t), want);
    // And back: the same gpt-oss bytes.
    let back = dir.path().join("back");
    convert_checkpoint(&g, "gpt-oss", &back, &Selection::default(), 1, None, &mut |_, _| {}).unwrap();
    let b = Checkpoint::open(&back).unwrap();
    assert_eq!(b.bytes(b.tensor("w_blocks").unwrap()), ckpt.bytes(ckpt.tensor("w_blocks").unwrap()));
    assert_eq!(b.bytes(b.tensor("w_scales").unwrap()), [127]);
    assert_eq!(b.config().unwrap()["quantization_config"]["quant_method"], "mxfp4");
}

#[test]
fn a_negative_zero_ggml_cannot_hold_is_refused() {
    // Element 5 holds E2M1 code 8, -0.0; ggml decodes code 8 as +0 (kvalues_mxfp4[8] = 0).
    let dir = tempfile::tempdir().unwrap();
    let ckpt = gpt_oss(dir.path(), 8);
    let out = dir.path().join("w.gguf");
    match convert_checkpoint(&ckpt, "ggml", &out, &Selection::default(), 1, None, &mut |_, _| {}) {
        Err(Error::Checkpoint { tensor: Some(t), message, .. }) => {
            assert_eq!(&*t, "\"w\"");
            assert!(message.starts_with("element 5: -0e0 (bits 0x80000000) would become 0e0"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    assert!(!out.exists());
}

#[test]
fn a_ggml_scale_of_infinite_blocks_is_refused() {
    // ggml's E8M0 0xFF decodes as 2^127 (GGML_E8M0_TO_FP32_HALF(0xFF) = 2^126, doubled values):
    // element 1.0 is 2^128 = +Inf there, a scale no OCP E8M0 code gives (0xFF is NaN).
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("in.gguf");
    let mut block = vec![0xFFu8, 0x01];
    block.resize(17, 0);
    let t = GgufTensor { name: "w".into(), ggml: GgmlType::from_name("MXFP4").unwrap(), shape: vec![1, 32] };
    write_gguf(&path, &[t], &[], 32, |_, out| out.write_all(&block).map_err(|e| Error::io(&path, e))).unwrap();
    let ckpt = Checkpoint::open(&path).unwrap();
    let out = dir.path().join("out");
    match convert_checkpoint(&ckpt, "gpt-oss", &out, &Selection::default(), 1, None, &mut |_, _| {}) {
        Err(Error::Checkpoint { tensor: Some(t), message, .. }) => {
            assert_eq!(&*t, "\"w\"");
            assert!(
                message.starts_with("block scale 0 (code 0xFF, a scale of inf) has no code in ocp:mxfp4"),
                "{message}"
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(!out.exists());
}

/// ModelOpt NVFP4 `w.weight` [1, 16 * blocks]: codes 7, 5, 0xB (6, 3, -1.5) then zeros; scales
/// E4M3 0x7E (448); weight_scale_2 `g`.
fn modelopt(dir: &Path, g: f32, blocks: usize) -> Checkpoint {
    let mut packed = vec![0x57, 0x0B];
    packed.resize(8 * blocks, 0);
    safetensors(
        dir,
        "modelopt",
        &[
            ("w.weight", DType::Uint8, &[1, 8 * blocks], packed),
            ("w.weight_scale", DType::Float8E4M3FN, &[1, blocks], vec![0x7E; blocks]),
            ("w.weight_scale_2", DType::Float, &[], g.to_le_bytes().to_vec()),
        ],
    )
}

#[test]
fn modelopt_nvfp4_becomes_compressed_tensors_with_the_reciprocal_global_scale() {
    // Decode scale 0.5 -> encode scale 2.0 (exact); codes and the block scale carry over.
    let dir = tempfile::tempdir().unwrap();
    let ckpt = modelopt(dir.path(), 0.5, 1);
    let out = dir.path().join("ct");
    convert_checkpoint(&ckpt, "compressed-tensors", &out, &Selection::default(), 1, None, &mut |_, _| {}).unwrap();
    let c = Checkpoint::open(&out).unwrap();
    assert_eq!(c.bytes(c.tensor("w.weight_packed").unwrap()), [0x57, 0x0B, 0, 0, 0, 0, 0, 0]);
    assert_eq!(c.bytes(c.tensor("w.weight_scale").unwrap()), [0x7E]);
    assert_eq!(c.bytes(c.tensor("w.weight_global_scale").unwrap()), 2.0f32.to_le_bytes());
    assert_eq!(c.config().unwrap()["quantization_config"]["format"], "nvfp4-pack-quantized");
}

#[test]
fn inverse_global_scales_without_an_exact_reciprocal_are_refused() {
    // 1/3 in float32 has no float32 reciprocal equal to its exact inverse.
    let dir = tempfile::tempdir().unwrap();
    let ckpt = modelopt(dir.path(), 1.0 / 3.0, 1);
    let out = dir.path().join("ct");
    match convert_checkpoint(&ckpt, "compressed-tensors", &out, &Selection::default(), 1, None, &mut |_, _| {}) {
        Err(Error::Checkpoint { tensor: Some(t), message, .. }) => {
            assert_eq!(&*t, "\"w.weight\"");
            assert!(message.contains("has no exact reciprocal for the encode scale"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    assert!(!out.exists());
    // ggml NVFP4 (64-element super-blocks) has no per-tensor scale: 0.5 has no place there.
    let out = dir.path().join("w.gguf");
    let ckpt = modelopt(&dir.path().join("half"), 0.5, 4);
    match convert_checkpoint(&ckpt, "ggml", &out, &Selection::default(), 1, None, &mut |_, _| {}) {
        Err(Error::Checkpoint { message, .. }) => assert!(message.contains("has no place in ggml:nvfp4"), "{message}"),
        other => panic!("{other:?}"),
    }
    // An MXFP4 target for NVFP4 weights does not exist.
    match convert_checkpoint(&ckpt, "gpt-oss", &out, &Selection::default(), 1, None, &mut |_, _| {}) {
        Err(Error::Checkpoint { message, .. }) => {
            assert!(message.contains("gpt-oss has no convention for Nvfp4"), "{message}")
        }
        other => panic!("{other:?}"),
    }
    assert!(!out.exists());
}

#[test]
fn shards_split_the_weights_between_them() {
    // The producer-made gguf MXFP4 fixture: two halves hold every output tensor once.
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/checkpoints/quantize/ggml-mxfp4.gguf");
    let ckpt = Checkpoint::open(&fixture).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let names = |out: &Path| -> Vec<String> {
        Checkpoint::open(out).unwrap().tensors().iter().map(|t| t.name.clone()).collect()
    };
    convert_checkpoint(&ckpt, "gpt-oss", &dir.path().join("all"), &Selection::default(), 1, None, &mut |_, _| {})
        .unwrap();
    let mut halves = Vec::new();
    for k in 1..=2 {
        let out = dir.path().join(format!("half{k}"));
        convert_checkpoint(&ckpt, "gpt-oss", &out, &Selection::default(), 1, Some((k, 2)), &mut |_, _| {}).unwrap();
        halves.push(names(&out));
    }
    assert!(!halves[0].is_empty() && !halves[1].is_empty());
    assert!(halves[0].iter().all(|n| !halves[1].contains(n)));
    let mut both: Vec<String> = halves.concat();
    both.sort();
    let mut all = names(&dir.path().join("all"));
    all.sort();
    assert_eq!(both, all);
}

/// compressed-tensors MXFP4 `l.weight` of shape [1, 32]: the codes of [`gpt_oss`] (1.0, 2.0,
/// -0.5, 6.0 then zeros) in `weight_packed`, E8M0 `scale` in `weight_scale` (U8 [1, 1]).
fn compressed_tensors_mxfp4(dir: &Path, scale: u8) -> Checkpoint {
    let mut packed = vec![0u8; 16];
    packed[..2].copy_from_slice(&[0x42, 0x79]);
    safetensors(
        dir,
        "ct-mxfp4",
        &[("l.weight_packed", DType::Uint8, &[1, 16], packed), ("l.weight_scale", DType::Uint8, &[1, 1], vec![scale])],
    )
}

#[test]
fn compressed_tensors_mxfp4_and_gpt_oss_hold_the_same_codes() {
    // Both store two E2M1 codes a byte, low nibble first, and the E8M0 exponent as a byte: the
    // bytes carry over unchanged, only the names and the config change.
    let dir = tempfile::tempdir().unwrap();
    let ckpt = compressed_tensors_mxfp4(dir.path(), 125);
    let out = dir.path().join("gpt-oss-out");
    convert_checkpoint(&ckpt, "gpt-oss", &out, &Selection::default(), 1, None, &mut |_, _| {}).unwrap();
    let g = Checkpoint::open(&out).unwrap();
    let blocks = g.tensor("l.weight_blocks").unwrap();
    assert_eq!(blocks.shape, [1, 1, 16]);
    assert_eq!(g.bytes(blocks), ckpt.bytes(ckpt.tensor("l.weight_packed").unwrap()));
    assert_eq!(g.bytes(g.tensor("l.weight_scales").unwrap()), [125]);
    // And back, with compressed-tensors' names, dtypes and config.
    let back = dir.path().join("back");
    convert_checkpoint(&g, "compressed-tensors", &back, &Selection::default(), 1, None, &mut |_, _| {}).unwrap();
    let c = Checkpoint::open(&back).unwrap();
    let names: Vec<&str> = c.tensors().iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["l.weight_packed", "l.weight_scale"]);
    let scale = c.tensor("l.weight_scale").unwrap();
    assert_eq!((scale.stored, &scale.shape[..]), (lowbit::checkpoint::StoredType::Plain(DType::Uint8), &[1, 1][..]));
    assert_eq!(c.bytes(scale), [125]);
    assert_eq!(c.bytes(c.tensor("l.weight_packed").unwrap()), ckpt.bytes(ckpt.tensor("l.weight_packed").unwrap()));
    let config = &c.config().unwrap()["quantization_config"];
    assert_eq!(config["format"], "mxfp4-pack-quantized");
    assert_eq!(config["config_groups"]["group_0"]["weights"]["strategy"], "group");
}

#[test]
fn compressed_tensors_mxfp4_becomes_ggml_blocks_and_back() {
    // ggml's block_mxfp4 of the same block: [scale, 2, 4, 9, 7, 0 x 12] (element j low nibble,
    // j + 16 high); E8M0 126 is 2^-1 in both (ggml: GGML_E8M0_TO_FP32_HALF(126) = 2^-2, doubled
    // element values).
    let dir = tempfile::tempdir().unwrap();
    let ckpt = compressed_tensors_mxfp4(dir.path(), 126);
    let out = dir.path().join("l.gguf");
    convert_checkpoint(&ckpt, "ggml", &out, &Selection::default(), 1, None, &mut |_, _| {}).unwrap();
    let g = Checkpoint::open(&out).unwrap();
    let t = g.tensor("l.weight").unwrap();
    assert_eq!(t.stored, lowbit::checkpoint::StoredType::Ggml(GgmlType::from_name("MXFP4").unwrap()));
    let mut want = vec![126u8, 2, 4, 9, 7];
    want.resize(17, 0);
    assert_eq!(g.bytes(t), want);
    let back = dir.path().join("back");
    convert_checkpoint(&g, "compressed-tensors", &back, &Selection::default(), 1, None, &mut |_, _| {}).unwrap();
    let c = Checkpoint::open(&back).unwrap();
    assert_eq!(c.bytes(c.tensor("l.weight_packed").unwrap()), ckpt.bytes(ckpt.tensor("l.weight_packed").unwrap()));
    assert_eq!(c.bytes(c.tensor("l.weight_scale").unwrap()), [126]);
}

#[test]
fn scale_codes_that_mean_different_things_are_refused() {
    // E8M0 0xFF: NaN in OCP (gpt-oss), 2^128 = +Inf in compressed-tensors' bfloat16 decode
    // (2.0 ** (255 - 127)): neither has a code for the other's.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let ckpt = compressed_tensors_mxfp4(dir.path(), 0xFF);
    match convert_checkpoint(&ckpt, "gpt-oss", &out, &Selection::default(), 1, None, &mut |_, _| {}) {
        Err(Error::Checkpoint { tensor: Some(t), message, .. }) => {
            assert_eq!(&*t, "\"l.weight\"");
            assert!(
                message.starts_with("block scale 0 (code 0xFF, a scale of inf) has no code in ocp:mxfp4"),
                "{message}"
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(!out.exists());
    let mut blocks = vec![0u8; 16];
    blocks[0] = 0x42;
    let ckpt = safetensors(
        dir.path(),
        "gpt-oss-nan",
        &[
            ("l.weight_blocks", DType::Uint8, &[1, 1, 16], blocks),
            ("l.weight_scales", DType::Uint8, &[1, 1], vec![0xFF]),
        ],
    );
    match convert_checkpoint(&ckpt, "compressed-tensors", &out, &Selection::default(), 1, None, &mut |_, _| {}) {
        Err(Error::Checkpoint { tensor: Some(t), message, .. }) => {
            assert_eq!(&*t, "\"l.weight\"");
            assert!(
                message
                    .starts_with("block scale 0 (code 0xFF, a scale of NaN) has no code in compressed-tensors:mxfp4"),
                "{message}"
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(!out.exists());
}
