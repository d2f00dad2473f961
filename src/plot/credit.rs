//! How evenly credit is spread over the hosts: Lorenz curves from `hosts.csv`, with
//! the Gini coefficient of each in the legend.

use super::calc;
use super::data::RunData;
use super::figure::{Figure, GREY, INK, Layer, Panel, color};
use super::format;
use super::timeline::project_label;

/// Points per curve at most (hosts.csv may have 100,000 rows).
const MAX_POINTS: usize = 600;

/// Each host's credit summed over the projects it is attached to (`None` for a host
/// attached to none).
pub fn total_per_host(d: &RunData) -> Vec<f64> {
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
