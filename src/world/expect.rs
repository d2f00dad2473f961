//! Checking `[[expect]]` entries against the state of the run: how a scenario
//! states the exact states BOINC would be in (spec backend §4 worked examples) so
//! that a run verifies itself. The world runs the checks, since they read the
//! projects' databases and the hosts' client state.
//!
//! Each kind of row has one table of checks: a key of the entry, how to read the
//! same value from the row, and how the two compare. A verifier finds the row, then
//! runs its table; a key the entry does not give costs nothing. The schema lists the
//! keys and the kind of row each belongs to (`Expect::FIELDS`); a test here checks
//! that every key of a row has exactly one check in that row's tables.

use crate::client::availability::AvailSpec;
use crate::client::config::ClientConfig;
use crate::client::host::{
    ClientHost, ClientJob, ProjectState, TimeStats, TransferFlag, execution, run_for,
};
use crate::client::merit::IdleRun;
use crate::client::scripted::ScriptedHost;
use crate::engine::Time;
use crate::scenario::schema::Expect;
use crate::server::batch::BatchRow;
use crate::server::db::{HavRow, HostRow, ResultRow, WorkunitRow, result_name};
use crate::server::resource::CPU;
use crate::server::types::{ResultId, WuId};
use crate::server::web_server::WebServer;
use crate::server::{Project, lookup_result};

/// Relative tolerance of the server's float fields (credit, a batch's fraction done).
const CREDIT_EPS: f64 = 1e-6;

/// Absolute tolerance of the client's float fields when the entry gives none.
const DEFAULT_TOLERANCE: f64 = 1e-6;

/// How one key compares: the wanted value as the entry gives it, the same value read
/// from a view `V` of the row, and the rule. A mismatch reads `key = got, expected
/// want`.
enum Cmp<V> {
    /// Integers (BOINC codes, counts, times), exactly.
    Int(fn(&Expect) -> Option<i64>, fn(&V) -> i64),
    /// Server floats, within [`CREDIT_EPS`] relative to the wanted value.
    Credit(fn(&Expect) -> Option<f64>, fn(&V) -> f64),
    /// Client floats, within the entry's absolute `tolerance`; NaN never matches.
    Float(fn(&Expect) -> Option<f64>, fn(&V) -> f64),
    /// Flags, exactly.
    Flag(fn(&Expect) -> Option<bool>, fn(&V) -> bool),
    /// A name or shorthand, exactly, shown as is.
    Text(fn(&Expect) -> Option<&str>, fn(&V) -> String),
    /// A comma-separated list, exactly, shown quoted so that an empty one shows.
    Quoted(fn(&Expect) -> Option<&str>, fn(&V) -> String),
    /// A nested table (`reply`): whether it is given, and its own check, which
    /// pushes one message per mismatch.
    Nested(fn(&Expect) -> bool, fn(&Expect, &V, &mut Vec<String>)),
}

/// One row of a table: a key of `[[expect]]` and how it compares.
struct Check<V> {
    name: &'static str,
    cmp: Cmp<V>,
}

/// A table row for key `$field`, written once: `check!(Int field, |view| got)`.
macro_rules! check {
    (Text $field:ident, $got:expr) => {
        Check {
            name: stringify!($field),
            cmp: Cmp::Text(|x| x.$field.as_deref(), $got),
        }
    };
    (Quoted $field:ident, $got:expr) => {
        Check {
            name: stringify!($field),
            cmp: Cmp::Quoted(|x| x.$field.as_deref(), $got),
        }
    };
    ($cmp:ident $field:ident, $got:expr) => {
        Check {
            name: stringify!($field),
            cmp: Cmp::$cmp(|x| x.$field, $got),
        }
    };
}

impl<V> Check<V> {
    /// Whether the entry gives this key.
    fn given(&self, ex: &Expect) -> bool {
        match self.cmp {
            Cmp::Int(want, _) => want(ex).is_some(),
            Cmp::Credit(want, _) | Cmp::Float(want, _) => want(ex).is_some(),
            Cmp::Flag(want, _) => want(ex).is_some(),
            Cmp::Text(want, _) | Cmp::Quoted(want, _) => want(ex).is_some(),
            Cmp::Nested(given, _) => given(ex),
        }
    }

