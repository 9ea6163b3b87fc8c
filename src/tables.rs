//! The exhaustive tables in `tables/`: every code of every format of 8 bits or fewer, every cast
//! between them, SHA-256 digests of every 16-bit-source cast, and in `verify/` the digests of the
//! 2^32-pattern float32 sweeps of [`crate::verify::sweep`]. `lowbit tables --out DIR` writes them;
//! `lowbit tables --check DIR` and the test suite regenerate them and compare bytes.
//!
//! The tables of `tables/` itself are computed by the element-level `Cast`
//! ([`crate::convert_code`]) under the `spec` profile; the tests check that path against the
//! independent oracle.

use crate::convert::{convert_code, CastOptions, RoundMode};
use crate::dtype::{DType, Kind};
use crate::error::{quoted, Error, Result};
use crate::files::{open_regular, read_bounded};
use crate::profile::{OnnxText, Profile, ROWS};
use crate::staging::Staging;
use crate::strings::value_to_exact_decimal;
use crate::verify::config::Config;
use crate::verify::{sweep, Format, VerifyOptions};
use core::fmt::Write as _;
use core::num::FpCategory;
use rayon::prelude::*;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// Relative path -> file contents, for every file `tables/` holds.
pub type TableSet = BTreeMap<PathBuf, Vec<u8>>;

const README: &str = include_str!("tables_readme.md");

/// `verify/README.md`.
const SWEEP_README: &str = "# Sweep digests

`sweep-digests.csv`: the SHA-256 that `lowbit sweep --from float --to TO` prints for every one of
the 2^32 float32 patterns under the IEEE semantics of `lowbit::verify` (the `config` column in the
configuration grammar of `lowbit diff --help`): the output codes concatenated in ascending order of
the pattern, one byte per code. Written by `lowbit tables --out tables` and checked by
`lowbit tables --check tables` (one sweep of 2^32 patterns per row, about a second each on two
cores); `tests/verify_cli.rs` also sweeps one row through ONNX Cast's plan instead.
";

/// The float32 sweeps of `verify/sweep-digests.csv`: every float8 with saturation off and on,
/// float4, both float6 and E8M0, nearest-even.
pub const SWEEPS: [(&str, &str); 12] = [
    ("float8e4m3fn", "rne,saturate=0"),
    ("float8e4m3fn", "rne,saturate=1"),
    ("float8e4m3fnuz", "rne,saturate=0"),
    ("float8e4m3fnuz", "rne,saturate=1"),
    ("float8e5m2", "rne,saturate=0"),
    ("float8e5m2", "rne,saturate=1"),
    ("float8e5m2fnuz", "rne,saturate=0"),
    ("float8e5m2fnuz", "rne,saturate=1"),
    ("float4e2m1", "rne,saturate=0"),
    ("float6e2m3", "rne,saturate=0"),
    ("float6e3m2", "rne,saturate=0"),
    ("float8e8m0", "rne,saturate=0"),
];

/// `verify/sweep-digests.csv`: each row of [`SWEEPS`] swept over every float32 pattern on every
/// core. Computed once per process (about a second per row on two cores): a write and a check in
/// one process, or two threads, wait for the one computation instead of repeating it.
fn sweep_digests() -> Result<String> {
    static DIGESTS: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);
    let mut done = DIGESTS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(csv) = done.as_ref() {
        return Ok(csv.clone());
    }
    let float32 = Format::parse("float")?;
    let threads = std::thread::available_parallelism().map_or(1, core::num::NonZeroUsize::get);
    let mut csv = String::from("from,to,config,sha256\n");
    for (to, config) in SWEEPS {
        let parsed = Config::parse(config, VerifyOptions::default())?;
        let report = sweep::sweep(&float32, &Format::parse(to)?, &parsed, threads, &|_| {})?;
        let _ = writeln!(csv, "float,{to},\"{config}\",{}", report.sha256_hex());
    }
    *done = Some(csv.clone());
    Ok(csv)
}

/// The files of `verify/`.
fn render_sweeps() -> Result<TableSet> {
    let mut set = TableSet::new();
    set.insert(Path::new("verify").join("README.md"), SWEEP_README.as_bytes().to_vec());
    set.insert(Path::new("verify").join("sweep-digests.csv"), sweep_digests()?.into_bytes());
    Ok(set)
}

/// Every code of a dtype of 8 bits or fewer, in increasing order.
fn codes(dtype: DType) -> impl Iterator<Item = u64> {
    0..=dtype.code_mask()
}

