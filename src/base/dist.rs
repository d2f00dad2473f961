//! Probability distributions for host populations: speeds, on/off periods,
//! lifetimes, arrival times.
//!
//! A value is written either as a plain number (a fixed value) or as a table naming
//! the distribution: `{ dist = "lognormal", mu = 21.0, sigma = 0.5 }`. Parameters that
//! are times also accept duration strings (`"2h"`, `"3d"`). Sampling goes through
//! rand_distr with its `std_math` feature, so a stream never changes when the
//! dependency graph does (a different `libm` or `std` could otherwise move a draw). `min`/`max` clamp a draw
//! (for example to keep a normal speed positive). The
//! clamping keys are `lower` and `upper`, because `min`/`max` are uniform's parameters.

use super::units::{DurationError, parse_duration};
use rand::{Rng, RngExt};
use rand_distr::Distribution;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;

/// A number, or a duration string converted to seconds.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Num(pub f64);

impl<'de> Deserialize<'de> for Num {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Num;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number, or a duration such as \"2h\"")
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Num, E> {
                Ok(Num(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Num, E> {
                Ok(Num(v as f64))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Num, E> {
                Ok(Num(v as f64))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Num, E> {
                match parse_duration(v) {
                    Ok(s) => Ok(Num(s as f64)),
                    // A parameter is a real number: "2.964h" is 10670.4 s.
                    Err(DurationError::NotWhole(_)) => fractional_duration(v)
                        .map(Num)
                        .ok_or_else(|| E::custom(format!("invalid duration `{v}`"))),
                    Err(e) => Err(E::custom(e)),
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// A duration string whose seconds are not whole (`"2.964h"`), in seconds.
fn fractional_duration(v: &str) -> Option<f64> {
    let t = v.trim();
    let (num, mult) = match t.char_indices().last() {
        Some((i, 'd')) => (&t[..i], 86_400.0),
        Some((i, 'h')) => (&t[..i], 3_600.0),
        Some((i, 'm')) => (&t[..i], 60.0),
        Some((i, 's')) => (&t[..i], 1.0),
        _ => (t, 1.0),
    };
    let x: f64 = num.trim().parse().ok()?;
    (x * mult).is_finite().then_some(x * mult)
}

impl Serialize for Num {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(self.0)
    }
}

/// The named distribution of a table value.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq)]
#[serde(tag = "dist", rename_all = "snake_case", deny_unknown_fields)]
// `Choice` is much larger than the other kinds. A distribution is configuration (per
// group, per app), never per host or per event, and being `Copy` keeps drawing free of
// allocation and indirection, so the size is accepted.
#[allow(clippy::large_enum_variant)]
pub enum Kind {
    Fixed {
        value: Num,
    },
    Uniform {
        min: Num,
        max: Num,
    },
    Normal {
        mean: Num,
        sd: Num,
    },
    /// `scale · exp(N(mu, sigma))`. The `scale` (default 1, left out of the echo
    /// when 1) gives the draw a unit: a fit of lengths in hours, such as the
    /// SETI@home off periods (mu −0.586, sigma 2.844), has `scale = "1h"`.
    Lognormal {
        mu: f64,
        sigma: f64,
        #[serde(default = "unit_scale", skip_serializing_if = "is_unit_scale")]
        scale: Num,
    },
    Exponential {
        mean: Num,
    },
    /// Weibull with `scale` λ and `shape` k.
    Weibull {
        scale: Num,
        shape: f64,
    },
    /// Pareto with minimum `scale` and tail index `shape`.
    Pareto {
        scale: Num,
        shape: f64,
    },
    /// One of a few `values`, drawn with probabilities proportional to `weights`
    /// (a core count among 1, 2, 4, 8; a time zone among a few regions). Up to
    /// [`MAX_CHOICES`] entries, so the distribution stays `Copy`.
    Choice {
        values: Choices,
        weights: Choices,
    },
}

/// Most entries a `choice` distribution may list.
pub const MAX_CHOICES: usize = 16;

/// The values or the weights of a `choice` distribution: up to [`MAX_CHOICES`]
/// numbers (durations allowed) in a fixed array, so that [`Dist`] stays `Copy` and
/// drawing allocates nothing.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Choices {
    len: u8,
    items: [f64; MAX_CHOICES],
}

impl Choices {
    /// The entries, in file order.
    pub fn as_slice(&self) -> &[f64] {
        &self.items[..self.len as usize]
    }

    /// At most [`MAX_CHOICES`] numbers; more are an error.
    pub fn new(xs: &[f64]) -> Option<Self> {
        (xs.len() <= MAX_CHOICES).then(|| {
            let mut items = [0.0; MAX_CHOICES];
            items[..xs.len()].copy_from_slice(xs);
            Choices {
                len: xs.len() as u8,
                items,
            }
        })
    }
}

impl<'de> Deserialize<'de> for Choices {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let xs: Vec<Num> = Vec::deserialize(d)?;
        let xs: Vec<f64> = xs.into_iter().map(|n| n.0).collect();
        Choices::new(&xs).ok_or_else(|| {
            de::Error::custom(format!(
                "a choice lists at most {MAX_CHOICES} entries, not {}",
                xs.len()
            ))
        })
    }
}

impl Serialize for Choices {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.as_slice().serialize(s)
    }
}

fn unit_scale() -> Num {
    Num(1.0)
}
fn is_unit_scale(n: &Num) -> bool {
    n.0 == 1.0
}

/// A distribution with optional clamping bounds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Dist {
    pub kind: Kind,
    pub min: Option<f64>,
    pub max: Option<f64>,
}

/// What is wrong with a distribution's parameters ([`Dist::problem`]): one variant
/// per kind, whose message names the condition it needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DistProblem {
    #[error("value must be finite")]
    Fixed,
    #[error("uniform needs finite min <= max")]
    Uniform,
    #[error("normal needs a finite mean and sd >= 0")]
    Normal,
    #[error("lognormal needs a finite mu, sigma >= 0 and scale > 0")]
    Lognormal,
    #[error("exponential needs mean > 0")]
    Exponential,
    #[error("weibull needs scale > 0 and shape > 0")]
    Weibull,
    #[error("pareto needs scale > 0 and shape > 0")]
    Pareto,
    #[error(
        "choice needs as many finite values as weights, at least one, and finite weights >= 0 with a positive sum"
    )]
    Choice,
    /// `lower` above `upper`: no draw could be clamped into them.
    #[error("lower must not exceed upper")]
    Bounds,
}

