//! Power of the paired design: tasks needed for a Δ, the smallest detectable Δ, and a seeded
//! Monte-Carlo check with the bootstrap rule itself.
//!
//! # Model
//!
//! Task `i` has a true base acceptance probability `p_i` with mean `p0` and intra-class
//! correlation `ρ` (between-task variance `ρ·p0(1 − p0)`; the simulation draws
//! `p_i ~ Beta(p0(1/ρ − 1), (1 − p0)(1/ρ − 1))`). Its true effect is `Δ + e_i` with
//! `e_i ~ N(0, τ²)`. Its observed per-task means are binomial means of `m_b` base and `m_a`
//! attacked episodes. The paired per-task difference `d_i = Ȳ_{i,a} − Ȳ_{i,b}` then has mean
//! `Δ` and, to first order (additive effect, `p1 = p0 + Δ`),
//!
//! `σ² = (1 − ρ)·(p0(1 − p0)/m_b + p1(1 − p1)/m_a) + τ²`
//!
//! (between-task variation of the base rate cancels in the difference; only the binomial
//! noise, smaller by `1 − ρ` on average, and the effect heterogeneity `τ` remain). With a
//! normal approximation to the mean of `n` differences, the interval excludes zero on the side
//! of Δ with probability `Φ(|Δ|·√n/σ − z_{1−α/2})`, so
//!
//! `n = ((z_{1−α/2} + z_{power}) · σ / Δ)²`.
//!
//! The percentile bootstrap interval is asymptotically this z interval. For small `n` it is
//! somewhat too narrow (its false-positive rate exceeds α a little), which the formula
//! ignores. [`simulate_power`] checks a design by simulation with the bootstrap rule itself;
//! `docs/statistics.md` gives example numbers.

use serde::{Deserialize, Serialize};

use crate::bootstrap::{BootstrapConfig, CiMethod, bootstrap_mean_ci};
use crate::error::StatsError;
use crate::normal::{norm_cdf, norm_ppf};
use crate::rng::{beta, next_seed, normal, seeded, unit};
use crate::wilson::wilson_interval;

/// The design and error rates of a paired comparison (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PowerModel {
    /// Mean base acceptance rate `p0` in `[0, 1]` (default 0.5).
    pub base_rate: f64,
    /// Base episodes per task `m_b` (default 3, the baseline samples per task).
    pub samples_base: u32,
    /// Attacked episodes per task `m_a` with a delivered message (default 10, one per round).
    pub samples_attacked: u32,
    /// Intra-class correlation `ρ` of the base rate across tasks, in `[0, 1)` (default 0).
    pub icc: f64,
    /// Standard deviation `τ` of the true per-task effects, in percentage points (default 0).
    pub effect_sd_pp: f64,
    /// Two-sided significance level α in `(0, 1)` (default 0.05: a 95 % interval).
    pub alpha: f64,
    /// Target power in `(0, 1)` (default 0.8).
    pub power: f64,
}

impl Default for PowerModel {
    fn default() -> Self {
        Self {
            base_rate: 0.5,
            samples_base: 3,
            samples_attacked: 10,
            icc: 0.0,
            effect_sd_pp: 0.0,
            alpha: 0.05,
            power: 0.8,
        }
    }
}

impl PowerModel {
    /// Checks the ranges of the fields.
    pub fn validate(&self) -> Result<(), StatsError> {
        let bad = |field: &'static str, reason: &str| {
            Err(StatsError::InvalidConfig {
                field,
                reason: reason.into(),
            })
        };
        if !(0.0..=1.0).contains(&self.base_rate) {
            return bad("base_rate", "must be in [0, 1]");
        }
        if self.samples_base == 0 || self.samples_attacked == 0 {
            return bad("samples_base/samples_attacked", "must be at least 1");
        }
        if !(0.0..1.0).contains(&self.icc) {
            return bad("icc", "must be in [0, 1)");
        }
        if !(self.effect_sd_pp.is_finite() && self.effect_sd_pp >= 0.0) {
            return bad("effect_sd_pp", "must be finite and non-negative");
        }
        if !(self.alpha > 0.0 && self.alpha < 1.0) {
            return bad("alpha", "must be strictly between 0 and 1");
        }
        if !(self.power > 0.0 && self.power < 1.0) {
            return bad("power", "must be strictly between 0 and 1");
        }
        Ok(())
    }

    fn attacked_rate(&self, delta_pp: f64) -> Result<f64, StatsError> {
        let p1 = self.base_rate + delta_pp / 100.0;
        if delta_pp.is_finite() && (-1e-12..=1.0 + 1e-12).contains(&p1) {
            Ok(p1.clamp(0.0, 1.0))
        } else {
            Err(StatsError::InvalidInput(format!(
                "Δ = {delta_pp} pp puts the attacked rate outside [0, 1] at base rate {}",
                self.base_rate
            )))
        }
    }
}

