//! An ascent data structure provider (`#[ds(super::bag)]` in `rules/`, which
//! `engine.rs` expands) for
//! relations that the rules derive each tuple of at most once: the tuples are
//! kept in the relation's vector, with no deduplicating hash index.
//!
//! ascent's default keeps a hash index of every tuple to drop duplicates;
//! for `visit`, `source`, `initial` and `exhausted` that index costs more
//! than the rest of a read's walk (hash inserts, and growing the tables from
//! empty in every batch), and it never drops anything: a walk is one chain
//! of strictly decreasing writes, one `visit` per (reader, step count), each
//! derived once (docs/rules.md, §3). The engine dedups the output anyway.
//!
//! Only the deduplicating ("full") index is left out: indices for joins are
//! ascent's own. A rule that looks a bag relation up with every column bound
//! (or negates it) does not compile, as [`NoDedup`] cannot be read.

use ascent::internal::ToRelIndex;
use ascent::internal::{RelFullIndexRead, RelFullIndexWrite, RelIndexMerge, RelIndexWrite};
use std::marker::PhantomData;

/// The full index of a bag relation: it holds nothing and admits every tuple.
pub struct NoDedup<K, V>(PhantomData<(K, V)>);

impl<K, V> Default for NoDedup<K, V> {
    fn default() -> Self {
        NoDedup(PhantomData)
    }
}

impl<K, V, R> ToRelIndex<R> for NoDedup<K, V> {
    type RelIndex<'a>
        = &'a Self
    where
        Self: 'a,
        R: 'a;
    fn to_rel_index<'a>(&'a self, _: &'a R) -> &'a Self {
        self
    }
    type RelIndexWrite<'a>
        = &'a mut Self
    where
        Self: 'a,
        R: 'a;
    fn to_rel_index_write<'a>(&'a mut self, _: &'a mut R) -> &'a mut Self {
        self
    }
}

impl<K, V> RelFullIndexRead<'_> for NoDedup<K, V> {
    type Key = K;
    fn contains_key(&self, _: &K) -> bool {
        false
    }
}

impl<K: Clone, V> RelFullIndexWrite for NoDedup<K, V> {
    type Key = K;
    type Value = V;
    fn insert_if_not_present(&mut self, _: &K, _: V) -> bool {
        true
    }
}

impl<K, V> RelIndexWrite for NoDedup<K, V> {
    type Key = K;
    type Value = V;
    fn index_insert(&mut self, _: K, _: V) {}
}

impl<K, V> RelIndexMerge for NoDedup<K, V> {
    fn move_index_contents(_: &mut Self, _: &mut Self) {}
}

// The provider's macros, as ascent's `#[ds]` expects them (its default
// provider is `ascent::rel`; everything but the full index is the same).
#[doc(hidden)]
#[macro_export]
macro_rules! bag_rel_codegen {
    ($($tt:tt)*) => {};
}
pub use crate::bag_rel_codegen as rel_codegen;

#[doc(hidden)]
#[macro_export]
macro_rules! bag_rel {
    ($name:ident, $field_types:ty, $indices:expr, ser, ()) => {
        ::std::vec::Vec<$field_types>
    };
}
pub use crate::bag_rel as rel;

#[doc(hidden)]
#[macro_export]
macro_rules! bag_rel_ind_common {
    ($name:ident, $field_types:ty, $indices:expr, ser, ()) => {
        ()
    };
}
pub use crate::bag_rel_ind_common as rel_ind_common;

#[doc(hidden)]
#[macro_export]
macro_rules! bag_rel_full_ind {
    ($name:ident, $field_types:ty, $indices:expr, ser, (), $key:ty, $val:ty) => {
        $crate::dataflow::bag::NoDedup<$key, $val>
    };
}
pub use crate::bag_rel_full_ind as rel_full_ind;

#[doc(hidden)]
#[macro_export]
macro_rules! bag_rel_ind {
    ($name:ident, $field_types:ty, $indices:expr, ser, (), $ind:expr, $key:ty, $val:ty) => {
        ::ascent::rel::ToRelIndexType<$key, $val>
    };
}
pub use crate::bag_rel_ind as rel_ind;
