//! Bootstrap confidence intervals over tasks: percentile and BCa (SciPy's definitions).
//!
//! A *unit* is a task. A statistic is any function of a multiset of unit indices; resampling
//! draws `units` indices with replacement, uniformly, from a ChaCha8 stream seeded with the
//! configured seed (see `docs/statistics.md` for the exact draw rule).

use serde::{Deserialize, Serialize};

use crate::error::StatsError;
use crate::normal::{norm_cdf, norm_ppf};
use crate::rng::{below, seeded};

/// How a bootstrap interval is read off the bootstrap distribution.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CiMethod {
    /// The `(1 - level) / 2` and `(1 + level) / 2` quantiles of the bootstrap distribution.
    #[default]
    Percentile,
    /// Bias-corrected and accelerated (Efron and Tibshirani 1993, eq. 14.10 and 14.15), with
    /// the acceleration from the jackknife over tasks, as `scipy.stats.bootstrap(method="BCa")`.
    Bca,
}

/// Settings of a bootstrap interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BootstrapConfig {
    /// Number of bootstrap resamples (default 10,000).
    pub resamples: u32,
    /// Confidence level in `(0, 1)` (default 0.95).
    pub confidence: f64,
    /// Percentile (default) or BCa.
    pub method: CiMethod,
    /// Seed of the ChaCha8 stream (default 0; reports pass the experiment's seed).
    pub seed: u64,
}

impl Default for BootstrapConfig {
    fn default() -> Self {
        Self {
            resamples: 10_000,
            confidence: 0.95,
            method: CiMethod::Percentile,
            seed: 0,
        }
    }
}

impl BootstrapConfig {
    /// Checks the ranges of the fields.
    pub fn validate(&self) -> Result<(), StatsError> {
        if self.resamples == 0 {
            return Err(StatsError::InvalidConfig {
                field: "resamples",
                reason: "must be at least 1".into(),
            });
        }
        check_confidence(self.confidence)
    }
}

pub(crate) fn check_confidence(confidence: f64) -> Result<(), StatsError> {
    if confidence > 0.0 && confidence < 1.0 {
        Ok(())
    } else {
        Err(StatsError::InvalidConfig {
            field: "confidence",
            reason: format!("must be strictly between 0 and 1, got {confidence}"),
        })
    }
}

/// A bootstrap confidence interval with everything needed to reproduce it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ConfidenceInterval {
    /// The statistic on the original data.
    pub estimate: f64,
    /// Lower end.
    pub low: f64,
    /// Upper end.
    pub high: f64,
    /// Confidence level.
    pub confidence: f64,
    /// Method used.
    pub method: CiMethod,
    /// Number of resamples.
    pub resamples: u32,
    /// Seed of the resampling stream.
    pub seed: u64,
    /// Number of units (tasks) resampled.
    pub units: usize,
    /// Standard deviation of the bootstrap distribution (denominator `B - 1`; 0 when `B = 1`).
    pub standard_error: f64,
    /// The bootstrap distribution has a single value (e.g. all per-task differences equal):
    /// then `low == high ==` that value for both methods (SciPy returns NaN for BCa here).
    pub degenerate: bool,
    /// BCa bias correction `z0` (BCa only, not degenerate).
    pub bias_correction: Option<f64>,
    /// BCa acceleration `a` (BCa only, not degenerate).
    pub acceleration: Option<f64>,
}

impl ConfidenceInterval {
    /// The whole interval lies strictly below zero.
    pub fn below_zero(&self) -> bool {
        self.high < 0.0
    }

    /// The whole interval lies strictly above zero.
    pub fn above_zero(&self) -> bool {
        self.low > 0.0
    }

    /// The interval does not contain zero.
    pub fn excludes_zero(&self) -> bool {
        self.below_zero() || self.above_zero()
    }