    /// Compares the key, if given, with `view`; pushes the mismatch. The row is
    /// read only for a key the entry gives.
    fn run(&self, ex: &Expect, view: &V, errs: &mut Vec<String>) {
        let what = self.name;
        let differs = |got: &dyn std::fmt::Display, w: &dyn std::fmt::Display| {
            format!("{what} = {got}, expected {w}")
        };
        let mismatch = match self.cmp {
            Cmp::Int(want, got) => want(ex)
                .map(|w| (w, got(view)))
                .and_then(|(w, g)| (w != g).then(|| differs(&g, &w))),
            Cmp::Credit(want, got) => want(ex).map(|w| (w, got(view))).and_then(|(w, g)| {
                ((w - g).abs() > CREDIT_EPS * w.abs().max(1.0)).then(|| differs(&g, &w))
            }),
            Cmp::Float(want, got) => want(ex).map(|w| (w, got(view))).and_then(|(w, g)| {
                let tol = ex.tolerance.unwrap_or(DEFAULT_TOLERANCE);
                ((w - g).abs() > tol || g.is_nan())
                    .then(|| format!("{what} = {g}, expected {w} (tolerance {tol})"))
            }),
            Cmp::Flag(want, got) => want(ex)
                .map(|w| (w, got(view)))
                .and_then(|(w, g)| (w != g).then(|| differs(&g, &w))),
            Cmp::Text(want, got) => want(ex)
                .map(|w| (w, got(view)))
                .and_then(|(w, g)| (w != g).then(|| differs(&g, &w))),
            Cmp::Quoted(want, got) => want(ex)
                .map(|w| (w, got(view)))
                .and_then(|(w, g)| (w != g).then(|| format!("{what} = \"{g}\", expected \"{w}\""))),
            Cmp::Nested(given, check) => {
                if given(ex) {
                    check(ex, view, errs);
                }
                None
            }
        };
        errs.extend(mismatch);
    }
}

/// Runs every check of `table` against `view`, in table order.
fn run_all<V>(table: &[Check<V>], ex: &Expect, view: &V, errs: &mut Vec<String>) {
    for c in table {
        c.run(ex, view, errs);
    }
}

/// Whether the entry gives any key of `table`.
fn any_given<V>(table: &[Check<V>], ex: &Expect) -> bool {
    table.iter().any(|c| c.given(ex))
}

/// A result row (spec backend §1.1), with what names its host.
struct ResultView<'a> {
    p: &'a Project,
    r: &'a ResultRow,
    named: &'a [ScriptedHost],
}

impl<'a> ResultView<'a> {
    const CHECKS: &'a [Check<Self>] = &[
        check!(Text state, |v| {
            let r = v.r;
            format!(
                "{}/{}/{}/{}",
                r.server_state.code(),
                r.outcome.code(),
                r.validate_state.code(),
                r.file_delete_state.code()
            )
        }),
        check!(Int server_state, |v| v.r.server_state.code()),
        check!(Int outcome, |v| v.r.outcome.code()),
        check!(Int validate_state, |v| v.r.validate_state.code()),
        check!(Int file_delete_state, |v| v.r.file_delete_state.code()),
        check!(Int sent_time, |v| v.r.sent_time.into()),
        check!(Int received_time, |v| v.r.received_time.into()),
        check!(Int report_deadline, |v| v.r.report_deadline),
        check!(Int priority, |v| v.r.priority as i64),
        check!(Credit granted_credit, |v| v.r.granted_credit),
        check!(Text hostid, |v| v.host_name()),
    ];

    /// The result's host as the scenario names it: a named host by its name, any
    /// other by its id.
    fn host_name(&self) -> String {
        let id = self.r.hostid;
        (self.named.iter())
            .find(|h| h.hostid == id && self.p.index == h.project as usize)
            .map_or(id.0.to_string(), |h| h.name.clone())
    }
}

/// A workunit row (spec backend §1.1).
struct WorkunitView<'a> {
    p: &'a Project,
    w: &'a WorkunitRow,
}

