//! `lowbit cast`: raw little-endian elements (or a JSON array of strings) from standard input to
//! standard output, or values from the command line shown as a table.

use core::num::FpCategory;
use lowbit::cast;
use lowbit::packing;
use lowbit::profile::StringGrammar;
use lowbit::strings::value_to_exact_decimal;
use lowbit::strings::{self};
use lowbit::Tensor;
use lowbit::{decode_element, CastOptions, Element};
use lowbit::{DType, Kind, Packing};
use lowbit::{Error, Result};

/// The number of elements in `bytes` bytes of raw `dtype` data: `count` if given (checked), else
/// the whole number of elements the bytes hold, which must fill them exactly.
pub fn element_count(dtype: DType, bytes: usize, count: Option<usize>) -> Result<usize> {
    let bits =
        dtype.bits().ok_or(Error::UnsupportedDType { op: "cast", dtype: dtype.onnx_name(), why: "no raw layout" })?;
    let n = match count {
        Some(n) => n,
        None => {
            packing::whole_elements(dtype, bytes).ok_or(Error::RawNotWhole { dtype: dtype.onnx_name(), bytes, bits })?
        }
    };
    let need = packing::raw_len(dtype, n)?;
    if need != bytes {
        return Err(Error::RawLength { dtype: dtype.onnx_name(), elements: n, expected: need, actual: bytes });
    }
    Ok(n)
}

/// The default largest standard input `lowbit cast` reads whole (a JSON array of strings, or raw
/// input cast to STRING): 1 GiB. Raw input between fixed-width dtypes is streamed and has no limit.
pub const DEFAULT_MAX_TEXT_INPUT_BYTES: u64 = 1 << 30;

/// Reads standard input (or any reader) whole, at most `limit` bytes: more is
/// [`Error::InputTooLarge`], found while reading (nothing beyond `limit` + 1 bytes is held).
pub fn read_input(reader: impl std::io::Read, limit: u64) -> Result<Vec<u8>> {
    lowbit::files::read_bounded(reader, 0, limit, std::path::Path::new("standard input"))
}

/// Casts raw input bytes (or JSON strings) and returns the output bytes (or JSON).
pub fn cast_stream(input: &[u8], from: DType, to: DType, count: Option<usize>, opts: &CastOptions) -> Result<Vec<u8>> {
    let tensor = if from == DType::String {
        let text = std::str::from_utf8(input).map_err(|e| Error::InvalidOp {
            op: "cast".into(),
            message: format!("standard input is not UTF-8: invalid byte at position {}", e.valid_up_to()),
        })?;
        let strings: Vec<String> = serde_json::from_str(text).map_err(|e| Error::InvalidOp {
            op: "cast".into(),
            // serde_json's message names the line and column.
            message: format!("standard input is not a JSON array of strings: {e}"),
        })?;
        Tensor::from_strings(vec![strings.len()], strings)?
    } else {
        if matches!(from.packing(), Packing::Bytes(_)) && count.is_none() {
            let k = from.bits().unwrap_or(8) as usize / 8;
            if input.len() % k != 0 {
                return Err(Error::RawNotWhole { dtype: from.onnx_name(), bytes: input.len(), bits: k as u32 * 8 });
            }
        }
        let n = element_count(from, input.len(), count)?;
        Tensor::from_raw(from, vec![n], input.to_vec())?
    };
    let out = cast(&tensor, to, opts)?;
    Ok(match out.strings() {
        Some(s) => {
            let mut json = Vec::new();
            write_json(&mut json, s);
            json.push(b'\n');
            json
        }
        None => out.raw().expect("numeric tensors are raw").to_vec(),
    })
}

fn describe(dtype: DType, code: u64) -> Result<(String, String)> {
    Ok(match decode_element(dtype, code)? {
        Element::Float(v) => {
            let f = dtype.float_format().expect("float element");
            let class = match f.classify(code) {
                FpCategory::Nan => "nan",
                FpCategory::Infinite => "infinite",
                FpCategory::Zero => "zero",
                FpCategory::Subnormal => "subnormal",
                FpCategory::Normal => "normal",
            };
            (value_to_exact_decimal(&v), class.into())
        }
        Element::Int(i) => (i.to_string(), "integer".into()),
        Element::Bool(b) => (if b { "true" } else { "false" }.into(), "bool".into()),
    })
}

