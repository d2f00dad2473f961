//! Charts and an HTML report from a run folder (`docs/plots.md`).
//!
//! [`plot_run`] reads a finished run folder (or the temporary folder of a run still
//! being written, for `run --plot`), draws every chart as PNG and SVG into
//! `plots/`, and writes `report.html`, a self-contained page with the summary
//! table, every chart and the effective configuration.
//!
//! * [`data`] reads the CSV and JSON files; [`calc`] holds the arithmetic (rates,
//!   Lorenz/Gini, percentiles), testable apart from drawing.
//! * [`timeline`], [`server`], [`distribution`] and [`credit`] decide what each
//!   chart shows, as a [`figure::Figure`]; [`figure`] alone decides how charts look
//!   and renders them; [`font`] embeds the font, so no system font library is needed.
//! * [`report`] writes the page; [`format`] formats numbers for charts and page;
//!   [`summary_groups`] names and groups the figures of the page's summary table.
//! * [`overlay`] draws several runs on one chart for `boinc-sim compare`
//!   ([`write_overlays`]).
//! * [`sweep`] draws a parameter sweep's `sweep-summary.csv`: each metric against
//!   each parameter, and heatmaps over pairs of parameters ([`write_sweep_plots`]).
//!
//! Nothing is half-written: charts go into a temporary `plots.tmp-<pid>/` and the
//! page into `report.html.tmp-<pid>`; only when everything has been rendered do they
//! replace `plots/` and `report.html`. A failure leaves the folder as it was.
//! Rendering is deterministic: the same run folder gives byte-identical SVG files.

mod batches;
pub(crate) mod calc;
mod credit;
pub mod data;
mod distribution;
pub mod figure;
pub(crate) mod font;
pub mod format;
pub mod overlay;
mod report;
mod server;
pub(crate) mod summary_groups;
pub mod sweep;
mod timeline;

use crate::stats::outdir;
use crate::stats::outdir::remove_any;
use crate::stats::output::move_into_place;
use data::RunData;
use figure::Figure;
use std::fs;
use std::path::{Path, PathBuf};
pub(crate) use sweep::write_sweep_plots;

/// The charts' folder inside a run folder.
pub(crate) const PLOTS_DIR: &str = "plots";
/// The report page inside a run folder.
pub(crate) const REPORT_HTML: &str = "report.html";

/// Why plotting failed.
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    /// The run folder is missing, is not a run folder, or holds a malformed file.
    #[error("{0}")]
    BadInput(String),
    /// Rendering or writing failed.
    #[error("{0}")]
    Failed(String),
    /// A chart could not be drawn or written.
    #[error("chart {chart}: {cause}")]
    Draw {
        chart: String,
        cause: figure::DrawError,
    },
    /// The embedded font is broken.
    #[error("{0}")]
    Font(#[from] font::FontError),
}

impl PlotError {
    /// The CLI's exit code: 2 for bad input, 1 for a failure.
    pub fn exit_code(&self) -> u8 {
        match self {
            PlotError::BadInput(_) => 2,
            PlotError::Failed(_) | PlotError::Draw { .. } | PlotError::Font(_) => 1,
        }
    }
}

/// One chart written: its name (file stem in `plots/`), title, caption, SVG text,
/// and where its files are once in place.
#[derive(Clone, Debug, Default)]
pub struct Chart {
    pub name: String,
    pub title: String,
    pub caption: String,
    pub svg: String,
    pub png_path: PathBuf,
    pub svg_path: PathBuf,
}

