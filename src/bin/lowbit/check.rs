//! `lowbit check`: a dump against the IEEE semantics.

use crate::block_units::FormatsOrScheme;
use crate::verify as glue;
use crate::{exit, print_text, Outcome, Rounding};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    formats: FormatsOrScheme,
    #[command(flatten)]
    rounding: Rounding,
    /// Count a NaN of another encoding or sign as a mismatch.
    #[arg(long)]
    check_nans: bool,
    /// Count another value of an invalid float-to-integer result as a mismatch.
    #[arg(long)]
    check_inv_ints: bool,
    /// Ignore the flags.
    #[arg(long)]
    no_flags: bool,
    /// Find the configuration the dump follows: --to is only the width of its results (a
    /// format or a number of bits); every rounding mode but stochastic, every tininess rule,
    /// saturation on and off, every format of that width (8 bits or fewer: every e/m split
    /// with each special= and subnormal= rule) and ONNX Cast under each profile (values only)
    /// are ranked by agreement.
    #[arg(long, conflicts_with = "scheme")]
    which: bool,
    /// Seed of stochastic rounding's random words, as given to `lowbit vectors`.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Exit 0 on a dump that holds no case (by default an empty dump is an error, so that a
    /// simulator that wrote nothing does not pass).
    #[arg(long)]
    allow_empty: bool,
    /// The report's first line names the conversion and the settings that applied (defaults
    /// included): `FROM -> TO, round=rne tininess=after saturate=0`.
    ///
    /// One JSON object instead of the report (not with --which): {"settings": {"round": WORD,
    /// "tininess": WORD, "saturate": bool}, "checked": N, "mismatches":
    /// N, "skipped": N (comment, blank and header lines), "classes": {CLASS: N} (only the
    /// classes seen; CLASS one of one_ulp_away_from_zero, one_ulp_toward_zero, zero_sign,
    /// nan_for_number, number_for_nan, nan_encoding, infinity_for_max, max_for_infinity,
    /// flushed_to_zero, invalid_integer_value, other_value), "flags_missing": {FLAG: N},
    /// "flags_extra": {FLAG: N} (FLAG one of inexact, underflow, overflow, infinite, invalid),
    /// "flags_compared": bool, "shown": [LINE] (the first mismatches)}.
    #[arg(long, conflicts_with = "which")]
    json: bool,
    /// The dump (default or `-`: standard input): testfloat lines or the CSV of `lowbit
    /// vectors`, `#` comments and blank lines skipped and counted; or the folder of `lowbit
    /// vectors --format readmemh` (in.hex, out.hex, flags.hex read side by side; with --scheme
    /// its files: in.hex, global.hex, scale.hex, elements.hex, out.hex).
    file: Option<PathBuf>,
}

pub fn run(args: Args) -> Outcome {
    if let Some(scheme) = &args.formats.block.scheme {
        return crate::block_units::check(
            &args.formats.block,
            scheme,
            args.file.as_deref(),
            args.allow_empty,
            args.json,
        );
    }
    let (from, to) = args.formats.formats();
    // --which reads --to as a width; anything else must name a format.
    let request = glue::CheckRequest {
        from,
        to,
        options: args.rounding.options(from, to)?,
        check: lowbit::verify::check::CheckOptions {
            check_nans: args.check_nans,
            check_invalid_integers: args.check_inv_ints,
            no_flags: args.no_flags,
            seed: args.seed,
        },
        which: args.which,
        allow_empty: args.allow_empty,
        json: args.json,
        file: args.file.as_deref(),
    };
    let (report, clean) = glue::run_check(&request)?;
    print_text(&report)?;
    Ok(exit(clean))
}
