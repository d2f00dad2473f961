//! Units accepted in scenario files.
//!
//! Durations are whole seconds, as BOINC keeps them; a scenario may write them as an
//! integer (`86400`) or with a unit suffix (`"10d"`, `"6h"`, `"90m"`, `"30s"`).

use crate::engine::time::format_duration;
use serde::{Deserialize, Deserializer, Serialize, Serializer, de};
use std::fmt;

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

/// Parses `"10d"`, `"6h"`, `"90m"`, `"30s"` or `"3600"`.
pub fn parse_duration(s: &str) -> Result<i64, String> {
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
            .ok_or_else(|| format!("duration `{s}` is too large"));
    }
    match num.parse::<f64>() {
        Ok(x) if x.is_finite() && (x * mult as f64).fract() == 0.0 => Ok((x * mult as f64) as i64),
        Ok(_) => Err(format!("duration `{s}` is not a whole number of seconds")),
        Err(_) => Err(format!(
            "invalid duration `{s}`: expected seconds or a number with a unit d, h, m or s, e.g. \"10d\", \"6h\", \"90m\""
        )),
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
