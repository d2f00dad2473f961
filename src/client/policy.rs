//! Policy dispatch: one host event under its group's client policy (spec client §7,
//! `[client] policy`).
//!
//! The layering is one way: [`host`](super::host) is a host's state and the
//! mechanics both policies share; [`seed`] (spec client §1) and [`modern`] (§2–3)
//! each drive a host through it; this module depends on all three and is the only
//! one that names both policies. The host never names a policy, so a policy can
//! change without touching the host, and another policy is one more arm here.

use super::config::Policy;
use super::host::{Answer, ClientHost, GroupCtx, ServerLink};
use super::{modern, seed};
use crate::engine::Time;

impl ClientHost {
    /// Runs one host event at `now` under the group's policy and returns the time of
    /// the host's next event (`Time::MAX`: none). Whatever the policy, the host wakes
    /// again no later than its next availability change and never at `now` itself.
    /// A failure on the server side comes back as the link's error, unchanged.
    #[cfg(test)]
    pub(crate) fn wake<S: ServerLink + ?Sized>(
        &mut self,
        now: Time,
        g: &GroupCtx,
        server: &mut S,
    ) -> Result<Time, S::Error> {
        self.wake_with(now, g, server, None)
    }

    /// [`Self::wake`], with the answer to the host's RPC in flight arriving at `now`
    /// (spec client §4.3): the policy applies it after the host's progress is
    /// brought up to `now`, before its poll.
    pub(crate) fn wake_with<S: ServerLink + ?Sized>(
        &mut self,
        now: Time,
        g: &GroupCtx,
        server: &mut S,
        answer: Option<Answer>,
    ) -> Result<Time, S::Error> {
        self.xfer_flags(now, &g.cfg);
        let next = match g.cfg.policy {
            Policy::SeedDebt => seed::wake(self, now, g, server, answer)?,
            Policy::ModernRec => modern::wake(self, now, g, server, answer)?,
        };
        // Transfers start after the policy: a reply's jobs and a finished job's
        // output move in the same event (spec client §8.2).
        self.xfer_poll(now, &g.cfg, server);
        let next = next.min(self.xfer_next_wake(now));
        Ok(next.min(self.avail.next_change()).max(now + 1))
    }
}

/// Background projects under both policies: a host with one scenario project of
/// share 100 and one background project of share 300 gives the scenario project a
/// quarter of its CPU time over the long run, and no background RPC reaches the
/// server.
#[cfg(test)]
mod background_tests {
    use super::super::background::{
        BACKGROUND, Background, BackgroundJobs, BackgroundProject, HostExtra, HostPrefs, JobSize,
    };
    use super::super::config::{ClientConfig, ClientSection};
    use super::*;
    use crate::base::dist::Dist;
    use crate::client::host::{HostBehaviour, RpcState, RpcStatus, Sent, test_reply};
    use crate::engine::rng::stream;
    use crate::server::scheduler::Job;
    use crate::server::scheduler::Request;
    use crate::server::types::{HostId, ResultId, WuId};
    use crate::streams::StreamKind;

    /// A project server that fills every request with one-hour jobs and counts the
    /// RPCs it sees, by the project they are for.
    #[derive(Default)]
    struct Server {
        next_id: u32,
        rpcs_by_project: Vec<u16>,
    }

    impl ServerLink for Server {
        type Error = std::convert::Infallible;
        fn rpc(&mut self, now: Time, req: Request) -> Result<Sent, Self::Error> {
            self.rpcs_by_project.push(req.project);
            let (mut secs, mut inst) = (req.work.req_secs, req.work.req_instances);
            let mut sent = Vec::new();
            while secs > 0.0 || inst > 0.0 {
                self.next_id += 1;
                sent.push(Job {
                    result_id: ResultId(self.next_id),
                    workunit_id: WuId(self.next_id),
                    appid: 1,
                    app_version_id: 1,
                    proc_type: crate::server::resource::ProcType::Cpu,
                    avg_ncpus: 1.0,
                    gpu_usage: 0.0,
                    rsc_fpops_est: 3600e9,
                    rsc_fpops_bound: 36000e9,
                    flops: 1e9,
                    true_fpops: 3600e9,
                    true_flops: 1e9,
                    report_deadline: now + 10 * 86_400,
                    resend: false,
                });
                secs -= 3600.0;
                inst -= 1.0;
            }
            let status = RpcStatus::Ok {
                new_jobs: sent.len() as u32,
                request_delay: 0.0,
                no_work: false,
            };
            Ok(Sent::Answered(test_reply(status, HostId(1), sent, &req)))
        }
        fn master_fetch(&mut self, _now: Time, _project: u16) -> bool {
            true
        }
    }

