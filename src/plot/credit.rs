//! How evenly credit is spread over the hosts: Lorenz curves from `hosts.csv`, with
//! the Gini coefficient of each in the legend.

use super::calc;
use super::data::{CreditVersionRow, RunData};
use super::figure::{Figure, GREY, INK, Layer, Panel, color};
use super::format;
use super::timeline::project_label;

/// Points per curve at most (hosts.csv may have 100,000 rows).
const MAX_POINTS: usize = 600;

/// Each host's credit summed over the projects it is attached to (`None` for a host
/// attached to none).
pub(crate) fn total_per_host(d: &RunData) -> Vec<f64> {
    let mut total = vec![0.0; d.hosts];
    for credits in d.host_credit.values() {
        for (t, c) in total.iter_mut().zip(credits) {
            *t += c.unwrap_or(0.0);
        }
    }
    total
}

fn curve(label: &str, values: &[f64], color: plotters::style::RGBColor) -> Option<Layer> {
    let g = crate::stats::headline::gini(values)?;
    Some(Layer::Line {
        label: format!(
            "{label}: Gini {} ({} hosts)",
            format::trim(g, 3),
            format::number(values.len() as f64)
        ),
        color,
        points: calc::lorenz(values, MAX_POINTS),
        dashed: false,
        markers: false,
    })
}

/// Lorenz curves of credit per host: all projects together, and each project over
/// its attached hosts when there are several.
pub fn credit_per_host(d: &RunData) -> Figure {
    let mut p = Panel::new(
        "",
        "fraction of hosts, from the least credited up",
        "fraction of all credit they earned",
    );
    p.x_range = Some((0.0, 1.0));
    p.y_range = Some((0.0, 1.02));
    p.no_data = if d.host_credit.is_empty() {
        "no data: hosts.csv is missing or has no `<project>_credit` column".into()
    } else {
        "no data: no credit was granted to any host".into()
    };
    let total = total_per_host(d);
    let mut curves = Vec::new();
    if d.host_credit.len() > 1 {
        curves.extend(curve("all projects", &total, INK));
        for (i, project) in d.projects.iter().enumerate() {
            if let Some(c) = d.host_credit.get(project) {
                let attached: Vec<f64> = c.iter().flatten().copied().collect();
                curves.extend(curve(&project_label(project), &attached, color(i)));
            }
        }
    } else if let Some((project, _)) = d.host_credit.iter().next() {
        let i = d.projects.iter().position(|p| p == project).unwrap_or(0);
        curves.extend(curve(&project_label(project), &total, color(i)));
    }
    if !curves.is_empty() {
        p.layers.push(Layer::Line {
            label: "perfect equality (Gini 0)".into(),
            color: GREY,
            points: vec![(0.0, 0.0), (1.0, 1.0)],
            dashed: true,
            markers: false,
        });
        p.layers.extend(curves);
    }
    Figure::new(
        "credit_per_host",
        "Credit per host: how evenly credit is spread (Lorenz curve)",
        "Hosts sorted from the least to the most credited; a point (x, y) says the least \
         credited fraction x of the hosts earned the fraction y of all credit. The dashed \
         diagonal is perfect equality; the further a curve sags below it, the more credit is \
         concentrated on few hosts. The Gini coefficient (legend) is twice the area between \
         diagonal and curve: 0 when every host earned the same, near 1 when one host earned \
         everything. Hosts differ in speed, CPUs, arrival and lifetime, so some inequality is \
         expected. From hosts.csv `<project>_credit` (summed over projects for \"all \
         projects\"; a project's own curve covers its attached hosts).",
        vec![p],
    )
}

/// File stem of the credit chart, in a run's `plots/` and a replay's folder.
pub(crate) const CHART: &str = "credit_neutrality";

/// A series key of `credit_versions.csv`: project, app, version, device.
type VersionKey = (String, String, String, String);
/// A line of the chart: its label and its points (days, value).
type Series = (String, Vec<(f64, f64)>);

