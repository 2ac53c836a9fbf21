//! The standard normal distribution (statrs), wrapped so that it never panics.

use statrs::distribution::{ContinuousCDF, Normal};

/// Φ(x), the standard normal CDF.
pub(crate) fn norm_cdf(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    Normal::standard().cdf(x)
}

/// Φ⁻¹(p): −∞ at 0, +∞ at 1, NaN outside `[0, 1]`.
pub(crate) fn norm_ppf(p: f64) -> f64 {
    if p.is_nan() || !(0.0..=1.0).contains(&p) {
        f64::NAN
    } else if p == 0.0 {
        f64::NEG_INFINITY
    } else if p == 1.0 {
        f64::INFINITY
    } else {
        Normal::standard().inverse_cdf(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        // scipy.special.ndtri(0.025), ndtri(0.8), ndtr(1.0)
        assert!((norm_ppf(0.025) + 1.959_963_984_540_054).abs() < 1e-12);
        assert!((norm_ppf(0.8) - 0.841_621_233_572_914_2).abs() < 1e-12);
        let c = norm_cdf(1.0);
        // statrs' erfc is accurate to about 1e-11 here: ample for quantile levels.
        assert!((c - 0.841_344_746_068_542_9).abs() < 1e-10, "{c:e}");
        assert_eq!(norm_ppf(0.0), f64::NEG_INFINITY);
        assert_eq!(norm_ppf(1.0), f64::INFINITY);
        assert!(norm_ppf(1.5).is_nan());
        assert!(norm_ppf(f64::NAN).is_nan());
        assert!(norm_cdf(f64::NAN).is_nan());
    }
}