/// The direction of an effect.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EffectDirection {
    /// Δ < 0: the attack lowers acceptance.
    #[default]
    Harm,
    /// Δ > 0.
    Benefit,
}

/// The standard deviation σ of the per-task difference under the model, in percentage points.
pub fn difference_sd_pp(model: &PowerModel, delta_pp: f64) -> Result<f64, StatsError> {
    model.validate()?;
    let p0 = model.base_rate;
    let p1 = model.attacked_rate(delta_pp)?;
    let binomial = p0 * (1.0 - p0) / f64::from(model.samples_base)
        + p1 * (1.0 - p1) / f64::from(model.samples_attacked);
    let tau = model.effect_sd_pp / 100.0;
    Ok(100.0 * ((1.0 - model.icc) * binomial + tau * tau).sqrt())
}

/// The closed-form normal sample size `((z_{1−α/2} + z_{power}) · sd / delta)²` for the mean
/// of paired differences with standard deviation `sd` (same unit as `delta`), unrounded.
pub fn normal_sample_size(sd: f64, delta: f64, alpha: f64, power: f64) -> Result<f64, StatsError> {
    let model = PowerModel {
        alpha,
        power,
        ..PowerModel::default()
    };
    model.validate()?;
    if !(delta.is_finite() && delta != 0.0) {
        return Err(StatsError::InvalidInput(
            "Δ must be finite and non-zero".into(),
        ));
    }
    if !(sd.is_finite() && sd >= 0.0) {
        return Err(StatsError::InvalidInput(
            "the standard deviation must be finite and non-negative".into(),
        ));
    }
    let k = norm_ppf(1.0 - alpha / 2.0) + norm_ppf(power);
    Ok((k * sd / delta).powi(2))
}

/// How many tasks a design needs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TaskRequirement {
    /// Tasks to use: the exact value rounded up, at least 2 (the bootstrap needs two).
    pub tasks: u64,
    /// The unrounded normal-approximation value.
    pub exact: f64,
    /// σ of the per-task difference, in percentage points.
    pub sd_difference_pp: f64,
}

/// (a) The number of tasks needed to detect `delta_pp` (negative = harm) with the model's
/// power at its two-sided α, given the samples per task.
pub fn required_tasks(model: &PowerModel, delta_pp: f64) -> Result<TaskRequirement, StatsError> {
    let sd = difference_sd_pp(model, delta_pp)?;
    let exact = normal_sample_size(sd, delta_pp, model.alpha, model.power)?;
    Ok(TaskRequirement {
        tasks: (exact.ceil() as u64).max(2),
        exact,
        sd_difference_pp: sd,
    })
}

/// The normal-approximation power `Φ(|Δ|·√n/σ − z_{1−α/2})` of `tasks` tasks for
/// `delta_pp`: the chance that the interval excludes zero on the side of Δ.
pub fn normal_power(model: &PowerModel, delta_pp: f64, tasks: u64) -> Result<f64, StatsError> {
    let sd = difference_sd_pp(model, delta_pp)?;
    if tasks < 2 {
        return Err(StatsError::TooFewUnits {
            what: "a power calculation",
            needed: 2,
            got: tasks as usize,
        });
    }
    let z = norm_ppf(1.0 - model.alpha / 2.0);
    if sd == 0.0 {
        return Ok(if delta_pp == 0.0 { 0.0 } else { 1.0 });
    }
    Ok(norm_cdf(delta_pp.abs() * (tasks as f64).sqrt() / sd - z))
}

/// (b) The smallest detectable Δ in percentage points (negative for [`EffectDirection::Harm`])
/// for `tasks` tasks at the model's power and α: the smallest `|Δ|` with
/// `|Δ| = (z_{1−α/2} + z_{power}) · σ(Δ) / √n`.
///
/// Errors with [`StatsError::NotDetectable`] when no Δ within the possible range (down to an
/// attacked rate of 0, or up to 1) reaches the power.
pub fn detectable_delta(
    model: &PowerModel,
    tasks: u64,
    direction: EffectDirection,
) -> Result<f64, StatsError> {
    model.validate()?;
    if tasks < 2 {
        return Err(StatsError::TooFewUnits {
            what: "a power calculation",
            needed: 2,
            got: tasks as usize,
        });
    }
    let (sign, max) = match direction {
        EffectDirection::Harm => (-1.0, model.base_rate),
        EffectDirection::Benefit => (1.0, 1.0 - model.base_rate),
    };
    if max <= 0.0 {
        return Err(StatsError::NotDetectable {
            reason: format!(
                "at base rate {} there is no room for a {direction:?} effect",
                model.base_rate
            ),
        });
    }
    let k = norm_ppf(1.0 - model.alpha / 2.0) + norm_ppf(model.power);
    let root_n = (tasks as f64).sqrt();
    // g(d) >= 0 when an effect of size d (proportion) is detectable.
    let g = |d: f64| -> Result<f64, StatsError> {
        Ok(d - k * difference_sd_pp(model, sign * 100.0 * d)? / 100.0 / root_n)
    };
    const STEPS: u32 = 10_000;
    let mut prev = 0.0;
    for j in 1..=STEPS {
        let d = max * f64::from(j) / f64::from(STEPS);
        if g(d)? >= 0.0 {
            let (mut lo, mut hi) = (prev, d);
            for _ in 0..100 {
                let mid = 0.5 * (lo + hi);
                if g(mid)? >= 0.0 {
                    hi = mid;
                } else {
                    lo = mid;
                }
            }
            return Ok(sign * 100.0 * hi);
        }
        prev = d;
    }
    Err(StatsError::NotDetectable {
        reason: format!(
            "with {tasks} tasks no {direction:?} effect at base rate {} reaches power {}",
            model.base_rate, model.power
        ),
    })
}

