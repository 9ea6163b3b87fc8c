//! Hostile tensors into `cast::cast`, `cast_op` and `cast_like_op`.
//!
//! Input (structured): source and target dtypes (any of the 29), raw bytes (or strings for a
//! STRING source), saturate, round_mode, and Cast/CastLike node attributes for the `_op` entry
//! points (any opset, any `to` number or name, any saturate integer, any round_mode text).
//!
//! Asserts, under every profile:
//! * nothing panics; an `Ok` result has the target dtype and the input's shape;
//! * between fixed-width numeric dtypes, the tensor result equals `convert_code` element by
//!   element (`convert_code_in_block` for the whole vector blocks of a profile that converts
//!   float32 <-> float16 in blocks, profile field `vector_blocks`). This covers FLOAT -> float8, which goes
//!   through the fast kernel, and 8-bit float -> FLOAT, which goes through the decode tables;
//! * a cast to STRING formats each element with `format_code`, a cast from STRING parses each with
//!   `parse_to_code`, in the profile's style and grammar.

#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use lowbit::__private::convert_code_in_block;
use lowbit::strings::{format_code, parse_to_code};
use lowbit::DType;
use lowbit::Kind;
use lowbit::Profile;
use lowbit::Tensor;
use lowbit::{cast, cast_like_op, cast_op, CastAttributes, CastTo};
use lowbit::{convert_code, CastOptions, RoundMode};

#[derive(Arbitrary, Debug)]
struct Input {
    from: u8,
    to: u8,
    dims: Vec<u8>,
    bytes: Vec<u8>,
    strings: Vec<String>,
    saturate: bool,
    round_mode: u8,
    node: Node,
}

#[derive(Arbitrary, Debug)]
struct Node {
    opset: i8,
    to_number: Option<i64>,
    to_name: Option<String>,
    saturate: Option<i64>,
    round_mode: Option<String>,
}

/// Mostly the float32 -> float8 pair that has its own kernel; otherwise any pair.
fn pick(k: u8, favoured: DType) -> DType {
    if k < 64 {
        favoured
    } else {
        DType::ALL[usize::from(k) % DType::ALL.len()]
    }
}

fn build(from: DType, input: &Input) -> Option<Tensor> {
    let shape: Vec<usize> = input.dims.iter().take(3).map(|&d| usize::from(d % 17)).collect();
    let n: usize = shape.iter().product();
    if from == DType::String {
        let strings = (0..n).map(|i| input.strings.get(i).cloned().unwrap_or_default()).collect::<Vec<String>>();
        return Tensor::from_strings(shape, strings).ok();
    }
    let len = lowbit::packing::raw_len(from, n).ok()?;
    let raw = (0..len).map(|i| input.bytes.get(i).copied().unwrap_or(0)).collect();
    Tensor::from_raw(from, shape, raw).ok()
}

fn fixed_width(d: DType) -> bool {
    matches!(d.kind(), Kind::Float(_) | Kind::Integer { .. } | Kind::Bool)
}

fn check_elements(x: &Tensor, to: DType, opts: &CastOptions, y: &Tensor) {
    let from = x.dtype();
    let what = format!("{from} {:?} -> {to} {opts:?}", x.shape());
    let policy = opts.profile.policy().for_cast(from, to);
    if fixed_width(from) && fixed_width(to) {
        let block = policy.vector_block(from, to).map(|b| b.length);
        let n = x.len();
        let in_blocks = if from == to { 0 } else { block.map_or(0, |b| n - n % b) };
        for i in 0..n {
            let code = x.code(i).expect("fixed-width element");
            let want = if i < in_blocks {
                convert_code_in_block(from, to, code, opts)
            } else {
                convert_code(from, to, code, opts)
            }
            .unwrap_or_else(|e| panic!("{what}: element {i} ({code:#x}): convert_code failed: {e}"));
            assert_eq!(y.code(i), Some(want), "{what}: element {i} ({code:#x})");
        }
    } else if to == DType::String && fixed_width(from) {
        let texts = y.strings().expect("a STRING tensor");
        for (i, text) in texts.iter().enumerate() {
            let code = x.code(i).expect("fixed-width element");
            let want = format_code(from, code, policy.strings.number_style).expect("numeric dtypes format");
            assert_eq!(*text, want, "{what}: element {i} ({code:#x})");
        }
    } else if from == DType::String && fixed_width(to) {
        let texts = x.strings().expect("a STRING tensor");
        for (i, text) in texts.iter().enumerate() {
            let want = parse_to_code(text, to, policy.strings.grammar, opts).expect("the cast succeeded");
            assert_eq!(y.code(i), Some(want), "{what}: element {i} ({text:?})");
        }
    }
}

fuzz_target!(|input: Input| {
    let from = pick(input.from, DType::Float);
    let to = pick(input.to, DType::ALL[17 + usize::from(input.to % 4)]);
    let Some(x) = build(from, &input) else { return };
    let round_mode = [RoundMode::Up, RoundMode::Down, RoundMode::Nearest][usize::from(input.round_mode) % 3];
    for profile in Profile::ALL {
        let opts = CastOptions { saturate: input.saturate, round_mode, profile };
        if let Ok(y) = cast(&x, to, &opts) {
            assert_eq!(y.dtype(), to, "{from} -> {to} {opts:?}: output dtype");
            assert_eq!(y.shape(), x.shape(), "{from} -> {to} {opts:?}: output shape");
            check_elements(&x, to, &opts, &y);
        }
        // The node entry points with arbitrary attributes.
        let node = &input.node;
        let to_attr = match (&node.to_name, node.to_number) {
            (Some(name), _) => Some(CastTo::Name(name.clone())),
            (None, Some(n)) => Some(CastTo::Number(n)),
            (None, None) => Some(CastTo::Number(i64::from(to.onnx_number()))),
        };
        let attrs = CastAttributes { to: to_attr, saturate: node.saturate, round_mode: node.round_mode.clone() };
        let opset = i64::from(node.opset);
        if let Ok(y) = cast_op(&x, &attrs, opset, profile) {
            assert_eq!(y.shape(), x.shape(), "Cast-{opset} {attrs:?}: output shape");
        }
        let like = if to == DType::String {
            Tensor::from_strings(vec![0], vec![])
        } else {
            Tensor::from_codes(to, vec![0], &[])
        };
        if let Ok(like) = like {
            let got = cast_like_op(&x, &like, node.saturate, node.round_mode.as_deref(), opset, profile);
            if let Ok(y) = got {
                assert_eq!(y.dtype(), to, "CastLike-{opset}: output dtype");
                assert_eq!(y.shape(), x.shape(), "CastLike-{opset}: output shape");
            }
        }
    }
});
