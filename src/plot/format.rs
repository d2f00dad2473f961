//! Numbers as a person reads them: axis ticks, legend values, the summary table.
//!
//! Charts and report share these so a figure reads the same everywhere: thousands
//! grouped (`12,345`), large tick values shortened (`120k`, `3.5M`), durations in
//! the unit that suits them (`45 s`, `12.5 h`, `7 d`), fractions as percentages.
//! Everything is deterministic (no locale), so two renderings are byte-identical.

/// Axis tick label on an axis whose largest value is `axis_max`: up to three
/// decimals, trailing zeros dropped, and, on axes reaching 10,000 or more, one k/M/G
/// suffix for the whole axis (`5k`, `10k`, not `5000`, `10k`) so labels stay short
/// and alike.
pub(crate) fn tick(v: f64, axis_max: f64) -> String {
    if !v.is_finite() {
        return String::new();
    }
    let m = axis_max.abs();
    let (div, suffix) = if m >= 1e10 {
        (1e9, "G")
    } else if m >= 1e7 {
        (1e6, "M")
    } else if m >= 1e4 {
        (1e3, "k")
    } else {
        (1.0, "")
    };
    let t = trim(v / div, 3);
    if t == "0" { t } else { format!("{t}{suffix}") }
}

/// `v` with at most `decimals` decimals, trailing zeros (and a trailing `.`) removed,
/// and no `-0`.
pub fn trim(v: f64, decimals: usize) -> String {
    let s = format!("{v:.decimals$}");
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    };
    if s == "-0" { "0".to_string() } else { s }
}

/// Groups the digits of an integer part by thousands: `1234567` → `1,234,567`.
fn group(digits: &str) -> String {
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A number with thousands grouped and a precision that suits its size: whole
/// numbers exactly, others with three significant digits below 1000 and one decimal
/// above (`0.0123`, `12.3`, `12,345.6`).
pub fn number(v: f64) -> String {
    if !v.is_finite() {
        return if v.is_nan() {
            "–".into()
        } else {
            format!("{v}")
        };
    }
    let decimals = if v.fract() == 0.0 || v.abs() >= 1e15 {
        0
    } else if v.abs() >= 1000.0 {
        1
    } else if v.abs() >= 1.0 {
        // Three significant digits: 1.23, 12.3, 123.
        (2 - v.abs().log10().floor() as i32).max(0) as usize
    } else {
        // 0.0123 → 4 decimals; at most 6 so tiny values stay readable.
        ((2 - v.abs().log10().floor() as i32).max(0) as usize).min(6)
    };
    let s = trim(v, decimals);
    let (sign, rest) = match s.strip_prefix('-') {
        Some(r) => ("-", r),
        None => ("", s.as_str()),
    };
    let (int, frac) = match rest.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (rest, None),
    };
    match frac {
        Some(f) => format!("{sign}{}.{f}", group(int)),
        None => format!("{sign}{}", group(int)),
    }
}

/// A duration in seconds in the unit that suits it, to three significant digits:
/// `45 s`, `12.5 min`, `10.2 h`, `7 d`, `50,942.7 d`.
pub fn duration(s: f64) -> String {
    let a = s.abs();
    if !s.is_finite() {
        return number(s);
    }
    if a < 120.0 {
        format!("{} s", number(s))
    } else if a < 2.0 * 3600.0 {
        format!("{} min", number(s / 60.0))
    } else if a < 48.0 * 3600.0 {
        format!("{} h", number(s / 3600.0))
    } else {
        format!("{} d", number(s / crate::engine::time::SECONDS_PER_DAY))
    }
}

/// A round duration (a bin width) in its largest whole unit: `1 h`, `30 min`,
/// `2 d`, `45 s`; else as [`duration`].
pub(crate) fn round_duration(s: f64) -> String {
    for (unit, name) in [(86400.0, "d"), (3600.0, "h"), (60.0, "min"), (1.0, "s")] {
        if s >= unit && (s / unit).fract() == 0.0 {
            return format!("{} {name}", s / unit);
        }
    }
    duration(s)
}

/// Hours with a precision that suits them: `0.25 h`, `12.3 h`, `168 h`.
pub fn hours(s: f64) -> String {
    let h = s / 3600.0;
    let d = if h.abs() >= 100.0 {
        0
    } else if h.abs() >= 10.0 {
        1
    } else {
        2
    };
    format!("{} h", trim(h, d))
}

/// A fraction as a percentage: `0.0123` → `1.23 %`.
pub(crate) fn percent(f: f64) -> String {
    if !f.is_finite() {
        return number(f);
    }
    let p = f * 100.0;
    let d = if p == 0.0 || p.abs() >= 10.0 { 1 } else { 2 };
    format!("{} %", trim(p, d))
}

