//! `[[expect]] reply`: checking what the scheduler told a named host in its last RPC
//! (spec backend §2.4.1 step 12: jobs with their deadlines, acknowledgements, aborts,
//! `request_delay`, user messages, `project_is_down`).

use crate::client::scripted::ScriptedHost;
use crate::scenario::schema::ReplyExpect;
use crate::server::Project;
use crate::server::db::result_name;
use crate::server::scheduler::Reply;
use crate::server::types::ResultId;

/// The name of result `rid`, or its id if the row is gone (purged).
fn name_of(p: &Project, rid: ResultId) -> String {
    p.db.results
        .get(rid)
        .map_or(format!("#{rid}"), |r| result_name(r.workunitid, r.suffix))
}

fn cmp_list<T: PartialEq + std::fmt::Debug>(
    errs: &mut Vec<String>,
    what: &str,
    want: &Option<Vec<T>>,
    got: Vec<T>,
) {
    if let Some(w) = want
        && *w != got
    {
        errs.push(format!("reply.{what} = {got:?}, expected {w:?}"));
    }
}

/// Checks `want` against the last reply of host `h`; pushes every mismatch.
pub fn check(errs: &mut Vec<String>, want: &ReplyExpect, h: &ScriptedHost, p: &Project) {
    let Some(reply) = &h.last_reply else {
        errs.push(
            "reply: the host has had no reply (no RPC yet, or the server was unreachable)".into(),
        );
        return;
    };
    let Reply {
        jobs,
        acks,
        aborts,
        aborts_if_not_started,
        messages,
        request_delay,
        project_is_down,
        ..
    } = reply;
    let names = |ids: &[ResultId]| ids.iter().map(|&r| name_of(p, r)).collect::<Vec<_>>();
    let job_ids: Vec<ResultId> = jobs.iter().map(|j| j.result_id).collect();
    cmp_list(errs, "jobs", &want.jobs, names(&job_ids));
    cmp_list(
        errs,
        "deadlines",
        &want.deadlines,
        jobs.iter().map(|j| j.report_deadline).collect(),
    );
    cmp_list(errs, "acks", &want.acks, names(acks));
    cmp_list(errs, "aborts", &want.aborts, names(aborts));
    cmp_list(
        errs,
        "aborts_if_not_started",
        &want.aborts_if_not_started,
        names(aborts_if_not_started),
    );
    cmp_list(
        errs,
        "messages",
        &want.messages,
        messages.iter().map(|m| m.text(|r| name_of(p, r))).collect(),
    );
    if let Some(w) = want.request_delay
        && (w - request_delay).abs() > 1e-9
    {
        errs.push(format!(
            "reply.request_delay = {request_delay}, expected {w}"
        ));
    }
    if let Some(w) = want.project_is_down
        && w != *project_is_down
    {
        errs.push(format!(
            "reply.project_is_down = {project_is_down}, expected {w}"
        ));
    }
}
