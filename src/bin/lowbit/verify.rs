//! The hardware-verification commands' glue: `lowbit vectors`, `check`, `sweep`, `diff`. The
//! work is in [`lowbit::verify`]; this reads the flags' words, opens the files and draws the
//! progress bar.

use lowbit::verify::config::Config;
use lowbit::verify::vectors::{Column, Level, Vectors};
use lowbit::verify::{check, sweep, Format, VerifyOptions};
use lowbit::{Error, Result};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

/// Output layouts of `lowbit vectors`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VectorLayout {
    TestFloat,
    Readmemh,
    Csv,
}

impl VectorLayout {
    pub fn parse(text: &str) -> Result<VectorLayout> {
        match text {
            "testfloat" => Ok(VectorLayout::TestFloat),
            "readmemh" => Ok(VectorLayout::Readmemh),
            "csv" => Ok(VectorLayout::Csv),
            _ => Err(Error::InvalidOp {
                op: "--format".into(),
                message: format!("{text:?} is not valid; use testfloat, readmemh or csv"),
            }),
        }
    }
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
    /// The dump; `None` or `-` for standard input.
    pub file: Option<&'a Path>,
}

/// The report of `lowbit check` and whether it found no mismatch.
pub fn run_check(request: &CheckRequest<'_>) -> Result<(String, bool)> {
    let from = Format::parse(request.from)?;
    let stdin = request.file.is_none_or(|p| p == Path::new("-"));
    let (input, name): (Box<dyn std::io::Read>, String) = if stdin {
        (Box::new(std::io::stdin().lock()), "standard input".into())
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
        let clean = which.ranking.first().is_some_and(|r| r.agree == which.checked);
        return Ok((which.report(10), clean));
    }
    let to = Format::parse(request.to)?;
    let summary = check::check_stream(input, &name, &from, &to, &request.options, &request.check)?;
    Ok((summary.report(), summary.mismatches == 0))
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

/// `lowbit sweep`: the report, and the seconds it took.
pub fn run_sweep(from: &str, to: &str, config: &Config, threads: usize) -> Result<(String, f64)> {
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
    Ok((report.report(), report.seconds))
}

/// `lowbit diff`: the report and whether the two configurations agree everywhere.
pub fn run_diff(
    from: &str,
    to: &str,
    a: &str,
    b: &str,
    defaults: VerifyOptions,
    threads: usize,
) -> Result<(String, bool)> {
    let (from, to) = (Format::parse(from)?, Format::parse(to)?);
    let (ca, cb) = (Config::parse(a, defaults)?, Config::parse(b, defaults)?);
    let bar = progress_bar(1u64 << from.width().min(sweep::MAX_SWEEP_BITS));
    let report = sweep::diff(&from, &to, &ca, &cb, threads, &|done| {
        if let Some(bar) = &bar {
            bar.set_position(done);
        }
    })?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let agree = report.values + report.flags_only == 0;
    Ok((report.report(&ca.to_string(), &cb.to_string()), agree))
}