    /// The same interval with the estimate, the ends and the standard error multiplied by
    /// `factor` (e.g. 100 for percentage points); a negative factor swaps the ends.
    pub fn scaled(&self, factor: f64) -> Self {
        let (a, b) = (self.low * factor, self.high * factor);
        Self {
            estimate: self.estimate * factor,
            low: a.min(b),
            high: a.max(b),
            standard_error: self.standard_error * factor.abs(),
            ..*self
        }
    }
}

/// The ends of a BCa interval with its ingredients.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BcaInterval {
    /// Lower end.
    pub low: f64,
    /// Upper end.
    pub high: f64,
    /// Bias correction `z0 = Φ⁻¹(share of the distribution below the estimate, ties half)`.
    pub bias_correction: f64,
    /// Acceleration `a` from the jackknife.
    pub acceleration: f64,
    /// Adjusted lower quantile level `α1`.
    pub level_low: f64,
    /// Adjusted upper quantile level `α2`.
    pub level_high: f64,
}

/// The bootstrap distribution of `statistic`: `resamples` values, each the statistic of
/// `units` indices drawn uniformly with replacement from `0..units`.
///
/// The index slice passed to `statistic` has length `units` and is in draw order. The same
/// `(units, resamples, seed)` always gives the same index sequences.
pub fn bootstrap_distribution<F>(
    units: usize,
    resamples: u32,
    seed: u64,
    mut statistic: F,
) -> Result<Vec<f64>, StatsError>
where
    F: FnMut(&[usize]) -> f64,
{
    let n = units_u32(units)?;
    let mut rng = seeded(seed);
    let mut idx = vec![0usize; units];
    let mut out = Vec::with_capacity(resamples as usize);
    for _ in 0..resamples {
        for slot in idx.iter_mut() {
            *slot = below(&mut rng, n) as usize;
        }
        out.push(statistic(&idx));
    }
    Ok(out)
}

/// The leave-one-out (jackknife) values of `statistic`: value `i` is the statistic of
/// `0..units` without `i`, indices in increasing order.
pub fn jackknife<F>(units: usize, mut statistic: F) -> Vec<f64>
where
    F: FnMut(&[usize]) -> f64,
{
    let mut idx = Vec::with_capacity(units.saturating_sub(1));
    (0..units)
        .map(|left_out| {
            idx.clear();
            idx.extend((0..units).filter(|&i| i != left_out));
            statistic(&idx)
        })
        .collect()
}

/// The BCa acceleration from jackknife values, exactly as SciPy computes it:
/// with `U_i = (n - 1)(mean(θ_(·)) - θ_(i))`,
/// `a = (Σ U_i³ / n³) / (6 (Σ U_i² / n²)^(3/2))`.
///
/// `None` when the jackknife values are all equal (or fewer than two): then `a` is 0/0.
pub fn jackknife_acceleration(jackknife_values: &[f64]) -> Option<f64> {
    let n = jackknife_values.len();
    if n < 2 {
        return None;
    }
    let nf = n as f64;
    let mean = jackknife_values.iter().sum::<f64>() / nf;
    let (mut num, mut den) = (0.0, 0.0);
    for &t in jackknife_values {
        let u = (nf - 1.0) * (mean - t);
        num += u * u * u;
        den += u * u;
    }
    let (num, den) = (num / (nf * nf * nf), den / (nf * nf));
    let a = num / (6.0 * den.powf(1.5));
    (den > 0.0 && a.is_finite()).then_some(a)
}

/// The `p`-quantile of sorted values with linear interpolation between order statistics
/// (Hyndman and Fan type 7; NumPy's and SciPy's default `"linear"`), `p` in `[0, 1]`.
///
/// Returns NaN for an empty slice or `p` outside `[0, 1]`.
pub fn quantile_sorted(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() || !(0.0..=1.0).contains(&p) {
        return f64::NAN;
    }
    let h = p * (sorted.len() - 1) as f64;
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(sorted.len() - 1);
    let (a, b, t) = (sorted[lo], sorted[hi], h - lo as f64);
    // NumPy's `_lerp`: interpolate from the nearer end.
    let diff = b - a;
    if t >= 0.5 {
        b - diff * (1.0 - t)
    } else {
        a + diff * t
    }
}