impl<'a> WorkunitView<'a> {
    const CHECKS: &'a [Check<Self>] = &[
        check!(Int need_validate, |v| v.w.need_validate as i64),
        check!(Int transition_time, |v| v.w.transition_time.into()),
        check!(Int error_mask, |v| v.w.error_mask as i64),
        check!(Int assimilate_state, |v| v.w.assimilate_state.code()),
        check!(Int file_delete_state, |v| v.w.file_delete_state.code()),
        check!(Int target_nresults, |v| v.w.target_nresults as i64),
        check!(Int min_quorum, |v| v.w.min_quorum as i64),
        check!(Int hr_class, |v| v.w.hr_class as i64),
        check!(Int nresults, |v| v.w.results.len() as i64),
        check!(Int assimilate_count, |v| v.w.assimilate_count as i64),
        check!(Text canonical, |v| v.canonical()),
    ];

    /// The canonical result's name, `none` before there is one, or its id once the
    /// row is purged.
    fn canonical(&self) -> String {
        let c = self.w.canonical_resultid;
        if c == ResultId(0) {
            return "none".to_string();
        }
        (self.p.db.results.get(c)).map_or(c.to_string(), |r| result_name(r.workunitid, r.suffix))
    }
}

/// A batch row (spec backend §1.5).
const BATCH_CHECKS: &[Check<BatchRow>] = &[
    check!(Int batch_state, |b| b.state.code()),
    check!(Int njobs, |b| b.njobs.into()),
    check!(Int njobs_success, |b| b.njobs_success.into()),
    check!(Int nerror_jobs, |b| b.nerror_jobs.into()),
    check!(Credit fraction_done, |b| b.fraction_done),
    check!(Int completion_time, |b| b.completion_time),
];

/// A project's web server (spec backend §2.4.0): its queue now and its counts
/// since t = 0.
const WEB_SERVER_CHECKS: &[Check<WebServer>] = &[
    check!(Int rpcs_waiting, |w| w.queue_length() as i64),
    check!(Int rpcs_in_service, |w| w.in_service() as i64),
    check!(Int rpcs_served, |w| w.counts().served as i64),
    check!(Int rpcs_refused, |w| w.counts().refused as i64),
    check!(Int rpcs_timed_out, |w| w.counts().timed_out as i64),
    check!(Int rpcs_replied, |w| w.counts().replied as i64),
    check!(Int rpcs_locked, |w| w.counts().locked as i64),
];

/// A named host: its host row and the reply to its last scheduler RPC (spec
/// backend §1.4, §2.4.1 step 12).
struct HostView<'a> {
    p: &'a Project,
    h: &'a ScriptedHost,
    row: &'a HostRow,
}

impl<'a> HostView<'a> {
    const CHECKS: &'a [Check<Self>] = &[
        Check {
            name: "reply",
            cmp: Cmp::Nested(
                |x| x.reply.is_some(),
                |x, v, errs| {
                    if let Some(want) = &x.reply {
                        super::expect_reply::check(errs, want, v.h, v.p);
                    }
                },
            ),
        },
        check!(Credit total_credit, |v| v.row.total_credit),
    ];
}

/// A named host's host app version (spec backend §1.4), which exists once the host
/// was sent a job.
const HAV_CHECKS: &[Check<HavRow>] = &[
    check!(Int consecutive_valid, |h| h.consecutive_valid as i64),
    check!(Int max_jobs_per_day, |h| h.max_jobs_per_day as i64),
    check!(Int n_jobs_today, |h| h.n_jobs_today as i64),
];

/// A simulated client as a whole: what runs now.
struct ClientView<'a> {
    h: &'a ClientHost,
    project_names: &'a [String],
}

impl<'a> ClientView<'a> {
    const CHECKS: &'a [Check<Self>] = &[check!(Quoted running, |v| v.running())];

