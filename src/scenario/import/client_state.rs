//! One BOINC client's state: `client_state.xml` and `global_prefs.xml`, the inputs
//! of BOINC's client emulator (`client/sim.cpp`), read into plain structs
//! (docs/population.md, "A project's own hosts").
//!
//! The formats are the client's: `CLIENT_STATE::parse_state_file_aux`
//! (`client/cs_statefile.cpp`) reads `<host_info>` (`HOST_INFO::parse`,
//! `lib/hostinfo.cpp`), `<time_stats>` (`TIME_STATS::parse`,
//! `client/time_stats.cpp`), and `<project>` elements, each followed by its
//! `<app>`, `<app_version>`, `<workunit>` and `<result>` elements
//! (`client/client_types.cpp`, `client/result.cpp`); an `<active_task_set>` says how
//! far the running tasks got. `GLOBAL_PREFS::parse` (`lib/prefs.cpp`) reads the
//! preferences; only the top level is read, not a `<venue>`.

use super::{Fields, ImportError};
use crate::server::resource::ProcType;
use std::path::Path;

/// The host of a client state (`<host_info>`).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct HostInfo {
    pub p_ncpus: u32,
    pub p_fpops: f64,
    pub p_iops: f64,
    pub m_nbytes: f64,
    pub d_free: f64,
    pub timezone: i32,
    pub os_name: String,
    pub p_vendor: String,
    pub p_model: String,
    /// GPUs: type, count, peak FLOPS of one.
    pub coprocs: Vec<(ProcType, u32, f64)>,
}

/// `<time_stats>`: the client's long-run fractions and when it last updated them.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct TimeStats {
    pub on_frac: f64,
    pub connected_frac: f64,
    pub active_frac: f64,
    /// Unix time of the state's last update: the run's time 0.
    pub last_update: f64,
}

/// An `<app_version>` of a project on this client.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct AppVersion {
    pub app_name: String,
    pub version_num: i32,
    pub plan_class: String,
    pub avg_ncpus: f64,
    /// The client's estimate of the version's speed, FLOPS.
    pub flops: f64,
    /// A GPU the version uses: type and instances.
    pub gpu: Option<(ProcType, f64)>,
}

/// A `<workunit>`.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Workunit {
    pub name: String,
    pub app_name: String,
    pub rsc_fpops_est: f64,
    pub rsc_fpops_bound: f64,
}

/// A `<result>` still to be computed (client state below `FILES_UPLOADED`, not ready
/// to report).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct QueuedResult {
    pub name: String,
    pub wu_name: String,
    /// Unix time.
    pub report_deadline: f64,
    /// When the client received it (Unix time), if the file says.
    pub received_time: Option<f64>,
    /// From the `<active_task>` of the result: its last checkpoint (0 if none).
    pub fraction_done: f64,
    /// The line of the result in the file, for messages.
    pub line: u32,
}

/// A `<project>` with its apps, workunits and queued results.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ClientProject {
    pub master_url: String,
    pub project_name: String,
    pub resource_share: f64,
    /// Recent estimated credit (`<rec>`), if the client kept one.
    pub rec: Option<f64>,
    /// Unix time before which the client makes no RPC (0: none).
    pub min_rpc_time: f64,
    pub nrpc_failures: u32,
    pub app_versions: Vec<AppVersion>,
    pub workunits: Vec<Workunit>,
    pub results: Vec<QueuedResult>,
}

impl ClientProject {
    /// The app of workunit `wu_name` ("" if the state does not list it).
    pub fn app_of(&self, wu_name: &str) -> &str {
        (self.workunits.iter())
            .find(|w| w.name == wu_name)
            .map_or("", |w| w.app_name.as_str())
    }
}

/// `global_prefs.xml`: the preferences the simulation uses, each where given.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Prefs {
    pub work_buf_min_days: Option<f64>,
    pub work_buf_additional_days: Option<f64>,
    pub max_ncpus_pct: Option<f64>,
    pub cpu_scheduling_period_minutes: Option<f64>,
}