/// The percentile interval of a bootstrap distribution (any order) at `confidence`.
pub fn percentile_interval(
    distribution: &[f64],
    confidence: f64,
) -> Result<(f64, f64), StatsError> {
    check_confidence(confidence)?;
    let sorted = sorted_finite(distribution)?;
    Ok(percentile_sorted(&sorted, confidence))
}

/// The BCa interval of a bootstrap distribution (any order) for the statistic `estimate` on
/// the original data and its jackknife values, as `scipy.stats.bootstrap(method="BCa")`.
///
/// Errors with [`StatsError::BcaUndefined`] where SciPy gives NaN: a degenerate distribution,
/// constant jackknife values, or an estimate outside the distribution (`z0` infinite).
pub fn bca_interval(
    estimate: f64,
    distribution: &[f64],
    jackknife_values: &[f64],
    confidence: f64,
) -> Result<BcaInterval, StatsError> {
    check_confidence(confidence)?;
    let sorted = sorted_finite(distribution)?;
    if sorted[0] == sorted[sorted.len() - 1] {
        return Err(StatsError::BcaUndefined {
            reason: "the bootstrap distribution has a single value".into(),
        });
    }
    bca_sorted(estimate, &sorted, jackknife_values, confidence)
}

/// A bootstrap confidence interval for `statistic` over `units` tasks.
///
/// `statistic` receives unit indices (see [`bootstrap_distribution`]); it is called once on
/// `0..units` for the estimate, `cfg.resamples` times on resamples and, for BCa, `units`
/// times on leave-one-out index sets. Needs at least two units. A statistic that returns NaN
/// or an infinity on any of them is an error ([`StatsError::NonFinite`]).
pub fn bootstrap_ci<F>(
    units: usize,
    cfg: &BootstrapConfig,
    mut statistic: F,
) -> Result<ConfidenceInterval, StatsError>
where
    F: FnMut(&[usize]) -> f64,
{
    cfg.validate()?;
    if units < 2 {
        return Err(StatsError::TooFewUnits {
            what: "a bootstrap interval",
            needed: 2,
            got: units,
        });
    }
    let all: Vec<usize> = (0..units).collect();
    let estimate = statistic(&all);
    if !estimate.is_finite() {
        return Err(StatsError::NonFinite {
            what: "the statistic on the original data",
            index: 0,
        });
    }
    let distribution = bootstrap_distribution(units, cfg.resamples, cfg.seed, &mut statistic)?;
    let sorted = sorted_finite(&distribution)?;
    let mut ci = ConfidenceInterval {
        estimate,
        low: f64::NAN,
        high: f64::NAN,
        confidence: cfg.confidence,
        method: cfg.method,
        resamples: cfg.resamples,
        seed: cfg.seed,
        units,
        standard_error: std_dev(&distribution),
        degenerate: false,
        bias_correction: None,
        acceleration: None,
    };
    if sorted[0] == sorted[sorted.len() - 1] {
        ci.degenerate = true;
        ci.low = sorted[0];
        ci.high = sorted[0];
        return Ok(ci);
    }
    match cfg.method {
        CiMethod::Percentile => {
            (ci.low, ci.high) = percentile_sorted(&sorted, cfg.confidence);
        }
        CiMethod::Bca => {
            let jack = jackknife(units, &mut statistic);
            if let Some(i) = jack.iter().position(|v| !v.is_finite()) {
                return Err(StatsError::NonFinite {
                    what: "the jackknife values",
                    index: i,
                });
            }
            let bca = bca_sorted(estimate, &sorted, &jack, cfg.confidence)?;
            ci.low = bca.low;
            ci.high = bca.high;
            ci.bias_correction = Some(bca.bias_correction);
            ci.acceleration = Some(bca.acceleration);
        }
    }
    Ok(ci)
}

