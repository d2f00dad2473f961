//! The `[[expect]]` tables (docs/scenario.md, "`[[expect]]`"): each names exactly
//! one row (a workunit, a result, a host or a client), gives only the fields of that
//! kind of row, and gives BOINC-numbered fields values BOINC defines (spec backend
//! §1.1). Which field belongs to which kind of row is the schema's list
//! (`Expect::FIELDS`); the range of each BOINC-numbered field is here.

use super::{Checker, all_digits};
use crate::scenario::schema::{Expect, ExpectRow, ReplyExpect};
use crate::server::db::parse_result_name;
use crate::server::types::{
    AssimilateState, BatchState, FileDeleteState, Outcome, ServerState, ValidateState,
};

/// A BOINC-numbered field of `[[expect]]`: key, value, allowed values, test.
type RangeCheck<'a> = (&'a str, Option<i64>, &'a str, fn(i64) -> bool);

impl Checker<'_> {
    /// `[[expect]] reply`: result names, and one deadline per job.
    fn reply_expect(&mut self, prefix: &str, r: &ReplyExpect) {
        for (key, names) in [
            ("jobs", &r.jobs),
            ("acks", &r.acks),
            ("aborts", &r.aborts),
            ("aborts_if_not_started", &r.aborts_if_not_started),
        ] {
            for (j, name) in names.iter().flatten().enumerate() {
                self.result_name(&format!("{prefix}.{key}.{j}"), name);
            }
        }
        if let (Some(d), Some(j)) = (&r.deadlines, &r.jobs)
            && d.len() != j.len()
        {
            self.push(
                format!("{prefix}.deadlines"),
                format!(
                    "{} deadlines for {} jobs; expected one deadline per job of `jobs`",
                    d.len(),
                    j.len()
                ),
            );
        }
        if let Some(x) = r.request_delay {
            self.non_negative(&format!("{prefix}.request_delay"), x);
        }
    }

    /// `group` or `group#k`: a host group and the index of one of its hosts.
    fn client_ref(&mut self, path: &str, c: &str) {
        let (name, k) = match c.split_once('#') {
            Some((n, k)) => (n, k.parse::<u32>().ok()),
            None => (c, Some(0)),
        };
        let Some(g) = self.file.host_group.iter().find(|g| g.name == name) else {
            let known: Vec<&str> = self
                .file
                .host_group
                .iter()
                .map(|g| g.name.as_str())
                .collect();
            self.push(
                path,
                format!(
                    "unknown host group `{name}`; expected one of: {}",
                    if known.is_empty() {
                        "(no host groups)".to_string()
                    } else {
                        known.join(", ")
                    }
                ),
            );
            return;
        };
        match k {
            Some(k) if k < g.count => {}
            _ => self.push(
                path,
                format!(
                    "`{c}` is not a host of group `{name}`; expected `{name}` or `{name}#k` with k in 0..{}",
                    g.count
                ),
            ),
        }
    }

    pub(super) fn expect(&mut self, i: usize, x: &Expect) {
        let prefix = format!("expect.{i}");
        let at = |k: &str| format!("{prefix}.{k}");
        if let Some(t) = x.at {
            self.duration_non_negative(&at("at"), t);
            self.before_end(&at("at"), "expect", t);
        }
        let project = match (&x.project, &x.web_server) {
            (None, Some(w)) => self.project_ref(&at("web_server"), Some(w)),
            (p, w) => {
                if let (Some(p), Some(w)) = (p, w)
                    && p != w
                {
                    self.push(
                        at("web_server"),
                        format!("web_server = \"{w}\" names another project than project = \"{p}\"; expected the same project, or only one of the two"),
                    );
                }
                self.project_ref(&at("project"), p.as_deref())
            }
        };
        if let Some(w) = &x.web_server
            && let Some(p) = self.file.project.get(w)
            && p.server.is_none()
        {
            self.push(
                at("web_server"),
                format!(
                    "project `{w}` has no web server; expected a project with [project.{w}.server]"
                ),
            );
        }

        let kinds: Vec<&str> = [
            ("workunit", x.workunit.is_some()),
            ("result", x.result.is_some()),
            ("host", x.host.is_some()),
            ("client", x.client.is_some()),
            ("batch", x.batch.is_some()),
            ("web_server", x.web_server.is_some()),
        ]
        .iter()
        .filter(|(_, g)| *g)
        .map(|(k, _)| *k)
        .collect();
        if kinds.len() != 1 {
            let what = if kinds.is_empty() {
                "expect names no row".to_string()
            } else {
                format!(
                    "expect names {} rows (`{}`)",
                    kinds.len(),
                    kinds.join("`, `")
                )
            };
            self.push(
                prefix.clone(),
                format!(
                    "{what}; expected exactly one of `workunit`, `result`, `host`, `client`, `batch`, `web_server`"
                ),
            );
        }
        if let Some(w) = &x.workunit {
            self.wu_name(&at("workunit"), w);
        }
        if let Some(r) = &x.result {
            self.result_name(&at("result"), r);
        }
        if let Some(h) = &x.host {
            self.host_ref(&at("host"), "expect", h, project.as_deref());
        }
        if let Some(c) = &x.client {
            self.client_ref(&at("client"), c);
        }
        if let Some(t) = x.tolerance
            && !(t.is_finite() && t >= 0.0)
        {
            self.push(
                at("tolerance"),
                format!("tolerance = {t}; expected a number >= 0"),
            );
        }

        // Fields of the other kinds of row. Only checked when the row kind is clear;
        // grouped by their kind of row, in `ExpectRow` order.
        if let [kind] = kinds[..] {
            let mut wrong: Vec<(&str, ExpectRow)> =
                x.given().filter(|(_, row)| !row.allows(kind)).collect();
            wrong.sort_by_key(|&(_, row)| row);
            for (f, row) in wrong {
                let owner = row.owner().expect("only an owned field is wrong");
                self.push(
                    at(f),
                    format!(
                        "`{f}` is a {owner} field but this expect names a {kind}; expected only {kind} fields (or `exists`)"
                    ),
                );
            }
        }

        if let Some(s) = &x.state {
            self.state_shorthand(&at("state"), s);
        }
        if let Some(r) = &x.reply {
            self.reply_expect(&at("reply"), r);
        }
        let ranges: [RangeCheck; 8] = [
            (
                "batch_state",
                x.batch_state,
                "0 (INIT), 1 (IN_PROGRESS), 2 (COMPLETE), 3 (ABORTED) or 4 (RETIRED)",
                |v| BatchState::from_code(v).is_some(),
            ),
            (
                "server_state",
                x.server_state,
                "1 (INACTIVE), 2 (UNSENT), 4 (IN_PROGRESS) or 5 (OVER)",
                |v| ServerState::from_code(v).is_some(),
            ),
            ("outcome", x.outcome, "0..=7", |v| {
                Outcome::from_code(v).is_some()
            }),
            ("validate_state", x.validate_state, "0..=5", |v| {
                ValidateState::from_code(v).is_some()
            }),
            ("file_delete_state", x.file_delete_state, "0..=3", |v| {
                FileDeleteState::from_code(v).is_some()
            }),
            ("assimilate_state", x.assimilate_state, "0..=2", |v| {
                AssimilateState::from_code(v).is_some()
            }),
            ("need_validate", x.need_validate, "0 or 1", |v| {
                (0..=1).contains(&v)
            }),
            ("error_mask", x.error_mask, "a bit mask in 0..=63", |v| {
                (0..=63).contains(&v)
            }),
        ];
        for (key, v, expected, ok) in ranges {
            if let Some(v) = v
                && !ok(v)
            {
                self.push(
                    at(key),
                    format!("{key} = {v} is not a BOINC value; expected {expected}"),
                );
            }
        }
        for (key, v) in [
            ("nresults", x.nresults),
            ("target_nresults", x.target_nresults),
            ("min_quorum", x.min_quorum),
            ("hr_class", x.hr_class),
            ("consecutive_valid", x.consecutive_valid),
            ("max_jobs_per_day", x.max_jobs_per_day),
            ("n_jobs_today", x.n_jobs_today),
        ] {
            if let Some(v) = v {
                self.min_int(&at(key), v, 0);
            }
        }
        if let Some(c) = &x.canonical
            && c != "none"
            && parse_result_name(c).is_none()
        {
            self.push(
                at("canonical"),
                format!("`{c}` is not a result name; expected `wu<id>_<suffix>` or \"none\""),
            );
        }
        // `world::expect` shows a named host by name and any other by its id.
        if let Some(h) = &x.hostid
            && !all_digits(h)
            && self.find_host(h).is_none()
        {
            let list = self.host_list();
            self.push(
                at("hostid"),
                format!("hostid names unknown host `{h}`; expected a [[host]] name or a numeric host id (0 = not sent); known hosts: {list}"),
            );
        }
    }

    /// `"server_state/outcome/validate_state/file_delete_state"`, e.g. `"5/1/1/2"`.
    fn state_shorthand(&mut self, path: &str, s: &str) {
        const FORM: &str =
            "expected \"server_state/outcome/validate_state/file_delete_state\", e.g. \"5/1/1/2\"";
        // `world::expect` compares the text itself, so no spaces or signs.
        let nums: Option<Vec<i64>> = s
            .split('/')
            .map(|p| all_digits(p).then(|| p.parse::<i64>().ok()).flatten())
            .collect();
        let Some(n) = nums.filter(|n| n.len() == 4) else {
            self.push(path, format!("`{s}` is not a result state; {FORM}"));
            return;
        };
        let checks: [(&str, bool, &str); 4] = [
            (
                "server_state",
                ServerState::from_code(n[0]).is_some(),
                "1, 2, 4 or 5",
            ),
            ("outcome", Outcome::from_code(n[1]).is_some(), "0..=7"),
            (
                "validate_state",
                ValidateState::from_code(n[2]).is_some(),
                "0..=5",
            ),
            (
                "file_delete_state",
                FileDeleteState::from_code(n[3]).is_some(),
                "0..=3",
            ),
        ];
        for (i, (key, ok, range)) in checks.iter().enumerate() {
            if !ok {
                self.push(
                    path,
                    format!(
                        "`{s}`: {key} {} is not a BOINC value; expected {range} ({FORM})",
                        n[i]
                    ),
                );
            }
        }
    }
}