    /// The projects of the running tasks, sorted, comma-separated.
    fn running(&self) -> String {
        let h = self.h;
        let mut names: Vec<&str> = (h.jobs.iter())
            .filter(|j| j.is_running())
            .map(|j| {
                let p = &h.projects[j.project as usize];
                if p.is_background() {
                    return "background"; // no world project
                }
                (self.project_names.get(p.project as usize)).map_or("?", |s| s.as_str())
            })
            .collect();
        names.sort_unstable();
        names.join(",")
    }
}

/// A simulated client's time statistics at the check (spec client §1.11, §3.5).
const TIME_STATS_CHECKS: &[Check<TimeStats>] = &[
    check!(Float on_frac, |t| t.on_frac),
    check!(Float active_frac, |t| t.active_frac),
    check!(Float connected_frac, |t| t.connected_frac),
];

/// A simulated client's state about the project of the entry, attached as the
/// host's project `k` (spec client §1.1, §2, §8).
struct ProjectView<'a> {
    h: &'a ClientHost,
    k: usize,
    p: &'a ProjectState,
    now: Time,
    cfg: &'a ClientConfig,
}

impl<'a> ProjectView<'a> {
    const CHECKS: &'a [Check<Self>] = &[
        check!(Int nrpc_failures, |v| v.p.nrpc_failures as i64),
        check!(Int master_fetch_failures, |v| v.p.master_fetch_failures as i64),
        check!(Flag master_url_fetch_pending, |v| v.p.master_url_fetch_pending),
        check!(Float min_rpc_time, |v| v.p.min_rpc_time),
        check!(Float rec, |v| v.p.modern.rec),
        check!(Float exp_avg_cpu, |v| v.p.seed.exp_avg_cpu),
        check!(Float resource_debt, |v| v.p.seed.resource_debt),
        check!(Int debt_order, |v| v.p.seed.debt_order as i64),
        check!(Float cpu_time, |v| v.cpu_time()),
        check!(Float idle_time, |v| v.idle().idle_time),
        check!(Float idle_time_sumsq, |v| v.idle().idle_time_sumsq),
        check!(Int jobs, |v| v.jobs().count() as i64),
        check!(Int jobs_received, |v| v.p.njobs as i64),
        check!(Int rpcs, |v| v.p.nrpcs as i64),
        check!(Int deadlines_missed, |v| v.p.modern.deadlines_missed as i64),
        check!(Float cpu_backoff_interval, |v| v.p.modern.backoff_interval[CPU]),
        check!(Float cpu_backoff_time, |v| v.p.modern.backoff_time[CPU]),
        check!(Float sched_priority, |v| v.p.modern.sched_priority),
        check!(Float req_secs, |v| v.p.last_request().req_secs),
        check!(Float req_instances, |v| v.p.last_request().req_instances),
        check!(Float estimated_delay, |v| v.p.last_request().estimated_delay),
        check!(Float gpu_req_secs, |v| v.p.last_request().gpu_req_secs.iter().sum()),
        check!(Float gpu_req_instances, |v| {
            v.p.last_request().gpu_req_instances.iter().sum()
        }),
        check!(Quoted client_states, |v| {
            let states: Vec<String> = v.jobs().map(|j| j.client_state.to_string()).collect();
            states.join(",")
        }),
        check!(Int xfers_down, |v| v.h.xfer_view(v.k, v.now).active[0]),
        check!(Int xfers_up, |v| v.h.xfer_view(v.k, v.now).active[1]),
        check!(Int xfer_failures_down, |v| v.h.xfer_view(v.k, v.now).failures[0]),
        check!(Int xfer_failures_up, |v| v.h.xfer_view(v.k, v.now).failures[1]),
        check!(Int xfer_backoff_down, |v| v.h.xfer_view(v.k, v.now).backoff[0]),
        check!(Int xfer_backoff_up, |v| v.h.xfer_view(v.k, v.now).backoff[1]),
        check!(Int next_file_retry, |v| v.h.xfer_view(v.k, v.now).next_retry),
        check!(Flag download_stalled, |v| v.p.modern.transfer[TransferFlag::DownloadStalled]),
        check!(Flag too_many_uploads, |v| v.p.modern.transfer[TransferFlag::TooManyUploads]),
        check!(Flag actively_uploading, |v| v.p.modern.transfer[TransferFlag::ActivelyUploading]),
    ];

    /// The project's jobs the client holds, in arrival order.
    fn jobs(&self) -> impl Iterator<Item = &'a ClientJob> {
        let k = self.k;
        (self.h.jobs.iter()).filter(move |j| j.project as usize == k)
    }

    /// CPU time integrated to `now` without touching the host, by the rule
    /// `ClientHost::advance` integrates with (`run_for`): each running task at its
    /// execution's speed and CPUs (a multi-threaded task's CPUs, slowed by
    /// `cpu_scale` when the CPUs are overcommitted), until it finishes or reaches
    /// its time limit.
    fn cpu_time(&self) -> f64 {
        let (h, cfg, now) = (self.h, self.cfg, self.now);
        let mut cpu = self.p.cpu_time;
        if h.computing(cfg) && now > h.last_advance {
            let dt = (now - h.last_advance) as f64;
            let cpu_scale = h.cpu_scale(cfg);
            for j in self.jobs().filter(|j| j.is_running()) {
                let x = execution(h.usage(j), h.p_fpops, cpu_scale, cfg.gpu_active_frac);
                cpu += run_for(j, &x, dt).0 * x.cpus;
            }
        }
        cpu
    }

    /// The idle run closed up to `now` on the global grid, without touching the
    /// host: a task of the project executes throughout `(last_advance, now]` or not
    /// at all, since the host is woken at every change.
    fn idle(&self) -> IdleRun {
        let (h, cfg) = (self.h, self.cfg);
        let mut idle = self.p.idle;
        let ran = h.computing(cfg) && self.jobs().any(|j| j.is_running());
        idle.advance(h.last_advance as f64, self.now as f64, ran, cfg.merit_step);
        idle
    }
}