/// A bootstrap confidence interval for the mean of `values` (one value per task).
///
/// The statistic is the mean of the resampled values ([`mean_of`]). Needs at
/// least two values, all finite. All-equal values give a degenerate interval
/// (`low == high ==` the value, [`ConfidenceInterval::degenerate`] set).
pub fn bootstrap_mean_ci(
    values: &[f64],
    cfg: &BootstrapConfig,
) -> Result<ConfidenceInterval, StatsError> {
    if values.is_empty() {
        return Err(StatsError::Empty {
            what: "values for a bootstrap mean".into(),
        });
    }
    check_finite(values, "the values")?;
    bootstrap_ci(values.len(), cfg, mean_of(values))
}

/// The statistic "mean of `values` at the given indices".
///
/// The sum runs in index order over four interleaved partial sums (position `j` goes to
/// partial sum `j % 4`), combined as `(s0 + s1) + (s2 + s3)`: a fixed order, so the same
/// indices always give the same bits, without one long chain of dependent additions.
pub fn mean_of(values: &[f64]) -> impl FnMut(&[usize]) -> f64 + '_ {
    move |idx: &[usize]| {
        let mut s = [0.0f64; 4];
        let mut chunks = idx.chunks_exact(4);
        for c in chunks.by_ref() {
            s[0] += values[c[0]];
            s[1] += values[c[1]];
            s[2] += values[c[2]];
            s[3] += values[c[3]];
        }
        for (k, &i) in chunks.remainder().iter().enumerate() {
            s[k] += values[i];
        }
        ((s[0] + s[1]) + (s[2] + s[3])) / idx.len() as f64
    }
}

pub(crate) fn check_finite(values: &[f64], what: &'static str) -> Result<(), StatsError> {
    match values.iter().position(|v| !v.is_finite()) {
        Some(index) => Err(StatsError::NonFinite { what, index }),
        None => Ok(()),
    }
}

fn units_u32(units: usize) -> Result<u32, StatsError> {
    match u32::try_from(units) {
        Ok(0) => Err(StatsError::Empty {
            what: "units to resample".into(),
        }),
        Ok(n) => Ok(n),
        Err(_) => Err(StatsError::InvalidInput(format!(
            "{units} units exceed the supported 2^32 - 1"
        ))),
    }
}

fn sorted_finite(distribution: &[f64]) -> Result<Vec<f64>, StatsError> {
    if distribution.is_empty() {
        return Err(StatsError::Empty {
            what: "bootstrap distribution".into(),
        });
    }
    check_finite(distribution, "the bootstrap distribution")?;
    let mut sorted = distribution.to_vec();
    sorted.sort_unstable_by(f64::total_cmp);
    Ok(sorted)
}

fn percentile_sorted(sorted: &[f64], confidence: f64) -> (f64, f64) {
    let alpha = (1.0 - confidence) / 2.0;
    (
        quantile_sorted(sorted, alpha),
        quantile_sorted(sorted, 1.0 - alpha),
    )
}

