//! Units accepted in scenario files.
//!
//! Durations are whole seconds, as BOINC keeps them; a scenario may write them as an
//! integer (`86400`) or with a unit suffix (`"10d"`, `"6h"`, `"90m"`, `"30s"`).

use serde::{Deserialize, Deserializer, Serialize, Serializer, de};
use std::fmt;

/// Seconds in a day, the unit of quotas and credit averages.
pub(crate) const DAY: i64 = 86_400;

/// [`DAY`] as a float, for rates and buffers counted in days (BOINC's
/// `SECONDS_PER_DAY`).
pub(crate) const SECONDS_PER_DAY: f64 = DAY as f64;

/// Formats a duration in seconds the way scenario files accept it back (`"10d"`,
/// `"6h"`, `"90m"` or plain seconds), choosing the largest exact unit.
pub(crate) fn format_duration(secs: i64) -> String {
    if secs != 0 && secs % DAY == 0 {
        format!("{}d", secs / DAY)
    } else if secs != 0 && secs % 3600 == 0 {
        format!("{}h", secs / 3600)
    } else if secs != 0 && secs % 60 == 0 {
        format!("{}m", secs / 60)
    } else {
        format!("{secs}")
    }
}

/// A duration in whole seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Duration(pub i64);

impl Duration {
    pub const fn secs(s: i64) -> Self {
        Duration(s)
    }
    pub fn get(self) -> i64 {
        self.0
    }
}

/// Why a duration could not be read ([`parse_duration`]); each variant keeps the
/// text as given, which its message quotes.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DurationError {
    /// More seconds than an `i64` holds.
    #[error("duration `{0}` is too large")]
    TooLarge(String),
    /// A fraction of a second (`"0.5s"`, `"1.0001m"`): BOINC keeps whole seconds.
    #[error("duration `{0}` is not a whole number of seconds")]
    NotWhole(String),
    /// Neither a number nor a number with a unit.
    #[error(
        "invalid duration `{0}`: expected seconds or a number with a unit d, h, m or s, e.g. \"10d\", \"6h\", \"90m\""
    )]
    Invalid(String),
}

/// Parses `"10d"`, `"6h"`, `"90m"`, `"30s"` or `"3600"`.
pub(crate) fn parse_duration(s: &str) -> Result<i64, DurationError> {
    let t = s.trim();
    let (num, mult) = match t.char_indices().last() {
        Some((i, 'd')) => (&t[..i], 86_400),
        Some((i, 'h')) => (&t[..i], 3_600),
        Some((i, 'm')) => (&t[..i], 60),
        Some((i, 's')) => (&t[..i], 1),
        _ => (t, 1),
    };
    let num = num.trim();
    if let Ok(n) = num.parse::<i64>() {
        return n
            .checked_mul(mult)
            .ok_or_else(|| DurationError::TooLarge(s.to_string()));
    }
    match num.parse::<f64>() {
        Ok(x) if x.is_finite() && (x * mult as f64).fract() == 0.0 => Ok((x * mult as f64) as i64),
        Ok(_) => Err(DurationError::NotWhole(s.to_string())),
        Err(_) => Err(DurationError::Invalid(s.to_string())),
    }
}