/// One client's state, read.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ClientImport {
    pub host: HostInfo,
    pub time_stats: TimeStats,
    pub projects: Vec<ClientProject>,
    pub prefs: Prefs,
}

/// Reads `client_state.xml` at `state` and, if given, `global_prefs.xml` at
/// `prefs` (gzipped or not).
pub fn read(state: &Path, prefs: Option<&Path>) -> Result<ClientImport, ImportError> {
    let text = super::read_text(state)?;
    let mut c = parse_state(&text, &state.display().to_string())?;
    if let Some(p) = prefs {
        let text = super::read_text(p)?;
        c.prefs = parse_prefs(&text, &p.display().to_string())?;
    }
    Ok(c)
}

/// Parses the text of a `client_state.xml`.
pub fn parse_state(text: &str, file: &str) -> Result<ClientImport, ImportError> {
    let doc = super::parse_xml(file, text, 1)?;
    let root = doc.root_element();
    let docr = &doc;
    let at = move |node, what: &str| fields(file, docr, node, what);
    let top = at(root, "<client_state>");
    top.expect_tag("client_state", "a BOINC client's client_state.xml")?;
    let mut out = ClientImport::default();
    let hi = top
        .child("host_info")
        .ok_or_else(|| top.missing("host_info"))?;
    out.host = host_info(&at(hi, "<host_info>"))?;
    let ts = top
        .child("time_stats")
        .ok_or_else(|| top.missing("time_stats"))?;
    let f = at(ts, "<time_stats>");
    out.time_stats = TimeStats {
        on_frac: fraction(&f, "on_frac")?,
        connected_frac: fraction(&f, "connected_frac")?,
        active_frac: fraction(&f, "active_frac")?,
        last_update: f.req_num("last_update")?,
    };
    // Apps, workunits and results belong to the project before them, as
    // `parse_state_file_aux` reads them.
    let mut fractions: Vec<(String, f64)> = Vec::new();
    for node in root.children().filter(|n| n.is_element()) {
        let name = node.tag_name().name();
        let current = out.projects.last_mut();
        match (name, current) {
            ("project", _) => out.projects.push(project(&at(node, "a <project>"))?),
            ("app_version", Some(p)) => p
                .app_versions
                .push(app_version(&at(node, "an <app_version>"))?),
            ("workunit", Some(p)) => p.workunits.push(workunit(&at(node, "a <workunit>"))?),
            ("result", Some(p)) => {
                if let Some(r) = result(&at(node, "a <result>"))? {
                    p.results.push(r);
                }
            }
            ("app_version" | "workunit" | "result", None) => {
                let f = at(node, &format!("<{name}>"));
                let (l, c) = f.pos(node);
                return Err(ImportError::at(
                    file,
                    l,
                    c,
                    format!(
                        "<{name}> before any <project>; expected it after the <project> it belongs to"
                    ),
                ));
            }
            ("active_task_set", _) => {
                for t in node.children().filter(|n| n.has_tag_name("active_task")) {
                    let f = at(t, "an <active_task>");
                    let (_, r) = f
                        .text("result_name")
                        .ok_or_else(|| f.missing("result_name"))?;
                    let done = match f.num("checkpoint_fraction_done")? {
                        Some(x) => x,
                        None => f.num("fraction_done")?.unwrap_or(0.0),
                    };
                    fractions.push((r.to_owned(), done.clamp(0.0, 0.999_999)));
                }
            }
            _ => {}
        }
    }
    for p in &mut out.projects {
        for r in &mut p.results {
            if let Some((_, x)) = fractions.iter().find(|(n, _)| *n == r.name) {
                r.fraction_done = *x;
            }
        }
    }
    Ok(out)
}