/// The validator keeps its problems as text.
impl From<DistProblem> for String {
    fn from(p: DistProblem) -> String {
        p.to_string()
    }
}

impl Dist {
    pub fn fixed(v: f64) -> Self {
        Dist {
            kind: Kind::Fixed { value: Num(v) },
            min: None,
            max: None,
        }
    }

    /// Whether this is the fixed value 1 (a default factor, left out of echoed
    /// configurations).
    pub fn is_one(&self) -> bool {
        *self == Dist::fixed(1.0)
    }

    /// Whether every draw is the same value (no random number is consumed).
    pub(crate) fn is_fixed(&self) -> bool {
        matches!(self.kind, Kind::Fixed { .. })
    }

    /// Whether every draw is 0: a fixed 0, or any distribution clamped to at most 0
    /// from a lower bound of at least 0.
    pub(crate) fn always_zero(&self) -> bool {
        match self.kind {
            Kind::Fixed { value } => value.0 == 0.0,
            _ => self.max.is_some_and(|m| m <= 0.0) && self.min.is_some_and(|m| m >= 0.0),
        }
    }

    /// The first problem of the parameters, if any (checked by the scenario
    /// validator, which reports it at the value's key).
    pub fn problem(&self) -> Option<DistProblem> {
        let bad = |ok: bool, p: DistProblem| (!ok).then_some(p);
        let fin = |x: f64| x.is_finite();
        match self.kind {
            Kind::Fixed { value } => bad(fin(value.0), DistProblem::Fixed),
            Kind::Uniform { min, max } => bad(
                fin(min.0) && fin(max.0) && min.0 <= max.0,
                DistProblem::Uniform,
            ),
            Kind::Normal { mean, sd } => {
                bad(fin(mean.0) && fin(sd.0) && sd.0 >= 0.0, DistProblem::Normal)
            }
            Kind::Lognormal { mu, sigma, scale } => bad(
                fin(mu) && fin(sigma) && sigma >= 0.0 && fin(scale.0) && scale.0 > 0.0,
                DistProblem::Lognormal,
            ),
            Kind::Exponential { mean } => {
                bad(fin(mean.0) && mean.0 > 0.0, DistProblem::Exponential)
            }
            Kind::Weibull { scale, shape } => bad(
                fin(scale.0) && scale.0 > 0.0 && fin(shape) && shape > 0.0,
                DistProblem::Weibull,
            ),
            Kind::Pareto { scale, shape } => bad(
                fin(scale.0) && scale.0 > 0.0 && fin(shape) && shape > 0.0,
                DistProblem::Pareto,
            ),
            Kind::Choice { values, weights } => {
                let (v, w) = (values.as_slice(), weights.as_slice());
                let sum: f64 = w.iter().sum();
                bad(
                    !v.is_empty()
                        && v.len() == w.len()
                        && v.iter().all(|x| fin(*x))
                        && w.iter().all(|x| fin(*x) && *x >= 0.0)
                        && sum > 0.0
                        && fin(sum),
                    DistProblem::Choice,
                )
            }
        }
        .or(match (self.min, self.max) {
            (Some(a), Some(b)) if a > b => Some(DistProblem::Bounds),
            _ => None,
        })
    }

