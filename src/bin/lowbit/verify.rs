//! The hardware-verification commands' glue: `lowbit vectors`, `check`, `sweep`, `diff`. The
//! work is in [`lowbit::verify`]; this reads the flags' words, opens the files and draws the
//! progress bar.

use crate::readmemh::{Columns, Word};
use lowbit::verify::config::{Config, Settings};
use lowbit::verify::vectors::{Column, Level, Vectors};
use lowbit::verify::{check, sweep, Format, VerifyOptions};
use lowbit::{Error, Result};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

/// Output layouts of `lowbit vectors`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum VectorLayout {
    /// `operand result flags` lines.
    #[value(name = "testfloat")]
    TestFloat,
    /// One file per column, for Verilog's $readmemh.
    Readmemh,
    /// CSV with a header.
    Csv,
}

/// What `lowbit vectors` was asked for.
pub struct VectorsRequest<'a> {
    pub from: &'a str,
    pub to: &'a str,
    pub options: VerifyOptions,
    pub level: &'a str,
    pub count: Option<u64>,
    pub seed: u64,
}

/// The vectors, ready to write.
pub fn vectors(request: &VectorsRequest<'_>) -> Result<Vectors> {
    let (from, to) = (Format::parse(request.from)?, Format::parse(request.to)?);
    Vectors::new(&from, &to, &request.options, Level::parse(request.level)?, request.count, request.seed)
}

/// Writes the vectors into `dir` (all files or none): `in.hex`, `out.hex`, `flags.hex` (and
/// `random.hex` for stochastic rounding) for readmemh, else `vectors.txt` or `vectors.csv`.
/// Returns the paths written.
pub fn write_vectors_to(dir: &Path, vectors: &Vectors, layout: VectorLayout) -> Result<Vec<PathBuf>> {
    let mut staging = lowbit::staging::Staging::new();
    staging.create_folders(dir)?;
    let mut written = Vec::new();
    match layout {
        VectorLayout::Readmemh => {
            let mut columns =
                vec![("in.hex", Column::Operand), ("out.hex", Column::Result), ("flags.hex", Column::Flags)];
            if vectors.has_random() {
                columns.push(("random.hex", Column::Random));
            }
            for (name, column) in columns {
                let path = dir.join(name);
                staging.stage(&path, |w| vectors.write_column(w, column))?;
                written.push(path);
            }
        }
        VectorLayout::TestFloat => {
            let path = dir.join("vectors.txt");
            staging.stage(&path, |w| vectors.write_testfloat(w))?;
            written.push(path);
        }
        VectorLayout::Csv => {
            let path = dir.join("vectors.csv");
            staging.stage(&path, |w| vectors.write_csv(w))?;
            written.push(path);
        }
    }
    staging.commit()?;
    Ok(written)
}

/// Writes the vectors to a stream (testfloat or csv).
pub fn write_vectors(out: &mut impl Write, vectors: &Vectors, layout: VectorLayout) -> std::io::Result<()> {
    match layout {
        VectorLayout::Csv => vectors.write_csv(out),
        _ => vectors.write_testfloat(out),
    }
}

/// What `lowbit check` was asked for.
pub struct CheckRequest<'a> {
    pub from: &'a str,
    pub to: &'a str,
    pub options: VerifyOptions,
    pub check: check::CheckOptions,
    pub which: bool,
    /// Accept a dump that holds no case (otherwise an error: a simulator that wrote nothing
    /// must not pass).
    pub allow_empty: bool,
    /// The summary as JSON.
    pub json: bool,
    /// The dump; `None` or `-` for standard input; a folder: the `$readmemh` columns
    /// `lowbit vectors --format readmemh` writes there.
    pub file: Option<&'a Path>,
}

/// The report of `lowbit check` and whether it found no mismatch.
pub fn run_check(request: &CheckRequest<'_>) -> Result<(String, bool)> {
    let from = Format::parse(request.from)?;
    let stdin = request.file.is_none_or(|p| p == Path::new("-"));
    let (input, name): (Box<dyn std::io::Read>, String) = if stdin {
        (Box::new(std::io::stdin().lock()), "standard input".into())
    } else if let Some(dir) = request.file.filter(|p| p.is_dir()) {
        // flags.hex is there when the unit reports flags.
        let mut names = vec![("in.hex", Word::AsWritten), ("out.hex", Word::AsWritten)];
        if dir.join("flags.hex").exists() {
            names.push(("flags.hex", Word::AsWritten));
        }
        (Box::new(Columns::open(dir, &names)?), format!("{} (in.hex, out.hex, flags.hex)", dir.display()))
    } else {
        let path = request.file.unwrap_or(Path::new("-"));
        let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
        (Box::new(file), path.display().to_string())
    };
    if request.which {
        let width = match request.to.parse::<u32>() {
            Ok(bits) if (1..=64).contains(&bits) => bits,
            _ => Format::parse(request.to)?.width(),
        };
        let which = check::which(input, &name, &from, width, &request.check)?;
        lowbit::arguments::nonempty_dump(&name, which.checked, which.skipped, request.allow_empty)?;
        let clean = which.ranking.first().is_some_and(|r| r.agree == which.checked);
        return Ok((which.report(10), clean));
    }
    let to = Format::parse(request.to)?;
    let summary = check::check_stream(input, &name, &from, &to, &request.options, &request.check)?;
    lowbit::arguments::nonempty_dump(&name, summary.checked, summary.skipped, request.allow_empty)?;
    // The settings that applied, defaults included, head the output.
    let settings = Config::ieee(request.options).settings();
    let report = if request.json {
        check_json(&summary, &settings)
    } else {
        format!("{} -> {}, {settings}\n{}", from, to, summary.report())
    };
    Ok((report, summary.mismatches == 0))
}

