//! How the report's JSON spells an [`Estimate`]: as three flat fields of its row, e.g.
//! `delta_pp`, `ci_low_pp`, `ci_high_pp` (the layout `docs/report.md` documents), not as a
//! nested object. A model field opts in with `#[serde(flatten, with = "wire::<module>")]`, one
//! module per spelling below.
//!
//! An `Option<Estimate>` is written as three nulls when it is `None`, and read as `None` when
//! all three fields are null or absent. A JSON number that is not finite (NaN) is written as
//! null by `serde_json`, so a partial triple is read back with NaN in its null places (and so
//! written again as it was read). A plain `Estimate` needs all three numbers.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, IgnoredAny, MapAccess, Visitor};
use serde::ser::SerializeStruct;
use serde::{Deserialize, Deserializer, Serializer};
use traparena_stats::Estimate;

/// The JSON names of the point, the lower and the upper end.
type Names = [&'static str; 3];

/// A model field that holds an estimate: [`Estimate`] or `Option<Estimate>`.
pub(crate) trait EstimateField: Sized {
    /// What one of the three JSON fields holds.
    type Part: for<'de> Deserialize<'de>;
    /// The three numbers, point first (`None` for a missing estimate).
    fn parts(&self) -> [Option<f64>; 3];
    /// The field from the three JSON fields (`None` where absent).
    fn assemble<E: de::Error>(parts: [Option<Self::Part>; 3], names: &Names) -> Result<Self, E>;
}

impl EstimateField for Estimate {
    type Part = f64;

    fn parts(&self) -> [Option<f64>; 3] {
        [Some(self.point), Some(self.low), Some(self.high)]
    }

    fn assemble<E: de::Error>(parts: [Option<f64>; 3], names: &Names) -> Result<Self, E> {
        let [point, low, high] = parts;
        let need = |v: Option<f64>, i: usize| v.ok_or_else(|| E::missing_field(names[i]));
        Ok(Estimate::new(
            need(point, 0)?,
            need(low, 1)?,
            need(high, 2)?,
        ))
    }
}

impl EstimateField for Option<Estimate> {
    type Part = Option<f64>;

    fn parts(&self) -> [Option<f64>; 3] {
        match self {
            Some(e) => e.parts(),
            None => [None; 3],
        }
    }

    fn assemble<E: de::Error>(parts: [Option<Option<f64>>; 3], _: &Names) -> Result<Self, E> {
        let [point, low, high] = parts.map(Option::flatten);
        if point.is_none() && low.is_none() && high.is_none() {
            return Ok(None);
        }
        let or_nan = |v: Option<f64>| v.unwrap_or(f64::NAN);
        Ok(Some(Estimate::new(
            or_nan(point),
            or_nan(low),
            or_nan(high),
        )))
    }
}

fn serialize<T: EstimateField, S: Serializer>(
    value: &T,
    names: &'static Names,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    let mut s = serializer.serialize_struct("Estimate", 3)?;
    for (name, part) in names.iter().zip(value.parts()) {
        s.serialize_field(name, &part)?;
    }
    s.end()
}

fn deserialize<'de, T: EstimateField, D: Deserializer<'de>>(
    names: &'static Names,
    deserializer: D,
) -> Result<T, D::Error> {
    deserializer.deserialize_struct("Estimate", names, FieldVisitor::<T>(names, PhantomData))
}

struct FieldVisitor<T>(&'static Names, PhantomData<T>);

impl<'de, T: EstimateField> Visitor<'de> for FieldVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the fields {}", self.0.join(", "))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<T, A::Error> {
        let mut parts: [Option<T::Part>; 3] = [None, None, None];
        while let Some(key) = map.next_key::<String>()? {
            match self.0.iter().position(|n| *n == key) {
                Some(i) if parts[i].is_some() => return Err(de::Error::duplicate_field(self.0[i])),
                Some(i) => parts[i] = Some(map.next_value()?),
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        T::assemble(parts, self.0)
    }
}

/// One module per spelling: `serialize` and `deserialize` for `#[serde(with = ...)]`.
macro_rules! spellings {
    ($($module:ident: $point:literal, $low:literal, $high:literal;)*) => {$(
        #[doc = concat!("`", $point, "`, `", $low, "`, `", $high, "`.")]
        pub(crate) mod $module {
            const NAMES: super::Names = [$point, $low, $high];

            pub(crate) fn serialize<T, S>(value: &T, serializer: S) -> Result<S::Ok, S::Error>
            where
                T: super::EstimateField,
                S: serde::Serializer,
            {
                super::serialize(value, &NAMES, serializer)
            }

            pub(crate) fn deserialize<'de, T, D>(deserializer: D) -> Result<T, D::Error>
            where
                T: super::EstimateField,
                D: serde::Deserializer<'de>,
            {
                super::deserialize(&NAMES, deserializer)
            }
        }
    )*};
}

spellings! {
    delta_pp: "delta_pp", "ci_low_pp", "ci_high_pp";
    difference_pp: "difference_pp", "ci_low_pp", "ci_high_pp";
    change_pp: "change_pp", "ci_low_pp", "ci_high_pp";
    effect_pp: "effect_pp", "ci_low_pp", "ci_high_pp";
    independent_delta_pp: "independent_delta_pp", "independent_ci_low_pp", "independent_ci_high_pp";
    susceptibility: "susceptibility", "susceptibility_ci_low", "susceptibility_ci_high";
    token_ratio: "token_ratio", "token_ratio_ci_low", "token_ratio_ci_high";
    ratio: "ratio", "ci_low", "ci_high";
}

#[cfg(test)]
mod tests {
    use serde::{Deserialize, Serialize};
    use serde_json::json;
    use traparena_stats::Estimate;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Row {
        tasks: usize,
        #[serde(flatten, with = "super::delta_pp")]
        delta_pp: Option<Estimate>,
        #[serde(flatten, with = "super::susceptibility")]
        susceptibility: Option<Estimate>,
        errors: Vec<String>,
    }

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Whole {
        #[serde(flatten, with = "super::change_pp")]
        change_pp: Estimate,
    }

    #[test]
    fn an_estimate_is_three_flat_fields_in_place() {
        let row = Row {
            tasks: 6,
            delta_pp: Some(Estimate::new(-2.5, -10.0, 5.0)),
            susceptibility: None,
            errors: Vec::new(),
        };
        let text = serde_json::to_string(&row).unwrap();
        assert_eq!(
            text,
            concat!(
                r#"{"tasks":6,"delta_pp":-2.5,"ci_low_pp":-10.0,"ci_high_pp":5.0,"#,
                r#""susceptibility":null,"susceptibility_ci_low":null,"#,
                r#""susceptibility_ci_high":null,"errors":[]}"#
            )
        );
        assert_eq!(serde_json::from_str::<Row>(&text).unwrap(), row);
        let whole = Whole {
            change_pp: Estimate::new(1.0, 0.0, 2.0),
        };
        let text = serde_json::to_string(&whole).unwrap();
        assert_eq!(
            text,
            r#"{"change_pp":1.0,"ci_low_pp":0.0,"ci_high_pp":2.0}"#
        );
        assert_eq!(serde_json::from_str::<Whole>(&text).unwrap(), whole);
    }

    #[test]
    fn missing_null_and_partial_fields_read_as_before() {
        // Absent fields, like null ones, are no estimate.
        let row: Row = serde_json::from_value(json!({"tasks": 1, "errors": []})).unwrap();
        assert_eq!((row.delta_pp, row.susceptibility), (None, None));
        // A partial triple (a NaN written as null) keeps its numbers and writes back the same.
        let partial = json!({
            "tasks": 1, "delta_pp": 3.0, "ci_low_pp": null, "ci_high_pp": null,
            "susceptibility": null, "susceptibility_ci_low": null,
            "susceptibility_ci_high": null, "errors": []
        });
        let row: Row = serde_json::from_value(partial.clone()).unwrap();
        let d = row.delta_pp.unwrap();
        assert!(d.point == 3.0 && d.low.is_nan() && d.high.is_nan());
        assert_eq!(serde_json::to_value(&row).unwrap(), partial);
        // A plain estimate needs its three numbers, as three plain numbers did.
        let e = serde_json::from_str::<Whole>(r#"{"change_pp":1.0,"ci_low_pp":0.0}"#);
        assert!(
            e.unwrap_err()
                .to_string()
                .contains("missing field `ci_high_pp`")
        );
        let e =
            serde_json::from_str::<Whole>(r#"{"change_pp":1.0,"ci_low_pp":null,"ci_high_pp":2.0}"#);
        assert!(
            e.unwrap_err()
                .to_string()
                .contains("invalid type: null, expected f64")
        );
    }
}