/// The table `lowbit cast --from F --to T VALUES...` prints.
pub fn cast_values_table(values: &[String], from: DType, to: DType, opts: &CastOptions) -> Result<String> {
    if matches!(from.kind(), Kind::String) || matches!(to.kind(), Kind::String) {
        let texts: Vec<String> = values.to_vec();
        let input = if from == DType::String {
            Tensor::from_strings(vec![texts.len()], texts)?
        } else {
            let codes = parse_values(values, from, opts)?;
            Tensor::from_codes(from, vec![codes.len()], &codes)?
        };
        let out = cast(&input, to, opts)?;
        let mut lines = vec![format!("{:<24} {}", "input", "output")];
        for (i, v) in values.iter().enumerate() {
            let shown = match out.strings() {
                Some(s) => format!("{:?}", &s[i]),
                None => {
                    let code = out.code(i).expect("element exists");
                    let (value, class) = describe(to, code)?;
                    format!("{value} ({class}, code {code:#x})")
                }
            };
            lines.push(format!("{v:<24} {shown}"));
        }
        return Ok(lines.join("\n"));
    }
    let codes = parse_values(values, from, opts)?;
    let input = Tensor::from_codes(from, vec![codes.len()], &codes)?;
    let out = cast(&input, to, opts)?;
    let bits = to.bits().unwrap_or(8) as usize;
    let hex_width = bits.div_ceil(4);
    let mut lines = vec![format!(
        "{:<16} {:<22} {:<hw$} {:<bw$} {:<24} {}",
        "input",
        format!("as {from}"),
        "hex",
        "binary",
        "value",
        "class",
        hw = hex_width + 2,
        bw = bits.max(6)
    )];
    for (i, text) in values.iter().enumerate() {
        let (in_value, _) = describe(from, codes[i])?;
        let code = out.code(i).expect("element exists");
        let (value, class) = describe(to, code)?;
        lines.push(format!(
            "{:<16} {:<22} {:<hw$} {:<bw$} {:<24} {}",
            text,
            in_value,
            format!("0x{code:0hex_width$x}"),
            format!("{code:0bits$b}"),
            value,
            class,
            hw = hex_width + 2,
            bw = bits.max(6)
        ));
    }
    Ok(lines.join("\n"))
}

/// Values typed on the command line are read as the source dtype with the `spec` grammar (the
/// exact decimal, rounded once), so `--from f32 464.00000001` is the float32 nearest to it; a
/// `0x` literal is the source's bit pattern (`--from f32 0x7f800001`, a signalling NaN).
/// An integer source takes integers only (`1.5` into int8 is an error naming it, never a silent
/// truncation), as [`lowbit::arguments::integer_from_text`] reads them.
fn parse_values(values: &[String], from: DType, opts: &CastOptions) -> Result<Vec<u64>> {
    values
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let hex = from.bits().and_then(|bits| lowbit::arguments::code_from_hex(v, bits));
            let code = match (hex, from.kind()) {
                (Some(code), _) => code,
                (None, Kind::Integer { .. }) => lowbit::arguments::integer_from_text(v, from),
                (None, _) => strings::parse_to_code(v, from, StringGrammar::Spec, opts),
            };
            code.map_err(|e| {
                let why = match e {
                    Error::InvalidOp { message, .. } => message,
                    other => other.to_string(),
                };
                Error::InvalidOp {
                    op: "cast".into(),
                    message: format!("value {i} ({}): {why}", lowbit::Error::quote(v)),
                }
            })
        })
        .collect()
}

