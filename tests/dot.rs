//! `lowbit::dot` against sums computed without lowbit (scripts/gen_dot_fixtures.py: Python's
//! exact rationals and its own float32 rounding, operands decoded by ml_dtypes), bit for bit,
//! and the special cases of every model by hand.
#![cfg(feature = "dot")]

use lowbit::dot::{matmul_operands, matmul_t, Accumulation, Operand};
use lowbit::quant::blocks::{self, Scales, Scheme};
use lowbit::DType;

fn codes(v: &serde_json::Value) -> Vec<u64> {
    v.as_array().unwrap().iter().map(|c| c.as_u64().unwrap()).collect()
}

#[test]
fn every_model_equals_the_rational_computation() {
    let record: serde_json::Value = serde_json::from_str(include_str!("data/dot/gemms.json")).unwrap();
    let mut compared = 0;
    for case in record["cases"].as_array().unwrap() {
        let dtype = DType::parse(case["dtype"].as_str().unwrap()).unwrap();
        let dims = ["m", "n", "k"].map(|d| case[d].as_u64().unwrap() as usize);
        let (a, b) = (codes(&case["a"]), codes(&case["b"]));
        for model in ["exact", "sequential-fp32", "fma,format=float32"] {
            let got =
                matmul_t(&a, &b, dims[0], dims[1], dims[2], dtype, &Accumulation::parse(model).unwrap(), DType::Float)
                    .unwrap();
            let want = codes(&case[model]);
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_eq!(g, w, "{dtype:?} {dims:?} {model} element {i}: {g:#010x} vs {w:#010x}");
            }
            assert_eq!(got.len(), want.len());
            compared += want.len();
        }
    }
    assert!(compared >= 700, "{compared} dot products compared");
}

/// Block-scaled operands (MXFP4, MXFP8 E4M3, NVFP4 with its per-tensor scale, and MXFP4 against
/// MXFP8) against the same rational computation (scripts/gen_dot_block_fixtures.py).
#[test]
fn block_scaled_operands_equal_the_rational_computation() {
    let record: serde_json::Value = serde_json::from_str(include_str!("data/dot/block_gemms.json")).unwrap();
    let operand = |scheme: &str, v: &serde_json::Value, rows: usize, k: usize| {
        let elements: Vec<u8> = codes(&v["elements"]).into_iter().map(|c| c as u8).collect();
        let scales = Scales::Codes(codes(&v["scales"]).into_iter().map(|c| c as u8).collect());
        let global = v["global_scale"].as_f64().map(|g| g as f32);
        let q = blocks::from_arrays(elements, &[rows, k], scales, &Scheme::parse(scheme).unwrap(), -1, global).unwrap();
        Operand::from_blocks(&q).unwrap()
    };
    let mut compared = 0;
    for case in record["cases"].as_array().unwrap() {
        let [m, n, k] = ["m", "n", "k"].map(|d| case[d].as_u64().unwrap() as usize);
        let (sa, sb) = (case["a_scheme"].as_str().unwrap(), case["b_scheme"].as_str().unwrap());
        let a = operand(sa, &case["a"], m, k);
        let b = operand(sb, &case["b"], n, k);
        for model in ["exact", "sequential-fp32"] {
            let got = matmul_operands(&a, &b, &Accumulation::parse(model).unwrap(), DType::Float).unwrap();
            let want = codes(&case[model]);
            assert_eq!(got.len(), want.len());
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_eq!(g, w, "{sa} x {sb} {m}x{n}x{k} {model} element {i}: {g:#010x} vs {w:#010x}");
            }
            compared += want.len();
        }
    }
    assert!(compared >= 100, "{compared} dot products compared");
}

fn f32s(v: &[f32]) -> Vec<u64> {
    v.iter().map(|x| u64::from(x.to_bits())).collect()
}

fn one(a: &[f32], b: &[f32], model: &str) -> u32 {
    let out =
        matmul_t(&f32s(a), &f32s(b), 1, 1, a.len(), DType::Float, &Accumulation::parse(model).unwrap(), DType::Float)
            .unwrap();
    out[0] as u32
}

