//! Where the kernels that read block scales want them: a 2-D array of one-byte scales (rows x
//! scale columns, row-major as a recipe computes them) rearranged in tiles, padded with zeros.
//! Each layout is a row of [`SCALE_LAYOUTS`]: a tile of `tile_rows` x `tile_cols` scales stored
//! as `tile_rows / row_groups` lines of `row_groups * tile_cols` bytes, line `l` holding rows
//! `l`, `l + tile_rows / row_groups`, ... of the tile, `tile_cols` bytes each; tiles in row-major
//! order.

use super::recipes::{Layout, ScaleFormat};
use super::{Quantized, Scales, Scheme};
use crate::alloc_prelude::*;
use crate::error::{quoted, Error, Result};
use crate::packing;

/// A layout of one-byte block scales ([`SCALE_LAYOUTS`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScaleLayout {
    /// Its name (`linear`, `cublas128x4`).
    pub name: &'static str,
    /// Scale rows per tile (1: no tiles).
    pub tile_rows: usize,
    /// Scale columns per tile.
    pub tile_cols: usize,
    /// How many rows of a tile share one stored line.
    pub row_groups: usize,
    /// Who reads it and where the rule is written.
    pub source: &'static str,
}

/// Every scale layout lowbit writes and reads.
pub const SCALE_LAYOUTS: &[ScaleLayout] = &[
    ScaleLayout {
        name: "linear",
        tile_rows: 1,
        tile_cols: 1,
        row_groups: 1,
        source: "row-major (rows x scale columns), as the recipes compute and checkpoints store them",
    },
    ScaleLayout {
        name: "cublas128x4",
        tile_rows: 128,
        tile_cols: 4,
        row_groups: 4,
        source: "cuBLAS block-scaling-factors layout (MXFP8/NVFP4 GEMMs, CUTLASS); torchao 0.18.0 \
                 torchao.prototype.mx_formats.utils.to_blocked, recorded by \
                 scripts/gen_scale_layout_fixtures.py, checked by tests/scale_layout.rs",
    },
];

impl ScaleLayout {
    /// The layout named `name` (a row of [`SCALE_LAYOUTS`]).
    pub fn parse(name: &str) -> Result<&'static ScaleLayout> {
        SCALE_LAYOUTS.iter().find(|l| l.name == name).ok_or_else(|| Error::InvalidOp {
            op: "scale layout".into(),
            message: format!(
                "{} is not a scale layout; known: {}",
                quoted(name),
                SCALE_LAYOUTS.iter().map(|l| l.name).collect::<Vec<_>>().join(", ")
            ),
        })
    }

    /// The stored shape of `rows` x `cols` scales: both padded to whole tiles.
    pub fn padded(&self, rows: usize, cols: usize) -> Result<(usize, usize)> {
        let round = |n: usize, to: usize| n.div_ceil(to).checked_mul(to);
        match (round(rows, self.tile_rows), round(cols, self.tile_cols)) {
            (Some(r), Some(c)) if r.checked_mul(c).is_some() => Ok((r, c)),
            _ => Err(Error::TooLarge { what: format!("{rows} x {cols} scales padded to {} tiles", self.name) }),
        }
    }

    /// The byte count of `rows` x `cols` scales in this layout.
    pub fn stored_len(&self, rows: usize, cols: usize) -> Result<usize> {
        let (r, c) = self.padded(rows, cols)?;
        Ok(r * c)
    }

    /// The offset of scale (`row`, `col`) in a layout of `padded_cols` columns.
    fn offset(&self, row: usize, col: usize, padded_cols: usize) -> usize {
        let tile_bytes = self.tile_rows * self.tile_cols;
        let tile = (row / self.tile_rows) * (padded_cols / self.tile_cols) + col / self.tile_cols;
        let lines = self.tile_rows / self.row_groups;
        let (r, c) = (row % self.tile_rows, col % self.tile_cols);
        tile * tile_bytes + (r % lines) * (self.row_groups * self.tile_cols) + (r / lines) * self.tile_cols + c
    }
}