/// Writes `texts` as a JSON array of strings.
pub fn write_json(out: &mut Vec<u8>, texts: &lowbit::Texts) {
    out.push(b'[');
    for (i, s) in texts.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        // Writing a string to a Vec cannot fail.
        let _ = serde_json::to_writer(&mut *out, s);
    }
    out.push(b']');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts() {
        assert_eq!(element_count(DType::Int4, 2, None).unwrap(), 4);
        assert_eq!(element_count(DType::Int4, 2, Some(3)).unwrap(), 3);
        assert!(element_count(DType::Int4, 2, Some(5)).is_err());
        assert_eq!(element_count(DType::Float6E2M3, 3, None).unwrap(), 4);
        // Without a count, the largest count the bytes hold: 4 bytes of float6 are 5 elements.
        assert_eq!(element_count(DType::Float6E2M3, 4, None).unwrap(), 5);
        assert_eq!(element_count(DType::Float6E2M3, 4, Some(5)).unwrap(), 5);
        let err = element_count(DType::Float6E2M3, 4, Some(6)).unwrap_err().to_string();
        assert!(err.contains("5 bytes") && err.contains("4 bytes"), "{err}");
    }

    #[test]
    fn stream() {
        let raw: Vec<u8> = [448.0f32, 464.0, 480.0].iter().flat_map(|x| x.to_le_bytes()).collect();
        let out = cast_stream(&raw, DType::Float, DType::Float8E4M3FN, None, &CastOptions::saturating(false)).unwrap();
        assert_eq!(out, [0x7E, 0x7E, 0x7F]);
        let err = cast_stream(&raw[..5], DType::Float, DType::Float8E4M3FN, None, &CastOptions::default());
        assert!(err.unwrap_err().to_string().contains("5 bytes"));
    }
}

/// `lowbit cast`'s flags.
#[derive(clap::Args)]
pub struct Args {
    /// Source dtype (ONNX name or alias), or a format description
    /// eEmM[,bias=B][,special=ieee|fn|fnuz|none][,subnormal=keep|flush][,unsigned]; omit it to
    /// cast a TensorProto file. With a described format on either side the conversion is
    /// IEEE's through the core (nearest even, no saturation unless --saturate 1 for targets of 8
    /// bits or fewer, the flags in the table), and a raw code of a described format takes 1, 2
    /// or 4 bytes. ml_dtypes' float8_e3m4, float8_e4m3 and float8_e4m3b11fnuz are described
    /// formats by name; under --profile ml-dtypes or xla they follow that profile's rows
    /// (bit-exact with astype and XLA, BOOL allowed on the other side, no flags). ml_dtypes' int1
    /// and uint1 are named integer types, eight codes per byte, first in the low bit; under
    /// --profile ml-dtypes they follow its rows.
    #[arg(long, value_parser = crate::format_name)]
    from: Option<String>,
    /// Target dtype, or a format description as for --from.
    #[arg(long, value_parser = crate::format_name)]
    to: String,
    #[command(flatten)]
    attributes: crate::Attributes,
    /// Element count, for packed input whose byte count leaves it ambiguous (e.g. an odd int4
    /// count; K, M, G suffixes).
    #[arg(short = 'n', long, value_parser = crate::count_usize)]
    count: Option<usize>,
    /// Threads for raw standard input (default: every core; at least 1). The input is streamed
    /// in pieces of 2^20 elements, so memory stays flat whatever its size.
    #[arg(long, value_parser = crate::threads)]
    threads: Option<usize>,
    /// Largest standard input read whole (STRING on either side: K, M, G, T suffixes are
    /// powers of 1024; `unlimited`), or largest IN.pb. Default: 1G for standard input, 4G
    /// for IN.pb. Raw input between fixed-width dtypes is streamed and has no limit.
    #[arg(long, value_name = "BYTES")]
    max_input_bytes: Option<String>,
    /// With VALUES: one JSON object {"from", "to", "settings": {"profile", "round", "tininess":
    /// null, "saturate": bool or null where the target has no saturation}, "rows": [{"input",
    /// "input_value", "code", "value", "class"}]} instead of the table ("code" as hex with the
    /// target's width). The table's first line names the settings that applied.
    #[arg(long)]
    json: bool,
    /// Write binary output (raw elements, or a TensorProto to `-`) even where standard output is
    /// a terminal (refused otherwise).
    #[arg(long)]
    raw: bool,
    /// Values to cast, read as the source type (exact decimal, rounded once; an integer source
    /// takes integers only; a 0x literal is the source's bit pattern: `--from e4m3fn 0x7e`,
    /// `--from f32 0x7f800001`); or IN.pb OUT.pb. Flags may follow; a value starting with `-`
    /// other than a number (-inf, -nan) goes after `--`.
    #[arg(allow_negative_numbers = true)]
    values: Vec<String>,
}

