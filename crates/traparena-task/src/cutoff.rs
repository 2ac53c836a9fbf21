//! The instant a package index is read as of ([`Cutoff`]): what an environment resolves to
//! then no longer depends on the day it is built.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::TaskError;

/// An instant that package resolution is held at: files a package index received later are
/// treated as absent, so that requirements left unpinned resolve to the releases that existed
/// then, whenever the environment is built (uv's `--exclude-newer`, pip's
/// `--uploaded-prior-to`).
///
/// Written as an RFC 3339 time in UTC (`2024-08-13T00:00:00Z`); a date alone
/// (`2024-08-13`) stands for its midnight UTC.
///
/// ```
/// use traparena_task::Cutoff;
/// let c: Cutoff = "2024-08-13".parse().unwrap();
/// assert_eq!(c.to_string(), "2024-08-13T00:00:00Z");
/// assert!(c.admits("2024-08-12T23:59:59.5Z"));
/// assert!(!c.admits("2024-08-13T00:00:00Z"));
/// assert!("13/08/2024".parse::<Cutoff>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Cutoff(jiff::Timestamp);

impl Cutoff {
    /// True when a file uploaded at `upload_time` (an RFC 3339 time, as PEP 700's
    /// `upload-time`) existed before the cutoff. A time that does not parse is not admitted.
    pub fn admits(&self, upload_time: &str) -> bool {
        upload_time
            .parse::<jiff::Timestamp>()
            .is_ok_and(|t| t < self.0)
    }
}

impl FromStr for Cutoff {
    type Err = TaskError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        let refused = || TaskError::Cutoff { text: s.to_owned() };
        if let Ok(ts) = t.parse::<jiff::Timestamp>() {
            return Ok(Cutoff(ts));
        }
        // A date alone: a time without an offset would be local time, which is refused.
        if t.len() != "YYYY-MM-DD".len() {
            return Err(refused());
        }
        let date: jiff::civil::Date = t.parse().map_err(|_| refused())?;
        format!("{date}T00:00:00Z")
            .parse::<jiff::Timestamp>()
            .map(Cutoff)
            .map_err(|_| refused())
    }
}

impl fmt::Display for Cutoff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl TryFrom<String> for Cutoff {
    type Error = TaskError;

    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}

impl From<Cutoff> for String {
    fn from(c: Cutoff) -> String {
        c.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_times_parse_and_print_in_utc() {
        for (given, shown) in [
            ("2024-08-13", "2024-08-13T00:00:00Z"),
            (" 2024-08-13 ", "2024-08-13T00:00:00Z"),
            ("2024-08-13T00:00:00Z", "2024-08-13T00:00:00Z"),
            ("2024-08-13T02:00:00+02:00", "2024-08-13T00:00:00Z"),
            ("2024-08-13T12:30:00.25Z", "2024-08-13T12:30:00.25Z"),
        ] {
            let c: Cutoff = given.parse().unwrap();
            assert_eq!(c.to_string(), shown, "{given:?}");
            let back: Cutoff = serde_json::from_value(serde_json::json!(shown)).unwrap();
            assert_eq!(back, c);
        }
        for bad in [
            "",
            "yesterday",
            "2024-13-01",
            "2024-08-13T00:00:00",
            "13/08/2024",
        ] {
            let e = bad.parse::<Cutoff>().unwrap_err();
            assert!(e.to_string().contains("YYYY-MM-DD"), "{bad:?}: {e}");
            assert!(serde_json::from_value::<Cutoff>(serde_json::json!(bad)).is_err());
        }
    }

    #[test]
    fn only_earlier_uploads_are_admitted() {
        let c: Cutoff = "2024-08-13".parse().unwrap();
        assert!(c.admits("2010-04-16T14:29:37.458396Z"));
        assert!(c.admits("2024-08-12T23:59:59.999999Z"));
        assert!(!c.admits("2024-08-13T00:00:00Z"));
        assert!(!c.admits("2026-09-27T18:33:39.685530Z"));
        assert!(!c.admits("not a time"));
        assert!(!c.admits(""));
    }
}