/// Why an expectation is not met: the row it names is missing or still there, or
/// the fields that differ, each as `field = got, expected want`.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub(crate) enum Unmet {
    /// The result or workunit (`subject`: `result NAME`, `workunit NAME`) is not
    /// in the database.
    #[error("{0} does not exist")]
    Missing(String),
    /// `exists = false`, but the row is still there.
    #[error("{0} still exists")]
    StillExists(String),
    /// No named host has this name.
    #[error("unknown host {0}")]
    UnknownHost(String),
    /// A per-project client field, on a host not attached to the project.
    #[error("the host is not attached to this project")]
    NotAttached,
    /// The fields of `subject` (a result, workunit or host) that differ.
    #[error("{subject}: {}", .fields.join("; "))]
    Fields {
        subject: String,
        fields: Vec<String>,
    },
    /// The fields of a simulated client that differ.
    #[error("{}", .0.join("; "))]
    ClientFields(Vec<String>),
}

/// A result or workunit row as `exists` wants it: `Ok(None)` when it is rightly
/// gone, `Ok(Some(row))` when it is there to be compared.
fn row_as_wanted<'r, T>(
    row: Option<&'r T>,
    ex: &Expect,
    subject: &str,
) -> Result<Option<&'r T>, Unmet> {
    match (row, ex.exists) {
        (None, Some(false)) => Ok(None),
        (None, _) => Err(Unmet::Missing(subject.to_string())),
        (Some(_), Some(false)) => Err(Unmet::StillExists(subject.to_string())),
        (Some(row), _) => Ok(Some(row)),
    }
}

