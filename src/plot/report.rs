//! `report.html`: one self-contained page per run folder, for a project designer to
//! read in a browser or attach to a mail: what was run (scenario, seed, hash,
//! version), the summary table, every chart with a caption saying how to read it,
//! and the effective configuration.
//!
//! Self-contained means no network and no other file: the charts are inline `<svg>`,
//! the style sheet is inline, and so is a small script that checks, once the page
//! has loaded, that every chart has a non-empty rendered box, and records the count
//! (`data-charts-rendered` beside the static `data-charts-expected` on `<body>`) and
//! any script error (`data-errors`). The browser test (`tests/integration/report_chromium.rs`)
//! reads those attributes from headless Chromium.

use super::Chart;
use super::data::RunData;
use super::format::{self, html_escape as esc};
use super::summary_groups;
use serde_json::Value;
use std::fmt::Write;

const STYLE: &str = r#"
body { font-family: "DejaVu Sans", Verdana, Arial, sans-serif; margin: 0 auto; max-width: 1440px;
       padding: 0 24px 48px; color: #1e1e1e; line-height: 1.45; }
header { border-bottom: 2px solid #1f77b4; margin-bottom: 12px; }
h1 { font-size: 1.7em; margin: 20px 0 4px; }
h2 { font-size: 1.3em; margin-top: 32px; border-bottom: 1px solid #ccc; }
.meta { color: #444; margin: 4px 0 12px; }
.meta span { margin-right: 18px; white-space: nowrap; }
code { background: #f2f2f2; padding: 0 3px; border-radius: 3px; }
nav ol { columns: 3; column-gap: 32px; font-size: 0.95em; list-style-position: inside; padding-left: 0; }
nav li { break-inside: avoid; margin-bottom: 2px; }
table.summary { border-collapse: collapse; font-size: 0.92em; }
table.summary th, table.summary td { border: 1px solid #ddd; padding: 3px 10px; }
table.summary td { text-align: right; font-variant-numeric: tabular-nums; }
table.summary th[scope=row] { text-align: left; font-weight: normal; font-family: monospace; }
table.summary tr:nth-child(even) { background: #f7f9fc; }
table.summary tr.group th { text-align: left; font-family: inherit; font-weight: bold; background: #e8eef7; }
table.summary th .unit { color: #666; }
table.summary th .window { color: #666; font-weight: normal; }
figure.chart { margin: 24px 0; padding: 8px; border: 1px solid #e3e3e3; border-radius: 4px; }
figure.chart svg { display: block; max-width: 100%; height: auto; margin: 0 auto; }
figcaption { max-width: 1000px; margin: 8px auto 0; }
figcaption .files { color: #666; font-size: 0.9em; }
pre.config { background: #f7f7f7; border: 1px solid #ddd; padding: 12px; overflow: auto;
             max-height: 640px; font-size: 0.88em; }
.note { color: #666; }
"#;

/// Records script errors on `<body>` (or `<html>` before the body exists).
const ONERROR: &str = r#"
window.reportErrors = [];
window.onerror = function (msg, src, line) {
  window.reportErrors.push(String(msg) + " (line " + line + ")");
  var el = document.body || document.documentElement;
  el.setAttribute("data-errors", String(window.reportErrors.length));
  el.setAttribute("data-error-messages", window.reportErrors.join("; "));
};
"#;

/// Counts the charts that rendered with a non-empty box once the page has loaded.
const CHECK: &str = r#"
window.addEventListener("load", function () {
  var rendered = 0;
  document.querySelectorAll("figure.chart svg").forEach(function (svg) {
    var box = svg.getBoundingClientRect();
    var bb = svg.getBBox();
    if (box.width > 0 && box.height > 0 && bb.width > 0 && bb.height > 0 &&
        svg.querySelector("text") !== null) {
      rendered += 1;
    }
  });
  document.body.setAttribute("data-charts-rendered", String(rendered));
  document.body.setAttribute("data-errors", String(window.reportErrors.length));
});
"#;

/// Removes `null` values (unset options), which TOML cannot write.
fn without_nulls(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.clone(), without_nulls(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(
            a.iter()
                .filter(|v| !v.is_null())
                .map(without_nulls)
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The effective configuration as TOML (like `boinc-sim check` prints it), or as JSON
/// if it cannot be written as TOML.
fn config_text(config: &Value) -> (String, &'static str) {
    match toml::to_string_pretty(&without_nulls(config)) {
        Ok(t) => (t, "TOML"),
        Err(_) => (
            serde_json::to_string_pretty(config).unwrap_or_default(),
            "JSON",
        ),
    }
}

/// The summary table as shown: project names (columns), then per metric its name
/// and raw cells, and where it came from.
struct Table {
    projects: Vec<String>,
    rows: Vec<(String, Vec<String>)>,
    source: &'static str,
}

/// `summary.csv` turned on its side: its rows become columns.
fn table_from_csv(s: &super::data::SummaryTable) -> Table {
    let ip = s.columns.iter().position(|c| c == "project");
    let projects = s
        .rows
        .iter()
        .enumerate()
        .map(|(i, r)| match ip {
            Some(ip) => r.get(ip).cloned().unwrap_or_default(),
            None => format!("row {}", i + 1),
        })
        .collect();
    let rows = s
        .columns
        .iter()
        .enumerate()
        .filter(|(i, _)| Some(*i) != ip)
        .map(|(i, c)| {
            let cells = s
                .rows
                .iter()
                .map(|r| r.get(i).cloned().unwrap_or_default())
                .collect();
            (c.clone(), cells)
        })
        .collect();
    Table {
        projects,
        rows,
        source: "summary.csv",
    }
}

/// `summary.json` `projects.<name>`, its scalar leaves as rows (`a.b` for nested keys).
fn table_from_json(projects: &serde_json::Map<String, Value>) -> Table {
    let mut keys: Vec<String> = Vec::new();
    let flat: Vec<Vec<(String, String)>> = projects
        .values()
        .map(|v| {
            let mut cells = Vec::new();
            flatten("", v, &mut cells);
            for (k, _) in &cells {
                if !keys.contains(k) {
                    keys.push(k.clone());
                }
            }
            cells
        })
        .collect();
    let rows = keys
        .into_iter()
        .map(|k| {
            let cells = flat
                .iter()
                .map(|c| {
                    c.iter()
                        .find(|(key, _)| *key == k)
                        .map(|(_, v)| v.clone())
                        .unwrap_or_default()
                })
                .collect();
            (k, cells)
        })
        .collect();
    Table {
        projects: projects.keys().cloned().collect(),
        rows,
        source: "summary.json (this run folder has no summary.csv)",
    }
}

/// Appends a column per app of each project with several (`project/app`) from
/// `summary_apps.csv`, its cells matched to the table's rows by figure name (empty
/// for the figures that exist only per project).
fn add_app_columns(table: &mut Table, apps: &super::data::SummaryTable) {
    let col = |name: &str| apps.columns.iter().position(|c| c == name);
    let (Some(ip), Some(ia)) = (col("project"), col("app")) else {
        return;
    };
    let cell = |r: &Vec<String>, i: usize| r.get(i).cloned().unwrap_or_default();
    let projects: Vec<String> = apps.rows.iter().map(|r| cell(r, ip)).collect();
    let names: Vec<&str> = projects.iter().map(String::as_str).collect();
    let shown = crate::stats::apps::shown_beside_projects(&names);
    for (r, _) in apps.rows.iter().zip(shown).filter(|(_, s)| *s) {
        (table.projects).push(crate::stats::apps::label(&cell(r, ip), &cell(r, ia)));
        for (name, cells) in &mut table.rows {
            cells.push(col(name).map(|i| cell(r, i)).unwrap_or_default());
        }
    }
}

/// The summary table: one column per project, one row per metric, from summary.csv
/// in file order, else from summary.json's per-project figures; then a column per
/// app of each project with several.
fn summary_table(d: &RunData, out: &mut String) {
    let table = if let Some(s) = &d.summary {
        let mut t = table_from_csv(s);
        if let Some(apps) = &d.summary_apps {
            add_app_columns(&mut t, apps);
        }
        t
    } else if let Some(Value::Object(ps)) = d.summary_json.as_ref().and_then(|s| s.get("projects"))
    {
        table_from_json(ps)
    } else {
        out.push_str(
            "<p class=\"note\">No summary: the run folder has neither summary.csv nor summary.json.</p>\n",
        );
        return;
    };
    let Table {
        projects,
        rows,
        source,
    } = table;
    let _ = writeln!(
        out,
        "<p class=\"note\">From {}; one column per project (and per app of a project with \
         several, from summary_apps.csv), figures grouped by what they measure, each with \
         its unit (definitions: docs/outputs.md). Hover a name for its column, a cell for \
         the exact value.</p>",
        esc(source)
    );
    out.push_str(
        "<table class=\"summary\" id=\"summary-table\">\n<thead><tr><th scope=\"col\">figure</th>",
    );
    for p in &projects {
        let _ = write!(out, "<th scope=\"col\">{}</th>", esc(p));
    }
    out.push_str("</tr></thead>\n");
    for (group, rows) in summary_groups::group(rows) {
        let _ = writeln!(
            out,
            "<tbody><tr class=\"group\"><th scope=\"rowgroup\" colspan=\"{}\">{}</th></tr>",
            projects.len() + 1,
            esc(group)
        );
        for (name, cells) in rows {
            // Every figure's label names the window it covers (docs/outputs.md).
            let window = summary_groups::window(&name).words();
            match summary_groups::describe(&name).1 {
                Some((readable, unit)) if !unit.is_empty() => {
                    let _ = write!(
                        out,
                        "<tr><th scope=\"row\" title=\"{}\">{} <span class=\"window\">· {}</span> <span class=\"unit\">({})</span></th>",
                        esc(&name),
                        esc(readable),
                        window,
                        esc(unit)
                    );
                }
                Some((readable, _)) => {
                    let _ = write!(
                        out,
                        "<tr><th scope=\"row\" title=\"{}\">{} <span class=\"window\">· {}</span></th>",
                        esc(&name),
                        esc(readable),
                        window
                    );
                }
                // A figure of summary.json this table does not know: its
                // name only (docs/outputs.md gives its window).
                None => {
                    let _ = write!(out, "<tr><th scope=\"row\">{}</th>", esc(&name));
                }
            }
            for raw in cells {
                let _ = write!(
                    out,
                    "<td title=\"{}\">{}</td>",
                    esc(&raw),
                    esc(&format::cell(&name, &raw))
                );
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</tbody>\n");
    }
    out.push_str("</table>\n");
}

/// Text between backticks as `<code>` (captions name CSV columns that way).
fn code_spans(escaped: &str) -> String {
    let mut out = String::with_capacity(escaped.len() + 32);
    for (i, part) in escaped.split('`').enumerate() {
        if i % 2 == 1 {
            let _ = write!(out, "<code>{part}</code>");
        } else {
            out.push_str(part);
        }
    }
    out
}

/// Scalar leaves of a JSON object as (`a.b`, text).
fn flatten(prefix: &str, v: &Value, out: &mut Vec<(String, String)>) {
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&key, v, out);
            }
        }
        Value::String(s) => out.push((prefix.into(), s.clone())),
        Value::Null => out.push((prefix.into(), String::new())),
        other => out.push((prefix.into(), other.to_string())),
    }
}

/// The report page.
pub fn html(d: &RunData, charts: &[Chart]) -> String {
    let mut o = String::with_capacity(charts.iter().map(|c| c.svg.len()).sum::<usize>() + 65_536);
    let title = format!("boinc-sim report: {}", d.scenario);
    let _ = write!(
        o,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>{STYLE}</style>\n<script>{ONERROR}</script>\n</head>\n\
         <body data-charts-expected=\"{}\">\n<header>\n<h1>{}</h1>\n<p class=\"meta\">",
        esc(&title),
        charts.len(),
        esc(&title)
    );
    let mut meta = |label: &str, value: Option<String>| {
        if let Some(v) = value.filter(|v| !v.is_empty()) {
            let _ = write!(o, "<span>{label}: <code>{}</code></span> ", esc(&v));
        }
    };
    meta("scenario", Some(d.scenario.clone()));
    meta("file", d.manifest_str("scenario_file"));
    meta("seed", d.manifest_str("seed"));
    meta("scenario hash", d.manifest_str("scenario_hash"));
    meta(
        "simulated",
        (d.duration_s > 0).then(|| format::duration(d.duration_s as f64)),
    );
    meta(
        "hosts",
        (d.hosts > 0).then(|| format::number(d.hosts as f64)),
    );
    meta(
        "boinc-sim",
        d.manifest_str("crate_version").map(|v| format!("v{v}")),
    );
    if let Some(Value::Array(sets)) = d.manifest.as_ref().and_then(|m| m.get("overrides"))
        && !sets.is_empty()
    {
        let list: Vec<String> = sets
            .iter()
            .map(|s| format!("--set {}", s.as_str().unwrap_or_default()))
            .collect();
        meta("overrides", Some(list.join(" ")));
    }
    o.push_str("</p>\n</header>\n");

    o.push_str("<nav><ol>\n<li><a href=\"#summary\">Summary table</a></li>\n");
    for c in charts {
        let _ = writeln!(
            o,
            "<li><a href=\"#chart-{}\">{}</a></li>",
            esc(&c.name),
            esc(&c.title)
        );
    }
    o.push_str("<li><a href=\"#config\">Effective configuration</a></li>\n</ol></nav>\n");

    o.push_str("<section id=\"summary\">\n<h2>Summary</h2>\n");
    summary_table(d, &mut o);
    o.push_str("</section>\n");

    o.push_str("<section id=\"charts\">\n<h2>Charts</h2>\n");
    if !d.missing_files.is_empty() {
        let _ = writeln!(
            o,
            "<p class=\"note\">Not in this run folder: {} (charts that need them say \"no data\").</p>",
            esc(&d.missing_files.join(", "))
        );
    }
    for c in charts {
        let _ = write!(
            o,
            "<figure class=\"chart\" id=\"chart-{name}\">\n{svg}\n<figcaption><strong>{title}.</strong> \
             {caption} <span class=\"files\">Files: <code>plots/{name}.png</code>, \
             <code>plots/{name}.svg</code>.</span></figcaption>\n</figure>\n",
            name = esc(&c.name),
            svg = c.svg.trim_end(),
            title = esc(&c.title),
            caption = code_spans(&esc(&c.caption)),
        );
    }
    o.push_str("</section>\n");

    o.push_str("<section id=\"config\">\n<h2>Effective configuration</h2>\n");
    match d.effective_config() {
        Some(cfg) => {
            let (text, lang) = config_text(cfg);
            let _ = write!(
                o,
                "<p class=\"note\">The scenario with every default filled in, as {lang} \
                 (manifest.json <code>effective_config</code>; unset options are left out). \
                 Run it again with <code>boinc-sim run</code> on the same scenario file and seed.</p>\n\
                 <pre class=\"config\">{}</pre>\n",
                esc(&text)
            );
        }
        None => o.push_str("<p class=\"note\">No manifest.json in this run folder.</p>\n"),
    }
    o.push_str("</section>\n");
    let _ = write!(
        o,
        "<footer class=\"note\"><p>Written by <code>boinc-sim plot</code> {}. \
         Chart files are in <code>plots/</code> beside this page.</p></footer>\n\
         <script>{CHECK}</script>\n</body>\n</html>\n",
        esc(env!("CARGO_PKG_VERSION"))
    );
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plot::data::SummaryTable;

    fn data() -> RunData {
        RunData {
            scenario: "a <b> & c".into(),
            summary: Some(SummaryTable {
                columns: vec![
                    "project".into(),
                    "results_reported".into(),
                    "error_frac".into(),
                ],
                rows: vec![vec!["p<1>".into(), "1234".into(), "0.05".into()]],
            }),
            manifest: Some(serde_json::json!({
                "seed": 7,
                "scenario_hash": "00ff",
                "crate_version": "0.1.0",
                "effective_config": {"simulation": {"name": "</pre><script>", "seed": 7, "x": null}},
            })),
            ..RunData::default()
        }
    }

    #[test]
    fn page_escapes_text_and_holds_table_and_config() {
        let chart = Chart {
            name: "c".into(),
            title: "T & t".into(),
            caption: "read `this`".into(),
            svg: "<svg width=\"10\" height=\"10\"><text>x</text></svg>\n".into(),
            ..Chart::default()
        };
        let h = html(&data(), &[chart]);
        assert!(h.contains("<h1>boinc-sim report: a &lt;b&gt; &amp; c</h1>"));
        assert!(h.contains("data-charts-expected=\"1\""));
        assert!(h.contains("<th scope=\"col\">p&lt;1&gt;</th>"));
        assert!(h.contains("<td title=\"1234\">1,234</td>"));
        // Grouped, with readable names and units; the raw column in the tooltip.
        let throughput = h.find("<th scope=\"rowgroup\" colspan=\"2\">Throughput</th>");
        let waste = h.find("<th scope=\"rowgroup\" colspan=\"2\">Waste</th>");
        assert!(
            throughput.is_some() && waste.is_some() && throughput < waste,
            "{h}"
        );
        // Each label names the window its figure covers (docs/outputs.md).
        assert!(h.contains(
            "<th scope=\"row\" title=\"error_frac\">Client errors: share of results \
             <span class=\"window\">· measured window</span> <span class=\"unit\">(%)</span></th>"
        ));
        assert!(h.contains(
            "<th scope=\"row\" title=\"results_reported\">Results reported \
             <span class=\"window\">· whole run</span></th>"
        ));
        assert!(h.contains("<td title=\"0.05\">5 %</td>"));
        assert!(h.contains("seed: <code>7</code>"));
        assert!(
            h.contains("name = &quot;&lt;/pre&gt;&lt;script&gt;&quot;"),
            "{h}"
        );
        assert!(!h.contains("</pre><script>"));
        assert!(h.contains("<strong>T &amp; t.</strong> read <code>this</code>"));
        assert!(h.contains("<svg width=\"10\" height=\"10\"><text>x</text></svg>\n<figcaption>"));
        // Nothing fetched from elsewhere.
        assert!(!h.contains("src=\"http") && !h.contains("href=\"http"));
    }

    /// Every row label of the summary table names a window, and the one
    /// docs/outputs.md gives for its column.
    #[test]
    fn every_summary_label_names_its_window() {
        use crate::stats::{batches::BATCH_COLUMNS, headline};
        let columns: Vec<String> = std::iter::once("project")
            .chain(headline::COLUMNS)
            .chain(headline::TRANSFER_COLUMNS)
            .chain(BATCH_COLUMNS)
            .map(String::from)
            .collect();
        let mut row = vec!["p".to_string()];
        row.resize(columns.len(), "1".into());
        let d = RunData {
            summary: Some(SummaryTable {
                columns: columns.clone(),
                rows: vec![row],
            }),
            ..RunData::default()
        };
        let h = html(&d, &[]);
        for c in &columns[1..] {
            let start = h
                .find(&format!("<th scope=\"row\" title=\"{c}\">"))
                .unwrap_or_else(|| panic!("no row for {c}"));
            let label = &h[start..start + h[start..].find("</th>").unwrap()];
            let words = summary_groups::window(c).words();
            assert!(label.contains(&format!("· {words}</span>")), "{c}: {label}");
        }
    }

    #[test]
    fn apps_of_a_project_with_several_get_their_own_columns() {
        let mut d = data();
        d.summary_apps = Some(SummaryTable {
            columns: vec![
                "project".into(),
                "app_id".into(),
                "app".into(),
                "results_reported".into(),
            ],
            rows: vec![
                vec!["p<1>".into(), "1".into(), "sim".into(), "1000".into()],
                vec!["p<1>".into(), "2".into(), "search".into(), "234".into()],
                vec!["q".into(), "1".into(), "app".into(), "7".into()],
            ],
        });
        let h = html(&d, &[]);
        assert!(h.contains(
            "<th scope=\"col\">p&lt;1&gt;/sim</th><th scope=\"col\">p&lt;1&gt;/search</th></tr>"
        ));
        // A one-app project's app repeats its project: no column.
        assert!(!h.contains("q/app"));
        // Figures only a project has are empty in the app columns.
        assert!(h.contains("<td title=\"1000\">"));
        assert!(
            h.contains("<td title=\"0.05\">5 %</td><td title=\"\">–</td><td title=\"\">–</td>")
        );
    }

    #[test]
    fn summary_json_is_the_fallback() {
        let mut d = data();
        d.summary = None;
        d.summary_json = Some(serde_json::json!({
            "projects": {"p": {"workunits": 3, "results_by_outcome": {"success": 2}}}
        }));
        let h = html(&d, &[]);
        assert!(h.contains("summary.json (this run folder has no summary.csv)"));
        assert!(
            h.contains("<th scope=\"row\">results_by_outcome.success</th><td title=\"2\">2</td>")
        );
    }
}
