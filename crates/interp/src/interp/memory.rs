//! Array memory: small arrays are one dense row-major block of cells; a big
//! array keeps only the cells a run touched, the others holding their
//! initial value (a hash of the seed, the array's name and the index).

use super::Writer;
use std::collections::BTreeMap;

/// One array cell: its value and who put it there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cell {
    pub value: i64,
    pub writer: Writer,
    /// The writer behind any `@copy` statements (see [`super::Read::origin`]).
    pub origin: Writer,
}

/// Arrays with more cells than this keep only the cells a run touches.
/// Filling a dense array costs as much as its cells at every run however
/// few the run touches: a C array with constant extents (PolyBench's
/// `double A[1000][1200]`, validated by `expand --emit code` at many small
/// parameter vectors) must not pay for all of them.
pub const DENSE_MAX: u64 = 1 << 16;

/// The contents of one array.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Contents {
    /// The inclusive range `(lo, hi)` of each dimension; empty for a scalar.
    pub dims: Vec<(i64, i64)>,
    /// Row-major, the last dimension varying fastest; empty when sparse.
    pub cells: Vec<Cell>,
    /// A sparse (big) array: the cells the run read or wrote, by row-major
    /// position. Every other cell holds its initial value.
    pub touched: Option<BTreeMap<usize, Cell>>,
}

impl Contents {
    /// The number of cells `dims` describe, or `None` past `u64`.
    pub fn size(dims: &[(i64, i64)]) -> Option<u64> {
        dims.iter().try_fold(1u64, |acc, &(lo, hi)| {
            let extent = if hi < lo {
                0
            } else {
                u64::try_from(hi as i128 - lo as i128 + 1).ok()?
            };
            acc.checked_mul(extent)
        })
    }

    /// A sparse array of `dims`: no cell held yet.
    pub fn sparse(dims: Vec<(i64, i64)>) -> Contents {
        Contents {
            dims,
            cells: Vec::new(),
            touched: Some(BTreeMap::new()),
        }
    }

    /// The cell at row-major position `flat`, `None` for a cell of a sparse
    /// array no one touched (it holds its initial value).
    pub fn get(&self, flat: usize) -> Option<Cell> {
        match &self.touched {
            Some(t) => t.get(&flat).copied(),
            None => self.cells.get(flat).copied(),
        }
    }

    /// Sets the cell at `flat`; whether a sparse array holds one cell more.
    pub fn set(&mut self, flat: usize, cell: Cell) -> bool {
        match &mut self.touched {
            Some(t) => t.insert(flat, cell).is_none(),
            None => {
                self.cells[flat] = cell;
                false
            }
        }
    }

    /// The cells held, with their row-major positions, in that order: every
    /// cell of a dense array, the touched ones of a sparse array.
    pub fn held(&self) -> Box<dyn Iterator<Item = (usize, Cell)> + '_> {
        match &self.touched {
            Some(t) => Box::new(t.iter().map(|(&k, &c)| (k, c))),
            None => Box::new(self.cells.iter().copied().enumerate()),
        }
    }

    /// The number of cells held.
    pub fn held_len(&self) -> usize {
        self.touched.as_ref().map_or(self.cells.len(), |t| t.len())
    }

    /// The position of `index` in `cells`, or the first dimension (0-based)
    /// it is outside of.
    pub fn offset(&self, index: &[i64]) -> Result<usize, usize> {
        let mut flat = 0usize;
        for (k, (&(lo, hi), &v)) in self.dims.iter().zip(index).enumerate() {
            if v < lo || v > hi {
                return Err(k);
            }
            // In range, so the extent and the product fit: the cell count was
            // checked against the cell budget.
            let extent = (hi - lo + 1) as usize;
            flat = flat * extent + (v - lo) as usize;
        }
        Ok(flat)
    }

    /// The index of the cell at position `flat`.
    pub fn index(&self, mut flat: usize) -> Vec<i64> {
        let mut out = vec![0; self.dims.len()];
        for (k, &(lo, hi)) in self.dims.iter().enumerate().rev() {
            let extent = (hi - lo + 1) as usize;
            out[k] = lo + (flat % extent) as i64;
            flat /= extent;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_are_row_major_and_invert() {
        let c = Contents::sparse(vec![(1, 3), (0, 1)]);
        assert_eq!(c.offset(&[1, 0]), Ok(0));
        assert_eq!(c.offset(&[1, 1]), Ok(1));
        assert_eq!(c.offset(&[2, 0]), Ok(2));
        assert_eq!(c.offset(&[3, 1]), Ok(5));
        assert_eq!(c.offset(&[4, 0]), Err(0));
        assert_eq!(c.offset(&[3, -1]), Err(1));
        for k in 0..6 {
            assert_eq!(c.offset(&c.index(k)), Ok(k));
        }
        assert_eq!(Contents::size(&c.dims), Some(6));
        assert_eq!(Contents::size(&[(2, 1)]), Some(0));
        assert_eq!(Contents::size(&[]), Some(1));
        assert_eq!(Contents::size(&[(i64::MIN, i64::MAX)]), None);
    }
}
