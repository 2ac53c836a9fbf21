//! A point estimate with its confidence interval: the three numbers every figure with an
//! interval reports.

use serde::{Deserialize, Serialize};

use crate::bootstrap::ConfidenceInterval;

/// A point estimate with its confidence interval, all three in the estimate's unit (percent,
/// percentage points, a ratio). [`ConfidenceInterval`] has the same three numbers with how
/// they were computed.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    /// The point estimate.
    pub point: f64,
    /// Lower end of the interval.
    pub low: f64,
    /// Upper end of the interval.
    pub high: f64,
}

impl Estimate {
    /// The estimate `point` with the interval `[low, high]`.
    pub fn new(point: f64, low: f64, high: f64) -> Self {
        Self { point, low, high }
    }
}

impl From<ConfidenceInterval> for Estimate {
    /// The interval's estimate and ends.
    fn from(ci: ConfidenceInterval) -> Self {
        Self::new(ci.estimate, ci.low, ci.high)
    }
}