impl<'de> Deserialize<'de> for Duration {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl de::Visitor<'_> for V {
            type Value = Duration;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(
                    "a duration: whole seconds, or a string such as \"10d\", \"6h\", \"90m\"",
                )
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Duration, E> {
                Ok(Duration(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Duration, E> {
                i64::try_from(v)
                    .map(Duration)
                    .map_err(|_| E::custom("duration too large"))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Duration, E> {
                parse_duration(v).map(Duration).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

impl Serialize for Duration {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.0 != 0 && self.0 % 60 == 0 {
            s.serialize_str(&format_duration(self.0))
        } else {
            s.serialize_i64(self.0)
        }
    }
}

/// Duration keys where a bare number far below the usual value is most likely a
/// forgotten unit (`delay_bound = 3` meant as 3 days; BOINC keeps it in seconds):
/// the key path (`*` is any key of a table, or any entry of an array of tables:
/// any project, any app) and the threshold in seconds. A bare number
/// below it gives a warning naming the unit assumed; a value with a unit never does.
pub(crate) const SHORT_BARE_DURATIONS: &[(&str, i64)] = &[
    ("simulation.duration", 100),
    ("project.*.workunit.delay_bound", 100),
    ("project.*.app.*.workunit.delay_bound", 100),
];

/// The key paths and values of bare-number durations in `doc` that are below their
/// [`SHORT_BARE_DURATIONS`] threshold.
pub(crate) fn short_bare_durations(doc: &toml_edit::Item) -> Vec<(Vec<String>, i64)> {
    let mut out = Vec::new();
    for (pattern, threshold) in SHORT_BARE_DURATIONS {
        let segs: Vec<&str> = pattern.split('.').collect();
        let mut found = Vec::new();
        collect(doc, &segs, &mut Vec::new(), &mut found);
        for (path, item) in found {
            if let Some(v) = item.as_integer()
                && v < *threshold
            {
                out.push((path, v));
            }
        }
    }
    out
}

/// The items at `segs` under `item` (`*` matches every key), with their paths.
fn collect<'a>(
    item: &'a toml_edit::Item,
    segs: &[&str],
    path: &mut Vec<String>,
    found: &mut Vec<(Vec<String>, &'a toml_edit::Item)>,
) {
    let Some((first, rest)) = segs.split_first() else {
        found.push((path.clone(), item));
        return;
    };
    if let Some(t) = item.as_table_like() {
        collect_in(t, first, rest, path, found);
    } else if let Some(a) = item.as_array_of_tables()
        && *first == "*"
    {
        // Each entry of an array of tables, by index (`project.main.app.1`).
        for (i, t) in a.iter().enumerate() {
            path.push(i.to_string());
            if let Some((next, rest)) = rest.split_first() {
                collect_in(t, next, rest, path, found);
            }
            path.pop();
        }
    }
}

/// The keys of table `t` that `first` matches, each followed by `rest`.
fn collect_in<'a>(
    t: &'a dyn toml_edit::TableLike,
    first: &str,
    rest: &[&str],
    path: &mut Vec<String>,
    found: &mut Vec<(Vec<String>, &'a toml_edit::Item)>,
) {
    for (k, v) in t.iter() {
        if first == "*" || first == k {
            path.push(k.to_owned());
            collect(v, rest, path, found);
            path.pop();
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn durations_use_the_largest_exact_unit() {
        assert_eq!(format_duration(864_000), "10d");
        assert_eq!(format_duration(21_600), "6h");
        assert_eq!(format_duration(5_400), "90m");
        assert_eq!(format_duration(61), "61");
        assert_eq!(format_duration(0), "0");
    }

    use super::*;

    #[test]
    fn short_bare_durations_are_found_and_values_with_units_are_not() {
        let doc: toml_edit::DocumentMut = "[simulation]\nduration = 30\n[project.a.workunit]\ndelay_bound = 3\n[project.b.workunit]\ndelay_bound = \"3s\"\n[project.c.workunit]\ndelay_bound = 1000\n[[project.d.app]]\n[project.d.app.workunit]\ndelay_bound = 86400\n[[project.d.app]]\n[project.d.app.workunit]\ndelay_bound = 2\n"
            .parse()
            .unwrap();
        let found = short_bare_durations(doc.as_item());
        let shown: Vec<(String, i64)> = found.into_iter().map(|(p, v)| (p.join("."), v)).collect();
        assert_eq!(
            shown,
            [
                ("simulation.duration".to_string(), 30),
                ("project.a.workunit.delay_bound".to_string(), 3),
                ("project.d.app.1.workunit.delay_bound".to_string(), 2)
            ]
        );
    }

    #[test]
    fn parses_units() {
        assert_eq!(parse_duration("10d"), Ok(864_000));
        assert_eq!(parse_duration("6h"), Ok(21_600));
        assert_eq!(parse_duration("90m"), Ok(5_400));
        assert_eq!(parse_duration("45s"), Ok(45));
        assert_eq!(parse_duration("3600"), Ok(3600));
        assert_eq!(parse_duration("1.5d"), Ok(129_600));
        assert!(parse_duration("ten days").is_err());
        assert!(parse_duration("0.5s").is_err());
    }

    #[test]
    fn errors_quote_the_text_as_given() {
        let msg = |s: &str| parse_duration(s).unwrap_err().to_string();
        assert_eq!(
            msg("0.5s"),
            "duration `0.5s` is not a whole number of seconds"
        );
        assert_eq!(
            msg("99999999999999999d"),
            "duration `99999999999999999d` is too large"
        );
        assert_eq!(
            msg(" ten days"),
            "invalid duration ` ten days`: expected seconds or a number with a unit d, h, m or s, e.g. \"10d\", \"6h\", \"90m\""
        );
    }
}
