//! A deterministic generator (xorshift64) for the tests that need varied data or orders, so a
//! failure is reproducible.

/// Xorshift64 state; never seed it with 0.
pub struct Xorshift(pub u64);

impl Xorshift {
    /// The next number.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// Shuffles `list` in place (Fisher–Yates).
    pub fn permute<T>(&mut self, list: &mut [T]) {
        for i in (1..list.len()).rev() {
            let j = (self.next() % (i as u64 + 1)) as usize;
            list.swap(i, j);
        }
    }
}
