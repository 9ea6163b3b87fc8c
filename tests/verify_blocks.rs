//! Block-unit vectors and the block dump check (`lowbit vectors --scheme`, `lowbit check
//! --scheme`): round trips, planted faults and their classes, hand-computed blocks, bad lines.

use lowbit::verify::{BlockDirection, BlockSummary, BlockUnit, ElementClass};
use lowbit::DType;
use std::process::Command;

fn unit(scheme: &str, input: DType, direction: BlockDirection) -> BlockUnit {
    BlockUnit::new(scheme, input, direction).unwrap_or_else(|e| panic!("{scheme}: {e}"))
}

fn check_text(unit: &BlockUnit, text: &str) -> BlockSummary {
    unit.check(text.as_bytes(), "dump").unwrap_or_else(|e| panic!("{}: {e}", unit.scheme()))
}

fn lines(unit: &BlockUnit, vectors: &[lowbit::verify::BlockVector], csv: bool) -> String {
    let mut out = Vec::new();
    unit.write_lines(&mut out, vectors, csv).unwrap();
    String::from_utf8(out).unwrap()
}

fn hex32(values: &[f32]) -> String {
    values.iter().map(|v| format!("{:08X}", v.to_bits())).collect::<Vec<_>>().join(" ")
}

#[test]
fn vectors_check_clean_for_every_kind_of_scheme() {
    let cases: &[(&str, DType)] = &[
        ("ocp:mxfp8e4m3", DType::Float),
        ("ocp:mxint8", DType::Float),
        ("ocp:mxfp4", DType::Float16),
        ("torchao:mxfp4,scale=rceil", DType::Float),
        ("torchao:mxfp4,scale=floor", DType::Bfloat16),
        ("torchao:mxfp6e2m3,scale=even", DType::Float),
        ("torchao:mxfp8e5m2,scale=ceil", DType::Float),
        ("torchao:nvfp4", DType::Float),
        ("torchao:nvfp4,global=amax", DType::Float),
        ("modelopt:nvfp4", DType::Float),
        ("modelopt:nvfp4", DType::Float16),
        ("compressed-tensors:nvfp4", DType::Float),
        ("compressed-tensors:nvfp4", DType::Bfloat16),
        ("ggml:q8_0", DType::Float),
        ("ggml:q4_0", DType::Float),
        ("ggml:mxfp4", DType::Float),
        ("ggml:nvfp4", DType::Float),
        ("fp8:block=32", DType::Bfloat16),
        ("fp8:group=16", DType::Float),
    ];
    for &(scheme, input) in cases {
        for direction in [BlockDirection::Quantize, BlockDirection::Dequantize] {
            let u = unit(scheme, input, direction);
            let vectors = u.vectors(Some(300), 7).unwrap();
            assert_eq!(vectors.len(), 300, "{scheme}");
            for csv in [false, true] {
                let s = check_text(&u, &lines(&u, &vectors, csv));
                assert_eq!((s.checked, s.mismatches, s.skipped), (300, 0, 1), "{scheme} {direction:?}: {}", s.report());
            }
        }
    }
}

#[test]
fn the_edge_blocks_come_first_and_the_seed_decides_the_rest() {
    let u = unit("modelopt:nvfp4", DType::Float, BlockDirection::Quantize);
    let a = u.vectors(Some(1), 1).unwrap();
    let cases: Vec<&str> = a.iter().map(|v| v.case).collect();
    for edge in ["all zero", "negative zeros", "a NaN", "+Inf", "-Inf", "subnormal inputs", "largest finite inputs"] {
        assert!(cases.contains(&edge), "{edge} in {cases:?}");
    }
    assert!(cases.contains(&"E4M3 scale tie to even below") && cases.contains(&"element ties"));
    assert!(a.iter().all(|v| v.global == Some(1f32.to_bits())), "the edge blocks take G = 1");
    let (b, c) = (u.vectors(Some(100), 1).unwrap(), u.vectors(Some(100), 2).unwrap());
    assert_eq!(b, u.vectors(Some(100), 1).unwrap());
    assert_eq!(b[..a.len()], c[..a.len()]);
    assert_ne!(b[a.len()..], c[a.len()..]);
}