/// `lowbit check --json`: the counts of the summary by name.
fn check_json(summary: &check::Summary, settings: &Settings) -> String {
    let classes: serde_json::Map<String, serde_json::Value> = check::Class::ALL
        .iter()
        .zip(summary.classes)
        .filter(|(_, n)| *n > 0)
        .map(|(c, n)| (c.key().to_string(), n.into()))
        .collect();
    let flags = |counts: &[u64; 5]| -> serde_json::Map<String, serde_json::Value> {
        check::FLAG_NAMES.iter().zip(counts).map(|((_, name), n)| ((*name).to_string(), (*n).into())).collect()
    };
    serde_json::json!({
        "settings": settings_json(settings),
        "checked": summary.checked,
        "mismatches": summary.mismatches,
        "skipped": summary.skipped,
        "classes": classes,
        "flags_missing": flags(&summary.flags_missing),
        "flags_extra": flags(&summary.flags_extra),
        "flags_compared": summary.flags_compared,
        "shown": summary.shown,
    })
    .to_string()
}

/// The settings as JSON: {"round": WORD, "tininess": WORD or null, "saturate": bool}.
fn settings_json(settings: &Settings) -> serde_json::Value {
    serde_json::json!({ "round": settings.round, "tininess": settings.tininess, "saturate": settings.saturate })
}

/// A progress bar on standard error when it is a terminal (nothing otherwise).
fn progress_bar(total: u64) -> Option<indicatif::ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::new(total);
    if let Ok(style) = indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} patterns, {elapsed} ({eta} left)")
    {
        bar.set_style(style);
    }
    Some(bar)
}

/// `lowbit sweep`: the report (text or JSON), and the seconds it took.
pub fn run_sweep(from: &str, to: &str, config: &Config, threads: usize, json: bool) -> Result<(String, f64)> {
    let (from, to) = (Format::parse(from)?, Format::parse(to)?);
    let bar = progress_bar(1u64 << from.width().min(sweep::MAX_SWEEP_BITS));
    let report = sweep::sweep(&from, &to, config, threads, &|done| {
        if let Some(b) = &bar {
            b.set_position(done);
        }
    })?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    if json {
        let counts = |pairs: &[(&str, u64)]| -> serde_json::Map<String, serde_json::Value> {
            pairs.iter().map(|(name, n)| ((*name).to_string(), (*n).into())).collect()
        };
        let text = serde_json::json!({
            "settings": settings_json(&config.settings()),
            "sha256": report.sha256_hex(),
            "patterns": report.patterns,
            "classes": counts(&report.classes),
            "flags": report.flags.as_ref().map(|(flags, none)| {
                let mut map = counts(flags);
                map.insert("none".into(), (*none).into());
                map
            }),
        });
        return Ok((text.to_string(), report.seconds));
    }
    Ok((report.report(), report.seconds))
}

/// What `lowbit diff` was asked for.
pub struct DiffRequest<'a> {
    pub from: &'a str,
    pub to: &'a str,
    pub a: &'a str,
    pub b: &'a str,
    pub defaults: VerifyOptions,
    pub threads: usize,
    pub json: bool,
}

/// `lowbit diff`: the report (text or JSON) and whether the two configurations agree everywhere.
pub fn run_diff(request: &DiffRequest<'_>) -> Result<(String, bool)> {
    let (from, to) = (Format::parse(request.from)?, Format::parse(request.to)?);
    let (ca, cb) = (Config::parse(request.a, request.defaults)?, Config::parse(request.b, request.defaults)?);
    let bar = progress_bar(1u64 << from.width().min(sweep::MAX_SWEEP_BITS));
    let report = sweep::diff(&from, &to, &ca, &cb, request.threads, &|done| {
        if let Some(bar) = &bar {
            bar.set_position(done);
        }
    })?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let agree = report.values + report.flags_only == 0;
    if request.json {
        let text = serde_json::json!({
            "a": ca.to_string(),
            "b": cb.to_string(),
            "a_settings": settings_json(&ca.settings()),
            "b_settings": settings_json(&cb.settings()),
            "patterns": report.patterns,
            "values": report.values,
            "flags_only": report.flags_only,
            "agree": agree,
        });
        return Ok((text.to_string(), agree));
    }
    Ok((report.report(&ca.to_string(), &cb.to_string()), agree))
}