/// Settings of [`simulate_power`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SimulationConfig {
    /// Simulated experiments (default 1,000).
    pub simulations: u32,
    /// Bootstrap resamples per simulated experiment (default 2,000).
    pub resamples: u32,
    /// Seed of the simulation stream (default 0).
    pub seed: u64,
}

impl Default for SimulationConfig {
    fn default() -> Self {
        Self {
            simulations: 1_000,
            resamples: 2_000,
            seed: 0,
        }
    }
}

/// The result of [`simulate_power`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SimulatedPower {
    /// Share of simulated experiments in which the effect was detected.
    pub power: f64,
    /// Simulated experiments in which it was detected.
    pub detected: u32,
    /// Simulated experiments.
    pub simulations: u32,
    /// Lower end of the 95 % Wilson interval of `power` (Monte-Carlo error).
    pub low: f64,
    /// Upper end of the 95 % Wilson interval of `power`.
    pub high: f64,
    /// The normal-approximation power of the same design, for comparison.
    pub normal_power: f64,
}

/// A seeded Monte-Carlo check of a design: simulates `sim.simulations` experiments of
/// `tasks` tasks from the model and applies the bootstrap rule of the reports (percentile
/// interval at level `1 − α` with `sim.resamples` resamples).
///
/// Detection means the interval lies wholly below zero for Δ < 0 (significant harm), wholly
/// above for Δ > 0, and excludes zero for Δ = 0 (then `power` estimates the false-positive
/// rate, nominally α). Attacked rates `p_i + Δ + e_i` are clamped to `[0, 1]`.
pub fn simulate_power(
    model: &PowerModel,
    delta_pp: f64,
    tasks: u64,
    sim: &SimulationConfig,
) -> Result<SimulatedPower, StatsError> {
    let normal_power = if delta_pp == 0.0 {
        model.validate()?;
        model.alpha
    } else {
        normal_power(model, delta_pp, tasks)?
    };
    model.attacked_rate(delta_pp)?;
    if sim.simulations == 0 {
        return Err(StatsError::InvalidConfig {
            field: "simulations",
            reason: "must be at least 1".into(),
        });
    }
    let n =
        usize::try_from(tasks).map_err(|_| StatsError::InvalidInput("too many tasks".into()))?;
    let p0 = model.base_rate;
    let concentration = 1.0 / model.icc - 1.0;
    let heterogeneous = model.icc > 0.0 && p0 > 0.0 && p0 < 1.0;
    let delta = delta_pp / 100.0;
    let tau = model.effect_sd_pp / 100.0;
    let mut rng = seeded(sim.seed);
    let mut diffs = vec![0.0; n];
    let mut detected = 0u32;
    for _ in 0..sim.simulations {
        for d in diffs.iter_mut() {
            let p = if heterogeneous {
                beta(&mut rng, p0 * concentration, (1.0 - p0) * concentration)
            } else {
                p0
            };
            let q = (p + delta + tau * normal(&mut rng)).clamp(0.0, 1.0);
            let yb = binomial_mean(&mut rng, p, model.samples_base);
            let ya = binomial_mean(&mut rng, q, model.samples_attacked);
            *d = ya - yb;
        }
        let cfg = BootstrapConfig {
            resamples: sim.resamples,
            confidence: 1.0 - model.alpha,
            method: CiMethod::Percentile,
            seed: next_seed(&mut rng),
        };
        let ci = bootstrap_mean_ci(&diffs, &cfg)?;
        let hit = if delta < 0.0 {
            ci.below_zero()
        } else if delta > 0.0 {
            ci.above_zero()
        } else {
            ci.excludes_zero()
        };
        detected += u32::from(hit);
    }
    let w = wilson_interval(u64::from(detected), u64::from(sim.simulations), 0.95)?;
    Ok(SimulatedPower {
        power: w.estimate,
        detected,
        simulations: sim.simulations,
        low: w.low,
        high: w.high,
        normal_power,
    })
}

fn binomial_mean(rng: &mut rand_chacha::ChaCha8Rng, p: f64, m: u32) -> f64 {
    let mut k = 0u32;
    for _ in 0..m {
        k += u32::from(unit(rng) < p);
    }
    f64::from(k) / f64::from(m)
}