fn bca_sorted(
    estimate: f64,
    sorted: &[f64],
    jackknife_values: &[f64],
    confidence: f64,
) -> Result<BcaInterval, StatsError> {
    let acceleration =
        jackknife_acceleration(jackknife_values).ok_or_else(|| StatsError::BcaUndefined {
            reason: "the jackknife values are all equal, so the acceleration is 0/0".into(),
        })?;
    // Share of the distribution below the estimate, ties counted half (SciPy's
    // `_percentile_of_score`). Values within rounding noise of the estimate count as ties, so
    // that the summation order of the statistic cannot move them across.
    let scale = estimate
        .abs()
        .max(sorted[0].abs())
        .max(sorted[sorted.len() - 1].abs());
    let tol = 1e-12 * scale;
    let below = sorted.partition_point(|&v| v < estimate - tol);
    let at_or_below = sorted.partition_point(|&v| v <= estimate + tol);
    let share = (below + at_or_below) as f64 / (2 * sorted.len()) as f64;
    if share <= 0.0 || share >= 1.0 {
        return Err(StatsError::BcaUndefined {
            reason: format!(
                "the estimate {estimate} lies outside the bootstrap distribution, so the bias \
                 correction is infinite"
            ),
        });
    }
    let z0 = norm_ppf(share);
    let z_alpha = norm_ppf((1.0 - confidence) / 2.0);
    let adjust = |z: f64| {
        let num = z0 + z;
        norm_cdf(z0 + num / (1.0 - acceleration * num))
    };
    let (level_low, level_high) = (adjust(z_alpha), adjust(-z_alpha));
    if !(level_low.is_finite() && level_high.is_finite()) {
        return Err(StatsError::BcaUndefined {
            reason: "the adjusted quantile levels are not finite".into(),
        });
    }
    Ok(BcaInterval {
        low: quantile_sorted(sorted, level_low),
        high: quantile_sorted(sorted, level_high),
        bias_correction: z0,
        acceleration,
        level_low,
        level_high,
    })
}

fn std_dev(values: &[f64]) -> f64 {
    if values.len() < 2 {
        return 0.0;
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let ss: f64 = values.iter().map(|v| (v - mean) * (v - mean)).sum();
    (ss / (n - 1.0)).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantile_matches_numpy_linear() {
        let s = [1.0, 2.0, 4.0, 8.0];
        assert_eq!(quantile_sorted(&s, 0.0), 1.0);
        assert_eq!(quantile_sorted(&s, 1.0), 8.0);
        // numpy.percentile([1, 2, 4, 8], 50) == 3.0; 25 -> 1.75; 90 -> 6.8
        assert_eq!(quantile_sorted(&s, 0.5), 3.0);
        assert!((quantile_sorted(&s, 0.25) - 1.75).abs() < 1e-15);
        assert!((quantile_sorted(&s, 0.9) - 6.8).abs() < 1e-12);
        assert!(quantile_sorted(&[], 0.5).is_nan());
        assert!(quantile_sorted(&s, 1.5).is_nan());
    }

    #[test]
    fn acceleration_of_symmetric_data_is_zero_and_of_constant_data_undefined() {
        let a = jackknife_acceleration(&[1.0, 2.0, 3.0]).unwrap();
        assert!(a.abs() < 1e-15);
        assert_eq!(jackknife_acceleration(&[2.0, 2.0, 2.0]), None);
        assert_eq!(jackknife_acceleration(&[2.0]), None);
    }

    #[test]
    fn mean_of_is_the_mean_up_to_rounding() {
        let v: Vec<f64> = (0..43).map(|i| f64::from(i % 7) / 7.0 - 0.3).collect();
        for len in [1usize, 3, 4, 5, 43] {
            let idx: Vec<usize> = (0..len).map(|i| (i * 5) % 43).collect();
            let naive = idx.iter().map(|&i| v[i]).fold(0.0, |s, x| s + x) / len as f64;
            assert!((mean_of(&v)(&idx) - naive).abs() < 1e-15, "{len}");
        }
        let cfg = BootstrapConfig {
            resamples: 500,
            method: CiMethod::Bca,
            seed: 11,
            ..Default::default()
        };
        let a = bootstrap_mean_ci(&v, &cfg).unwrap();
        let b = bootstrap_ci(v.len(), &cfg, |idx: &[usize]| {
            idx.iter().map(|&i| v[i]).fold(0.0, |s, x| s + x) / idx.len() as f64
        })
        .unwrap();
        assert!((a.low - b.low).abs() < 1e-12 && (a.high - b.high).abs() < 1e-12);
    }
}
