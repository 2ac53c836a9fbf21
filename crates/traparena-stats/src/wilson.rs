//! The Wilson score interval for a plain proportion.

use serde::{Deserialize, Serialize};

use crate::bootstrap::check_confidence;
use crate::error::StatsError;
use crate::normal::norm_ppf;

/// A proportion with its Wilson score interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ProportionInterval {
    /// Successes.
    pub successes: u64,
    /// Trials.
    pub trials: u64,
    /// `successes / trials`.
    pub estimate: f64,
    /// Lower end, in `[0, 1]`.
    pub low: f64,
    /// Upper end, in `[0, 1]`.
    pub high: f64,
    /// Confidence level.
    pub confidence: f64,
}

/// The Wilson score interval (without continuity correction) for `successes` out of
/// `trials` at `confidence`, as `scipy.stats.binomtest(k, n).proportion_ci(method="wilson")`:
///
/// `center = (k + z²/2) / (n + z²)`, `half = z·sqrt(k(n − k)/n + z²/4) / (n + z²)`,
/// `z = Φ⁻¹((1 + confidence) / 2)`; the ends are clamped to `[0, 1]` and are exactly 0 at
/// `k = 0` and 1 at `k = n`.
///
/// Errors: no trials, more successes than trials, or a level outside `(0, 1)`.
pub fn wilson_interval(
    successes: u64,
    trials: u64,
    confidence: f64,
) -> Result<ProportionInterval, StatsError> {
    check_confidence(confidence)?;
    if trials == 0 {
        return Err(StatsError::Empty {
            what: "trials for a proportion".into(),
        });
    }
    if successes > trials {
        return Err(StatsError::InvalidInput(format!(
            "{successes} successes out of {trials} trials"
        )));
    }
    let (k, n) = (successes as f64, trials as f64);
    let z = norm_ppf(0.5 + confidence / 2.0);
    let z2 = z * z;
    let center = (k + z2 / 2.0) / (n + z2);
    let half = z * (k * (n - k) / n + z2 / 4.0).sqrt() / (n + z2);
    let low = if successes == 0 {
        0.0
    } else {
        (center - half).max(0.0)
    };
    let high = if successes == trials {
        1.0
    } else {
        (center + half).min(1.0)
    };
    Ok(ProportionInterval {
        successes,
        trials,
        estimate: k / n,
        low,
        high,
        confidence,
    })
}
