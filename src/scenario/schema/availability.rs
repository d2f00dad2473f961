//! `[host_group.availability]` (daily and weekly patterns, vacations, a mixture of
//! availability classes) and the values that let a host attribute vary across a
//! group's hosts: a count drawn per host ([`Count`]) and a weighted mix of operating
//! systems ([`OsName`]). Every key is documented in `docs/scenario.md`.

use crate::base::dist::Dist;
use crate::base::units::{Duration, parse_duration};
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::collections::BTreeMap;
use std::fmt;

/// The keys of one on/off model, shared by `[host_group.availability]` and its
/// classes: the macro adds them to both structs (serde's `flatten` cannot be combined
/// with `deny_unknown_fields`), and [`ModelKeys`] gathers them for the checks.
macro_rules! with_model_keys {
    ($(#[$m:meta])* pub struct $name:ident { $($extra:tt)* }) => {
        $(#[$m])*
        pub struct $name {
            $($extra)*
            /// The emulator's `RANDOM_PROCESS` with this on fraction.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub on_frac: Option<f64>,
            /// Its mean on-period (default 1 h).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub on_lambda: Option<Duration>,
            /// Alternating on and off periods.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub on_period: Option<Dist>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub off_period: Option<Dist>,
            /// A daily and weekly pattern.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub daily: Option<DailySection>,
            /// Vacations over the model.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub vacation: Option<VacationSection>,
        }

        impl $name {
            /// The model keys, gathered.
            pub fn keys(&self) -> ModelKeys {
                ModelKeys {
                    on_frac: self.on_frac,
                    on_lambda: self.on_lambda,
                    on_period: self.on_period,
                    off_period: self.off_period,
                    daily: self.daily.clone(),
                    vacation: self.vacation.clone(),
                }
            }
        }
    };
}

/// The keys of one on/off model ([`AvailabilitySection::keys`],
/// [`AvailClassSection::keys`]).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ModelKeys {
    pub on_frac: Option<f64>,
    pub on_lambda: Option<Duration>,
    pub on_period: Option<Dist>,
    pub off_period: Option<Dist>,
    pub daily: Option<DailySection>,
    pub vacation: Option<VacationSection>,
}

impl ModelKeys {
    /// Whether any on/off model key is given (`vacation` is not one).
    pub fn has_model(&self) -> bool {
        self.on_frac.is_some()
            || self.on_period.is_some()
            || self.off_period.is_some()
            || self.daily.is_some()
    }
}

with_model_keys! {
    /// `[host_group.availability]`: one on/off model for every host of the group (at
    /// most one of `on_frac`, `on_period`/`off_period`, `daily`; none: always on), or
    /// a mixture of `class` entries, and vacations over either (a class's own
    /// `vacation` replaces the section's). With neither a model nor classes, the
    /// group's own keys (`on_frac`, `on_period`/`off_period`, `trace`) give the
    /// model and `vacation` lies over it.
    #[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Default)]
    #[serde(deny_unknown_fields)]
    pub struct AvailabilitySection {
        /// Availability classes, each host drawing one when it joins.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        pub class: Vec<AvailClassSection>,
    }
}

with_model_keys! {
    /// One `[[host_group.availability.class]]` entry.
    #[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    pub struct AvailClassSection {
        /// The class's name, written in the `avail_class` column of `hosts.csv`.
        pub name: String,
        /// Its weight among the group's classes (≥ 0; they need not sum to 1).
        pub weight: f64,
    }
}

/// `daily = { ... }`: on during a window of each local day (see
/// `client::availability::daily`).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DailySection {
    /// Local clock time the host comes on, Monday to Friday.
    pub start: ClockTime,
    /// Local clock time it goes off (at or before `start`: the next day).
    pub end: ClockTime,
    /// The window of Saturday and Sunday (default: the weekdays').
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weekend_start: Option<ClockTime>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weekend_end: Option<ClockTime>,
    /// Probability that the host is used on a given weekday (default 1).
    #[serde(default = "one")]
    pub weekday_prob: f64,
    /// Probability that it is used on a given weekend day (default 1).
    #[serde(default = "one")]
    pub weekend_prob: f64,
    /// Seconds added to each day's start and, drawn apart, to its end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jitter: Option<Dist>,
    /// The host's UTC offset in hours (default 0).
    #[serde(default, skip_serializing_if = "ZoneSpec::is_utc")]
    pub utc_offset: ZoneSpec,
}

fn one() -> f64 {
    1.0
}

