//! **The kernels**: the fast code a [`Plan`](crate::plan::Plan) is made of, each derived from a
//! format descriptor or from the rounding core's answers and compared with the core in the tests.
//! None is public API: users reach them through plans, slices, the scalar types and `quant`.
//!
//! * [`encode`]: float32/float64 lanes into narrow formats and integers;
//! * [`decode`]: narrow codes into float32/float64 by arithmetic, and the scalar decode table;
//! * [`lut`]: tables of the core's answer for every source code of 16 bits or fewer;
//! * [`truncate`]: 16-bit floats into 64-bit integers;
//! * [`quantize`]: the inner loop of QuantizeLinear into integers;
//! * [`simd`]: the same kernels compiled for AVX2 and AVX-512, chosen at run time (the only
//!   `unsafe` code).

pub(crate) mod decode;
pub(crate) mod encode;
pub(crate) mod lut;
#[cfg(feature = "quant")]
pub(crate) mod quantize;
pub(crate) mod simd;
pub(crate) mod truncate;

use crate::convert::{self, CastOptions};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::once::Memo;
use alloc::sync::Arc;
use encode::SplitTable;
#[cfg(feature = "quant")]
use encode::{ExponentKernel, MinifloatEncoder, TruncatedEncoder};

/// Elements per chunk of the lane engines: a chunk's buffers stay in L1.
pub(crate) const LANE_CHUNK: usize = 1024;

/// The split table of float32 -> `to` (8 bits or fewer), built from the core once per process.
pub(crate) fn split_table(opts: &CastOptions, to: DType) -> Result<Arc<SplitTable>> {
    type Key = (DType, bool, convert::RoundMode, crate::profile::Profile);
    static TABLES: Memo<Key, Arc<SplitTable>> = Memo::new();
    let key = (to, opts.saturate, opts.round_mode, opts.profile);
    TABLES.get_or_try_build(key, || {
        let cast = convert::Conversion::new(DType::Float, to, opts);
        let mut failed = None;
        let table = SplitTable::build(|bits| {
            cast.code(u64::from(bits)).unwrap_or_else(|e| {
                failed = Some(e);
                0
            }) as u8
        });
        if let Some(e) = failed {
            return Err(e);
        }
        Ok(Arc::new(table))
    })
}

/// float32 -> a float target of 8 bits or fewer, one value at a time, with the answers of
/// [`Plan`](crate::Plan) (the scalar types' `from_f32`): one lookup in the split table (the core's answer for
/// every top-16-bit pattern and whether the low 16 bits are zero), which for single values beats
/// any encoder's chain of selects.
#[derive(Clone, Debug)]
pub struct F32Kernel(Arc<SplitTable>);

impl F32Kernel {
    /// The kernel for ONNX `Cast` from FLOAT to `to` (a float dtype of 8 bits or fewer).
    pub fn new(to: DType, opts: &CastOptions) -> Result<F32Kernel> {
        match to.float_format() {
            Some(f) if f.width() <= 8 => Ok(F32Kernel(split_table(opts, to)?)),
            _ => Err(Error::UnsupportedDType {
                op: "F32Kernel",
                dtype: to.onnx_name(),
                why: "the scalar kernel is for float targets of 8 bits or fewer",
            }),
        }
    }

    /// The code of one value.
    #[inline]
    #[must_use]
    pub fn encode(&self, x: f32) -> u8 {
        self.0.encode(x)
    }
}

/// A float32 lane kernel of a plan, lent to code that transforms its lanes before encoding them
/// (MX scales them by a power of two): the same code as the plan gives, with no buffer between the
/// transform and the encoding.
#[cfg(feature = "quant")]
pub(crate) trait LaneEncoder: Clone {
    /// The target code of one float32 lane.
    fn encode_lane(&self, x: f32) -> u16;
}

/// What a caller of [`Plan::with_finite_lane_encoder`] runs with the kernel: generic, so that it
/// is compiled (and inlined) once per kernel type.
#[cfg(feature = "quant")]
pub(crate) trait WithLaneEncoder {
    type Output;
    fn run<E: LaneEncoder>(self, encoder: &E) -> Self::Output;
}

#[cfg(feature = "quant")]
impl LaneEncoder for MinifloatEncoder {
    #[inline(always)]
    fn encode_lane(&self, x: f32) -> u16 {
        self.encode(x)
    }
}

#[cfg(feature = "quant")]
impl LaneEncoder for encode::FiniteEncoder {
    #[inline(always)]
    fn encode_lane(&self, x: f32) -> u16 {
        self.encode(x)
    }
}

#[cfg(feature = "quant")]
impl LaneEncoder for TruncatedEncoder {
    #[inline(always)]
    fn encode_lane(&self, x: f32) -> u16 {
        self.encode(x)
    }
}

#[cfg(feature = "quant")]
impl LaneEncoder for SplitTable {
    #[inline(always)]
    fn encode_lane(&self, x: f32) -> u16 {
        u16::from(self.encode(x))
    }
}

#[cfg(feature = "quant")]
impl LaneEncoder for ExponentKernel {
    #[inline(always)]
    fn encode_lane(&self, x: f32) -> u16 {
        u16::from(self.encode(x))
    }
}