/// A located view of `node` of `doc`.
fn fields<'a, 'i>(
    file: &'a str,
    doc: &'a roxmltree::Document<'i>,
    node: roxmltree::Node<'a, 'i>,
    what: &str,
) -> Fields<'a, 'i> {
    Fields {
        file,
        doc,
        node,
        line0: 1,
        what: what.to_owned(),
    }
}

/// A fraction in [0, 1]; a missing one is an error.
fn fraction(f: &Fields, name: &str) -> Result<f64, ImportError> {
    let x = f.req_num(name)?;
    if !(0.0..=1.0).contains(&x) {
        let (n, _) = f.text(name).expect("read above");
        return Err(f.err(n, name, format!("{x}; expected a fraction in [0, 1]")));
    }
    Ok(x)
}

fn text(f: &Fields, name: &str) -> String {
    f.text(name).map_or(String::new(), |(_, t)| t.to_owned())
}

/// `<host_info>`: the CPU count and speed are required, the rest defaults to 0 or
/// "" as in `HOST_INFO::clear_host_info`.
fn host_info(f: &Fields) -> Result<HostInfo, ImportError> {
    let n = f.req_num("p_ncpus")?;
    if !((1.0..=65_535.0).contains(&n) && n.fract() == 0.0) {
        let (node, _) = f.text("p_ncpus").expect("read above");
        return Err(f.err(
            node,
            "p_ncpus",
            format!("{n}; expected a whole number of CPUs >= 1"),
        ));
    }
    let p_fpops = f.req_num("p_fpops")?;
    if p_fpops <= 0.0 {
        let (node, _) = f.text("p_fpops").expect("read above");
        return Err(f.err(node, "p_fpops", format!("{p_fpops}; expected FLOPS > 0")));
    }
    let mut coprocs = Vec::new();
    if let Some(c) = f.child("coprocs") {
        for node in c.children().filter(|n| n.is_element()) {
            let tag = node.tag_name().name();
            let g = fields(f.file, f.doc, node, &format!("<{tag}>"));
            let kind = match tag {
                "coproc_cuda" => ProcType::Nvidia,
                "coproc_ati" => ProcType::Amd,
                "coproc_intel_gpu" => ProcType::Intel,
                _ => {
                    let (l, col) = g.pos(node);
                    return Err(ImportError::at(
                        f.file,
                        l,
                        col,
                        format!(
                            "field `coprocs`: unknown GPU type <{tag}>; expected <coproc_cuda>, <coproc_ati> or <coproc_intel_gpu>"
                        ),
                    ));
                }
            };
            let count = g.req_num("count")?;
            let peak = g.req_num("peak_flops")?;
            if !((0.0..=255.0).contains(&count) && count.fract() == 0.0) || peak <= 0.0 {
                let (n, _) = g.text("count").expect("read above");
                return Err(g.err(n, "count", format!("count {count}, peak_flops {peak}; expected a whole count from 0 to 255 and peak FLOPS > 0")));
            }
            if count > 0.0 {
                coprocs.push((kind, count as u32, peak));
            }
        }
    }
    Ok(HostInfo {
        p_ncpus: n as u32,
        p_fpops,
        p_iops: f.num_non_negative("p_iops")?.unwrap_or(0.0),
        m_nbytes: f.num_non_negative("m_nbytes")?.unwrap_or(0.0),
        d_free: f.num_non_negative("d_free")?.unwrap_or(0.0),
        timezone: f.num("timezone")?.unwrap_or(0.0) as i32,
        os_name: text(f, "os_name"),
        p_vendor: text(f, "p_vendor"),
        p_model: text(f, "p_model"),
        coprocs,
    })
}

