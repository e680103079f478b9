//! Stable hashing and a seeded random stream, written out here so that their
//! results never change with a compiler or crate version: the interpreter's
//! values and the generator's programs are part of what tests compare.
//!
//! Both are built on the SplitMix64 finaliser (Steele, Lea, Flood 2014), a
//! bijection of `u64` with good avalanche.

/// The SplitMix64 increment (2^64 / golden ratio).
const GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// The SplitMix64 finaliser: a bijection on `u64`.
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A hash of a sequence of words. Every word goes through the mixer, and
/// strings and slices are prefixed by their length, so two different
/// sequences of `word`/`str`/`ints` calls only agree by a 64-bit accident.
#[derive(Clone, Copy, Debug)]
pub struct StableHasher(u64);

impl StableHasher {
    /// Starts a hash in a domain: values of different kinds (initial values,
    /// `...`, calls, ...) never share inputs.
    pub fn new(domain: u64) -> StableHasher {
        StableHasher(mix64(domain ^ GAMMA))
    }

    pub fn word(mut self, w: u64) -> StableHasher {
        self.0 = mix64(self.0.wrapping_add(GAMMA) ^ mix64(w));
        self
    }

    pub fn int(self, v: i64) -> StableHasher {
        self.word(v as u64)
    }

    pub fn ints(self, vs: &[i64]) -> StableHasher {
        vs.iter().fold(self.word(vs.len() as u64), |h, &v| h.int(v))
    }

    pub fn str(self, s: &str) -> StableHasher {
        let h = self.word(s.len() as u64);
        s.as_bytes().chunks(8).fold(h, |h, chunk| {
            let mut buf = [0u8; 8];
            buf[..chunk.len()].copy_from_slice(chunk);
            h.word(u64::from_le_bytes(buf))
        })
    }

    pub fn finish(self) -> u64 {
        self.0
    }
}

/// A fast hasher for maps private to one computation (read keys of a run):
/// words folded Fx-style, finished by the mixer. Not DoS-resistant, and
/// nothing stored may depend on its values.
#[derive(Clone, Copy, Debug, Default)]
pub struct WordHasher(u64);

/// `HashMap<K, V, WordHash>`.
pub type WordHash = std::hash::BuildHasherDefault<WordHasher>;

impl WordHasher {
    fn add(&mut self, w: u64) {
        self.0 = (self.0.rotate_left(5) ^ w).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl std::hash::Hasher for WordHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut buf = [0u8; 8];
            buf[..chunk.len()].copy_from_slice(chunk);
            self.add(u64::from_le_bytes(buf));
        }
    }

    fn write_u8(&mut self, v: u8) {
        self.add(u64::from(v));
    }

    fn write_u32(&mut self, v: u32) {
        self.add(u64::from(v));
    }

    fn write_u64(&mut self, v: u64) {
        self.add(v);
    }

    fn write_usize(&mut self, v: usize) {
        self.add(v as u64);
    }

    fn finish(&self) -> u64 {
        mix64(self.0)
    }
}

/// A SplitMix64 stream: a small, seedable, reproducible random source.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(GAMMA);
        mix64(self.0)
    }

    /// Uniform in `0..n` (`n > 0`), by rejection so there is no modulo bias.
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0, "below(0)");
        let zone = u64::MAX - u64::MAX % n;
        loop {
            let x = self.next_u64();
            if x < zone {
                return x % n;
            }
        }
    }

    /// Uniform in the inclusive range `lo..=hi` (`lo <= hi`).
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        assert!(lo <= hi, "empty range {lo}..={hi}");
        let span = (hi as i128 - lo as i128) as u128 + 1;
        if span > u64::MAX as u128 {
            return self.next_u64() as i64;
        }
        (lo as i128 + self.below(span as u64) as i128) as i64
    }

    /// True with probability `num/den`.
    pub fn chance(&mut self, num: u64, den: u64) -> bool {
        self.below(den) < num
    }

    /// One element of a non-empty slice.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }

    /// Shuffles in place (Fisher–Yates).
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            items.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix_matches_reference_values() {
        // Reference outputs of SplitMix64 seeded with 1234567, from the
        // published C implementation (prng.di.unimi.it/splitmix64.c).
        let mut r = SplitMix64::new(1234567);
        assert_eq!(r.next_u64(), 6457827717110365317);
        assert_eq!(r.next_u64(), 3203168211198807973);
        assert_eq!(r.next_u64(), 9817491932198370423);
    }

    #[test]
    fn hash_separates_sequences() {
        let a = StableHasher::new(1).str("ab").ints(&[1]).finish();
        let b = StableHasher::new(1).str("a").str("b").ints(&[1]).finish();
        let c = StableHasher::new(1).str("ab").ints(&[1, 0]).finish();
        let d = StableHasher::new(2).str("ab").ints(&[1]).finish();
        assert!(a != b && a != c && a != d && b != c);
    }

    #[test]
    fn word_hasher_separates_read_keys() {
        use std::hash::BuildHasher;
        // Keys as `equiv` builds them: (base id, access, iteration vector).
        let mut seen = std::collections::HashSet::new();
        for base in 0..4u32 {
            for access in 0..3u32 {
                for i in 0..10i64 {
                    for j in -5..5i64 {
                        let key: (u32, u32, &[i64]) = (base, access, &[i, j]);
                        assert!(seen.insert(WordHash::default().hash_one(key)));
                    }
                }
            }
        }
        let one: &[i64] = &[1];
        let two: &[i64] = &[1, 0];
        let h = |k: (u32, u32, &[i64])| WordHash::default().hash_one(k);
        assert_ne!(h((0, 0, one)), h((0, 0, two)));
    }

    #[test]
    fn range_stays_inside() {
        let mut r = SplitMix64::new(9);
        for _ in 0..1000 {
            let v = r.range(-3, 4);
            assert!((-3..=4).contains(&v));
        }
        assert_eq!(r.range(5, 5), 5);
    }
}
