//! What each role spends per episode on average ([`PerEpisode`]): the spec's `estimate`, or
//! measured on a pilot ([`PerEpisode::from_pilot`]). Below the spec, which
//! holds it, and the estimate, which uses it.

use serde::{Deserialize, Serialize};

/// What one role spends on average: per episode (the curator: per curator step).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoleAverage {
    /// Model calls.
    #[serde(default)]
    pub calls: f64,
    /// Prompt + completion tokens.
    #[serde(default)]
    pub tokens: f64,
    /// US dollars (`None`: unknown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
}

/// Per-episode averages of every role: the spec's `estimate`, or measured on a pilot.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PerEpisode {
    /// The target, per episode (baseline and attacked alike).
    #[serde(default)]
    pub target: RoleAverage,
    /// The attacker, per attacked episode.
    #[serde(default)]
    pub attacker: RoleAverage,
    /// The curator, per curator step (one per curated condition and round after the first).
    #[serde(default)]
    pub curator: RoleAverage,
}

impl PerEpisode {
    /// Checks the values: finite and not negative; the error names the field
    /// (`estimate.target.cost`, ...).
    pub fn check(&self) -> Result<(), (String, String)> {
        for (role, a) in [
            ("target", &self.target),
            ("attacker", &self.attacker),
            ("curator", &self.curator),
        ] {
            for (name, v) in [
                ("calls", Some(a.calls)),
                ("tokens", Some(a.tokens)),
                ("cost", a.cost),
            ] {
                if let Some(v) = v.filter(|v| !v.is_finite() || *v < 0.0) {
                    return Err((
                        format!("estimate.{role}.{name}"),
                        format!("{v} is not a finite, non-negative number"),
                    ));
                }
            }
        }
        Ok(())
    }
}
