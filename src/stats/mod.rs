//! What a run leaves behind: the run folder of CSV tables and `summary.json`.
//!
//! Stats depends on the world and the world never on stats: [`recorder`] implements
//! the world's [`Recorder`](crate::world::Recorder), hears the run as it goes, and
//! the rest reads the world's final state ([`Finished`](crate::world::Finished)).
//!
//! * [`run_folder`] writes a whole run folder in one call: it runs the world with
//!   the recorder, then writes every file below from its final state. The command
//!   line only parses and prints around it.
//! * [`recorder`] is the world's recorder: the tallies below, fed from every final
//!   row, and the run folder's tables, written as rows become final.
//! * [`output`] writes the folder: `workunits.csv` and `results.csv` (one row per row
//!   ever created, purged ones included), `transitions.csv` (the audit trail of every
//!   state change) and `summary.json`, into a temporary folder that replaces the final
//!   one only when the run succeeded. The columns are documented in `docs/outputs.md`.
//! * [`outdir`] keeps outputs from destroying what the user did not make: which
//!   folders may be replaced, stale temporary folders, cleanup on SIGINT/SIGTERM.
//! * [`writeback`] gets the run's tables onto the disk as they grow, without the
//!   writer thread waiting for each step.
//! * [`tally`] tallies each project's figures from the final rows; [`summary`]
//!   writes them into `summary.json` with the headline figures.
//! * [`headline`] derives each project's headline figures from those tallies:
//!   `summary.csv`, and `headline` in `summary.json`; [`apps`] the same figures per
//!   app, `summary_apps.csv`.
//! * [`hosts`] writes `hosts.csv`, the client figures of merit per host, and their
//!   population summary.
//! * [`manifest`] writes `manifest.json`: version, scenario hash, seed, overrides and
//!   effective configuration of the run.
//! * [`window`] says what the throughput and deadline figures count: the warm-up,
//!   censored results, and the fate of each result sent at its deadline.
//! * [`drift`] tests whether a headline figure of the first third of the measured
//!   window differs significantly from the last third's (the drift warnings).
//! * [`metrics`] writes `timeseries.csv` and `histograms.csv`, tallied from the final
//!   rows like the summary.
//! * [`credit`] tallies credit per FLOP of real work per app version, device and
//!   host group, and device neutrality (`credit_versions.csv`, …); [`job_log`] is
//!   the job log's format (`jobs.csv`, `docs/credit.md`).
//! * [`science`] counts what happened to the truth of the outputs: wrong canonical
//!   results, wrong VALID and correct INVALID results.
//!
//! Inside stats the imports point one way as well: ARCHITECTURE.md ("The layers",
//! line `crate::stats`) orders these modules.

pub mod apps;
pub mod batches;
pub mod credit;
pub mod drift;
pub mod headline;
pub mod hist;
pub mod hosts;
pub mod job_log;
pub mod manifest;
pub mod metrics;
pub mod outdir;
pub mod output;
pub mod recorder;
pub mod recovery;
pub mod run_folder;
pub mod scheduler_load;
pub mod science;
pub mod summary;
pub mod tally;
pub mod window;
pub mod writeback;