fn hex(code: u64, dtype_bits: u32) -> String {
    format!("0x{:0width$x}", code, width = dtype_bits.div_ceil(4) as usize)
}

fn class_name(dtype: DType, code: u64) -> &'static str {
    match dtype.kind() {
        Kind::Float(f) => match f.classify(code) {
            FpCategory::Nan => "nan",
            FpCategory::Infinite => "infinite",
            FpCategory::Zero => "zero",
            FpCategory::Subnormal => "subnormal",
            FpCategory::Normal => "normal",
        },
        _ => "integer",
    }
}

fn value_column(dtype: DType, code: u64) -> String {
    match dtype.kind() {
        Kind::Float(f) => value_to_exact_decimal(&f.decode(code)),
        Kind::Integer { bits, signed } => {
            let v = if signed && code >> (bits - 1) & 1 == 1 { code as i64 - (1i64 << bits) } else { code as i64 };
            v.to_string()
        }
        _ => unreachable!("tables cover numeric formats only"),
    }
}

fn cast(from: DType, to: DType, code: u64, opts: &CastOptions) -> u64 {
    convert_code(from, to, code, opts).expect("every narrow numeric dtype converts to every other")
}

/// `tables/<dtype>.csv`: one row per code.
fn code_table(dtype: DType) -> String {
    let bits = dtype.bits().expect("narrow dtypes have a width");
    let spec = CastOptions::default();
    let mut out = String::from("code,class,value,float32,float16,bfloat16\n");
    for code in codes(dtype) {
        let _ = writeln!(
            out,
            "{},{},{},{},{},{}",
            hex(code, bits),
            class_name(dtype, code),
            value_column(dtype, code),
            hex(cast(dtype, DType::Float, code, &spec), 32),
            hex(cast(dtype, DType::Float16, code, &spec), 16),
            hex(cast(dtype, DType::Bfloat16, code, &spec), 16),
        );
    }
    out
}

/// The option sets a cast table or digest covers for a target: saturate 1 and 0, and for E8M0
/// each `round_mode` as well.
fn option_sets(to: DType) -> Vec<(String, CastOptions)> {
    let modes: &[RoundMode] =
        if to == DType::Float8E8M0 { &[RoundMode::Up, RoundMode::Down, RoundMode::Nearest] } else { &[RoundMode::Up] };
    let mut sets = Vec::new();
    for &mode in modes {
        for saturate in [true, false] {
            let name = match (to == DType::Float8E8M0, mode) {
                (false, _) => format!("sat{}", u8::from(saturate)),
                (true, RoundMode::Up) => format!("up_sat{}", u8::from(saturate)),
                (true, RoundMode::Down) => format!("down_sat{}", u8::from(saturate)),
                (true, RoundMode::Nearest) => format!("nearest_sat{}", u8::from(saturate)),
            };
            sets.push((name, CastOptions { saturate, round_mode: mode, ..CastOptions::default() }));
        }
    }
    sets
}

/// `tables/cast/<from>-<to>.csv`: every code of `from` and what it casts to.
fn cast_table(from: DType, to: DType) -> String {
    let sets = option_sets(to);
    let to_bits = to.bits().expect("narrow dtypes have a width");
    let mut out = String::from("in");
    for (name, _) in &sets {
        out.push(',');
        out.push_str(name);
    }
    out.push('\n');
    for code in codes(from) {
        out.push_str(&hex(code, from.bits().unwrap_or(8)));
        for (_, opts) in &sets {
            out.push(',');
            out.push_str(&hex(cast(from, to, code, opts), to_bits));
        }
        out.push('\n');
    }
    out
}