// torchao 0.18 to_mx, scale_calculation_mode FLOOR, float4_e2m1fn, one block of 32:
// x = [6, 0.25, -0.75, 1.25, -1.75, 2.5, -3.5, 5] four times. amax 6 = 1.5 * 2^2: the exponent 2
// minus E2M1's largest exponent 2 is 0, the E8M0 code 127 = 0x7F, the scale 1. Every element but
// 6 is the midpoint of two E2M1 values (0, 0.5, 1, 1.5, 2, 3, 4, 6 at codes 0..7, sign 0x8) and
// goes to the even code: 0.25 -> 0 (00), -0.75 -> -1 (0A), 1.25 -> 1 (02), -1.75 -> -2 (0C),
// 2.5 -> 2 (04), -3.5 -> -4 (0E), 5 -> 4 (06); 6 -> 07.
const TIES: [f32; 8] = [6.0, 0.25, -0.75, 1.25, -1.75, 2.5, -3.5, 5.0];
const TIES_CODES: &str = "07 00 0A 02 0C 04 0E 06";

fn ties_line(codes: &str) -> String {
    let inputs: Vec<f32> = TIES.iter().cycle().take(32).copied().collect();
    format!("{} 7F {}\n", hex32(&inputs), codes)
}

fn ties_codes() -> String {
    [TIES_CODES; 4].join(" ")
}

#[test]
fn hand_computed_mxfp4_ties_to_even() {
    for scheme in ["torchao:mxfp4,scale=floor", "ocp:mxfp4"] {
        let u = unit(scheme, DType::Float, BlockDirection::Quantize);
        let s = check_text(&u, &ties_line(&ties_codes()));
        assert_eq!((s.checked, s.mismatches), (1, 0), "{scheme}: {}", s.report());
    }
}

#[test]
fn hand_computed_q8_0_ties_away_from_zero() {
    // ggml quantize_row_q8_0_ref: amax 127, d = 127 / 127 = 1 (float16 0x3C00), id = 1, each
    // element roundf(x): 127 -> 7F, 0.5 -> 1 (01), -0.5 -> -1 (FF), 1.5 -> 2 (02), -2.5 -> -3
    // (FD), 126.25 -> 126 (7E), 0 and -0 -> 00; nearest even would give 00, 00, 02, FE.
    let mut x = vec![0.0f32; 32];
    x[..8].copy_from_slice(&[127.0, 0.5, -0.5, 1.5, -2.5, 126.25, 0.0, -0.0]);
    let codes = format!("7F 01 FF 02 FD 7E{}", " 00".repeat(26));
    let u = unit("ggml:q8_0", DType::Float, BlockDirection::Quantize);
    let s = check_text(&u, &format!("{} 3C00 {codes}\n", hex32(&x)));
    assert_eq!((s.checked, s.mismatches), (1, 0), "{}", s.report());
    // A unit rounding to nearest even: element 1 and 2 are ties broken the other way.
    let even = format!("7F 00 00 02 FE 7E{}", " 00".repeat(26));
    let s = check_text(&u, &format!("{} 3C00 {even}\n", hex32(&x)));
    assert_eq!(s.elements.get(&ElementClass::Tie), Some(&3), "{}", s.report());
    assert_eq!(s.element_index[..5], [0, 1, 1, 0, 1]);
}

