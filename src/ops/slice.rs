//! ONNX `Slice`: version 1 (starts, ends and axes as attributes) and versions 10, 11 and 13
//! (starts, ends, axes and steps as inputs), over every dtype.
//!
//! Every version clamps as the Slice-13 text says (profile fields
//! `slice.start_below_lowest_reverses_nothing` and `slice.max_end_reverses_whole_axis`): a negative start or end counts from the back, then with a positive step both clamp to
//! `[0, dim]`, with a negative step the start clamps to `[0, dim-1]` and the end to `[-1, dim-1]`,
//! and the axis gets `max(0, ceil((end - start) / step))` elements. Where the profiles disagree
//! the profile's [`SlicePolicy`] decides:
//!
//! | case | `spec` | `onnx-reference` | `onnxruntime` |
//! |---|---|---|---|
//! | start < -dim with a negative step | start 0 | empty axis | start 0 |
//! | end INT32_MAX / INT64_MAX with a negative step | end clamps to dim-1 | same | whole axis reversed |
//! | an axis given twice | `Err` | the last one wins | `Err` |
//! | rank-0 data and no starts | the data | the data | `Err` |
//! | starts/ends/axes/steps of different integer dtypes | `Err` | accepted | `Err` |
//!
//! Extensions (documented, the same in every profile): every dtype (see [`crate::ops`]), every
//! integer dtype for starts/ends/axes/steps (ONNX allows int32 and int64), negative axes in
//! Slice-1 (whose text does not mention them; onnxruntime and the reference accept them).

use crate::alloc_prelude::*;
use crate::error::{Error, Result};
use crate::ops::{integer_values, schema_version, AllocationGuard, Runs, Unbudgeted};
use crate::profile::RepeatedAxes;
use crate::profile::{Profile, SlicePolicy};
use crate::tensor::{element_count, Tensor};

/// The versions of ONNX `Slice` (none after 13 up to opset 28).
pub const SLICE_VERSIONS: [i64; 4] = [1, 10, 11, 13];

/// Slice's parameters as a node carries them.
#[derive(Clone, Copy, Debug)]
pub enum SliceArgs<'a> {
    /// Slice-1: the `starts`, `ends` and optional `axes` attributes.
    Attributes {
        /// Where each sliced axis starts (negative counts from the end).
        starts: &'a [i64],
        /// Where each sliced axis ends, exclusive.
        ends: &'a [i64],
        /// The axes `starts` and `ends` apply to (default: `0..starts.len()`).
        axes: Option<&'a [i64]>,
    },
    /// Slice-10, 11 and 13: the `starts`, `ends`, optional `axes` and optional `steps` inputs (1-D
    /// integer tensors of one length).
    Inputs {
        /// Where each sliced axis starts (negative counts from the end).
        starts: &'a Tensor,
        /// Where each sliced axis ends, exclusive.
        ends: &'a Tensor,
        /// The axes `starts` and `ends` apply to (default: `0..starts.len()`).
        axes: Option<&'a Tensor>,
        /// The step along each sliced axis (default 1; negative walks backwards; 0 is an error).
        steps: Option<&'a Tensor>,
    },
}

/// An ONNX `Slice` node at opset `opset` (version 1 takes [`SliceArgs::Attributes`], later
/// versions [`SliceArgs::Inputs`]) under `profile`.
pub fn slice(data: &Tensor, args: &SliceArgs, opset: i64, profile: Profile) -> Result<Tensor> {
    slice_guarded(data, args, opset, profile, &mut Unbudgeted)
}

