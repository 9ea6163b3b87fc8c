//! ggml's block types through the public blocks API (`ggml:q4_k`, ... every `ggml:` scheme of
//! `blocks::schemes()` that is ggml's block bytes): `from_bytes(C's blocks).dequantize()`,
//! `quantize(x).to_bytes()` and `quantize_with_importance(x, imatrix).to_bytes()` against the
//! outputs of ggml 0.10.1's C recorded by `scripts/gen_ggml_fixtures.py` (tests/fixtures/ggml;
//! the record layout is in that script), every bit. The live, larger check is
//! `scripts/crosscheck_ggml.py`.

use lowbit::quant::blocks::{self, Scheme};

fn fixture(name: &str) -> Option<Vec<u8>> {
    std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ggml").join(format!("{name}.bin")),
    )
    .ok()
}

fn floats(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect()
}

/// Elements per block and bytes per block, from the scheme's row and a one-row `from_bytes`
/// probe (the length it refuses names the bytes).
fn block_of(scheme: &Scheme) -> (usize, usize) {
    let blocks::BlockShape::Row(n) = scheme.recipe().block else { panic!("a row block") };
    let bytes = (1..400).find(|&b| blocks::from_bytes(&vec![0u8; b], scheme, &[n], -1).is_ok()).unwrap();
    (n, bytes)
}

/// The schemes whose bytes these fixtures do not hold (named, so that none is left out unseen).
const CHECKED_BY_IQUANT_FIXTURES: &[&str] =
    &["iq1_s", "iq1_m", "iq2_xxs", "iq2_xs", "iq2_s", "iq3_xxs", "iq3_s", "iq4_nl", "iq4_xs"];