/// The SHA-256 of the bytes produced by casting every bit pattern of a 16-bit source, in order,
/// one output code per byte.
fn digest_row(from: DType, to: DType, opts: &CastOptions) -> String {
    let bytes: Vec<u8> = (0..=u16::MAX).map(|bits| cast(from, to, u64::from(bits), opts) as u8).collect();
    let digest = Sha256::digest(&bytes);
    digest.iter().fold(String::with_capacity(64), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

fn digests() -> String {
    let mut jobs = Vec::new();
    for from in [DType::Float16, DType::Bfloat16] {
        for to in DType::NARROW {
            for (name, opts) in option_sets(to) {
                jobs.push((from, to, name, opts));
            }
        }
    }
    let rows: Vec<String> = jobs
        .par_iter()
        .map(|(from, to, name, opts)| {
            format!("{},{},{},{}\n", from.file_name(), to.file_name(), name, digest_row(*from, *to, opts))
        })
        .collect();
    let mut out = String::from("from,to,options,sha256\n");
    rows.iter().for_each(|r| out.push_str(r));
    out
}

/// Every file of `tables/` but those of `verify/` (the 2^32-pattern sweeps, which [`write()`] and
/// [`check`] add), in memory.
#[must_use]
pub fn render() -> TableSet {
    let mut set = TableSet::new();
    set.insert(PathBuf::from("README.md"), README.as_bytes().to_vec());
    for dtype in DType::NARROW {
        set.insert(PathBuf::from(format!("{}.csv", dtype.file_name())), code_table(dtype).into_bytes());
    }
    let pairs: Vec<(DType, DType)> =
        DType::NARROW.iter().flat_map(|&from| DType::NARROW.iter().map(move |&to| (from, to))).collect();
    let casts: Vec<(PathBuf, Vec<u8>)> = pairs
        .par_iter()
        .map(|&(from, to)| {
            let path = Path::new("cast").join(format!("{}-{}.csv", from.file_name(), to.file_name()));
            (path, cast_table(from, to).into_bytes())
        })
        .collect();
    set.extend(casts);
    set.insert(PathBuf::from("digests.csv"), digests().into_bytes());
    set.insert(PathBuf::from("profiles.md"), profiles_markdown().into_bytes());
    #[cfg(feature = "quant")]
    set.insert(PathBuf::from("recipes.md"), crate::quant::blocks::recipes_markdown().into_bytes());
    set
}

// ------------------------------------------------------------------------------------------------
// tables/profiles.md: the decision table

/// The input classes the profile differences are counted in: those of `lowbit diff` (floats:
/// zero, subnormal, normal, infinity, NaN; integers and BOOL: zero, positive, negative).
pub const INPUT_CLASSES: [&str; 7] = ["zero", "subnormal", "normal", "infinity", "NaN", "positive", "negative"];

fn input_class(from: DType, code: u64) -> usize {
    match from.kind() {
        Kind::Float(f) => match f.classify(code) {
            FpCategory::Zero => 0,
            FpCategory::Subnormal => 1,
            FpCategory::Normal => 2,
            FpCategory::Infinite => 3,
            FpCategory::Nan => 4,
        },
        Kind::Integer { bits, signed } if signed && code >> (bits - 1) & 1 == 1 => 6,
        _ if code == 0 => 0,
        _ => 5,
    }
}

/// Where two profiles disagree: conversions by input class, and how many (source, target,
/// attributes) combinations have any.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProfileDifference {
    /// The first profile.
    pub a: Profile,
    /// The second profile.
    pub b: Profile,
    /// Conversions that differ, by the input's class (in the order of [`INPUT_CLASSES`]).
    pub by_class: [u64; 7],
    /// (source, target, attributes) combinations with at least one difference.
    pub combinations: u64,
}

/// The attribute sets the profile differences cover for `to`: saturate 1 and 0 for float8
/// targets, every round_mode as well for FLOAT8E8M0, the defaults elsewhere.
fn attribute_sets(to: DType) -> Vec<CastOptions> {
    if to == DType::Float8E8M0 || to.is_float8() {
        option_sets(to).into_iter().map(|(_, opts)| opts).collect()
    } else {
        vec![CastOptions::default()]
    }
}

/// Every source of 16 bits or fewer, every fixed-width target (identity included), every
/// attribute set: the conversions element by element (positional rules aside), compared between
/// every pair of profiles. Returns the differences and the number of conversions per profile.
#[must_use]
pub fn profile_differences() -> (Vec<ProfileDifference>, u64) {
    let fixed: Vec<DType> = DType::ALL
        .into_iter()
        .filter(|d| matches!(d.kind(), Kind::Float(_) | Kind::Integer { .. } | Kind::Bool))
        .collect();
    let jobs: Vec<(DType, DType, CastOptions)> = fixed
        .iter()
        .filter(|d| d.bits().is_some_and(|b| b <= 16))
        .flat_map(|&from| fixed.iter().flat_map(move |&to| attribute_sets(to).into_iter().map(move |o| (from, to, o))))
        .collect();
    let pairs: Vec<(usize, usize)> =
        (0..Profile::ALL.len()).flat_map(|i| (i + 1..Profile::ALL.len()).map(move |j| (i, j))).collect();
    let per_job: Vec<(Vec<[u64; 7]>, u64)> = jobs
        .par_iter()
        .map(|&(from, to, opts)| {
            let codes: Vec<Vec<u64>> =
                Profile::ALL.iter().map(|&profile| all_codes(from, to, profile, &opts)).collect();
            let counts = pairs.iter().map(|&(i, j)| count_by_class(from, &codes[i], &codes[j])).collect();
            (counts, from.code_mask() + 1)
        })
        .collect();
    let mut out: Vec<ProfileDifference> = pairs
        .iter()
        .map(|&(i, j)| ProfileDifference { a: Profile::ALL[i], b: Profile::ALL[j], ..ProfileDifference::default() })
        .collect();
    let mut conversions = 0;
    for (counts, n) in per_job {
        conversions += n;
        for (d, by_class) in out.iter_mut().zip(counts) {
            d.combinations += u64::from(by_class.iter().any(|&c| c > 0));
            for (total, c) in d.by_class.iter_mut().zip(by_class) {
                *total += c;
            }
        }
    }
    (out, conversions)
}

/// Every code of `from` cast to `to` under `profile` with the attributes of `opts`.
fn all_codes(from: DType, to: DType, profile: Profile, opts: &CastOptions) -> Vec<u64> {
    (0..=from.code_mask()).map(|c| cast(from, to, c, &CastOptions { profile, ..*opts })).collect()
}

fn count_by_class(from: DType, a: &[u64], b: &[u64]) -> [u64; 7] {
    let mut by_class = [0u64; 7];
    for (code, (x, y)) in a.iter().zip(b).enumerate() {
        if x != y {
            by_class[input_class(from, code as u64)] += 1;
        }
    }
    by_class
}

/// One combination of [`profile_differences`]: every code of `from` (16 bits or fewer) into
/// `to` with the attributes of `opts`, under profiles `a` and `b`, disagreements by input class
/// (in the order of [`INPUT_CLASSES`]).
#[must_use]
pub fn profile_difference(from: DType, to: DType, opts: &CastOptions, a: Profile, b: Profile) -> [u64; 7] {
    count_by_class(from, &all_codes(from, to, a, opts), &all_codes(from, to, b, opts))
}

fn checked_by(profile: Profile, field: &str) -> &'static str {
    if field == "range.openvino" {
        return "";
    }
    if field.starts_with("range.") || field.starts_with("slice.") {
        return match profile {
            Profile::OnnxReference | Profile::OnnxRuntime => "scripts/crosscheck_ops.py",
            _ => "",
        };
    }
    if field.starts_with("quantize.") {
        return match profile {
            Profile::OnnxReference | Profile::OnnxRuntime => "scripts/crosscheck_quant.py",
            _ => "",
        };
    }
    match profile {
        Profile::OnnxReference | Profile::OnnxRuntime => "scripts/crosscheck_cast.py",
        Profile::MlDtypes => "scripts/crosscheck_ml_dtypes.py",
        Profile::Xla => "scripts/crosscheck_xla.py",
        Profile::Torch | Profile::TorchDefault => "scripts/crosscheck_torch.py",
        Profile::Spec | Profile::OpenVino => "",
    }
}