fn project(f: &Fields) -> Result<ClientProject, ImportError> {
    let (_, url) = f
        .text("master_url")
        .ok_or_else(|| f.missing("master_url"))?;
    let share = f.num_non_negative("resource_share")?.unwrap_or(100.0);
    Ok(ClientProject {
        master_url: url.to_owned(),
        project_name: text(f, "project_name"),
        resource_share: share,
        rec: f.num_non_negative("rec")?,
        min_rpc_time: f.num_non_negative("min_rpc_time")?.unwrap_or(0.0),
        nrpc_failures: f.num_non_negative("nrpc_failures")?.unwrap_or(0.0) as u32,
        ..Default::default()
    })
}

fn app_version(f: &Fields) -> Result<AppVersion, ImportError> {
    let (_, app) = f.text("app_name").ok_or_else(|| f.missing("app_name"))?;
    let gpu = match f.child("coproc") {
        Some(node) => {
            let g = fields(f.file, f.doc, node, "a <coproc>");
            let (tn, t) = g.text("type").ok_or_else(|| g.missing("type"))?;
            let kind = match t {
                "NVIDIA" | "CUDA" => ProcType::Nvidia,
                "ATI" => ProcType::Amd,
                "intel_gpu" => ProcType::Intel,
                _ => {
                    return Err(g.err(
                        tn,
                        "type",
                        format!("unknown GPU type `{t}`; expected NVIDIA, ATI or intel_gpu"),
                    ));
                }
            };
            Some((kind, g.num_non_negative("count")?.unwrap_or(1.0)))
        }
        None => None,
    };
    Ok(AppVersion {
        app_name: app.to_owned(),
        version_num: f.num("version_num")?.unwrap_or(0.0) as i32,
        plan_class: text(f, "plan_class"),
        avg_ncpus: f.num_non_negative("avg_ncpus")?.unwrap_or(1.0),
        flops: f.num_non_negative("flops")?.unwrap_or(0.0),
        gpu,
    })
}

fn workunit(f: &Fields) -> Result<Workunit, ImportError> {
    let (_, name) = f.text("name").ok_or_else(|| f.missing("name"))?;
    Ok(Workunit {
        name: name.to_owned(),
        app_name: text(f, "app_name"),
        rsc_fpops_est: f
            .num_non_negative("rsc_fpops_est")?
            .ok_or_else(|| f.missing("rsc_fpops_est"))?,
        rsc_fpops_bound: f.num_non_negative("rsc_fpops_bound")?.unwrap_or(0.0),
    })
}

/// A queued result, or `None` for one already computed (state 3 or more, or ready
/// to report): it would only be reported, which the simulation starts without.
fn result(f: &Fields) -> Result<Option<QueuedResult>, ImportError> {
    let (_, name) = f.text("name").ok_or_else(|| f.missing("name"))?;
    let state = f.num("state")?.unwrap_or(2.0);
    if state >= 3.0 || f.child("ready_to_report").is_some() {
        return Ok(None);
    }
    Ok(Some(QueuedResult {
        name: name.to_owned(),
        wu_name: text(f, "wu_name"),
        report_deadline: f.req_num("report_deadline")?,
        received_time: f.num("received_time")?,
        fraction_done: 0.0,
        line: f.pos(f.node).0,
    }))
}