/// [`slice`], telling `guard` about the output before allocating it.
pub(crate) fn slice_guarded(
    data: &Tensor,
    args: &SliceArgs,
    opset: i64,
    profile: Profile,
    guard: &mut dyn AllocationGuard,
) -> Result<Tensor> {
    let version = schema_version("Slice", &SLICE_VERSIONS, opset)?;
    let op = format!("Slice-{version}");
    let policy = &profile.policy().slice;
    match (*args, version) {
        (SliceArgs::Attributes { starts, ends, axes }, 1) => {
            let widen = |v: &[i64]| v.iter().map(|&x| i128::from(x)).collect::<Vec<_>>();
            let (starts, ends, axes) = (widen(starts), widen(ends), axes.map(widen));
            same_lengths(&op, &starts, &ends, axes.as_deref(), None)?;
            let lists = Lists { starts: &starts, ends: &ends, axes: axes.as_deref(), steps: None };
            run(&op, data, &lists, policy, guard)
        }
        (SliceArgs::Inputs { starts, ends, axes, steps }, v) if v >= 10 => {
            let named = [("starts", Some(starts)), ("ends", Some(ends)), ("axes", axes), ("steps", steps)];
            for (name, t) in named {
                let Some(t) = t else { continue };
                if t.shape().len() != 1 {
                    return Err(Error::InvalidOp {
                        op,
                        message: format!(
                            "{name} must be a 1-D tensor, but has shape {}",
                            crate::error::shown_shape(t.shape())
                        ),
                    });
                }
            }
            let starts_values = integer_values(&op, "starts", starts)?;
            let ends_values = integer_values(&op, "ends", ends)?;
            let axes_values = axes.map(|t| integer_values(&op, "axes", t)).transpose()?;
            let steps_values = steps.map(|t| integer_values(&op, "steps", t)).transpose()?;
            let mut first_dtype = None;
            for (name, t) in named {
                let Some(t) = t else { continue };
                match first_dtype {
                    None => first_dtype = Some((name, t.dtype())),
                    Some((first, dtype)) if policy.index_types_must_match && dtype != t.dtype() => {
                        return Err(Error::InvalidOp {
                            op,
                            message: format!(
                                "{first} is {dtype} but {name} is {}: starts, ends, axes and steps share one type \
                                 (Tind)",
                                t.dtype()
                            ),
                        });
                    }
                    Some(_) => {}
                }
            }
            let (starts, ends, axes, steps) = (starts_values, ends_values, axes_values, steps_values);
            same_lengths(&op, &starts, &ends, axes.as_deref(), steps.as_deref())?;
            let lists = Lists { starts: &starts, ends: &ends, axes: axes.as_deref(), steps: steps.as_deref() };
            run(&op, data, &lists, policy, guard)
        }
        (SliceArgs::Attributes { .. }, _) => Err(Error::InvalidOp {
            op,
            message: "starts, ends and axes are inputs from version 10 on, not attributes".into(),
        }),
        (SliceArgs::Inputs { .. }, _) => Err(Error::InvalidOp {
            op,
            message: "version 1 takes starts, ends and axes as attributes, not inputs".into(),
        }),
    }
}

/// Slice-13 on plain lists (the semantics of versions 10 to 13; `steps = None` is version 1's).
pub fn slice_lists(
    data: &Tensor,
    starts: &[i64],
    ends: &[i64],
    axes: Option<&[i64]>,
    steps: Option<&[i64]>,
    profile: Profile,
) -> Result<Tensor> {
    let widen = |v: &[i64]| v.iter().map(|&x| i128::from(x)).collect::<Vec<_>>();
    let (starts, ends, axes, steps) = (widen(starts), widen(ends), axes.map(widen), steps.map(widen));
    let op = "Slice-13";
    same_lengths(op, &starts, &ends, axes.as_deref(), steps.as_deref())?;
    let lists = Lists { starts: &starts, ends: &ends, axes: axes.as_deref(), steps: steps.as_deref() };
    run(op, data, &lists, &profile.policy().slice, &mut Unbudgeted)
}

fn same_lengths(op: &str, starts: &[i128], ends: &[i128], axes: Option<&[i128]>, steps: Option<&[i128]>) -> Result<()> {
    let n = starts.len();
    for (name, len) in [("ends", Some(ends.len())), ("axes", axes.map(<[_]>::len)), ("steps", steps.map(<[_]>::len))] {
        if let Some(len) = len.filter(|&l| l != n) {
            return Err(Error::InvalidOp {
                op: op.into(),
                message: format!("starts has {n} entries but {name} has {len}; they must have the same length"),
            });
        }
    }
    Ok(())
}

/// Where an output axis reads from: input index `start + j * step` for `j` in `0..count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct AxisPlan {
    start: usize,
    step: i128,
    count: usize,
}

/// starts, ends, axes and steps, widened (`steps = None` is version 1's).
struct Lists<'a> {
    starts: &'a [i128],
    ends: &'a [i128],
    axes: Option<&'a [i128]>,
    steps: Option<&'a [i128]>,
}

fn run(
    op: &str,
    data: &Tensor,
    lists: &Lists,
    policy: &SlicePolicy,
    guard: &mut dyn AllocationGuard,
) -> Result<Tensor> {
    let Lists { starts, ends, axes, steps } = *lists;
    let shape = data.shape();
    let rank = shape.len();
    if rank == 0 && policy.scalar_without_starts_is_error {
        return Err(Error::InvalidOp { op: op.into(), message: "cannot slice a scalar (rank-0 data)".into() });
    }
    let mut plans: Vec<AxisPlan> = shape.iter().map(|&d| AxisPlan { start: 0, step: 1, count: d }).collect();
    // Which entry of starts last set each axis, to report repeated axes by position.
    let mut set_by: Vec<Option<usize>> = vec![None; rank];
    let r = rank as i128;
    for k in 0..starts.len() {
        let given = axes.map_or(k as i128, |a| a[k]);
        let axis = if given < 0 { given + r } else { given };
        if !(0..r).contains(&axis) {
            let what = match axes {
                Some(_) => format!("axes[{k}]"),
                None => format!("the axis of starts[{k}] (axes omitted)"),
            };
            return Err(Error::OutOfRange { op: op.into(), what, value: given, low: -r, high: r - 1 });
        }
        let axis = axis as usize;
        if let Some(earlier) = set_by[axis] {
            if policy.repeated_axes == RepeatedAxes::Error {
                return Err(Error::InvalidOp {
                    op: op.into(),
                    message: format!("axis {axis} is referred to more than once (axes[{earlier}] and axes[{k}])"),
                });
            }
        }
        set_by[axis] = Some(k);
        let step = steps.map_or(1, |s| s[k]);
        if step == 0 {
            return Err(Error::InvalidOp { op: op.into(), message: format!("steps[{k}] is 0; a step cannot be 0") });
        }
        plans[axis] = resolve_axis(shape[axis], starts[k], ends[k], step, policy);
    }
    let out_shape: Vec<usize> = plans.iter().map(|p| p.count).collect();
    let out_len = element_count(&out_shape)?;
    let mut runs = Runs::new(op, data, out_len, guard)?;
    if out_len > 0 {
        copy_plan(&mut runs, shape, &plans)?;
    }
    runs.finish(out_shape)
}

