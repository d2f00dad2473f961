//! The `batches` chart: how fast each batch a scientist submitted got done
//! (docs/plots.md, "`batches`"), from `batch_progress.csv`.

use super::data::RunData;
use super::figure::{Figure, Layer, Panel, color, viridis};

/// The share of each batch's jobs assimilated as valid work against the time since
/// its submission: one line per batch. The body of a batch is the steep part, its
/// tail the long flat end that waits for the last jobs.
pub fn batches(d: &RunData) -> Figure {
    let longest = (d.batch_progress.values())
        .filter_map(|v| v.last().map(|p| p.0))
        .fold(0.0, f64::max);
    // Days when some batch took more than two days to finish or to the end.
    let (per, unit) = if longest > 48.0 {
        (24.0, "days")
    } else {
        (1.0, "hours")
    };
    let mut p = Panel::new(
        "The batch: share of its jobs valid",
        &format!("{unit} since the batch was submitted"),
        "% of the batch's jobs valid",
    );
    p.y_range = Some((0.0, 105.0));
    p.no_data = "no data: no batch_progress.csv (the run submitted no batch)".into();
    let several = d.projects.len() > 1;
    let n = d.batch_progress.len();
    for (k, ((project, batch), points)) in d.batch_progress.iter().enumerate() {
        let pi = d.projects.iter().position(|x| x == project).unwrap_or(0);
        // One colour per project with several; else from dark (first batch) to
        // light (last), so a drift from batch to batch shows.
        let c = if several {
            color(pi)
        } else {
            viridis(0.85 * k as f64 / (n.max(2) - 1) as f64)
        };
        let label = if several {
            format!("{project} batch {batch}")
        } else if n <= 12 || k == 0 || k + 1 == n {
            format!("batch {batch}")
        } else {
            String::new()
        };
        p.layers.push(Layer::Line {
            label,
            color: c,
            points: points.iter().map(|&(h, f)| (h / per, 100.0 * f)).collect(),
            dashed: false,
            markers: false,
        });
    }
    // The tail, zoomed: what is still missing, from 10 % down.
    let mut tail = Panel::new(
        "The tail: share of its jobs still missing (zoomed to 10 %)",
        &p.x_label,
        "% of the batch's jobs not yet valid",
    );
    tail.y_range = Some((0.0, 10.0));
    tail.no_data = p.no_data.clone();
    for l in &p.layers {
        if let Layer::Line { color, points, .. } = l {
            tail.layers.push(Layer::Line {
                label: String::new(),
                color: *color,
                points: points
                    .iter()
                    .map(|&(x, y)| (x, (100.0 - y).min(10.0)))
                    .collect(),
                dashed: false,
                markers: false,
            });
        }
    }
    Figure::new(
        "batches",
        "Batches: the share of each batch's jobs done, from its submission",
        "One line per batch: the percentage of its jobs (workunits) assimilated with a \
         valid canonical result, against the time since the batch was submitted. The steep \
         part is the batch's body; the flat end is its tail, the wait for the last jobs \
         (often a lost job waiting for its deadline to pass and a new copy to come back). \
         A line that stops below 100 % had jobs still missing when the run ended, or jobs \
         that ended in error. Colours run from dark (first batch) to light (last). The lower \
         panel shows the same lines as the share still missing, cut at 10 %, so the tail \
         is readable. From \
         batch_progress.csv; the times to 50, 90, 99 and 100 % are in batches.csv.",
        vec![p, tail],
    )
}