/// A file-name-safe version of a project name: letters, digits, `-` and `_` kept,
/// anything else `_`.
fn file_safe(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Every chart of a run: the ones over all projects, then per-project ones, named
/// `<chart>` with one project and `<chart>_<project>` with several.
pub fn figures(d: &RunData) -> Vec<Figure> {
    let mut out = vec![timeline::throughput(d)];
    let several = d.projects.len() > 1;
    let mut used: Vec<String> = Vec::new();
    let mut name = |base: &str, project: &str| {
        let mut n = if several {
            format!("{base}_{}", file_safe(project))
        } else {
            base.to_string()
        };
        // Two names that differ only in unsafe characters must not share a file.
        while used.contains(&n) {
            n.push('_');
        }
        used.push(n.clone());
        n
    };
    let projects: Vec<&str> = d.projects.iter().map(String::as_str).collect();
    type PerProject = fn(&RunData, &str, &str) -> Figure;
    let per_project: [(&str, PerProject); 2] = [
        ("workunits_by_state", timeline::workunits_by_state),
        ("results_by_state", timeline::results_by_state),
    ];
    for (base, f) in per_project {
        for p in &projects {
            out.push(f(d, p, &name(base, p)));
        }
    }
    out.push(timeline::deadlines(d));
    out.push(timeline::science_error(d));
    for p in &projects {
        out.push(distribution::turnaround(d, p, &name("turnaround", p)));
    }
    for p in &projects {
        out.push(distribution::slack(d, p, &name("slack", p)));
    }
    out.push(credit::credit_per_host(d));
    out.push(credit::credit_neutrality(d));
    out.push(timeline::client_rpcs(d));
    out.push(timeline::flops(d));
    for p in &projects {
        out.push(timeline::server_backlog(d, p, &name("server_backlog", p)));
    }
    // Only a run with files has a network (spec client §8): other runs keep their
    // charts and report as they were.
    if d.has_metric("bytes_down") {
        out.push(timeline::network(d));
    }
    // Only a run with a web server or daemon outages has the server's load (spec
    // backend §2.4.0): other runs keep their charts and report as they were.
    if server::DRAWN_WITH.iter().any(|m| d.has_metric(m)) {
        out.push(server::server(d));
    }
    // Only a run with batches has the batch chart (spec backend §1.5).
    if !d.batch_progress.is_empty() {
        out.push(batches::batches(d));
    }
    out
}

/// The temporary chart folder and page; removed on drop unless moved into place.
struct Staging {
    plots: PathBuf,
    report: PathBuf,
    armed: bool,
}

impl Drop for Staging {
    fn drop(&mut self) {
        if self.armed {
            outdir::discard_temp(&self.plots);
            let _ = remove_any(&self.report);
        }
    }
}

fn draw_failed(fig: &Figure, cause: figure::DrawError) -> PlotError {
    PlotError::Draw {
        chart: fig.name.clone(),
        cause,
    }
}

fn failed(what: &str, path: &Path, e: impl std::fmt::Display) -> PlotError {
    PlotError::Failed(format!("cannot {what} {}: {e}", path.display()))
}

/// Checks that `run_dir/plots/` may be replaced: it is missing, boinc-sim wrote it
/// (its marker, [`outdir::is_ours`]), or it holds nothing but charts (`.png`,
/// `.svg`, as run folders from before the marker do); otherwise only `force` lets it
/// go. The refusal is bad input (exit 2) and names the folder.
pub(crate) fn check_plots_dir(run_dir: &Path, force: bool) -> Result<(), PlotError> {
    let plots = run_dir.join(PLOTS_DIR);
    if fs::symlink_metadata(&plots).is_err() || outdir::may_replace(&plots) {
        return Ok(());
    }
    let only_charts = fs::read_dir(&plots).is_ok_and(|entries| {
        entries.filter_map(|e| e.ok()).all(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            e.file_type().is_ok_and(|t| t.is_file())
                && (name.ends_with(".png") || name.ends_with(".svg"))
        })
    });
    if only_charts || force {
        return outdir::allow(&plots).map_err(|e| failed("inspect", &plots, e));
    }
    Err(PlotError::BadInput(format!(
        "{} holds files that boinc-sim did not write (not only .png and .svg charts), or is not a folder; it is left as it is. Move them away, or add --force to replace it",
        plots.display()
    )))
}

/// Draws every chart of the run folder `run_dir` into `run_dir/plots/` (PNG and SVG)
/// and writes `run_dir/report.html`. Returns the charts, in report order.
pub(crate) fn plot_run(run_dir: &Path) -> Result<Vec<Chart>, PlotError> {
    plot_unfinished_run(run_dir, None)
}

/// [`plot_run`] for a run folder still being written (`run --plot`), whose
/// `summary.json` is only written when the folder is finished: `summary` stands in
/// for it, so the report is the same as `plot` would make of the finished folder.
pub(crate) fn plot_unfinished_run(
    run_dir: &Path,
    summary: Option<&serde_json::Value>,
) -> Result<Vec<Chart>, PlotError> {
    font::load()?;
    let mut d = RunData::load(run_dir)?;
    if d.summary_json.is_none() {
        // Through text, as if read from the file: serde_json's parser may round a
        // float's last digit differently from the value in memory.
        d.summary_json =
            summary.and_then(|s| serde_json::from_str(&serde_json::to_string(s).ok()?).ok());
    }
    let final_plots = run_dir.join(PLOTS_DIR);
    check_plots_dir(run_dir, false)?;
    let pid = std::process::id();
    let stage = Staging {
        plots: outdir::create_temp(&final_plots)
            .map_err(|e| failed("create the temporary folder of", &final_plots, e))?,
        report: run_dir.join(format!("{REPORT_HTML}.tmp-{pid}")),
        armed: true,
    };
    let mut charts = Vec::new();
    for fig in figures(&d) {
        let svg = fig.to_svg().map_err(|cause| draw_failed(&fig, cause))?;
        let svg_file = stage.plots.join(format!("{}.svg", fig.name));
        fs::write(&svg_file, &svg).map_err(|e| failed("write", &svg_file, e))?;
        let png_file = stage.plots.join(format!("{}.png", fig.name));
        fig.write_png(&png_file)
            .map_err(|cause| draw_failed(&fig, cause))?;
        charts.push(Chart {
            svg_path: final_plots.join(format!("{}.svg", fig.name)),
            png_path: final_plots.join(format!("{}.png", fig.name)),
            name: fig.name,
            title: fig.title,
            caption: fig.caption,
            svg,
        });
    }
    let page = report::html(&d, &charts);
    fs::write(&stage.report, page).map_err(|e| failed("write", &stage.report, e))?;

    // Everything is rendered: move it into place, the previous plots/ aside first
    // (the run folder's own mechanism), then the page.
    move_into_place(&stage.plots, &final_plots)
        .map_err(|e| failed("move into place", &final_plots, e))?;
    let final_report = run_dir.join(REPORT_HTML);
    fs::rename(&stage.report, &final_report)
        .map_err(|e| failed("move into place", &final_report, e))?;
    let mut stage = stage;
    stage.armed = false;
    Ok(charts)
}

