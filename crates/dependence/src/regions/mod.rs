//! Access regions as Linear Memory Access Descriptors (docs/regions.md): [`poly`], the symbolic numbers; [`lmad`], the
//! descriptor and its normal form; [`ops`], coalescing, interleaving,
//! unions, containment and emptiness; [`build`], the LMAD of a reference
//! over its loops and every loop's read, write and must-write regions;
//! [`render`], text, JSON and isl.

pub mod build;
pub mod lmad;
pub mod ops;
pub mod poly;
pub mod render;
pub mod summary;

pub use lmad::{Dim, Lmad};
pub use poly::Poly;