#[test]
fn every_ggml_block_scheme_matches_ggml() {
    let mut compared = (0usize, 0usize, 0usize);
    let mut iquants_seen = 0;
    let mut bad = Vec::new();
    let names: Vec<String> = blocks::schemes()
        .into_iter()
        .map(|(n, _)| n)
        .filter(|n| Scheme::parse(n).is_ok_and(|s| s.is_ggml_blocks()))
        .collect();
    assert!(!names.is_empty());
    for name in &names {
        let scheme = Scheme::parse(name).unwrap();
        let short = name.strip_prefix("ggml:").unwrap();
        let Some(data) = fixture(short) else {
            // The I-quants' codecs are checked on their own recordings (tests/fixtures/ggml_iquants,
            // scripts/gen_ggml_iquant_fixtures.py) by the tests in src/quant/ggml/iquants.rs.
            if !CHECKED_BY_IQUANT_FIXTURES.contains(&short) {
                bad.push(format!("{name}: no fixture"));
            }
            iquants_seen += 1;
            continue;
        };
        let (per_block, block_bytes) = block_of(&scheme);
        let mut at = 0;
        let mut x = Vec::new();
        while at < data.len() {
            let kind = data[at];
            let rows = u32::from_le_bytes(data[at + 1..at + 5].try_into().unwrap()) as usize;
            let cols = u32::from_le_bytes(data[at + 5..at + 9].try_into().unwrap()) as usize;
            at += 9;
            let n = rows * cols;
            let nbytes = n / per_block * block_bytes;
            match kind {
                0 => {
                    let raw = &data[at..at + nbytes];
                    let want = floats(&data[at + nbytes..at + nbytes + 4 * n]);
                    at += nbytes + 4 * n;
                    let got = blocks::from_bytes(raw, &scheme, &[rows, cols], -1).unwrap().dequantize().unwrap();
                    if let Some(i) = (0..n).find(|&i| got[i].to_bits() != want[i].to_bits()) {
                        bad.push(format!(
                            "{name} dequantize element {i}: {:#x} vs {:#x}",
                            got[i].to_bits(),
                            want[i].to_bits()
                        ));
                    }
                    compared.0 += n;
                }
                1 => {
                    x = floats(&data[at..at + 4 * n]);
                    let want = &data[at + 4 * n..at + 4 * n + nbytes];
                    at += 4 * n + nbytes;
                    let q = blocks::quantize(&x, &[rows, cols], &scheme, -1, None).unwrap();
                    if q.to_bytes().unwrap() != want {
                        bad.push(format!("{name} quantize differs"));
                    }
                    let back = q.dequantize().unwrap();
                    let again = blocks::from_bytes(want, &scheme, &[rows, cols], -1).unwrap().dequantize().unwrap();
                    assert!(back.iter().zip(&again).all(|(a, b)| a.to_bits() == b.to_bits()));
                    compared.1 += nbytes;
                }
                2 => {
                    let imatrix = floats(&data[at..at + 4 * cols]);
                    let want = &data[at + 4 * cols..at + 4 * cols + nbytes];
                    at += 4 * cols + nbytes;
                    let q = blocks::quantize_with_importance(&x, &[rows, cols], &scheme, &imatrix).unwrap();
                    if q.to_bytes().unwrap() != want {
                        bad.push(format!("{name} quantize with an importance matrix differs"));
                    }
                    compared.2 += nbytes;
                }
                k => panic!("record kind {k}"),
            }
        }
    }
    eprintln!(
        "{} schemes: {} values dequantized, {} + {} bytes quantized",
        names.len(),
        compared.0,
        compared.1,
        compared.2
    );
    assert!(compared.0 > 0 && compared.1 > 0 && compared.2 > 0);
    assert_eq!(iquants_seen, CHECKED_BY_IQUANT_FIXTURES.len(), "every I-quant is a scheme");
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn ggml_block_schemes_refuse_bad_input() {
    let scheme = Scheme::parse("ggml:q4_k").unwrap();
    // A row that is not a whole number of blocks: ggml asserts and aborts; lowbit refuses.
    let e = blocks::quantize(&[0.0f32; 300], &[300], &scheme, -1, None).unwrap_err().to_string();
    assert!(e.contains("not a whole number of blocks"), "{e}");
    // Bytes one short of the shape.
    let e = blocks::from_bytes(&[0u8; 143], &scheme, &[256], -1).unwrap_err().to_string();
    assert!(e.contains("143 bytes"), "{e}");
    // An importance matrix of the wrong length.
    let e = blocks::quantize_with_importance(&[0.0f32; 256], &[1, 256], &scheme, &[1.0; 255]).unwrap_err().to_string();
    assert!(e.contains("255 weights"), "{e}");
    // Another axis than the last.
    assert!(blocks::quantize(&[0.0f32; 512], &[256, 2], &scheme, 0, None).is_err());
    // An option.
    assert!(Scheme::parse("ggml:q4_k,contract=fma").is_err());
    // Not one of ggml's block types of the table.
    assert!(blocks::quantize_with_importance(&[0.0f32; 32], &[32], &Scheme::parse("ggml:q8_0").unwrap(), &[1.0; 32])
        .is_err());
}

/// `lowbit quantize --scheme ggml:q4_k IN.pb --out E.pb` writes C's bytes (UINT8, a row's bytes
/// as the last axis), `lowbit dequantize --scheme ggml:q4_k E.pb --out OUT.pb` reads them back
/// to what ggml's `dequantize_row_q4_K` gives, and `lowbit schemes` lists every codec.
#[test]
fn cli_quantizes_and_dequantizes_ggml_blocks() {
    use lowbit::onnx::tensor_proto::{read_tensor_file, write_tensor_file};
    use lowbit::{DType, Tensor};
    let run = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_lowbit")).args(args).output().unwrap();
        (out.status.success(), String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr))
    };
    let data = fixture("q4_k").unwrap();
    // The first record dequantizes; the second quantizes rows of `cols`.
    let (rows0, cols0) = (
        u32::from_le_bytes(data[1..5].try_into().unwrap()) as usize,
        u32::from_le_bytes(data[5..9].try_into().unwrap()) as usize,
    );
    let at = 9 + rows0 * cols0 / 256 * 144 + 4 * rows0 * cols0;
    assert_eq!(data[at], 1);
    let rows = u32::from_le_bytes(data[at + 1..at + 5].try_into().unwrap()) as usize;
    let cols = u32::from_le_bytes(data[at + 5..at + 9].try_into().unwrap()) as usize;
    let x = floats(&data[at + 9..at + 9 + 4 * rows * cols]);
    let want = &data[at + 9 + 4 * rows * cols..at + 9 + 4 * rows * cols + rows * cols / 256 * 144];
    let dir = tempfile::tempdir().unwrap();
    let path = |n: &str| dir.path().join(n).display().to_string();
    write_tensor_file(
        std::path::Path::new(&path("x.pb")),
        &Tensor::from_f32(&x).reshape(vec![rows, cols]).unwrap(),
        None,
    )
    .unwrap();
    let (ok, text) = run(&["quantize", "--scheme", "ggml:q4_k", &path("x.pb"), "--out", &path("e.pb")]);
    assert!(ok, "{text}");
    let e = read_tensor_file(std::path::Path::new(&path("e.pb"))).unwrap();
    assert_eq!((e.dtype(), e.shape()), (DType::Uint8, &[rows, cols / 256 * 144][..]));
    let bytes: Vec<u8> = e.codes().unwrap().iter().map(|&c| c as u8).collect();
    assert_eq!(bytes, want);
    let (ok, text) = run(&["dequantize", "--scheme", "ggml:q4_k", &path("e.pb"), "--out", &path("y.pb")]);
    assert!(ok, "{text}");
    let y = read_tensor_file(std::path::Path::new(&path("y.pb"))).unwrap();
    assert_eq!(y.shape(), &[rows, cols]);
    let scheme = Scheme::parse("ggml:q4_k").unwrap();
    let again = blocks::from_bytes(want, &scheme, &[rows, cols], -1).unwrap().dequantize().unwrap();
    let got = y.to_f32_vec().unwrap();
    assert!(got.iter().zip(&again).all(|(a, b)| a.to_bits() == b.to_bits()));
    // The scales are inside the blocks.
    let (ok, text) =
        run(&["quantize", "--scheme", "ggml:q4_k", &path("x.pb"), "--out", &path("e2.pb"), "--scales", &path("s.pb")]);
    assert!(!ok && text.contains("inside its blocks"), "{text}");
    let (ok, text) = run(&["schemes"]);
    assert!(ok && ["ggml:q4_k", "ggml:q2_k", "ggml:tq1_0", "ggml:q1_0"].iter().all(|n| text.contains(n)), "{text}");
}
