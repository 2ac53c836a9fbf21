//! The seeded random streams every figure draws from.
//!
//! All randomness comes from [`ChaCha8Rng`] seeded with `seed_from_u64(seed)`; the draws are
//! portable (no platform-dependent sampling), so a seed and the data fix every number.

use rand_chacha::ChaCha8Rng;
use rand_core::{Rng, SeedableRng};

/// A ChaCha8 generator from a `u64` seed.
pub(crate) fn seeded(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed)
}

/// A uniform integer in `0..n` (`n >= 1`), without modulo bias: Lemire's multiply-and-reject
/// method on 32-bit draws.
#[inline]
pub(crate) fn below(rng: &mut ChaCha8Rng, n: u32) -> u32 {
    debug_assert!(n > 0);
    let mut m = u64::from(rng.next_u32()) * u64::from(n);
    let mut low = m as u32;
    if low < n {
        let threshold = n.wrapping_neg() % n;
        while low < threshold {
            m = u64::from(rng.next_u32()) * u64::from(n);
            low = m as u32;
        }
    }
    (m >> 32) as u32
}

/// A fresh seed drawn from `rng` (for nested seeded streams).
pub(crate) fn next_seed(rng: &mut ChaCha8Rng) -> u64 {
    rng.next_u64()
}

/// A uniform `f64` in `[0, 1)` with 53 random bits.
#[inline]
pub(crate) fn unit(rng: &mut ChaCha8Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// A standard normal draw (Box–Muller; one of the pair is discarded for simplicity).
pub(crate) fn normal(rng: &mut ChaCha8Rng) -> f64 {
    // 1 - unit is in (0, 1], so the logarithm is finite.
    let u1 = 1.0 - unit(rng);
    let u2 = unit(rng);
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// A Gamma(shape, 1) draw (Marsaglia and Tsang; shape < 1 boosted with `U^(1/shape)`).
pub(crate) fn gamma(rng: &mut ChaCha8Rng, shape: f64) -> f64 {
    if shape < 1.0 {
        let u = 1.0 - unit(rng);
        return gamma(rng, shape + 1.0) * u.powf(1.0 / shape);
    }
    let d = shape - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        let x = normal(rng);
        let v = 1.0 + c * x;
        if v <= 0.0 {
            continue;
        }
        let v = v * v * v;
        let u = 1.0 - unit(rng);
        if u.ln() < 0.5 * x * x + d - d * v + d * v.ln() {
            return d * v;
        }
    }
}

/// A Beta(a, b) draw from two gamma draws.
pub(crate) fn beta(rng: &mut ChaCha8Rng, a: f64, b: f64) -> f64 {
    let x = gamma(rng, a);
    let y = gamma(rng, b);
    // Both draws underflow only for extreme shapes: fall back to the mean.
    if x + y > 0.0 {
        x / (x + y)
    } else {
        a / (a + b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn below_is_in_range_and_roughly_uniform() {
        let mut rng = seeded(7);
        let mut counts = [0u32; 7];
        for _ in 0..70_000 {
            counts[below(&mut rng, 7) as usize] += 1;
        }
        for c in counts {
            assert!((9_400..10_600).contains(&c), "{counts:?}");
        }
        assert_eq!(below(&mut rng, 1), 0);
    }

    #[test]
    fn beta_has_the_right_mean() {
        let mut rng = seeded(1);
        let n = 20_000;
        let m: f64 = (0..n).map(|_| beta(&mut rng, 2.0, 6.0)).sum::<f64>() / f64::from(n);
        assert!((m - 0.25).abs() < 0.01, "{m}");
        let m: f64 = (0..n).map(|_| beta(&mut rng, 0.5, 0.5)).sum::<f64>() / f64::from(n);
        assert!((m - 0.5).abs() < 0.01, "{m}");
    }
}
