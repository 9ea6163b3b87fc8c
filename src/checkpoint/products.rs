//! Tiles of 8-bit elements with float32 scales (DeepSeek FP8 and the other FP8 recipes whose
//! dequantize is the float32 product `element * scale`), decoded by lookups where a scale covers
//! many elements: the output of every element code under one scale is a 256-entry table (256
//! products, converted to the output dtype by the output plan), made once per scale and kept
//! while that scale's elements are decoded. DeepSeek's 128 x 128 tiles give each table 16,384
//! elements, so an element costs one load instead of a product and a conversion.
//!
//! Nothing here decides a value on its own: the element values are the general path's table, the
//! product is the engine's float32 multiply (a NaN element keeps its NaN, as there), and the
//! conversion is the output plan's.

use crate::quant::blocks::{product, ProductNan};
use crate::{Plan, Result};
use zerocopy::{FromBytes, Immutable, IntoBytes};

/// Elements per scale from which the lookups pay: a table costs 256 products and conversions.
pub(super) const ELEMENTS_PER_SCALE_FOR_TABLES: usize = 2048;

/// Tables kept at once, by scale number modulo this (a row of DeepSeek's scales is 56 for a 7168-wide
/// weight; a band of rows meets each scale of its rows of scales again and again). The tests keep
/// four, so that their small weights replace tables too.
const SLOTS: usize = if cfg!(test) { 4 } else { 512 };

/// The output codes (`T`: u16 for bfloat16 and float16, u32 for float32) of every element code
/// under recently used scales.
pub(super) struct ScaledTables<'a, T> {
    values: &'a [f32; 256],
    /// The recipe's NaN of a product of two NaNs.
    nan: ProductNan,
    /// FLOAT -> the output dtype; `None` when the output is float32.
    plan: Option<&'a Plan>,
    /// Scale number + 1 of the table in each slot (0: empty).
    tags: Vec<usize>,
    tables: Vec<T>,
    products: [f32; 256],
}

impl<'a, T: Copy + Default + IntoBytes + FromBytes + Immutable> ScaledTables<'a, T> {
    pub(super) fn new(values: &'a [f32; 256], nan: ProductNan, plan: Option<&'a Plan>) -> ScaledTables<'a, T> {
        ScaledTables {
            values,
            nan,
            plan,
            tags: vec![0; SLOTS],
            tables: vec![T::default(); SLOTS * 256],
            products: [0.0; 256],
        }
    }

    /// Tables for a weight that does not use them (no memory taken).
    pub(super) fn empty() -> ScaledTables<'a, T> {
        const NO_VALUES: [f32; 256] = [0.0; 256];
        ScaledTables {
            values: &NO_VALUES,
            nan: ProductNan::Element,
            plan: None,
            tags: Vec::new(),
            tables: Vec::new(),
            products: [0.0; 256],
        }
    }

    /// The outputs of every element code under scale number `index`, whose value is `scale`.
    pub(super) fn table(&mut self, index: usize, scale: f32) -> Result<&[T; 256]> {
        let slot = index % SLOTS;
        let table: &mut [T; 256] = (&mut self.tables[slot * 256..][..256]).try_into().expect("256 entries");
        if self.tags[slot] != index + 1 {
            for (p, &x) in self.products.iter_mut().zip(self.values) {
                *p = product(self.nan, x, scale);
            }
            match self.plan {
                Some(plan) => plan.run(self.products.as_bytes(), table.as_mut_bytes(), 256)?,
                None => table.as_mut_bytes().copy_from_slice(self.products.as_bytes()),
            }
            self.tags[slot] = index + 1;
        }
        Ok(table)
    }
}

/// `out[i] = table[codes[i]]`.
#[inline]
pub(super) fn look_up<T: Copy>(table: &[T; 256], codes: &[u8], out: &mut [T]) {
    for (o, &c) in out.iter_mut().zip(codes) {
        *o = table[usize::from(c)];
    }
}