    /// A 1-CPU, 1-GFLOPS host attached to the scenario project 0 (share 100) and one
    /// background project (share 300) of `job_secs`-second jobs, under `policy`.
    fn host_and_group(policy: Policy, job_secs: f64) -> (ClientHost, GroupCtx) {
        let mut h = ClientHost::for_test(1, 1e9, &[100.0, 300.0]);
        h.projects[1].project = BACKGROUND;
        h.set_extra(HostExtra {
            prefs: HostPrefs::default(),
            bg_rng: stream(1, StreamKind::HostBackground, 0),
        });
        let jobs = BackgroundJobs {
            size: JobSize::Seconds(Dist::fixed(job_secs)),
            delay_bound: Dist::fixed(10.0 * 86_400.0),
        };
        let g = GroupCtx {
            cfg: ClientConfig::resolve(&ClientSection::default(), Some(policy)),
            behaviour: HostBehaviour {
                background: Some(Background::Listed(vec![BackgroundProject {
                    share: 300.0,
                    jobs,
                }])),
                ..Default::default()
            },
            avail: Default::default(),
        };
        (h, g)
    }

    /// Runs the host through its own wake times for `days` days and returns the
    /// scenario project's part of the CPU time, and the server.
    fn split(policy: Policy, job_secs: f64, days: i64) -> (f64, Server, ClientHost) {
        let (h, g) = host_and_group(policy, job_secs);
        run(h, g, days)
    }

    /// The same host with a scenario project 1 in place of the background project,
    /// whose server sends the same one-hour jobs.
    fn split_real(policy: Policy, days: i64) -> (f64, Server, ClientHost) {
        let (mut h, g) = host_and_group(policy, 3600.0);
        h.projects[1].project = 1;
        run(h, g, days)
    }

    fn run(mut h: ClientHost, g: GroupCtx, days: i64) -> (f64, Server, ClientHost) {
        let mut srv = Server::default();
        let mut t = 0;
        while t <= days * 86_400 {
            t = h.wake(t, &g, &mut srv).unwrap();
        }
        let ours = h.projects[0].cpu_time;
        let all = ours + h.projects[1].cpu_time;
        (ours / all, srv, h)
    }

    #[test]
    fn modern_rec_gives_the_scenario_project_a_quarter() {
        let (frac, srv, h) = split(Policy::ModernRec, 3600.0, 60);
        assert!((frac - 0.25).abs() < 0.02, "scenario project got {frac}");
        // Every RPC the server saw was for the scenario project.
        assert!(!srv.rpcs_by_project.is_empty());
        assert!(srv.rpcs_by_project.iter().all(|&p| p == 0));
        assert_eq!(srv.rpcs_by_project.len() as u32, h.projects[0].nrpcs);
        // The background project was asked, and answered by the host.
        let bg = &h.projects[1];
        assert!(bg.nrpcs > 0 && bg.njobs > 0);
        assert_eq!(bg.nrpc_failed, 0);
        assert_eq!(bg.missed_deadline, 0);
        assert!(!bg.modern.no_rsc_apps[0]);
        assert!((1..crate::server::resource::N_RSC).all(|r| bg.modern.no_rsc_apps[r]));
    }