/// The SI prefix to show values up to `max` with: (divisor, prefix). Picks the
/// largest prefix that keeps `max` at or above 1 (`(1e15, "P")` for 3.2e16).
pub(crate) fn si_scale(max: f64) -> (f64, &'static str) {
    const PREFIXES: [(f64, &str); 7] = [
        (1e21, "Z"),
        (1e18, "E"),
        (1e15, "P"),
        (1e12, "T"),
        (1e9, "G"),
        (1e6, "M"),
        (1e3, "k"),
    ];
    PREFIXES
        .iter()
        .find(|(d, _)| max.abs() >= *d)
        .copied()
        .unwrap_or((1.0, ""))
}

/// A summary-table cell, formatted by the unit suffix of its column name
/// (`docs/outputs.md` conventions): `_s` as a duration, `_frac` as a percentage,
/// `_flops` with an SI prefix, anything else as a grouped number. Text that is not a
/// number is returned as is; an empty field is shown as `–`.
pub(crate) fn cell(column: &str, raw: &str) -> String {
    let raw = raw.trim();
    if raw.is_empty() {
        return "–".into();
    }
    let Ok(v) = raw.parse::<f64>() else {
        return raw.to_string();
    };
    if column.ends_with("_s") {
        duration(v)
    } else if column.ends_with("_frac") {
        percent(v)
    } else if column.ends_with("_flops") {
        let (d, p) = si_scale(v);
        format!("{} {p}FLOP", trim(v / d, 2))
    } else if column.starts_with("bytes_") {
        let (d, p) = si_scale(v);
        format!("{} {p}B", trim(v / d, 2))
    } else {
        number(v)
    }
}

/// Escapes text for HTML element content and attribute values.
pub(crate) fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_short_and_alike_on_one_axis() {
        assert_eq!(tick(0.0, 1.0), "0");
        assert_eq!(tick(-0.0, 1.0), "0");
        assert_eq!(tick(0.25, 1.0), "0.25");
        assert_eq!(tick(1.0 / 3.0, 1.0), "0.333");
        assert_eq!(tick(5000.0, 6000.0), "5000");
        assert_eq!(tick(5000.0, 12_000.0), "5k");
        assert_eq!(tick(12_000.0, 12_000.0), "12k");
        assert_eq!(tick(0.0, 12_000.0), "0");
        assert_eq!(tick(2_500_000.0, 1e7), "2.5M");
        assert_eq!(tick(-3e10, 3e10), "-30G");
    }

    #[test]
    fn numbers_are_grouped_with_sensible_precision() {
        assert_eq!(number(0.0), "0");
        assert_eq!(number(1234567.0), "1,234,567");
        assert_eq!(number(-1234.5678), "-1,234.6");
        assert_eq!(number(12.3456), "12.3");
        assert_eq!(number(1.23456), "1.23");
        assert_eq!(number(0.012345), "0.0123");
        assert_eq!(number(100.0), "100");
        assert_eq!(number(f64::NAN), "–");
    }

    #[test]
    fn durations_pick_their_unit() {
        assert_eq!(duration(45.0), "45 s");
        assert_eq!(duration(750.0), "12.5 min");
        assert_eq!(duration(36_720.0), "10.2 h");
        assert_eq!(duration(604_800.0), "7 d");
        assert_eq!(duration(195_300.0), "2.26 d");
        assert_eq!(duration(4_401_446_200.0), "50,942.7 d");
        assert_eq!(hours(604_800.0), "168 h");
        assert_eq!(hours(900.0), "0.25 h");
        assert_eq!(round_duration(3600.0), "1 h");
        assert_eq!(round_duration(5400.0), "90 min");
        assert_eq!(round_duration(172800.0), "2 d");
        assert_eq!(round_duration(1799.0), "1799 s");
    }

    #[test]
    fn cells_follow_the_column_unit() {
        assert_eq!(cell("delay_bound_s", "604800"), "7 d");
        assert_eq!(cell("error_frac", "0.0123"), "1.23 %");
        assert_eq!(cell("error_frac", "0.5"), "50 %");
        assert_eq!(cell("flops_useful_flops", "3.2e16"), "32 PFLOP");
        assert_eq!(cell("results_reported", "353294"), "353,294");
        assert_eq!(cell("results_reported", "353294.0"), "353,294");
        assert_eq!(cell("project", "main"), "main");
        assert_eq!(cell("turnaround_p50_s", ""), "–");
    }

    #[test]
    fn html_is_escaped() {
        assert_eq!(
            html_escape(r#"<a href="x">Tom & Jerry's</a>"#),
            "&lt;a href=&quot;x&quot;&gt;Tom &amp; Jerry&#39;s&lt;/a&gt;"
        );
        assert_eq!(html_escape("plain"), "plain");
    }

    #[test]
    fn si_prefixes() {
        assert_eq!(si_scale(3.2e16), (1e15, "P"));
        assert_eq!(si_scale(999.0), (1.0, ""));
        assert_eq!(si_scale(1e3), (1e3, "k"));
    }
}