/// The Slice-13 clamping of one axis, with the profile's two deviations.
fn resolve_axis(dim: usize, start: i128, end: i128, step: i128, policy: &SlicePolicy) -> AxisPlan {
    if dim == 0 {
        return AxisPlan { start: 0, step, count: 0 };
    }
    let d = dim as i128;
    let from_back = |x: i128| if x < 0 { x + d } else { x };
    let (mut s, mut e) = (from_back(start), from_back(end));
    if step > 0 {
        s = s.clamp(0, d);
        e = e.clamp(0, d);
    } else {
        let max_end = end == i128::from(i32::MAX) || end == i128::from(i64::MAX);
        if policy.max_end_reverses_whole_axis && max_end {
            e = -1;
        }
        // Python's slice.indices clamps a start below the axis to -1: nothing to walk back from.
        s = if policy.start_below_lowest_reverses_nothing && s < 0 { -1 } else { s.clamp(0, d - 1) };
        e = e.clamp(-1, d - 1);
    }
    let count = ceil_div(e - s, step).max(0);
    if count == 0 {
        return AxisPlan { start: 0, step, count: 0 };
    }
    // A non-empty axis starts inside it and takes at most dim elements.
    AxisPlan { start: s as usize, step, count: count as usize }
}

/// `ceil(a / b)` for `b != 0`, exact for every sign.
fn ceil_div(a: i128, b: i128) -> i128 {
    let q = a / b;
    if a % b != 0 && ((a > 0) == (b > 0)) {
        q + 1
    } else {
        q
    }
}

/// Emits the output as runs: the trailing axes that are taken whole fold into one run together
/// with the axis before them when it has step 1; the axes outside the run are walked with an
/// odometer, one run per position.
fn copy_plan(runs: &mut Runs, shape: &[usize], plans: &[AxisPlan]) -> Result<()> {
    let rank = shape.len();
    let mut strides = vec![1i128; rank];
    for a in (0..rank.saturating_sub(1)).rev() {
        strides[a] = strides[a + 1] * shape[a + 1] as i128;
    }
    let mut outer = rank;
    let mut run = 1usize;
    while outer > 0 && plans[outer - 1] == (AxisPlan { start: 0, step: 1, count: shape[outer - 1] }) {
        run *= shape[outer - 1];
        outer -= 1;
    }
    if outer > 0 && plans[outer - 1].step == 1 {
        run *= plans[outer - 1].count;
        outer -= 1;
    }
    let mut offset: i128 = plans.iter().zip(&strides).map(|(p, &s)| p.start as i128 * s).sum();
    let mut position = vec![0usize; outer];
    loop {
        // Offsets stay inside the input: every plan reads indices within its axis.
        runs.copy(offset as usize, run)?;
        let mut a = outer;
        loop {
            if a == 0 {
                return Ok(());
            }
            a -= 1;
            let stride = plans[a].step * strides[a];
            position[a] += 1;
            offset += stride;
            if position[a] < plans[a].count {
                break;
            }
            offset -= stride * plans[a].count as i128;
            position[a] = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::SPEC;

    #[test]
    fn clamping_of_one_axis() {
        let plan = |s, e, st| resolve_axis(10, s, e, st, &SPEC.slice);
        assert_eq!(plan(-1, i128::from(i64::MIN), -1), AxisPlan { start: 9, step: -1, count: 10 });
        assert_eq!(plan(9, i128::from(i64::MAX), -1).count, 0);
        assert_eq!(plan(100, -100, -2), AxisPlan { start: 9, step: -2, count: 5 });
        assert_eq!(plan(0, 10, i128::from(i64::MAX)).count, 1);
        assert_eq!(plan(9, i128::from(i64::MIN), i128::from(i64::MIN)).count, 1);
        assert_eq!(ceil_div(-7, 2), -3);
        assert_eq!(ceil_div(7, 2), 4);
        assert_eq!(ceil_div(-7, -2), 4);
    }
}