    /// Whether every draw is > 0: a positive support (lognormal, exponential,
    /// Weibull, Pareto), a positive fixed value or uniform minimum, or a `lower`
    /// clamp above 0, and no `upper` clamp at or below 0.
    pub(crate) fn always_positive(&self) -> bool {
        let support = match self.kind {
            Kind::Fixed { value } => value.0 > 0.0,
            Kind::Uniform { min, .. } => min.0 > 0.0,
            Kind::Normal { .. } => false,
            Kind::Choice { values, weights } => (values.as_slice().iter())
                .zip(weights.as_slice())
                .all(|(v, w)| *v > 0.0 || *w == 0.0),
            Kind::Lognormal { .. }
            | Kind::Exponential { .. }
            | Kind::Weibull { .. }
            | Kind::Pareto { .. } => true,
        };
        (support || self.min.is_some_and(|m| m > 0.0)) && self.max.is_none_or(|m| m > 0.0)
    }

    /// One draw, clamped to `[min, max]`.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        let x = match self.kind {
            Kind::Fixed { value } => value.0,
            Kind::Uniform { min, max } => {
                let u: f64 = rng.random();
                min.0 + u * (max.0 - min.0)
            }
            Kind::Normal { mean, sd } => rand_distr::Normal::new(mean.0, sd.0)
                .map(|d| d.sample(rng))
                .unwrap_or(mean.0),
            // Multiplying by a scale of 1 is exact: draws without a scale are unchanged.
            Kind::Lognormal { mu, sigma, scale } => {
                scale.0
                    * rand_distr::LogNormal::new(mu, sigma)
                        .map(|d| d.sample(rng))
                        .unwrap_or(mu.exp())
            }
            Kind::Exponential { mean } => rand_distr::Exp::new(1.0 / mean.0)
                .map(|d| d.sample(rng))
                .unwrap_or(mean.0),
            Kind::Weibull { scale, shape } => rand_distr::Weibull::new(scale.0, shape)
                .map(|d| d.sample(rng))
                .unwrap_or(scale.0),
            Kind::Pareto { scale, shape } => rand_distr::Pareto::new(scale.0, shape)
                .map(|d| d.sample(rng))
                .unwrap_or(scale.0),
            Kind::Choice { values, weights } => {
                // One uniform draw, walked along the cumulative weights.
                let (v, w) = (values.as_slice(), weights.as_slice());
                let u: f64 = rng.random();
                let mut left = u * w.iter().sum::<f64>();
                let mut pick = v.len().saturating_sub(1);
                for (i, wi) in w.iter().enumerate() {
                    if left < *wi {
                        pick = i;
                        break;
                    }
                    left -= wi;
                }
                v.get(pick).copied().unwrap_or(0.0)
            }
        };
        let x = self.min.map_or(x, |m| x.max(m));
        self.max.map_or(x, |m| x.min(m))
    }

    /// The mean before clamping (infinite for a Pareto with shape ≤ 1).
    pub fn mean(&self) -> f64 {
        match self.kind {
            Kind::Fixed { value } => value.0,
            Kind::Uniform { min, max } => (min.0 + max.0) / 2.0,
            Kind::Normal { mean, .. } => mean.0,
            Kind::Lognormal { mu, sigma, scale } => scale.0 * (mu + sigma * sigma / 2.0).exp(),
            Kind::Exponential { mean } => mean.0,
            Kind::Weibull { scale, shape } => scale.0 * gamma(1.0 + 1.0 / shape),
            Kind::Pareto { scale, shape } => {
                if shape <= 1.0 {
                    f64::INFINITY
                } else {
                    shape * scale.0 / (shape - 1.0)
                }
            }
            Kind::Choice { values, weights } => {
                let (v, w) = (values.as_slice(), weights.as_slice());
                let sum: f64 = w.iter().sum();
                v.iter().zip(w).map(|(x, p)| x * p).sum::<f64>() / sum
            }
        }
    }
}