/// `lowbit cast`.
pub fn run(args: Args) -> crate::Outcome {
    let Args { from, to, attributes, count, threads, max_input_bytes, json, raw, values } = args;
    // A described format on a side: the IEEE conversion through the core, no saturation unless
    // asked for; a named format under a profile that has it: the profile's rows.
    let described = match &from {
        Some(from) => {
            let onnx_words = attributes.round.as_deref().is_some_and(|w| ["up", "down", "nearest"].contains(&w));
            let opts = lowbit::CastOptions {
                saturate: attributes.saturate.is_some_and(crate::Saturate::on),
                round_mode: if onnx_words { attributes.onnx_round_mode()? } else { lowbit::RoundMode::Up },
                profile: attributes.profile,
            };
            let mode =
                if onnx_words { lowbit::round::RoundingMode::NearestEven } else { attributes.ieee_rounding()? };
            lowbit::verify::DescribedCast::under_profile_rounding(from, &to, &opts, mode)?
        }
        None => None,
    };
    if let Some(described) = described {
        if !described.follows_profile() {
            // IEEE's conversion takes IEEE's words only (up, down, nearest are ONNX's).
            attributes.ieee_rounding()?;
        } else if attributes.round.is_some() && attributes.ieee_rounding().is_ok() {
            return Err(crate::usage(
                "cast",
                format!(
                    "--round {}: under --profile {} the profile's Cast rows decide (its round_mode up, down, nearest)",
                    attributes.round.as_deref().unwrap_or_default(),
                    attributes.profile.name()
                ),
            )
            .into());
        }
        if json {
            return Err(crate::usage("cast", "--json is for ONNX dtypes on both sides").into());
        }
        if !values.is_empty() {
            // IEEE's conversion: --round (nearest even by default), tininess after rounding; saturation as given
            // (it applies to targets of 8 bits or fewer).
            let from = from.as_deref().unwrap_or_default();
            let header = if described.follows_profile() {
                format!("{from} -> {to}, profile {} (its Cast rows for named formats)", attributes.profile.name())
            } else {
                let to_format = lowbit::verify::Format::parse(&to)?;
                let from_format = lowbit::verify::Format::parse(from)?;
                let saturate = attributes.saturate.is_some_and(crate::Saturate::on)
                    && to_format.float_format().is_some_and(|f| f.width() <= 8);
                format!(
                    "{from_format} -> {to_format}, IEEE 754: round={} tininess=after saturate={}",
                    attributes.round.as_deref().unwrap_or("rne"),
                    u8::from(saturate)
                )
            };
            return crate::printed(&format!("{header}\n{}", described.table(&values)?));
        }
        if count.is_some() {
            return Err(crate::usage(
                "cast",
                "--count is for ONNX dtypes on both sides; a described format's raw codes are whole bytes each",
            )
            .into());
        }
        crate::binary_to_stdout("cast", raw, "give VALUES for a table")?;
        let (mut input, mut output) = (std::io::stdin().lock(), std::io::stdout().lock());
        return crate::streamed(described.stream(&mut input, &mut output));
    }
    let to = DType::parse(&to)?;
    let opts = attributes.options(to)?;
    let Some(from) = from else {
        let [input, output] = values.as_slice() else {
            return Err(crate::usage("cast", "without --from, give exactly IN.pb OUT.pb").into());
        };
        if std::path::Path::new(input).extension().is_some_and(|e| e.eq_ignore_ascii_case("onnx")) {
            return Err(crate::usage(
                "cast",
                format!(
                    "{input} is an ONNX model; `lowbit cast` casts a TensorProto file (run a model with `lowbit run`)"
                ),
            )
            .into());
        }
        let mut limits = lowbit::onnx::limits::Limits::default();
        crate::set_limit(&mut limits.max_input_bytes, max_input_bytes.as_deref())?;
        let tensor = lowbit::onnx::tensor_proto::read_tensor_file_with(input.as_ref(), &limits)?;
        let out = cast(&tensor, to, &opts)?;
        // The output keeps the input tensor's name.
        let name = tensor_name(input.as_ref(), &limits);
        let done = format!("wrote {} {:?} to {output}", out.dtype(), out.shape());
        let path = std::path::Path::new(output.as_str());
        return crate::printed(&crate::write_tensor_out("cast", path, &out, name.as_deref(), raw, done)?);
    };
    let from = DType::parse(&from)?;
    if values.is_empty() && json {
        return Err(crate::usage("cast", "--json is for the value table (give VALUES)").into());
    }
    if values.is_empty() && from != DType::String && to != DType::String {
        let plan = lowbit::Plan::new(from, to, &opts)?;
        let threads = crate::threads_or_all(threads);
        crate::binary_to_stdout("cast", raw, "give VALUES for a table")?;
        let (mut input, mut output) = (std::io::stdin().lock(), std::io::stdout().lock());
        return crate::streamed(plan.run_stream(&mut input, &mut output, count, threads));
    }
    if values.is_empty() {
        // STRING on a side: JSON text, read whole (its elements have no fixed size), within
        // --max-input-bytes.
        let mut limit = DEFAULT_MAX_TEXT_INPUT_BYTES;
        crate::set_limit(&mut limit, max_input_bytes.as_deref())?;
        let input = read_input(std::io::stdin().lock(), limit)?;
        if to != DType::String {
            crate::binary_to_stdout("cast", raw, "give VALUES for a table")?;
        }
        let out = cast_stream(&input, from, to, count, &opts)?;
        crate::write_stdout(&out)?;
        return Ok(std::process::ExitCode::SUCCESS);
    }
    if json {
        return crate::printed(&cast_values_json(&values, from, to, &opts)?);
    }
    let header = format!("{from} -> {to}, {}", onnx_settings(to, &opts).0);
    crate::printed(&format!("{header}\n{}", cast_values_table(&values, from, to, &opts)?))
}