/// `vacation = { every = ..., length = ... }`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct VacationSection {
    /// Time from the end of one vacation to the start of the next.
    pub every: Dist,
    /// Length of a vacation.
    pub length: Dist,
}

/// A local clock time, in seconds after midnight: `"HH:MM"` or `"HH:MM:SS"`, a
/// duration (`"9h"`, `"17.5h"`) or a number of seconds. Echoed as `"HH:MM[:SS]"`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClockTime(pub i64);

/// Parses `"HH:MM"` or `"HH:MM:SS"` into seconds.
fn parse_clock(s: &str) -> Option<i64> {
    let parts: Vec<&str> = s.trim().split(':').collect();
    if !(2..=3).contains(&parts.len()) {
        return None;
    }
    let mut secs = 0;
    for (k, p) in parts.iter().enumerate() {
        if p.is_empty() || p.len() > 2 || !p.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let v: i64 = p.parse().ok()?;
        if k > 0 && v >= 60 {
            return None;
        }
        secs += v * [3600, 60, 1][k];
    }
    Some(secs)
}

impl<'de> Deserialize<'de> for ClockTime {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = ClockTime;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(
                    "a clock time such as \"09:00\" or \"17:30\", or seconds after midnight",
                )
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<ClockTime, E> {
                Ok(ClockTime(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<ClockTime, E> {
                i64::try_from(v)
                    .map(ClockTime)
                    .map_err(|_| E::custom("clock time too large"))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<ClockTime, E> {
                if v.contains(':') {
                    return parse_clock(v).map(ClockTime).ok_or_else(|| {
                        E::custom(format!(
                            "invalid clock time `{v}`: expected HH:MM or HH:MM:SS"
                        ))
                    });
                }
                parse_duration(v).map(ClockTime).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

impl Serialize for ClockTime {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (h, m, sec) = (self.0 / 3600, self.0 % 3600 / 60, self.0 % 60);
        if sec == 0 && self.0 >= 0 {
            s.serialize_str(&format!("{h:02}:{m:02}"))
        } else if self.0 >= 0 {
            s.serialize_str(&format!("{h:02}:{m:02}:{sec:02}"))
        } else {
            s.serialize_i64(self.0)
        }
    }
}

/// A time zone: UTC offset hours as a number or a distribution, or a weighted list
/// of zones `{ "-5" = 0.3, "1" = 0.5, "5.5" = 0.2 }` (keys: hours; values: weights).
#[derive(Clone, Debug, PartialEq)]
// Configuration, held once per group: a distribution's size is accepted (see `Dist`).
#[allow(clippy::large_enum_variant)]
pub enum ZoneSpec {
    Hours(Dist),
    Weighted(BTreeMap<String, f64>),
}

impl Default for ZoneSpec {
    fn default() -> Self {
        ZoneSpec::Hours(Dist::fixed(0.0))
    }
}

impl ZoneSpec {
    fn is_utc(&self) -> bool {
        *self == ZoneSpec::default()
    }
}

impl<'de> Deserialize<'de> for ZoneSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = toml::Value::deserialize(d)?;
        let err =
            |e: toml::de::Error| de::Error::custom(e.to_string().trim_end().replace('\n', " "));
        match &v {
            toml::Value::Table(t) if !t.contains_key("dist") => {
                BTreeMap::<String, f64>::deserialize(v)
                    .map(ZoneSpec::Weighted)
                    .map_err(|_| {
                        de::Error::custom(
                            "expected UTC offset hours: a number, a distribution \
                         { dist = ... }, or weighted zones such as { \"-5\" = 0.3, \"1\" = 0.7 }",
                        )
                    })
            }
            _ => Dist::deserialize(v).map(ZoneSpec::Hours).map_err(err),
        }
    }
}

impl Serialize for ZoneSpec {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            ZoneSpec::Hours(d) => d.serialize(s),
            ZoneSpec::Weighted(m) => m.serialize(s),
        }
    }
}

/// A whole number, or a distribution drawn once per host (rounded): `p_ncpus = 4`
/// or `p_ncpus = { dist = "lognormal", mu = 1.5, sigma = 0.5 }`. A plain number is
/// echoed as the integer it is.
#[derive(Clone, Copy, Debug, PartialEq)]
// Configuration, held once per group: a distribution's size is accepted (see `Dist`).
#[allow(clippy::large_enum_variant)]
pub enum Count {
    Fixed(i64),
    Dist(Dist),
}

impl Count {
    /// The plain number, if it is one.
    pub fn fixed(&self) -> Option<i64> {
        match self {
            Count::Fixed(n) => Some(*n),
            Count::Dist(_) => None,
        }
    }
}

impl<'de> Deserialize<'de> for Count {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Count;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(
                    "a whole number, or a distribution such as \
                     { dist = \"uniform\", min = 1, max = 8 } drawn per host",
                )
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Count, E> {
                Ok(Count::Fixed(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Count, E> {
                i64::try_from(v)
                    .map(Count::Fixed)
                    .map_err(|_| E::custom("number too large"))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Count, A::Error> {
                Dist::deserialize(de::value::MapAccessDeserializer::new(map)).map(Count::Dist)
            }
        }
        d.deserialize_any(V)
    }
}

impl Serialize for Count {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Count::Fixed(n) => s.serialize_i64(*n),
            Count::Dist(d) => d.serialize(s),
        }
    }
}

/// An operating system name, or a weighted mix drawn per host:
/// `os_name = { "Microsoft Windows" = 0.8, Linux = 0.1, Darwin = 0.1 }`.
#[derive(Clone, Debug, PartialEq)]
pub enum OsName {
    One(String),
    Mix(BTreeMap<String, f64>),
}

impl OsName {
    /// The single name, if it is one.
    pub fn single(&self) -> Option<&str> {
        match self {
            OsName::One(s) => Some(s),
            OsName::Mix(_) => None,
        }
    }
}

impl<'de> Deserialize<'de> for OsName {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = OsName;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(
                    "an operating system name, or weights such as \
                     { \"Microsoft Windows\" = 0.8, Linux = 0.2 }",
                )
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<OsName, E> {
                Ok(OsName::One(v.to_string()))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<OsName, A::Error> {
                BTreeMap::deserialize(de::value::MapAccessDeserializer::new(map)).map(OsName::Mix)
            }
        }
        d.deserialize_any(V)
    }
}