/// Checks one expectation about a server row: a result, a batch, a workunit, a
/// named host (`host`, resolved by the plan) or the project's web server `web`.
/// `Err` lists every mismatch.
pub(crate) fn verify(
    ex: &Expect,
    p: &Project,
    named: &[ScriptedHost],
    host: Option<&Result<usize, String>>,
    web: Option<&WebServer>,
) -> Result<(), Unmet> {
    let mut errs = Vec::new();
    if ex.web_server.is_some() {
        let subject = format!("web server of {}", p.name);
        let Some(w) = web else {
            return Err(Unmet::Missing(subject));
        };
        run_all(WEB_SERVER_CHECKS, ex, w, &mut errs);
        return finish(subject, errs);
    }
    if let Some(name) = &ex.result {
        let subject = format!("result {name}");
        let row = p.db.results.get(lookup_result(p, name));
        let Some(r) = row_as_wanted(row, ex, &subject)? else {
            return Ok(());
        };
        run_all(
            ResultView::CHECKS,
            ex,
            &ResultView { p, r, named },
            &mut errs,
        );
        return finish(subject, errs);
    }
    if let Some(name) = &ex.batch {
        let subject = format!("batch {name}");
        let row = p.db.batches.rows.iter().find(|b| &*b.name == name.as_str());
        let Some(b) = row else {
            return Err(Unmet::Missing(subject));
        };
        run_all(BATCH_CHECKS, ex, b, &mut errs);
        return finish(subject, errs);
    }
    if let Some(name) = &ex.workunit {
        let subject = format!("workunit {name}");
        let id: u32 = (name.strip_prefix("wu"))
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let row = p.db.workunits.get(WuId(id));
        let Some(w) = row_as_wanted(row, ex, &subject)? else {
            return Ok(());
        };
        run_all(WorkunitView::CHECKS, ex, &WorkunitView { p, w }, &mut errs);
        return finish(subject, errs);
    }
    if let Some(target) = host {
        let h = match target {
            Ok(k) => &named[*k],
            Err(name) => return Err(Unmet::UnknownHost(name.clone())),
        };
        let subject = format!("host {}", h.name);
        let row = p.db.host(h.hostid);
        run_all(HostView::CHECKS, ex, &HostView { p, h, row }, &mut errs);
        if any_given(HAV_CHECKS, ex) {
            match row.hav(crate::server::APP_VERSION_ID) {
                None => errs.push("has no host app version yet".into()),
                Some(hav) => run_all(HAV_CHECKS, ex, hav, &mut errs),
            }
        }
        return finish(subject, errs);
    }
    Ok(())
}

fn finish(subject: String, fields: Vec<String>) -> Result<(), Unmet> {
    if fields.is_empty() {
        Ok(())
    } else {
        Err(Unmet::Fields { subject, fields })
    }
}