#[test]
fn hand_computed_nvfp4_scale_tie_and_negative_zero() {
    // torchao 0.18 nvfp4_quantize without a per-tensor scale, 16 elements: amax 6.375, block
    // scale 6.375 / 6 = 1.0625, the midpoint of E4M3's 1.0 (0x38) and 1.125 (0x39): even, 0x38.
    // Elements x / 1.0 clamped to +-6 and cast to E2M1: 6.375 -> 6 (07), -0.25 -> -0 (08, the
    // tie goes to the even 0 and keeps its sign), 0.375 -> 0.5 (01), -0.5 (09), 0.625 -> 0.5
    // (01), -0.75 -> -1 (0A, tie to even), 0.875 -> 1 (02), -1 (0A), 0.125 -> 0 (00).
    let x =
        [6.375f32, -0.25, 0.375, -0.5, 0.625, -0.75, 0.875, -1.0, 0.125, -0.25, 0.375, -0.5, 0.625, -0.75, 0.875, -1.0];
    let codes = "07 08 01 09 01 0A 02 0A 00 08 01 09 01 0A 02 0A";
    let u = unit("torchao:nvfp4", DType::Float, BlockDirection::Quantize);
    let s = check_text(&u, &format!("{} 38 {codes}\n", hex32(&x)));
    assert_eq!((s.checked, s.mismatches), (1, 0), "{}", s.report());
    // The scale tie rounded up (0x39) is what ggml's block_nvfp4 stores (its own UE4M3
    // encoding, the ggml:nvfp4 row, checked against gguf's fixtures): the check names that row.
    let s = check_text(&u, &format!("{} 39 {codes}\n", hex32(&x)));
    assert_eq!(s.scale_mismatches(), 1, "{}", s.report());
    assert!(s.scale.contains_key("as ggml:nvfp4 computes it"), "{}", s.report());
    // No row gives 0x37 (0.9375): one step smaller.
    let s = check_text(&u, &format!("{} 37 {codes}\n", hex32(&x)));
    assert!(s.scale.contains_key("one step smaller"), "{}", s.report());
}

#[test]
fn hand_computed_dequantize() {
    // torchao to_dtype of float4_e2m1fn: element * 2^(code - 127). Scale 0x80 = 2: 07 (6) -> 12
    // (41400000), 0F (-6) -> -12 (C1400000), 01 (0.5) -> 1 (3F800000), 08 (-0) -> -0 (80000000).
    let u = unit("torchao:mxfp4,scale=floor", DType::Float, BlockDirection::Dequantize);
    let zeros = " 00".repeat(28);
    let values = format!("41400000 C1400000 3F800000 80000000{}", " 00000000".repeat(28));
    let s = check_text(&u, &format!("80 07 0F 01 08{zeros} {values}\n"));
    assert_eq!((s.checked, s.mismatches), (1, 0), "{}", s.report());
    // +0 for the negative zero (ModelOpt's answer, not torchao's) is a zero of the wrong sign.
    let wrong = format!("41400000 C1400000 3F800000 00000000{}", " 00000000".repeat(28));
    let s = check_text(&u, &format!("80 07 0F 01 08{zeros} {wrong}\n"));
    assert_eq!(s.elements.get(&ElementClass::ZeroSign), Some(&1), "{}", s.report());
    assert_eq!(s.element_index[3], 1);
}

#[test]
fn planted_faults_are_classified() {
    let u = unit("torchao:mxfp4,scale=floor", DType::Float, BlockDirection::Quantize);
    // One element off on a tie, one off not on a tie (6 -> 4 is no tie).
    let mut codes = ties_codes();
    codes.replace_range(9..11, "03"); // element 3: 1.25 -> 1.5 instead of 1
    codes.replace_range(0..2, "06"); // element 0: 6 -> 4
    let s = check_text(&u, &ties_line(&codes));
    assert_eq!((s.mismatches, s.element_mismatches(), s.scale_mismatches()), (1, 2, 0), "{}", s.report());
    assert_eq!(s.elements.get(&ElementClass::Tie), Some(&1));
    assert_eq!(s.elements.get(&ElementClass::OneStepTowardZero), Some(&1));
    assert!(
        s.shown[0].starts_with("line 1: ") && s.shown[0].contains("element 3 expected 02, got 03"),
        "{:?}",
        s.shown
    );

    // A flipped scale code: the scale is wrong, the elements are not compared one by one.
    let mut vectors = u.vectors(Some(40), 3).unwrap();
    let k = vectors.len() - 1;
    vectors[k].scale ^= 0x40;
    let s = check_text(&u, &lines(&u, &vectors, false));
    assert_eq!(
        (s.checked, s.mismatches, s.scale_mismatches(), s.element_mismatches()),
        (40, 1, 1, 0),
        "{}",
        s.report()
    );
    assert!(s.scale.contains_key("another value"), "{}", s.report());
    assert!(s.shown[0].starts_with(&format!("line {}: scale expected", k + 2)), "{:?}", s.shown);

    // The neighbouring rule: a unit that rounds the scale up (torchao's CEIL) checked as FLOOR.
    let ceil = unit("torchao:mxfp4,scale=ceil", DType::Float, BlockDirection::Quantize);
    let s = check_text(&u, &lines(&ceil, &ceil.vectors(Some(200), 5).unwrap(), false));
    assert!(s.mismatches > 100, "{}", s.report());
    assert_eq!(s.other_rule.get("torchao:mxfp4,scale=ceil"), Some(&s.mismatches), "{}", s.report());
    assert_eq!(s.scale_mismatches(), s.mismatches);
}