/// Credit per GFLOP of real work per app version over time, and the device
/// neutrality ratio of each app (highest / lowest credit per GFLOP across its
/// versions, 1 = neutral), from `credit_versions.csv`.
pub fn credit_neutrality(d: &RunData) -> Figure {
    let days = |t: i64| t as f64 / crate::engine::time::SECONDS_PER_DAY;
    let several = d
        .credit_versions
        .first()
        .is_some_and(|f| d.credit_versions.iter().any(|r| r.project != f.project));
    let label = |r: &CreditVersionRow, what: &str| {
        let p = if several {
            format!("{}: ", project_label(&r.project))
        } else {
            String::new()
        };
        format!("{p}app {}{what}", r.app_id)
    };
    let mut per_version: std::collections::BTreeMap<VersionKey, Series> = Default::default();
    let mut per_app: std::collections::BTreeMap<(String, String), Series> = Default::default();
    for r in &d.credit_versions {
        let key = (
            r.project.clone(),
            r.app_id.clone(),
            r.app_version_id.clone(),
            r.device.clone(),
        );
        let what = format!(" version {} ({})", r.app_version_id, r.device);
        let e = per_version
            .entry(key)
            .or_insert_with(|| (label(r, &what), Vec::new()));
        if let Some(v) = r.credit_per_gflop {
            e.1.push((days(r.time_s), v));
        }
        let e = per_app
            .entry((r.project.clone(), r.app_id.clone()))
            .or_insert_with(|| (label(r, ""), Vec::new()));
        if let Some(v) = r.neutrality_ratio
            && e.1.last().is_none_or(|l| l.0 != days(r.time_s))
        {
            e.1.push((days(r.time_s), v));
        }
    }
    let mut top = Panel::new(
        "credit per GFLOP of real work, per app version",
        "simulated time (days)",
        "credit per GFLOP",
    );
    top.no_data = "no data: no credit was granted (credit_versions.csv missing or empty)".into();
    for (i, (_, (label, points))) in per_version.into_iter().enumerate() {
        top.layers.push(Layer::Line {
            label,
            color: color(i),
            points,
            dashed: false,
            markers: true,
        });
    }
    let mut bottom = Panel::new(
        "device neutrality: highest / lowest credit per GFLOP across an app's versions",
        "simulated time (days)",
        "ratio (1 = neutral)",
    );
    bottom.no_data = "no data: no app had two app versions with credit in the same bucket".into();
    let apps: Vec<_> = per_app
        .into_values()
        .filter(|(_, p)| !p.is_empty())
        .collect();
    if !apps.is_empty() {
        let x_end = apps
            .iter()
            .flat_map(|(_, p)| p.iter().map(|q| q.0))
            .fold(0.0, f64::max);
        bottom.layers.push(Layer::Line {
            label: "neutral (1)".into(),
            color: GREY,
            points: vec![(0.0, 1.0), (x_end, 1.0)],
            dashed: true,
            markers: false,
        });
    }
    for (i, (label, points)) in apps.into_iter().enumerate() {
        bottom.layers.push(Layer::Line {
            label,
            color: if i == 0 { INK } else { color(i) },
            points,
            dashed: false,
            markers: true,
        });
    }
    Figure::new(
        CHART,
        "Credit per FLOP across app versions, and device neutrality (credit_new)",
        "Top: credit granted per GFLOP of real work (the jobs' true size), per app version, \
         in each time bucket of credit_versions.csv, plotted at the bucket's start. credit_new \
         is meant to give every version of an app the same credit per FLOP; a version whose \
         FLOPS estimate is wrong starts off and is pulled in by its pfc_scale once it has \
         more than 100 validated samples. Bottom: per app, the highest over the lowest of \
         its versions' credit per GFLOP in the bucket (1 = device neutral; only buckets \
         where at least two versions were granted credit).",
        vec![top, bottom],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn totals_add_projects_and_ignore_unattached() {
        let d = RunData {
            hosts: 3,
            host_credit: [
                ("a".to_string(), vec![Some(1.0), None, Some(2.0)]),
                ("b".to_string(), vec![None, Some(5.0), Some(3.0)]),
            ]
            .into_iter()
            .collect(),
            projects: vec!["a".into(), "b".into()],
            ..RunData::default()
        };
        assert_eq!(total_per_host(&d), [1.0, 5.0, 5.0]);
        let f = credit_per_host(&d);
        let labels: Vec<String> = f.panels[0]
            .layers
            .iter()
            .filter_map(|l| match l {
                Layer::Line { label, .. } => Some(label.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(labels.len(), 4, "{labels:?}");
        assert!(
            labels[1].starts_with("all projects: Gini 0.242 (3 hosts)"),
            "{labels:?}"
        );
        assert!(
            labels[2].starts_with("project a: Gini 0.167 (2 hosts)"),
            "{labels:?}"
        );
    }
}