/// Γ(x) by the Lanczos approximation (g = 7, n = 9), for the Weibull mean.
fn gamma(x: f64) -> f64 {
    const G: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        std::f64::consts::PI / ((std::f64::consts::PI * x).sin() * gamma(1.0 - x))
    } else {
        let x = x - 1.0;
        let mut a = G[0];
        let t = x + 7.5;
        for (i, g) in G.iter().enumerate().skip(1) {
            a += g / (x + i as f64);
        }
        (2.0 * std::f64::consts::PI).sqrt() * t.powf(x + 0.5) * (-t).exp() * a
    }
}

/// The table form: the distribution's keys plus optional `lower`/`upper` clamps.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Bounds {
    #[serde(default)]
    lower: Option<Num>,
    #[serde(default)]
    upper: Option<Num>,
}

impl<'de> Deserialize<'de> for Dist {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Dist;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(
                    "a number, a duration such as \"2h\", or a table such as \
                     { dist = \"exponential\", mean = \"8h\" } (dist: fixed, uniform, \
                     normal, lognormal, exponential, weibull, pareto, choice)",
                )
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Dist, E> {
                Ok(Dist::fixed(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Dist, E> {
                Ok(Dist::fixed(v as f64))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Dist, E> {
                Ok(Dist::fixed(v as f64))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Dist, E> {
                parse_duration(v)
                    .map(|s| Dist::fixed(s as f64))
                    .map_err(E::custom)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Dist, A::Error> {
                // Split the bounds off, then parse the rest as the tagged kind.
                let mut rest = toml::Table::new();
                let mut bounds = toml::Table::new();
                while let Some(k) = map.next_key::<String>()? {
                    let v: toml::Value = map.next_value()?;
                    if k == "lower" || k == "upper" {
                        bounds.insert(k, v);
                    } else {
                        rest.insert(k, v);
                    }
                }
                let kind = Kind::deserialize(toml::Value::Table(rest))
                    .map_err(|e| de::Error::custom(e.to_string().trim_end().replace('\n', " ")))?;
                let b = Bounds::deserialize(toml::Value::Table(bounds))
                    .map_err(|e| de::Error::custom(e.to_string().trim_end()))?;
                Ok(Dist {
                    kind,
                    min: b.lower.map(|n| n.0),
                    max: b.upper.map(|n| n.0),
                })
            }
        }
        d.deserialize_any(V)
    }
}

impl Serialize for Dist {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if let (Kind::Fixed { value }, None, None) = (self.kind, self.min, self.max) {
            return s.serialize_f64(value.0);
        }
        let mut t = toml::Table::try_from(self.kind).map_err(serde::ser::Error::custom)?;
        if let Some(m) = self.min {
            t.insert("lower".into(), toml::Value::Float(m));
        }
        if let Some(m) = self.max {
            t.insert("upper".into(), toml::Value::Float(m));
        }
        t.serialize(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    fn stream(seed: u64) -> rand_pcg::Pcg64Mcg {
        rand_pcg::Pcg64Mcg::seed_from_u64(seed)
    }

    #[derive(Deserialize)]
    struct T {
        x: Dist,
    }

    fn parse(s: &str) -> Result<Dist, String> {
        toml::from_str::<T>(s)
            .map(|t| t.x)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn number_duration_and_table_forms() {
        assert_eq!(parse("x = 3.5").unwrap(), Dist::fixed(3.5));
        assert_eq!(parse("x = \"2h\"").unwrap(), Dist::fixed(7200.0));
        let d = parse("x = { dist = \"exponential\", mean = \"1h\", upper = 10000 }").unwrap();
        assert_eq!(d.kind, Kind::Exponential { mean: Num(3600.0) });
        assert_eq!(d.max, Some(10000.0));
        let e = parse("x = { dist = \"gamma\", k = 1 }").unwrap_err();
        assert!(e.contains("gamma"), "{e}");
        let e = parse("x = { dist = \"normal\", mean = 1 }").unwrap_err();
        assert!(e.contains("sd"), "{e}");
    }

    #[test]
    fn samples_have_the_right_means() {
        let mut r = stream(3);
        for d in [
            parse("x = { dist = \"uniform\", min = 1, max = 3 }").unwrap(),
            parse("x = { dist = \"exponential\", mean = 5 }").unwrap(),
            parse("x = { dist = \"weibull\", scale = 2, shape = 1.5 }").unwrap(),
            parse("x = { dist = \"pareto\", scale = 1, shape = 3 }").unwrap(),
            parse("x = { dist = \"lognormal\", mu = 0, sigma = 0.5 }").unwrap(),
            parse("x = { dist = \"normal\", mean = 4, sd = 1 }").unwrap(),
            parse("x = { dist = \"choice\", values = [1, 2, 8], weights = [1, 2, 1] }").unwrap(),
        ] {
            let n = 200_000;
            let m: f64 = (0..n).map(|_| d.sample(&mut r)).sum::<f64>() / n as f64;
            assert!((m - d.mean()).abs() < 0.02 * d.mean(), "{d:?}: {m}");
        }
    }

    #[test]
    fn clamping_and_problems() {
        let d = parse("x = { dist = \"normal\", mean = 0, sd = 1, lower = 0.5 }").unwrap();
        let mut r = stream(1);
        assert!((0..1000).all(|_| d.sample(&mut r) >= 0.5));
        let p = parse("x = { dist = \"uniform\", min = 3, max = 1 }")
            .unwrap()
            .problem();
        assert_eq!(p, Some(DistProblem::Uniform));
        assert_eq!(String::from(p.unwrap()), "uniform needs finite min <= max");
        let p = parse("x = { dist = \"normal\", mean = 0, sd = 1, lower = 2, upper = 1 }")
            .unwrap()
            .problem();
        assert_eq!(p, Some(DistProblem::Bounds));
    }

    #[test]
    fn choice_draws_each_value_by_its_weight() {
        let d =
            parse("x = { dist = \"choice\", values = [\"1h\", 4, 16], weights = [0.25, 0, 0.75] }")
                .unwrap();
        assert_eq!(d.problem(), None);
        assert_eq!(d.mean(), 0.25 * 3600.0 + 0.75 * 16.0);
        let mut r = stream(9);
        let n = 100_000;
        let draws: Vec<f64> = (0..n).map(|_| d.sample(&mut r)).collect();
        assert!(
            draws.iter().all(|x| *x == 3600.0 || *x == 16.0),
            "never the weight-0 value"
        );
        let ones = draws.iter().filter(|x| **x == 3600.0).count() as f64 / n as f64;
        assert!((ones - 0.25).abs() < 0.01, "{ones}");
        // Echoed as written.
        let t = toml::Value::try_from(d).unwrap().to_string();
        assert!(t.contains("values = [3600.0, 4.0, 16.0]"), "{t}");
        for bad in [
            "x = { dist = \"choice\", values = [1, 2], weights = [1] }",
            "x = { dist = \"choice\", values = [], weights = [] }",
            "x = { dist = \"choice\", values = [1], weights = [-1] }",
            "x = { dist = \"choice\", values = [1, 2], weights = [0, 0] }",
        ] {
            assert_eq!(
                parse(bad).unwrap().problem(),
                Some(DistProblem::Choice),
                "{bad}"
            );
        }
        let many = format!(
            "x = {{ dist = \"choice\", values = [{}], weights = [1] }}",
            vec!["1"; 17].join(", ")
        );
        let e = parse(&many).unwrap_err();
        assert!(e.contains("at most 16"), "{e}");
    }

    #[test]
    fn positive_draws() {
        let pos = |s: &str| parse(s).unwrap().always_positive();
        assert!(pos("x = 2"));
        assert!(!pos("x = 0"));
        assert!(pos("x = { dist = \"lognormal\", mu = 0, sigma = 0.3 }"));
        assert!(!pos("x = { dist = \"normal\", mean = 1, sd = 0.2 }"));
        assert!(pos(
            "x = { dist = \"normal\", mean = 1, sd = 0.2, lower = 0.1 }"
        ));
        assert!(!pos("x = { dist = \"uniform\", min = 0, max = 2 }"));
        assert!(!pos("x = { dist = \"exponential\", mean = 1, upper = 0 }"));
    }

    #[test]
    fn parameters_take_fractional_durations() {
        // The SETI@home on-period fit: Weibull of scale 2.964 h.
        let d = parse("x = { dist = \"weibull\", shape = 0.393, scale = \"2.964h\" }").unwrap();
        assert_eq!(
            d.kind,
            Kind::Weibull {
                scale: Num(2.964 * 3600.0),
                shape: 0.393
            }
        );
        assert!(parse("x = { dist = \"exponential\", mean = \"1.5x\" }").is_err());
    }

    #[test]
    fn lognormal_scale_gives_a_unit() {
        // The SETI@home off-period fit: lognormal of the length in hours.
        let d = parse("x = { dist = \"lognormal\", mu = -0.586, sigma = 2.844, scale = \"1h\" }")
            .unwrap();
        assert_eq!(
            d.kind,
            Kind::Lognormal {
                mu: -0.586,
                sigma: 2.844,
                scale: Num(3600.0)
            }
        );
        // Mean: 3600 · exp(−0.586 + 2.844²/2) = 3600 · exp(3.458168) s.
        assert!((d.mean() - 3600.0 * 3.458168f64.exp()).abs() < 1e-6);
        assert!((d.mean() - 114_331.5).abs() < 0.1, "{}", d.mean());
        // Median: 3600 · exp(−0.586) = 2003.58 s; the sample median is close.
        let mut r = stream(9);
        let mut xs: Vec<f64> = (0..100_001).map(|_| d.sample(&mut r)).collect();
        xs.sort_by(f64::total_cmp);
        let median = xs[50_000];
        assert!((median / 2003.58 - 1.0).abs() < 0.05, "{median}");
        // The same stream without a scale gives the draws divided by 3600, exactly.
        let u = parse("x = { dist = \"lognormal\", mu = -0.586, sigma = 2.844 }").unwrap();
        let (mut a, mut b) = (stream(4), stream(4));
        for _ in 0..100 {
            assert_eq!(d.sample(&mut a), 3600.0 * u.sample(&mut b));
        }
        // A scale of 1 is left out of the echo; another scale is written.
        let t = toml::Table::try_from(u.kind).unwrap();
        assert!(!t.contains_key("scale"));
        let t = toml::Table::try_from(d.kind).unwrap();
        assert_eq!(t["scale"].as_float(), Some(3600.0));
        let p = parse("x = { dist = \"lognormal\", mu = 0, sigma = 1, scale = 0 }")
            .unwrap()
            .problem();
        assert_eq!(p, Some(DistProblem::Lognormal));
    }
}