impl Serialize for OsName {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            OsName::One(n) => s.serialize_str(n),
            OsName::Mix(m) => m.serialize(s),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize, Serialize)]
    struct T<X> {
        x: X,
    }

    fn parse<X: for<'de> Deserialize<'de>>(s: &str) -> Result<X, String> {
        toml::from_str::<T<X>>(s)
            .map(|t| t.x)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn clock_times() {
        assert_eq!(parse::<ClockTime>("x = \"09:00\""), Ok(ClockTime(32_400)));
        assert_eq!(parse::<ClockTime>("x = \"17:30\""), Ok(ClockTime(63_000)));
        assert_eq!(
            parse::<ClockTime>("x = \"23:59:30\""),
            Ok(ClockTime(86_370))
        );
        assert_eq!(parse::<ClockTime>("x = \"17.5h\""), Ok(ClockTime(63_000)));
        assert_eq!(parse::<ClockTime>("x = 3600"), Ok(ClockTime(3600)));
        let e = parse::<ClockTime>("x = \"9:75\"").unwrap_err();
        assert!(e.contains("expected HH:MM or HH:MM:SS"), "{e}");
        let s = toml::to_string(&T {
            x: ClockTime(63_000),
        })
        .unwrap();
        assert_eq!(s.trim(), "x = \"17:30\"");
    }

    #[test]
    fn counts_zones_and_os_names() {
        assert_eq!(parse::<Count>("x = 4"), Ok(Count::Fixed(4)));
        let c = parse::<Count>("x = { dist = \"uniform\", min = 1, max = 8 }").unwrap();
        assert!(matches!(c, Count::Dist(_)));
        assert_eq!(
            toml::to_string(&T { x: Count::Fixed(4) }).unwrap().trim(),
            "x = 4"
        );
        let e = parse::<Count>("x = 2.5").unwrap_err();
        assert!(e.contains("a whole number"), "{e}");
        assert_eq!(
            parse::<ZoneSpec>("x = -5"),
            Ok(ZoneSpec::Hours(Dist::fixed(-5.0)))
        );
        let z = parse::<ZoneSpec>("x = { \"-5\" = 1, \"1\" = 3 }").unwrap();
        assert_eq!(
            z,
            ZoneSpec::Weighted([("-5".to_string(), 1.0), ("1".to_string(), 3.0)].into())
        );
        let z = parse::<ZoneSpec>("x = { dist = \"uniform\", min = -8, max = 9 }").unwrap();
        assert!(matches!(z, ZoneSpec::Hours(_)));
        let o = parse::<OsName>("x = { \"Microsoft Windows\" = 0.8, Linux = 0.2 }").unwrap();
        assert_eq!(o.single(), None);
        assert_eq!(
            parse::<OsName>("x = \"Linux\"").unwrap().single(),
            Some("Linux")
        );
    }
}