/// Parses the text of a `global_prefs.xml`.
pub fn parse_prefs(text: &str, file: &str) -> Result<Prefs, ImportError> {
    let doc = super::parse_xml(file, text, 1)?;
    let root = doc.root_element();
    let f = fields(file, &doc, root, "<global_preferences>");
    f.expect_tag("global_preferences", "a BOINC client's global_prefs.xml")?;
    let p = Prefs {
        work_buf_min_days: f.num_non_negative("work_buf_min_days")?,
        work_buf_additional_days: f.num_non_negative("work_buf_additional_days")?,
        max_ncpus_pct: f.num_non_negative("max_ncpus_pct")?,
        cpu_scheduling_period_minutes: f.num_non_negative("cpu_scheduling_period_minutes")?,
    };
    if let Some(x) = p.max_ncpus_pct
        && x > 100.0
    {
        let (n, _) = f.text("max_ncpus_pct").expect("read above");
        return Err(f.err(
            n,
            "max_ncpus_pct",
            format!("{x}; expected a percentage from 0 to 100"),
        ));
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    const STATE: &str = include_str!("../../../scenarios/hosts/client_state-sample.xml");
    const PREFS: &str = include_str!("../../../scenarios/hosts/global_prefs-sample.xml");

    #[test]
    fn the_sample_state_reads_exactly() {
        let c = parse_state(STATE, "cs.xml").unwrap();
        assert_eq!(c.host.p_ncpus, 8);
        assert_eq!(c.host.p_fpops, 4.5e9);
        assert_eq!(c.host.os_name, "Microsoft Windows");
        assert_eq!(c.host.coprocs, vec![(ProcType::Nvidia, 1, 1.2e13)]);
        assert_eq!(
            c.time_stats,
            TimeStats {
                on_frac: 0.8,
                connected_frac: 0.95,
                active_frac: 0.7,
                last_update: 1_700_000_000.0
            }
        );
        assert_eq!(c.projects.len(), 3);
        let a = &c.projects[0];
        assert_eq!(
            (a.project_name.as_str(), a.resource_share),
            ("alpha", 100.0)
        );
        assert_eq!(a.results.len(), 3);
        assert_eq!(a.results[0].report_deadline, 1_700_259_200.0);
        assert_eq!(a.results[0].fraction_done, 0.25);
        assert_eq!(a.app_of(&a.results[0].wu_name), "sim");
        let b = &c.projects[1];
        assert_eq!(b.resource_share, 50.0);
        assert_eq!(b.app_versions[0].flops, 3.9e9);
        assert_eq!(b.workunits[0].rsc_fpops_est, 3.6e13);
        assert_eq!(b.results.len(), 1, "the uploaded result is left out");
        assert_eq!(
            c.projects[2].app_versions[0].gpu,
            Some((ProcType::Nvidia, 1.0))
        );
    }

    #[test]
    fn the_sample_prefs_read_exactly() {
        let p = parse_prefs(PREFS, "gp.xml").unwrap();
        assert_eq!(
            p,
            Prefs {
                work_buf_min_days: Some(0.5),
                work_buf_additional_days: Some(1.0),
                max_ncpus_pct: Some(75.0),
                cpu_scheduling_period_minutes: Some(60.0),
            }
        );
    }

    #[test]
    fn refusals_name_line_and_field() {
        let m = parse_state(
            &STATE.replace("<p_fpops>4500000000.000000", "<p_fpops>fast"),
            "cs.xml",
        )
        .unwrap_err()
        .to_string();
        assert!(m.starts_with("cs.xml:5:"), "{m}");
        assert!(
            m.contains("field `p_fpops` of <host_info>: `fast` is not a number"),
            "{m}"
        );
        let m = parse_state(&STATE.replace("coproc_cuda>", "coproc_fpga>"), "cs.xml")
            .unwrap_err()
            .to_string();
        assert!(m.contains("unknown GPU type <coproc_fpga>"), "{m}");
        let m = parse_state(&STATE.replace("<on_frac>0.8", "<on_frac>1.8"), "cs.xml")
            .unwrap_err()
            .to_string();
        assert!(
            m.contains("field `on_frac` of <time_stats>: 1.8; expected a fraction in [0, 1]"),
            "{m}"
        );
        let m = parse_state("garbage", "cs.xml").unwrap_err().to_string();
        assert!(m.starts_with("cs.xml:1:1: not well-formed XML"), "{m}");
        let m = parse_prefs(
            "<global_preferences><max_ncpus_pct>150</max_ncpus_pct></global_preferences>",
            "gp.xml",
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            m,
            "gp.xml:1:21: field `max_ncpus_pct` of <global_preferences>: 150; expected a percentage from 0 to 100"
        );
    }
}
