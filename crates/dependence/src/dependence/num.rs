//! Exact integer arithmetic for the tests. Every operation is checked: an
//! overflow is an error, never a wrapped value. The tests are generic over
//! [`Int`], so a problem that overflows in `i64` is solved again in `i128`, and
//! only an overflow there gives up (with a conservative answer).

use std::fmt::{Debug, Display};
use std::hash::Hash;

/// An arithmetic overflow: the caller retries wider or answers "maybe".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Overflow;

pub type Checked<T> = Result<T, Overflow>;

/// The integers the tests compute with (`i64`, then `i128`).
pub trait Int: Copy + Ord + Eq + Hash + Debug + Display + Default + 'static {
    const ZERO: Self;
    const ONE: Self;
    fn from_i64(v: i64) -> Self;
    fn to_i64(self) -> Option<i64>;
    fn add(self, o: Self) -> Checked<Self>;
    fn sub(self, o: Self) -> Checked<Self>;
    fn mul(self, o: Self) -> Checked<Self>;
    fn neg(self) -> Checked<Self>;
    /// Truncating division; `d != 0`.
    fn div_trunc(self, d: Self) -> Checked<Self>;
    fn rem_trunc(self, d: Self) -> Checked<Self>;

    fn is_zero(self) -> bool {
        self == Self::ZERO
    }
    fn is_pos(self) -> bool {
        self > Self::ZERO
    }
    fn is_neg(self) -> bool {
        self < Self::ZERO
    }
    fn abs(self) -> Checked<Self> {
        if self.is_neg() {
            self.neg()
        } else {
            Ok(self)
        }
    }
    /// `⌊self / d⌋` for any sign of `d != 0`.
    fn floor_div(self, d: Self) -> Checked<Self> {
        let q = self.div_trunc(d)?;
        if !self.rem_trunc(d)?.is_zero() && (self.is_neg() != d.is_neg()) {
            q.sub(Self::ONE)
        } else {
            Ok(q)
        }
    }
    /// `⌈self / d⌉` for any sign of `d != 0`.
    fn ceil_div(self, d: Self) -> Checked<Self> {
        let q = self.div_trunc(d)?;
        if !self.rem_trunc(d)?.is_zero() && (self.is_neg() == d.is_neg()) {
            q.add(Self::ONE)
        } else {
            Ok(q)
        }
    }
}

macro_rules! impl_int {
    ($t:ty) => {
        impl Int for $t {
            const ZERO: Self = 0;
            const ONE: Self = 1;
            #[inline]
            fn from_i64(v: i64) -> Self {
                v as $t
            }
            #[inline]
            fn to_i64(self) -> Option<i64> {
                i64::try_from(self).ok()
            }
            #[inline]
            fn add(self, o: Self) -> Checked<Self> {
                self.checked_add(o).ok_or(Overflow)
            }
            #[inline]
            fn sub(self, o: Self) -> Checked<Self> {
                self.checked_sub(o).ok_or(Overflow)
            }
            #[inline]
            fn mul(self, o: Self) -> Checked<Self> {
                self.checked_mul(o).ok_or(Overflow)
            }
            #[inline]
            fn neg(self) -> Checked<Self> {
                self.checked_neg().ok_or(Overflow)
            }
            #[inline]
            fn div_trunc(self, d: Self) -> Checked<Self> {
                self.checked_div(d).ok_or(Overflow)
            }
            #[inline]
            fn rem_trunc(self, d: Self) -> Checked<Self> {
                self.checked_rem(d).ok_or(Overflow)
            }
        }
    };
}

impl_int!(i64);
impl_int!(i128);

/// The non-negative greatest common divisor; `gcd(0, 0) = 0`.
pub fn gcd<T: Int>(a: T, b: T) -> Checked<T> {
    let (mut a, mut b) = (a.abs()?, b.abs()?);
    while !b.is_zero() {
        let r = a.rem_trunc(b)?;
        a = b;
        b = r;
    }
    Ok(a)
}

/// `Σ a_j·x_j`, checked.
pub fn dot<T: Int>(a: &[T], x: &[T]) -> Checked<T> {
    let mut acc = T::ZERO;
    for (&c, &v) in a.iter().zip(x) {
        if !c.is_zero() {
            acc = acc.add(c.mul(v)?)?;
        }
    }
    Ok(acc)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floor_and_ceil_follow_the_sign_of_both_operands() {
        for a in -9i64..=9 {
            for d in [-4i64, -3, -1, 1, 2, 5] {
                let exact = a as f64 / d as f64;
                assert_eq!(a.floor_div(d), Ok(exact.floor() as i64), "{a}/{d}");
                assert_eq!(a.ceil_div(d), Ok(exact.ceil() as i64), "{a}/{d}");
            }
        }
    }

    #[test]
    fn overflow_is_an_error_not_a_wrap() {
        assert_eq!(i64::MAX.add(1), Err(Overflow));
        assert_eq!(i64::MIN.neg(), Err(Overflow));
        assert_eq!(i64::MIN.floor_div(-1), Err(Overflow));
        assert_eq!(gcd(i64::MIN, 0), Err(Overflow));
        assert_eq!(i128::from_i64(i64::MIN).neg().map(|v| v.to_i64()), Ok(None));
    }

    #[test]
    fn gcd_is_non_negative() {
        assert_eq!(gcd(-12i64, 18), Ok(6));
        assert_eq!(gcd(0i64, -7), Ok(7));
        assert_eq!(gcd(0i64, 0), Ok(0));
    }
}