fn check_len(what: &str, actual: usize, rows: usize, cols: usize, expected: usize, layout: &ScaleLayout) -> Result<()> {
    if actual == expected {
        return Ok(());
    }
    Err(Error::InvalidOp {
        op: format!("{} scale layout", layout.name),
        message: format!("{what} holds {actual} bytes; {rows} x {cols} scales take {expected}"),
    })
}

/// `scales` (`rows` x `cols` one-byte scales, row-major) in `layout`, the padding zero.
pub fn swizzle_scales(scales: &[u8], rows: usize, cols: usize, layout: &ScaleLayout) -> Result<Vec<u8>> {
    let count = rows.checked_mul(cols).ok_or_else(|| Error::TooLarge { what: format!("{rows} x {cols} scales") })?;
    check_len("the scale array", scales.len(), rows, cols, count, layout)?;
    let (_, padded_cols) = layout.padded(rows, cols)?;
    let mut out = vec![0u8; layout.stored_len(rows, cols)?];
    for (row, line) in scales.chunks_exact(cols.max(1)).enumerate().take(rows) {
        for (col, &s) in line.iter().enumerate() {
            out[layout.offset(row, col, padded_cols)] = s;
        }
    }
    Ok(out)
}

/// The reverse of [`swizzle_scales`]: the `rows` x `cols` scales of `data`, row-major (the
/// padding is not read).
pub fn unswizzle_scales(data: &[u8], rows: usize, cols: usize, layout: &ScaleLayout) -> Result<Vec<u8>> {
    check_len("the data", data.len(), rows, cols, layout.stored_len(rows, cols)?, layout)?;
    let (_, padded_cols) = layout.padded(rows, cols)?;
    let mut out = Vec::with_capacity(rows * cols);
    for row in 0..rows {
        out.extend((0..cols).map(|col| data[layout.offset(row, col, padded_cols)]));
    }
    Ok(out)
}

/// The rows and columns of a quantized tensor's scales as a 2-D array (all axes but the last
/// make the rows), and where its one-byte scales start in [`super::to_bytes`]'s layout; `None` for
/// layouts that are not elements-then-scales or scales that are not one byte.
fn scale_section(q: &Quantized) -> Result<Option<(usize, usize, usize)>> {
    if q.scheme.recipe().layout != Layout::Onnx || !matches!(q.scales, Scales::Codes(_)) {
        return Ok(None);
    }
    let shape = q.scales_shape()?;
    let cols = shape.last().copied().unwrap_or(1);
    let rows = shape[..shape.len().saturating_sub(1)].iter().product();
    Ok(Some((rows, cols, packing::raw_len(q.scheme.element_dtype(), q.elements.len())?)))
}

fn not_one_byte(scheme: &Scheme, layout: &ScaleLayout) -> Error {
    Error::InvalidOp {
        op: format!("{} scale layout", layout.name),
        message: format!("{}: only one-byte scales stored after the elements take a scale layout", scheme.name()),
    }
}

/// [`super::to_bytes`] with the scales in `layout` (padded as it pads them).
pub fn to_bytes_in(q: &Quantized, layout: &ScaleLayout) -> Result<Vec<u8>> {
    let bytes = super::to_bytes(q)?;
    if layout.tile_rows == 1 && layout.tile_cols == 1 {
        return Ok(bytes);
    }
    let (rows, cols, start) = scale_section(q)?.ok_or_else(|| not_one_byte(&q.scheme, layout))?;
    let end = start + rows * cols;
    let mut out = bytes[..start].to_vec();
    out.extend(swizzle_scales(&bytes[start..end], rows, cols, layout)?);
    out.extend_from_slice(&bytes[end..]);
    Ok(out)
}