/// A table cell: `|` escaped.
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

/// `tables/profiles.md`: every profile, every row of the policy table with each profile's value
/// and the observation behind it, and where every two profiles differ.
#[must_use]
pub fn profiles_markdown() -> String {
    let mut out = String::new();
    out.push_str(
        "# lowbit profiles: the decision table\n\n\
         Generated from `src/profile/` by `lowbit tables --out tables` (also `lowbit profiles --markdown`) \
         and checked byte for byte by `lowbit tables --check tables` and the test suite. Do not edit by hand.\n\n\
         A profile is one implementation's answers, bit for bit, to the questions where the ONNX text, the \
         implementations and lowbit could disagree: one field of `Policy` per row below. Conversion code \
         reads the fields and never asks which profile it runs. Where an implementation has no behaviour \
         (it raises, or has no kernel), its profile gives `spec`'s answer (the coverage rows list where).\n\n",
    );
    out.push_str("| profile | bit-exact with | checked against the live implementation by |\n|---|---|---|\n");
    for p in Profile::ALL {
        let script = match p {
            Profile::Spec => "the independent oracle (tests/oracle_agreement.rs) and tables/",
            Profile::OpenVino => "tests only: no OpenVINO on this machine (tests/ops_range.rs)",
            other => checked_by(other, ""),
        };
        let _ = writeln!(out, "| `{}` | {} | {} |", p.name(), cell(p.peer()), script);
    }
    out.push_str(
        "\nRows marked **undefined in the ONNX text** are questions the text leaves open (or is silent on): \
         there every value, `spec`'s included, is what an implementation returns, and `spec` follows the onnx \
         reference unless the row says otherwise. Rows marked *coverage* say where an implementation has no \
         conversion at all.\n\n",
    );
    let undefined: Vec<String> =
        ROWS.iter().filter(|r| r.onnx_text == OnnxText::Undefined).map(|r| format!("`{}`", r.field)).collect();
    let _ = writeln!(out, "Undefined in the ONNX text: {}.\n", undefined.join(", "));
    out.push_str("## Rows\n");
    for row in ROWS {
        let mark = match row.onnx_text {
            OnnxText::Decides => "decided by the ONNX text",
            OnnxText::Undefined => "**undefined in the ONNX text**: here is what the implementations return",
            OnnxText::Coverage => "*coverage*",
        };
        let _ = write!(
            out,
            "\n### `{}`\n\n{} ({mark}).\n\n| profile | value | observed | checked by |\n|---|---|---|---|\n",
            row.field, row.case
        );
        for p in Profile::ALL {
            let observed = row.observations.iter().find(|(q, _)| *q == p).map_or("", |(_, o)| *o);
            let _ = writeln!(
                out,
                "| `{}` | {} | {} | {} |",
                p.name(),
                cell(&(row.value)(p.policy())),
                cell(observed),
                checked_by(p, row.field)
            );
        }
    }
    let (differences, conversions) = profile_differences();
    let _ = write!(
        out,
        "\n## Where the profiles differ\n\n\
         Every bit pattern of every source of 16 bits or fewer into every fixed-width target (identity \
         included), with saturate 1 and 0 for the float8 targets and every round_mode for FLOAT8E8M0: \
         {} conversions per profile, element by element (the positional rules of `vector_blocks` aside). \
         Each count is what `lowbit diff --from F --to T profile=A,saturate=S profile=B,saturate=S` reports \
         for one combination, summed over all of them, by the class of the input.\n\n",
        thousands(conversions)
    );
    let _ = writeln!(out, "| A | B | {} | all | combinations |", INPUT_CLASSES.join(" | "));
    let _ = writeln!(out, "|---|---|{}---:|---:|", "---:|".repeat(INPUT_CLASSES.len()));
    for d in &differences {
        let counts: Vec<String> = d.by_class.iter().map(|&c| thousands(c)).collect();
        let _ = writeln!(
            out,
            "| `{}` | `{}` | {} | {} | {} |",
            d.a.name(),
            d.b.name(),
            counts.join(" | "),
            thousands(d.by_class.iter().sum()),
            d.combinations
        );
    }
    out
}

fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Writes every table under `dir` (creating it), `verify/` included, returning the number of files
/// written. All or nothing: every file is first written to a temporary file in its folder and only
/// when all are written are they renamed into place; on an error (a file where a folder must go, a
/// folder where a file must go, an unwritable folder, a full disk) the temporary files and the
/// folders this call created are removed and the existing files are untouched. The sweeps run
/// after the other tables are staged, so such an error is found before them.
pub fn write(dir: &Path) -> Result<usize> {
    let set = render();
    let mut staging = Staging::new();
    let mut stage_all = |set: &TableSet| -> Result<()> {
        for (rel, bytes) in set {
            let path = dir.join(rel);
            if let Some(parent) = path.parent() {
                staging.create_folders(parent)?;
            }
            staging.stage(&path, |out| out.write_all(bytes))?;
        }
        Ok(())
    };
    stage_all(&set)?;
    let sweeps = render_sweeps()?;
    stage_all(&sweeps)?;
    staging.commit()?;
    Ok(set.len() + sweeps.len())
}

/// Regenerates the tables and compares them with the files under `dir`. Every file lowbit
/// generates must exist with identical bytes; a stray `.csv` lowbit does not generate is also a
/// mismatch. Every difference is reported, not only the first: the error lists each file
/// (missing, different or stray) on a line of its own. The sweeps of `verify/` run last, once
/// everything else matches. Returns the number of files checked.
pub fn check(dir: &Path) -> Result<usize> {
    // A folder that is not there, or holds nothing, is said as such (not as every file missing).
    let empty = match std::fs::read_dir(dir) {
        Ok(mut entries) => entries.next().is_none(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Error::TableMismatch { path: dir.display().to_string(), detail: "no such folder".into() })
        }
        Err(e) => return Err(Error::io(dir, e)),
    };
    if empty {
        return Err(Error::TableMismatch {
            path: dir.display().to_string(),
            detail: "the folder is empty (write the tables with `lowbit tables --out DIR`)".into(),
        });
    }
    let set = render();
    let mut differences = compare(dir, &set, &[PathBuf::new(), PathBuf::from("cast")])?;
    let mut checked = set.len();
    if differences.is_empty() {
        let sweeps = render_sweeps()?;
        differences = compare(dir, &sweeps, &[PathBuf::from("verify")])?;
        checked += sweeps.len();
    }
    match differences.len() {
        0 => Ok(checked),
        1 => {
            let (path, detail) = differences.remove(0);
            Err(Error::TableMismatch { path, detail })
        }
        n => {
            let lines: Vec<String> = differences.iter().map(|(path, detail)| format!("\n  {path}: {detail}")).collect();
            Err(Error::TableMismatch {
                path: dir.display().to_string(),
                detail: format!("{n} of {checked} files differ:{}", lines.concat()),
            })
        }
    }
}