/// Checks a client-state expectation against host `h`; `pos` is the position of the
/// expectation's project among the host's attached projects. Float fields compare
/// within `tolerance` (default 1e-6). `cpu_time` is integrated up to `now`; the other
/// fields are as the client last updated them.
pub(crate) fn verify_client(
    ex: &Expect,
    h: &ClientHost,
    pos: Option<usize>,
    now: Time,
    cfg: &ClientConfig,
    project_names: &[String],
    avail: &AvailSpec,
) -> Result<(), Unmet> {
    let mut errs = Vec::new();
    let client = ClientView { h, project_names };
    run_all(ClientView::CHECKS, ex, &client, &mut errs);
    if any_given(TIME_STATS_CHECKS, ex) {
        let ts = h.avail.time_stats_at(now.max(h.last_advance), avail);
        run_all(TIME_STATS_CHECKS, ex, &ts, &mut errs);
    }
    // Every other client field is about one attached project.
    if any_given(ProjectView::CHECKS, ex) {
        let Some(k) = pos else {
            return Err(Unmet::NotAttached);
        };
        let view = ProjectView {
            h,
            k,
            p: &h.projects[k],
            now,
            cfg,
        };
        run_all(ProjectView::CHECKS, ex, &view, &mut errs);
    }
    if errs.is_empty() {
        Ok(())
    } else {
        Err(Unmet::ClientFields(errs))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::schema::ExpectRow;

    fn names<V>(table: &[Check<V>]) -> Vec<&'static str> {
        table.iter().map(|c| c.name).collect()
    }

    /// Every key the schema gives a kind of row has exactly one check among that
    /// row's tables, and no table checks a key of another kind.
    #[test]
    fn every_row_key_has_one_check() {
        let tables: [(ExpectRow, Vec<&str>); 7] = [
            (ExpectRow::Result, names(ResultView::CHECKS)),
            (ExpectRow::Workunit, names(WorkunitView::CHECKS)),
            (ExpectRow::Batch, names(BATCH_CHECKS)),
            (ExpectRow::WebServer, names(WEB_SERVER_CHECKS)),
            (
                ExpectRow::Host,
                [names(HostView::CHECKS), names(HAV_CHECKS)].concat(),
            ),
            (
                ExpectRow::Client,
                [
                    names(ClientView::CHECKS),
                    names(TIME_STATS_CHECKS),
                    names(ProjectView::CHECKS),
                ]
                .concat(),
            ),
            (ExpectRow::ResultOrWorkunit, Vec::new()),
        ];
        let checked_in = |row: ExpectRow| -> Vec<ExpectRow> {
            match row {
                ExpectRow::ResultOrWorkunit => vec![ExpectRow::Result, ExpectRow::Workunit],
                r => vec![r],
            }
        };
        for &(name, row) in Expect::FIELDS {
            for (kind, table) in &tables {
                let n = table.iter().filter(|&&t| t == name).count();
                let want = usize::from(checked_in(row).contains(kind));
                assert_eq!(n, want, "`{name}` ({row:?}) checks in the {kind:?} tables");
            }
        }
        for (_, table) in &tables {
            for t in table {
                assert!(
                    Expect::FIELDS.iter().any(|(f, _)| f == t),
                    "`{t}` is no key of [[expect]]"
                );
            }
        }
    }

    /// A view for the comparison rules alone.
    struct Toy {
        n: i64,
        x: f64,
        b: bool,
        s: &'static str,
    }

    const TOY: &[Check<Toy>] = &[
        check!(Int server_state, |t| t.n),
        check!(Credit granted_credit, |t| t.x),
        check!(Float rec, |t| t.x),
        check!(Flag download_stalled, |t| t.b),
        check!(Text state, |t| t.s.to_string()),
        check!(Quoted running, |t| t.s.to_string()),
    ];

    fn mismatches(ex: &Expect, toy: &Toy) -> Vec<String> {
        let mut errs = Vec::new();
        run_all(TOY, ex, toy, &mut errs);
        errs
    }

    /// Each rule reads `key = got, expected want`, in table order; a float shows
    /// its tolerance, a list is quoted so that an empty one shows.
    #[test]
    fn a_mismatch_names_the_key_the_value_and_the_wanted_value() {
        let ex = Expect {
            server_state: Some(2),
            granted_credit: Some(1.0),
            rec: Some(1.0),
            download_stalled: Some(true),
            state: Some("5/1/1/2".into()),
            running: Some("a".into()),
            ..Expect::default()
        };
        let toy = Toy {
            n: 5,
            x: 1.5,
            b: false,
            s: "",
        };
        assert_eq!(
            mismatches(&ex, &toy),
            [
                "server_state = 5, expected 2",
                "granted_credit = 1.5, expected 1",
                "rec = 1.5, expected 1 (tolerance 0.000001)",
                "download_stalled = false, expected true",
                "state = , expected 5/1/1/2",
                "running = \"\", expected \"a\"",
            ]
        );
        assert!(TOY.iter().all(|c| c.given(&ex)));
    }

    /// Server floats compare relative to the wanted value, client floats within the
    /// entry's absolute tolerance, where NaN never matches; a key not given is not
    /// compared.
    #[test]
    fn floats_compare_within_their_tolerance() {
        let toy = |x| Toy {
            n: 0,
            x,
            b: false,
            s: "",
        };
        let credit = Expect {
            granted_credit: Some(1e9),
            ..Expect::default()
        };
        assert!(mismatches(&credit, &toy(1e9 + 100.0)).is_empty());
        assert_eq!(mismatches(&credit, &toy(1e9 + 2000.0)).len(), 1);
        let rec = Expect {
            rec: Some(1.0),
            tolerance: Some(0.1),
            ..Expect::default()
        };
        assert!(mismatches(&rec, &toy(1.05)).is_empty());
        assert_eq!(
            mismatches(&rec, &toy(f64::NAN)),
            ["rec = NaN, expected 1 (tolerance 0.1)"]
        );
        assert!(mismatches(&Expect::default(), &toy(f64::NAN)).is_empty());
    }
}