/// [`super::from_bytes`] of data whose scales are in `layout`.
pub fn from_bytes_in(
    data: &[u8],
    scheme: &Scheme,
    shape: &[usize],
    axis: i64,
    layout: &ScaleLayout,
) -> Result<Quantized> {
    if layout.tile_rows == 1 && layout.tile_cols == 1 {
        return super::from_bytes(data, scheme, shape, axis);
    }
    // The linear form's geometry, from an empty tensor of the shape's codes.
    let scale_shape = super::scales_shape(shape, scheme, axis)?;
    let cols = scale_shape.last().copied().unwrap_or(1);
    let rows: usize = scale_shape[..scale_shape.len().saturating_sub(1)].iter().product();
    let elements: usize = shape.iter().product();
    let start = packing::raw_len(scheme.element_dtype(), elements)?;
    let one_byte = scheme.recipe().layout == Layout::Onnx
        && matches!(scheme.recipe().scale, ScaleFormat::E8M0 | ScaleFormat::E4M3 | ScaleFormat::GgmlUe4m3);
    if !one_byte {
        return Err(not_one_byte(scheme, layout));
    }
    let stored = layout.stored_len(rows, cols)?;
    let end = start.checked_add(stored).filter(|&e| e <= data.len()).ok_or_else(|| Error::InvalidOp {
        op: format!("{} scale layout", layout.name),
        message: format!("{} bytes cannot hold {elements} elements and {stored} bytes of scales", data.len()),
    })?;
    let mut linear = data[..start].to_vec();
    linear.extend(unswizzle_scales(&data[start..end], rows, cols, layout)?);
    linear.extend_from_slice(&data[end..]);
    super::from_bytes(&linear, scheme, shape, axis)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// cuBLAS's layout written out from its documentation's formula for the scale of row `r`,
    /// column `c`: offset = (r / 128 * ceil(cols / 4) + c / 4) * 512 + (r % 32) * 16 +
    /// (r % 128) / 32 * 4 + c % 4.
    fn documented(r: usize, c: usize, cols: usize) -> usize {
        (r / 128 * cols.div_ceil(4) + c / 4) * 512 + (r % 32) * 16 + (r % 128) / 32 * 4 + c % 4
    }

    #[test]
    fn cublas_layout_places_every_scale_where_the_formula_says() {
        let layout = ScaleLayout::parse("cublas128x4").unwrap();
        for (rows, cols) in [(1, 1), (128, 4), (129, 5), (300, 9), (256, 8)] {
            let scales: Vec<u8> = (0..rows * cols).map(|i| (i % 251) as u8 + 1).collect();
            let out = swizzle_scales(&scales, rows, cols, layout).unwrap();
            assert_eq!(out.len(), rows.div_ceil(128) * 128 * cols.div_ceil(4) * 4);
            let mut written = vec![false; out.len()];
            for r in 0..rows {
                for c in 0..cols {
                    let at = documented(r, c, cols);
                    assert_eq!(out[at], scales[r * cols + c], "{rows}x{cols} ({r}, {c})");
                    written[at] = true;
                }
            }
            // The padding is zero.
            assert!(out.iter().zip(&written).all(|(&b, &w)| w || b == 0));
            assert_eq!(unswizzle_scales(&out, rows, cols, layout).unwrap(), scales);
        }
    }

    #[test]
    fn linear_is_the_identity_and_lengths_are_checked() {
        let layout = ScaleLayout::parse("linear").unwrap();
        let scales = [1u8, 2, 3, 4, 5, 6];
        assert_eq!(swizzle_scales(&scales, 2, 3, layout).unwrap(), scales);
        assert!(swizzle_scales(&scales, 4, 3, layout).is_err());
        let cublas = ScaleLayout::parse("cublas128x4").unwrap();
        assert!(unswizzle_scales(&[0; 511], 1, 1, cublas).is_err());
        assert!(swizzle_scales(&[], usize::MAX, 2, cublas).is_err());
        assert!(ScaleLayout::parse("cublas").is_err());
    }
}