#[test]
fn wrong_zero_and_nan_block_answers_are_named() {
    let u = unit("modelopt:nvfp4", DType::Float, BlockDirection::Quantize);
    let vectors = u.vectors(None, 1).unwrap();
    let mut planted = vectors.clone();
    for v in planted.iter_mut().filter(|v| v.case == "all zero" || v.case == "a NaN") {
        v.elements[0] ^= 0x1;
    }
    let s = check_text(&u, &lines(&u, &planted, false));
    assert_eq!(s.elements.get(&ElementClass::ZeroBlock), Some(&1), "{}", s.report());
    assert_eq!(s.elements.get(&ElementClass::NanOrInfBlock), Some(&1), "{}", s.report());
}

#[test]
fn bad_lines_name_line_and_column() {
    let u = unit("ggml:q8_0", DType::Float, BlockDirection::Quantize);
    let good = lines(&u, &u.vectors(Some(20), 1).unwrap(), false);
    let second = good.lines().nth(1).unwrap().to_string();
    let cases = [
        (format!("# c\n3F80000G{}\n", &second[8..]), "line 2: column 1: x0"),
        // The scale is the 33rd word: column 32 * 9 + 1.
        (format!("# c\n{}3C0{}\n", &second[..288], &second[292..]), "line 2: column 289: scale"),
        (format!("# c\n{}\n", &second[..98]), "line 2: column 99: 11 words"),
        (format!("# c\n{second} 00\n"), "after the 65 words"),
    ];
    for (text, want) in cases {
        let e = u.check(text.as_bytes(), "dump").unwrap_err().to_string();
        assert!(e.starts_with("dump: ") && e.contains(want), "{e}\nwanted {want}");
    }
    // Element codes wider than the element type.
    let u4 = unit("ocp:mxfp4", DType::Float, BlockDirection::Dequantize);
    let text = format!("7F 10{} {}\n", " 00".repeat(31), " 00000000".repeat(32).trim());
    let e = u4.check(text.as_bytes(), "dump").unwrap_err().to_string();
    assert!(e.contains("line 1: column 4: e0 0x10 does not fit 4 bits"), "{e}");
}

#[test]
fn schemes_without_a_row_block_unit_are_refused() {
    for (scheme, why) in [("deepseek:fp8", "Tile(128, 128)"), ("fp8:tensor", "Tensor"), ("fp8:block=128", "at most 64")]
    {
        let e = BlockUnit::new(scheme, DType::Float, BlockDirection::Quantize).unwrap_err().to_string();
        assert!(e.contains(why), "{scheme}: {e}");
    }
    let e = BlockUnit::new("ggml:q8_0", DType::Bfloat16, BlockDirection::Quantize).unwrap_err().to_string();
    assert!(e.contains("BFLOAT16"), "{e}");
}

fn lowbit() -> Command {
    Command::new(env!("CARGO_BIN_EXE_lowbit"))
}

