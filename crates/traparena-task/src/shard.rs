//! One share of work split across processes or machines: shard `I` of `N`.

use std::fmt;
use std::ops::Range;

/// Shard `index` of `count` (0-based), as `--shard I/N` names it (and as JSON writes it).
///
/// An experiment gives each episode to a shard by a stable hash of its key; an import gives
/// each shard one contiguous block of its records ([`Shard::block`]), so that records that
/// share an environment tend to share a shard, and the shards' reports joined in shard order
/// are in input order.
///
/// ```
/// use traparena_task::Shard;
/// let s = Shard::parse("1/3").unwrap();
/// assert_eq!((s.index, s.count), (1, 3));
/// assert_eq!(s.to_string(), "1/3");
/// assert_eq!(s.block(7), 2..4);
/// assert!(Shard::parse("3/3").is_none());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Shard {
    /// This shard (0-based).
    pub index: u32,
    /// How many shards.
    pub count: u32,
}

impl Shard {
    /// Parses `I/N` with `0 <= I < N`.
    pub fn parse(s: &str) -> Option<Shard> {
        let (i, n) = s.split_once('/')?;
        let (index, count) = (i.trim().parse().ok()?, n.trim().parse().ok()?);
        (count >= 1 && index < count).then_some(Shard { index, count })
    }

    /// The positions of `len` items in order that this shard takes: the `index`-th of `count`
    /// contiguous blocks whose sizes differ by at most one. The blocks of every shard cover
    /// `0..len` once.
    pub fn block(&self, len: usize) -> Range<usize> {
        let (i, n) = (self.index as usize, self.count.max(1) as usize);
        (len * i / n)..(len * (i + 1) / n)
    }
}

impl serde::Serialize for Shard {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        ser.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Shard {
    fn deserialize<D: serde::Deserializer<'de>>(de: D) -> Result<Shard, D::Error> {
        let text = String::deserialize(de)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

impl std::str::FromStr for Shard {
    type Err = crate::TaskError;
    /// [`Shard::parse`], with [`crate::TaskError::Shard`] for text that is not a shard.
    fn from_str(s: &str) -> Result<Shard, crate::TaskError> {
        Shard::parse(s).ok_or_else(|| crate::TaskError::Shard { text: s.to_owned() })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_blocks_of_every_shard_cover_each_position_once_in_order() {
        for len in 0..40 {
            for count in 1..9 {
                let covered: Vec<usize> = (0..count)
                    .flat_map(|index| Shard { index, count }.block(len))
                    .collect();
                assert_eq!(covered, (0..len).collect::<Vec<_>>(), "{len} in {count}");
            }
        }
    }

    #[test]
    fn only_an_index_below_a_positive_count_parses() {
        for (text, want) in [
            ("0/1", Some((0, 1))),
            (" 2 / 4 ", Some((2, 4))),
            ("4/4", None),
            ("0/0", None),
            ("1", None),
            ("-1/2", None),
            ("a/b", None),
        ] {
            assert_eq!(
                Shard::parse(text).map(|s| (s.index, s.count)),
                want,
                "{text}"
            );
        }
    }
}