#[test]
fn specials_and_zero_signs() {
    let inf = f32::INFINITY;
    for model in ["exact", "sequential-fp32", "fma,format=float32"] {
        // NaN anywhere, Inf x 0 and Inf - Inf: the default quiet NaN.
        assert_eq!(one(&[1.0, f32::NAN], &[1.0, 1.0], model), 0x7FC0_0000, "{model}");
        assert_eq!(one(&[inf, 1.0], &[0.0, 1.0], model), 0x7FC0_0000, "{model}");
        assert_eq!(one(&[inf, -inf], &[1.0, 1.0], model), 0x7FC0_0000, "{model}");
        assert_eq!(one(&[inf, 1e30], &[-1.0, 1.0], model), 0xFF80_0000, "{model}");
        // Zeros: cancellation gives +0, the empty sum +0; every product -0 gives -0 when summed
        // exactly, +0 from the chains (which start from +0, as `float acc = 0` does).
        let negative_zeros = if model == "exact" { 0x8000_0000 } else { 0 };
        assert_eq!(one(&[-0.0, 0.0], &[1.0, -1.0], model), negative_zeros, "{model}");
        assert_eq!(one(&[-0.0, 0.0], &[1.0, 1.0], model), 0, "{model}");
        assert_eq!(one(&[3.0, -3.0], &[1.0, 1.0], model), 0, "{model}");
        assert_eq!(one(&[], &[], model), 0, "{model}");
    }
    // A product past float32's range: infinite once rounded (sequential), exact otherwise.
    let (a, b) = ([1e30f32, -1e30], [1e30f32, 1e30]);
    assert_eq!(one(&a, &b, "sequential-fp32"), 0x7FC0_0000); // +Inf + -Inf
    assert_eq!(one(&a, &b, "exact"), 0);
    assert_eq!(one(&a, &b, "fma,format=float32"), 0x7F80_0000); // +1e60 rounds to +Inf; Inf - 1e60 is Inf
                                                                // Rounding toward negative: a cancellation is -0.
    assert_eq!(one(&[3.0, -3.0], &[1.0, 1.0], "fma,format=float32,round=rdn"), 0x8000_0000);
    // The models part: 2^24, 1 and 1 in float32 sum to 2^24 (ties to even twice), exactly to 2^24 + 2.
    let (a, b) = ([16_777_216.0f32, 1.0, 1.0], [1.0f32; 3]);
    assert_eq!(f32::from_bits(one(&a, &b, "exact")), 16_777_218.0);
    assert_eq!(f32::from_bits(one(&a, &b, "sequential-fp32")), 16_777_216.0);
    // A product that float32 rounds but a fused step keeps: (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24.
    let x = 1.0f32 + f32::powi(2.0, -12);
    let (a, b) = ([x, -1.0], [x, 1.0 + f32::powi(2.0, -11)]);
    assert_eq!(one(&a, &b, "sequential-fp32"), 0); // the product rounds to 1 + 2^-11: they cancel
    assert_eq!(f32::from_bits(one(&a, &b, "fma,format=float32")), 0.0); // fma: x*x - 0 then +(-1-2^-11)
    assert_eq!(f32::from_bits(one(&a, &b, "exact")), f32::powi(2.0, -24));
}

#[test]
fn models_parse_and_refuse() {
    assert!(Accumulation::parse("fma,format=bfloat16,round=rtz").is_ok());
    assert!(Accumulation::parse("sequential,format=float16").is_ok());
    for bad in
        ["exact,format=float32", "fma", "fma,format=int8", "fma,format=float32,round=sr:3", "kahan", "sequential"]
    {
        assert!(Accumulation::parse(bad).is_err(), "{bad}");
    }
    let a = f32s(&[1.0; 6]);
    let model = Accumulation::parse("exact").unwrap();
    assert!(matmul_t(&a, &a, 2, 2, 2, DType::Float, &model, DType::Float).is_err(), "6 codes are not 2 x 2");
    assert!(matmul_t(&a, &a, 2, 3, 3, DType::Float, &model, DType::Int8).is_err(), "an integer result");
    assert!(matmul_t(&[], &[], usize::MAX, 2, 2, DType::Float, &model, DType::Float).is_err());
    // K = 0: empty operands of any M and N; a result too large to hold is an error, not an abort.
    assert!(matmul_t(&[], &[], 1 << 40, 1 << 20, 0, DType::Float, &model, DType::Float).is_err());
    assert_eq!(matmul_t(&[], &[], 2, 3, 0, DType::Float, &model, DType::Float).unwrap(), vec![0; 6]);
}