    #[test]
    fn seed_debt_gives_the_scenario_project_a_quarter() {
        let (frac, srv, h) = split(Policy::SeedDebt, 3600.0, 60);
        // The 2003 debt scheduler runs each fetched buffer to completion and settles
        // a little above the share on one CPU (0.283 here), exactly as it does with
        // a scenario project in the background one's place (below).
        assert!((frac - 0.25).abs() < 0.04, "scenario project got {frac}");
        assert!(srv.rpcs_by_project.iter().all(|&p| p == 0));
        assert_eq!(srv.rpcs_by_project.len() as u32, h.projects[0].nrpcs);
        assert!(h.projects[1].nrpcs > 0 && h.projects[1].njobs > 0);
    }

    /// A background project is run exactly as a scenario project whose server sends
    /// the same jobs: the same CPU split to the last bit, under both policies.
    #[test]
    fn a_background_project_runs_like_a_scenario_project() {
        for policy in [Policy::SeedDebt, Policy::ModernRec] {
            let (bg, _, hb) = split(policy, 3600.0, 30);
            let (real, srv, hr) = split_real(policy, 30);
            assert_eq!(bg, real, "{policy:?}");
            assert_eq!(hb.projects[1].njobs, hr.projects[1].njobs, "{policy:?}");
            assert_eq!(hb.projects[1].nrpcs, hr.projects[1].nrpcs, "{policy:?}");
            assert!(srv.rpcs_by_project.contains(&1));
        }
    }

    /// A background reply fills the request as a scheduler does: jobs while seconds
    /// or instances are still asked for, each of the drawn size, with the drawn
    /// delay bound, exact estimates and a bound ten times the estimate.
    #[test]
    fn a_background_reply_fills_the_request() {
        let (mut h, g) = host_and_group(Policy::ModernRec, 3600.0);
        let mut srv = Server::default();
        let work = crate::client::host::WorkRequest {
            req_secs: 7201.0,
            req_instances: 0.0,
            ..Default::default()
        };
        let st = h.rpc(100, 1, work, &g.behaviour, &g.cfg, &mut srv).unwrap();
        assert_eq!(
            st,
            RpcState::Answered(RpcStatus::Ok {
                new_jobs: 3,
                request_delay: 0.0,
                no_work: false
            })
        );
        assert!(srv.rpcs_by_project.is_empty());
        assert_eq!(h.jobs.len(), 3);
        let ids: Vec<u32> = h.jobs.iter().map(|j| j.result_id.0).collect();
        assert_eq!(ids, [1, 2, 3]);
        for j in &h.jobs {
            assert_eq!(j.project, 1);
            assert_eq!(j.rsc_fpops_est, 3600e9);
            assert_eq!(j.true_fpops, 3600e9);
            assert_eq!(j.report_deadline, 100 + 864_000);
            assert_eq!(j.max_elapsed_time, 36_000.0);
        }
        assert_eq!(h.projects[1].njobs, 3);
        assert_eq!(h.projects[1].nrpcs, 1);
        assert_eq!(h.projects[1].hostid, HostId(1));
        // A report-only request gets nothing and is no "no work" reply.
        let st = h
            .rpc(200, 1, Default::default(), &g.behaviour, &g.cfg, &mut srv)
            .unwrap();
        assert_eq!(
            st,
            RpcState::Answered(RpcStatus::Ok {
                new_jobs: 0,
                request_delay: 0.0,
                no_work: false
            })
        );
        // Finished background jobs draw nothing of the host's stream and succeed.
        let before = h.rng.clone();
        h.start(0, 200);
        h.advance(3800, &g.cfg);
        assert_eq!(h.finish_tasks(3800, &g.behaviour, |_, _| {}), 1);
        assert_eq!(h.rng, before);
        assert_eq!(h.jobs[0].exit_status, 0);
        // The next RPC reports it (met its deadline) and its ids go on from 4.
        let work = crate::client::host::WorkRequest {
            req_secs: 1.0,
            ..Default::default()
        };
        h.rpc(3800, 1, work, &g.behaviour, &g.cfg, &mut srv)
            .unwrap();
        assert_eq!(h.projects[1].met_deadline, 1);
        assert_eq!(h.jobs.last().map(|j| j.result_id.0), Some(4));
        assert!(srv.rpcs_by_project.is_empty());
    }
}