/// The name a TensorProto file gives its tensor, if any (read again within the same limit; a
/// file that has just been read whole).
fn tensor_name(path: &std::path::Path, limits: &lowbit::onnx::limits::Limits) -> Option<String> {
    use prost::Message;
    let bytes = lowbit::files::read_file_limited(path, limits.max_input_bytes).ok()?;
    lowbit::onnx::proto::TensorProto::decode(bytes.as_slice()).ok()?.name.filter(|n| !n.is_empty())
}

/// `lowbit cast --json VALUES`: each value's code and value in the target, as JSON.
pub fn cast_values_json(values: &[String], from: DType, to: DType, opts: &CastOptions) -> Result<String> {
    if matches!(from.kind(), Kind::String) || matches!(to.kind(), Kind::String) {
        return Err(Error::InvalidOp {
            op: "cast".into(),
            message: "--json is for numeric dtypes on both sides".into(),
        });
    }
    let codes = parse_values(values, from, opts)?;
    let input = Tensor::from_codes(from, vec![codes.len()], &codes)?;
    let out = cast(&input, to, opts)?;
    let digits = (to.bits().unwrap_or(8) as usize).div_ceil(4);
    let mut rows = Vec::new();
    for (i, text) in values.iter().enumerate() {
        let (input_value, _) = describe(from, codes[i])?;
        let code = out.code(i).ok_or_else(|| Error::InvalidOp { op: "cast".into(), message: "no output".into() })?;
        let (value, class) = describe(to, code)?;
        rows.push(serde_json::json!({
            "input": text,
            "input_value": input_value,
            "code": format!("0x{code:0digits$x}"),
            "value": value,
            "class": class,
        }));
    }
    let settings = onnx_settings(to, opts).1;
    Ok(serde_json::json!({ "from": from.onnx_name(), "to": to.onnx_name(), "settings": settings, "rows": rows })
        .to_string())
}

/// The rounding, tininess and saturation ONNX Cast into `to` uses under `opts` (defaults
/// included), as a header line and as JSON {"profile", "round", "tininess", "saturate"}:
/// saturate is ONNX's attribute where the target takes it (float targets of 8 bits or fewer,
/// else null); round is round_mode for FLOAT8E8M0, nearest even (rne) for the other float
/// targets, `profile` (the profile's own rule) for integer targets; tininess is none (no
/// flags).
pub fn onnx_settings(to: DType, opts: &CastOptions) -> (String, serde_json::Value) {
    let float = matches!(to.kind(), Kind::Float(_));
    let saturate = (float && to.bits().is_some_and(|b| b <= 8)).then_some(opts.saturate);
    let round = if to == DType::Float8E8M0 {
        format!("{:?}", opts.round_mode).to_lowercase()
    } else if float {
        "rne".to_string()
    } else {
        "profile".to_string()
    };
    let line = format!(
        "ONNX Cast, profile {}: round={round} tininess=none saturate={}",
        opts.profile.name(),
        saturate.map_or("n/a".to_string(), |s| u8::from(s).to_string())
    );
    let json = serde_json::json!({
        "profile": opts.profile.name(),
        "round": round,
        "tininess": serde_json::Value::Null,
        "saturate": saturate,
    });
    (line, json)
}