#[test]
fn block_operands_specials_and_refusals() {
    let mx = Scheme::parse("ocp:mxfp4").unwrap();
    // E2M1 code 2 is 1.0; E8M0 127 is 1, 0xFF NaN.
    let q = |scale: u8| blocks::from_arrays(vec![2; 32], &[1, 32], Scales::Codes(vec![scale]), &mx, -1, None).unwrap();
    let ones = Operand::from_blocks(&q(127)).unwrap();
    let nan = Operand::from_blocks(&q(0xFF)).unwrap();
    for model in ["exact", "sequential-fp32", "fma,format=float32"] {
        let model = Accumulation::parse(model).unwrap();
        assert_eq!(matmul_operands(&ones, &ones, &model, DType::Float).unwrap(), [u64::from(32f32.to_bits())]);
        assert_eq!(matmul_operands(&ones, &nan, &model, DType::Float).unwrap(), [0x7FC0_0000]);
    }
    // A plain float32 operand against a block-scaled one: K must agree.
    let plain = Operand::from_codes(&f32s(&[0.5; 32]), DType::Float, 1, 32).unwrap();
    let exact = Accumulation::parse("exact").unwrap();
    assert_eq!(matmul_operands(&plain, &ones, &exact, DType::Float).unwrap(), [u64::from(16f32.to_bits())]);
    let short = Operand::from_codes(&f32s(&[0.5; 16]), DType::Float, 1, 16).unwrap();
    assert!(matmul_operands(&short, &ones, &exact, DType::Float).is_err());
    // Schemes a dot product cannot take apart into one scale per block, or whose per-tensor
    // scale divides: refused by name.
    let k = blocks::quantize(&[0.5f32; 256], &[1, 256], &Scheme::parse("ggml:q4_k").unwrap(), -1, None).unwrap();
    assert!(Operand::from_blocks(&k).unwrap_err().to_string().contains("one scale per block"));
    let ct = blocks::quantize(&[0.5f32; 16], &[1, 16], &Scheme::parse("compressed-tensors:nvfp4").unwrap(), -1, None)
        .unwrap();
    assert!(Operand::from_blocks(&ct).unwrap_err().to_string().contains("divides"));
}

/// `lowbit matmul` on TensorProto files: a plain float16 GEMM and a block-scaled one (MXFP4
/// against MXFP8) equal the rational computation.
#[test]
fn the_command_line_matmul_equals_the_rational_computation() {
    use lowbit::onnx::tensor_proto::{read_tensor_file, write_tensor_file};
    use lowbit::Tensor;
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let write = |name: &str, dtype: DType, shape: Vec<usize>, codes: &[u64]| {
        write_tensor_file(std::path::Path::new(&path(name)), &Tensor::from_codes(dtype, shape, codes).unwrap(), None)
            .unwrap();
    };
    let run = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_lowbit")).args(args).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        read_tensor_file(std::path::Path::new(&path("y.pb"))).unwrap().codes().unwrap()
    };
    let plain: serde_json::Value = serde_json::from_str(include_str!("data/dot/gemms.json")).unwrap();
    let case = plain["cases"].as_array().unwrap().iter().find(|c| c["dtype"] == "FLOAT16" && c["k"] == 32).unwrap();
    let [m, n, k] = ["m", "n", "k"].map(|d| case[d].as_u64().unwrap() as usize);
    write("a.pb", DType::Float16, vec![m, k], &codes(&case["a"]));
    write("b.pb", DType::Float16, vec![n, k], &codes(&case["b"]));
    for model in ["exact", "sequential-fp32", "fma,format=float32"] {
        assert_eq!(
            run(&["matmul", &path("a.pb"), &path("b.pb"), "--model", model, "--out", &path("y.pb")]),
            codes(&case[model])
        );
    }
    let blocked: serde_json::Value = serde_json::from_str(include_str!("data/dot/block_gemms.json")).unwrap();
    let case = blocked["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["a_scheme"] == "ocp:mxfp4" && c["b_scheme"] == "ocp:mxfp8e4m3")
        .unwrap();
    let [m, n, k] = ["m", "n", "k"].map(|d| case[d].as_u64().unwrap() as usize);
    write("ae.pb", DType::Float4E2M1, vec![m, k], &codes(&case["a"]["elements"]));
    write("as.pb", DType::Float8E8M0, vec![m, k / 32], &codes(&case["a"]["scales"]));
    write("be.pb", DType::Float8E4M3FN, vec![n, k], &codes(&case["b"]["elements"]));
    write("bs.pb", DType::Float8E8M0, vec![n, k / 32], &codes(&case["b"]["scales"]));
    for model in ["exact", "sequential-fp32"] {
        let got = run(&[
            "matmul",
            &path("ae.pb"),
            &path("be.pb"),
            "--a-scheme",
            "ocp:mxfp4",
            "--a-scales",
            &path("as.pb"),
            "--b-scheme",
            "ocp:mxfp8e4m3",
            "--b-scales",
            &path("bs.pb"),
            "--model",
            model,
            "--out",
            &path("y.pb"),
        ]);
        assert_eq!(got, codes(&case[model]), "{model}");
    }
}
