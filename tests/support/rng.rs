//! A reproducible generator for tests (xorshift64*): the same inputs on every run.

/// xorshift64* with a fixed seed of the caller's choice.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A value below `n` (n > 0).
    #[allow(dead_code)]
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}