/// Writes the charts that overlay `runs` (label, folder), one set per project
/// they all share (suffixed `_<project>` when there are several), as PNG and SVG
/// into `dir`. Returns the chart names, in order.
pub(crate) fn write_overlays(
    runs: &[(String, PathBuf)],
    projects: &[String],
    dir: &Path,
) -> Result<Vec<String>, PlotError> {
    font::load()?;
    let data = runs
        .iter()
        .map(|(label, path)| Ok((label.clone(), RunData::load(path)?)))
        .collect::<Result<Vec<_>, PlotError>>()?;
    let overlay = overlay::Overlay::new(&data);
    let mut names = Vec::new();
    for p in projects {
        let suffix = if projects.len() > 1 {
            format!("_{}", file_safe(p))
        } else {
            String::new()
        };
        for fig in overlay.figures(p, &suffix) {
            write_figure(&fig, dir)?;
            names.push(fig.name);
        }
    }
    Ok(names)
}

/// Draws the credit chart of a folder holding `credit_versions.csv` (a replay's,
/// `boinc-sim credit`) into that folder, as `<name>.svg` and `<name>.png`.
pub(crate) fn write_credit_chart(dir: &Path) -> Result<(), PlotError> {
    font::load()?;
    let mut d = RunData {
        dir: dir.to_path_buf(),
        ..RunData::default()
    };
    d.read_credit_versions()?;
    write_figure(&credit::credit_neutrality(&d), dir)
}

/// Writes `fig` as `<name>.svg` and `<name>.png` into `dir`.
fn write_figure(fig: &Figure, dir: &Path) -> Result<(), PlotError> {
    let svg = fig.to_svg().map_err(|cause| draw_failed(fig, cause))?;
    let svg_file = dir.join(format!("{}.svg", fig.name));
    fs::write(&svg_file, &svg).map_err(|e| failed("write", &svg_file, e))?;
    fig.write_png(&dir.join(format!("{}.png", fig.name)))
        .map_err(|cause| draw_failed(fig, cause))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_are_safe_and_distinct() {
        assert_eq!(file_safe("a b/c.d-e_f"), "a_b_c_d-e_f");
        let d = RunData {
            projects: vec!["a b".into(), "a_b".into()],
            ..RunData::default()
        };
        let names: Vec<String> = figures(&d).into_iter().map(|f| f.name).collect();
        assert!(names.contains(&"turnaround_a_b".to_string()));
        assert!(names.contains(&"turnaround_a_b_".to_string()));
        let mut unique = names.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "{names:?}");
    }

    #[test]
    fn an_empty_run_folder_still_gets_every_chart_with_no_data_notes() {
        let tmp = tempfile::tempdir().unwrap();
        fs::write(
            tmp.path().join(data::TIMESERIES_CSV),
            "time_s,project,metric,value\n",
        )
        .unwrap();
        let charts = plot_run(tmp.path()).unwrap();
        assert_eq!(
            charts.len(),
            7,
            "no project: only the charts over all projects"
        );
        for c in &charts {
            assert!(c.svg_path.is_file() && c.png_path.is_file(), "{}", c.name);
            assert!(c.svg.contains("no data"), "{}", c.name);
        }
        let page = fs::read_to_string(tmp.path().join(REPORT_HTML)).unwrap();
        assert!(page.contains("data-charts-expected=\"7\""));
        // No temporary leftovers.
        let mut entries: Vec<String> = fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        entries.sort();
        assert_eq!(entries, [PLOTS_DIR, REPORT_HTML, data::TIMESERIES_CSV]);
    }

    #[test]
    fn a_failed_plot_leaves_the_previous_plots_and_report() {
        let tmp = tempfile::tempdir().unwrap();
        fs::create_dir(tmp.path().join(PLOTS_DIR)).unwrap();
        fs::write(tmp.path().join(PLOTS_DIR).join("old.svg"), "old").unwrap();
        fs::write(tmp.path().join(REPORT_HTML), "old report").unwrap();
        fs::write(
            tmp.path().join(data::TIMESERIES_CSV),
            "time_s,project,metric,value\n0,p,results_reported,oops\n",
        )
        .unwrap();
        let e = plot_run(tmp.path()).unwrap_err();
        assert_eq!(e.exit_code(), 2, "{e}");
        assert_eq!(
            fs::read_to_string(tmp.path().join(REPORT_HTML)).unwrap(),
            "old report"
        );
        assert!(tmp.path().join(PLOTS_DIR).join("old.svg").is_file());
        assert_eq!(fs::read_dir(tmp.path()).unwrap().count(), 3);
    }
}