#[test]
fn cli_round_trip_empty_dump_and_readmemh() {
    let dir = tempfile::tempdir().unwrap();
    let out = lowbit()
        .args(["vectors", "--scheme", "modelopt:nvfp4", "-n", "50", "--seed", "3", "--out"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let dump = dir.path().join("vectors.txt");
    let out = lowbit().args(["check", "--scheme", "modelopt:nvfp4"]).arg(&dump).output().unwrap();
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success()
            && report.ends_with("50 checked, 0 mismatches (1 comment, blank or header line skipped)\n"),
        "{report}"
    );

    // A planted fault: exit 1 and the mismatch shown.
    let text = std::fs::read_to_string(&dump).unwrap();
    let mut planted: Vec<String> = text.lines().map(str::to_string).collect();
    let last = planted.len() - 1;
    let flipped = if planted[last].ends_with('0') { '1' } else { '0' };
    planted[last].pop();
    planted[last].push(flipped);
    std::fs::write(&dump, planted.join("\n")).unwrap();
    let out = lowbit().args(["check", "--scheme", "modelopt:nvfp4", "--json"]).arg(&dump).output().unwrap();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!((json["checked"].as_u64(), json["mismatches"].as_u64()), (Some(50), Some(1)), "{json}");
    assert_eq!(json["element_index"][15].as_u64(), Some(1), "{json}");

    // An empty dump fails unless allowed.
    let empty = dir.path().join("empty.txt");
    std::fs::write(&empty, "# nothing\n").unwrap();
    let out = lowbit().args(["check", "--scheme", "ggml:q8_0"]).arg(&empty).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("holds no case to check"), "{err}");
    let out = lowbit().args(["check", "--scheme", "ggml:q8_0", "--allow-empty"]).arg(&empty).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    // $readmemh columns: a header comment, then one block a line.
    let cols = dir.path().join("cols");
    let out = lowbit()
        .args(["vectors", "--scheme", "torchao:mxfp4,scale=floor", "-n", "20", "--format", "readmemh", "--out"])
        .arg(&cols)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    for (name, digits) in [("in.hex", 256), ("scale.hex", 2), ("elements.hex", 32)] {
        let text = std::fs::read_to_string(cols.join(name)).unwrap();
        let mut l = text.lines();
        assert!(l.next().unwrap().starts_with("// lowbit vectors --scheme torchao:mxfp4,scale=floor"), "{name}");
        let words: Vec<&str> = l.collect();
        assert_eq!(words.len(), 20, "{name}");
        assert!(words.iter().all(|w| w.len() == digits), "{name}: {}", words[0]);
    }
    // The all-zero block first, then negative zeros (lane 0 lowest: element 0 in the last digits).
    let input = std::fs::read_to_string(cols.join("in.hex")).unwrap();
    assert_eq!(input.lines().nth(2).unwrap(), "80000000".repeat(32));

    // The folder itself is a dump: all lanes unpacked, 0 mismatches; a wrong scale in
    // scale.hex is found.
    let out = lowbit().args(["check", "--scheme", "torchao:mxfp4,scale=floor"]).arg(&cols).output().unwrap();
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && report.ends_with("\n20 checked, 0 mismatches\n"), "{report}");
    let scales = std::fs::read_to_string(cols.join("scale.hex")).unwrap();
    let mut planted: Vec<String> = scales.lines().map(str::to_string).collect();
    planted[5] = if planted[5] == "7F" { "80".into() } else { "7F".into() };
    std::fs::write(cols.join("scale.hex"), planted.join("\n") + "\n").unwrap();
    let out = lowbit().args(["check", "--scheme", "torchao:mxfp4,scale=floor"]).arg(&cols).output().unwrap();
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(report.contains("line 5: scale expected") && report.ends_with("20 checked, 1 mismatch\n"), "{report}");
    std::fs::write(cols.join("scale.hex"), "// short\n7F\n").unwrap();
    let out = lowbit().args(["check", "--scheme", "torchao:mxfp4,scale=floor"]).arg(&cols).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("scale.hex ended first"), "{err}");

    // --scheme with scalar options is a usage error.
    let out = lowbit().args(["vectors", "--scheme", "ggml:q8_0", "--from", "f32"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}
