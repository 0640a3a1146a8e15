//! Helpers shared by the integration tests.

/// A deterministic pseudo-random sequence in `[0, below)`.
pub(crate) fn lcg(seed: u64, n: usize, below: u64) -> Vec<i64> {
    let mut x = seed;
    (0..n)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((x >> 33) % below) as i64
        })
        .collect()
}