/// The files of `set` that differ from those under `dir` (missing, different, unreadable), and
/// any `.csv` in `folders` that `set` does not hold, each with what is wrong.
fn compare(dir: &Path, set: &TableSet, folders: &[PathBuf]) -> Result<Vec<(String, String)>> {
    let mut differences = Vec::new();
    for (rel, want) in set {
        let path = dir.join(rel);
        match read_table(&path, want.len()) {
            Ok(have) if have == *want => {}
            Ok(have) => differences.push((path.display().to_string(), first_difference(&have, want))),
            Err(Error::TableMismatch { path, detail }) => differences.push((path, detail)),
            Err(e) => differences.push((path.display().to_string(), e.to_string())),
        }
    }
    for sub in folders {
        let folder = dir.join(sub);
        // A missing folder: its files are already listed as missing above.
        let Ok(entries) = std::fs::read_dir(&folder) else { continue };
        for entry in entries {
            let entry = entry.map_err(|e| Error::io(&folder, e))?;
            let rel = sub.join(entry.file_name());
            if rel.extension().is_some_and(|e| e == "csv") && !set.contains_key(&rel) {
                differences.push((entry.path().display().to_string(), "lowbit does not generate this file".into()));
            }
        }
    }
    Ok(differences)
}

/// Reads a committed table: a regular file only (a FIFO or a device is refused by its type, never
/// opened and read), and no more than the generated table's size plus one byte, so that a huge file
/// is a mismatch found without reading it whole.
fn read_table(path: &Path, generated: usize) -> Result<Vec<u8>> {
    let (file, metadata) = open_regular(path)?;
    let generated = generated as u64;
    if metadata.len() > generated {
        return Err(Error::TableMismatch {
            path: path.display().to_string(),
            detail: format!("file has {} bytes, lowbit generates {generated}", metadata.len()),
        });
    }
    read_bounded(file, metadata.len(), generated, path).map_err(|e| match e {
        Error::InputTooLarge { .. } => Error::TableMismatch {
            path: path.display().to_string(),
            detail: format!("file has more than {generated} bytes, lowbit generates {generated}"),
        },
        other => other,
    })
}

fn first_difference(have: &[u8], want: &[u8]) -> String {
    let have_text = String::from_utf8_lossy(have);
    let want_text = String::from_utf8_lossy(want);
    for (i, (h, w)) in have_text.lines().zip(want_text.lines()).enumerate() {
        if h != w {
            return format!("line {}: file has {}, lowbit generates {}", i + 1, quoted(h), quoted(w));
        }
    }
    format!("file has {} lines, lowbit generates {}", have_text.lines().count(), want_text.lines().count())
}

#[cfg(test)]
mod tests {
    use crate::strings::exact_decimal;

    #[test]
    fn exact_decimals() {
        assert_eq!(exact_decimal(false, 1, -9), "0.001953125");
        assert_eq!(exact_decimal(true, 7, 6), "-448");
        assert_eq!(exact_decimal(true, 0, 3), "-0");
        assert_eq!(exact_decimal(false, 3, -1), "1.5");
        assert_eq!(exact_decimal(false, 1, -127).len(), "0.".len() + 127);
    }
}
