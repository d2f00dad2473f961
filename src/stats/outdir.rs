//! Output folders that never destroy what the user did not make.
//!
//! Every folder boinc-sim writes (a run folder, a `compare` folder, a run's or a
//! sweep's `plots/`) is first built in a temporary sibling `<folder>.tmp-<pid>`
//! ([`create_temp`]) whose first file is the marker [`MARKER`]; the marker stays in
//! the finished folder. That marker, or a `manifest.json` that boinc-sim wrote, is
//! what makes a folder *ours* ([`is_ours`]):
//!
//! * an existing folder is replaced only if it is ours, or empty, or the user said
//!   `--force` ([`check_target`]); the current folder, a home folder, a file
//!   system root and their parents are never replaced, `--force` or not;
//! * a temporary folder left by a killed run (any pid) is removed by the next run
//!   to the same place, but only if it carries the marker and its process is gone
//!   ([`remove_stale`]);
//! * SIGINT and SIGTERM remove the live temporary folders (a small registry, since
//!   a sweep draws while other runs go on) and exit 130 or 143 with one line
//!   ([`install_signal_cleanup`]).

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The marker file of a folder written by boinc-sim (hidden, a few bytes).
pub(crate) const MARKER: &str = ".boinc-sim";

/// The marker's content: says what the file is for whoever finds it.
const MARKER_TEXT: &str = "This folder was written by boinc-sim, which may replace it.\n";

/// The manifest of a run folder, which `stats::manifest` writes; one that boinc-sim
/// wrote also makes a folder ours (run folders from before the marker).
pub(crate) const MANIFEST_JSON: &str = "manifest.json";

/// Temporary folders being written by this process, removed on SIGINT/SIGTERM.
static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Folders the user allowed to be replaced with `--force` (canonical paths).
static FORCED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// What writing to a target folder will do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    /// Nothing is there (or an empty folder): nothing is lost.
    New,
    /// An earlier boinc-sim output is there and will be replaced.
    ReplacesOurs,
    /// A folder boinc-sim did not write is there and `--force` replaces it.
    ReplacesForced,
}

/// Whether `dir` is a folder boinc-sim wrote: it has the [`MARKER`], or a
/// `manifest.json` whose `crate` is boinc-sim (run folders from before the marker).
pub(crate) fn is_ours(dir: &Path) -> bool {
    if !fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir()) {
        return false;
    }
    if fs::symlink_metadata(dir.join(MARKER)).is_ok_and(|m| m.is_file()) {
        return true;
    }
    fs::read_to_string(dir.join(MANIFEST_JSON))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .is_some_and(|m| m.get("crate").and_then(|c| c.as_str()) == Some(env!("CARGO_PKG_NAME")))
}

/// Folders never replaced, even with `--force`: the current folder, the home
/// folder, the file system root, any of their parents, and any mount point.
fn forbidden(canon: &Path) -> Option<&'static str> {
    use std::os::unix::fs::MetadataExt;
    if canon.parent().is_none() {
        return Some("a file system root");
    }
    if let Ok(cwd) = std::env::current_dir().and_then(fs::canonicalize)
        && cwd.starts_with(canon)
    {
        return Some(if cwd == canon {
            "the current folder"
        } else {
            "a parent of the current folder"
        });
    }
    if let Some(home) = std::env::var_os("HOME").and_then(|h| fs::canonicalize(h).ok())
        && home.starts_with(canon)
    {
        return Some(if home == canon {
            "the home folder"
        } else {
            "a parent of the home folder"
        });
    }
    if let (Ok(m), Some(Ok(pm))) = (fs::metadata(canon), canon.parent().map(fs::metadata))
        && m.dev() != pm.dev()
    {
        return Some("a file system root (a mount point)");
    }
    None
}

/// Why boinc-sim may not write an output folder ([`check_target`]). Each message
/// says why and what to do instead; the command line exits 2 (bad input) on any of
/// them, since nothing has been done yet.
#[derive(Debug, thiserror::Error)]
pub(crate) enum OutDirError {
    /// The path ends in `..` or a root: there is no folder name to write.
    #[error(
        "`{}` does not name an output folder; expected a path ending in a folder name, e.g. output/run1",
        .0.display()
    )]
    NoName(PathBuf),
    /// What is at the path cannot be looked at.
    #[error("cannot inspect {}: {cause}", .dir.display())]
    Inspect { dir: PathBuf, cause: io::Error },
    /// The current folder, a home folder, a root or a parent of one of them.
    #[error(
        "{} is {what}; boinc-sim never replaces it, even with --force; choose an output folder inside it, e.g. --out output/run1",
        .dir.display()
    )]
    Forbidden { dir: PathBuf, what: &'static str },
    /// A folder whose entries cannot be listed.
    #[error("cannot read {}: {cause}", .dir.display())]
    Read { dir: PathBuf, cause: io::Error },
    /// A folder boinc-sim did not write, without `--force`: `entries` is how many
    /// entries it holds and `first` the first few names, sorted.
    #[error(
        "{} already exists and was not written by boinc-sim (it has no boinc-sim {MANIFEST_JSON} or {MARKER} marker; it holds {}); boinc-sim replaces only its own output folders. Choose another output folder, or add --force to replace this one and everything in it",
        .dir.display(),
        listing(*.entries, .first)
    )]
    NotOurs {
        dir: PathBuf,
        entries: usize,
        first: Vec<String>,
    },
    /// A file, without `--force`.
    #[error(
        "{} is a file, not an output folder; choose another output folder, or add --force to replace the file",
        .0.display()
    )]
    IsFile(PathBuf),
}

/// How many entries a refused folder holds, and the first few: `2 entries: a, b`,
/// `5 entries: a, b, c, ...`.
fn listing(entries: usize, first: &[String]) -> String {
    format!(
        "{entries} entr{}: {}{}",
        if entries == 1 { "y" } else { "ies" },
        first.join(", "),
        if entries > first.len() { ", ..." } else { "" }
    )
}

/// How many names of a refused folder its message shows.
const SHOWN_ENTRIES: usize = 3;

/// Checks that boinc-sim may write its output folder at `dir`, before any work is
/// done: refuses a folder it did not write unless `force`, and the current folder, a
/// home folder or a root always.
pub(crate) fn check_target(dir: &Path, force: bool) -> Result<Target, OutDirError> {
    if dir.file_name().is_none() {
        return Err(OutDirError::NoName(dir.to_path_buf()));
    }
    let meta = match fs::symlink_metadata(dir) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Target::New),
        Err(cause) => {
            return Err(OutDirError::Inspect {
                dir: dir.to_path_buf(),
                cause,
            });
        }
    };
    let canon = fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    if let Some(what) = forbidden(&canon) {
        return Err(OutDirError::Forbidden {
            dir: dir.to_path_buf(),
            what,
        });
    }
    if meta.is_dir() {
        if is_ours(dir) {
            return Ok(Target::ReplacesOurs);
        }
        let mut names: Vec<String> = fs::read_dir(dir)
            .map_err(|cause| OutDirError::Read {
                dir: dir.to_path_buf(),
                cause,
            })?
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        if names.is_empty() {
            return Ok(Target::New);
        }
        if force {
            FORCED.lock().unwrap_or_else(|e| e.into_inner()).push(canon);
            return Ok(Target::ReplacesForced);
        }
        names.sort();
        let entries = names.len();
        names.truncate(SHOWN_ENTRIES);
        return Err(OutDirError::NotOurs {
            dir: dir.to_path_buf(),
            entries,
            first: names,
        });
    }
    if force {
        FORCED.lock().unwrap_or_else(|e| e.into_inner()).push(canon);
        return Ok(Target::ReplacesForced);
    }
    Err(OutDirError::IsFile(dir.to_path_buf()))
}

/// Lets `dir` be replaced although boinc-sim did not mark it (`--force`, or a
/// caller that recognized it otherwise).
pub fn allow(dir: &Path) -> io::Result<()> {
    let canon = fs::canonicalize(dir)?;
    FORCED.lock().unwrap_or_else(|e| e.into_inner()).push(canon);
    Ok(())
}

/// Whether `final_dir` may be replaced by a finished temporary folder: it is ours,
/// or [`check_target`] let `--force` replace it.
pub(crate) fn may_replace(final_dir: &Path) -> bool {
    if is_ours(final_dir) || fs::read_dir(final_dir).is_ok_and(|mut d| d.next().is_none()) {
        return true;
    }
    let canon = fs::canonicalize(final_dir).unwrap_or_else(|_| final_dir.to_path_buf());
    FORCED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .contains(&canon)
}

/// The process id in a temporary or set-aside sibling's name
/// (`<name>.tmp-<pid>`, `<name>.old-<pid>`), if `entry` is one of `name`'s.
fn sibling_pid(entry: &str, name: &str) -> Option<u32> {
    let rest = entry.strip_prefix(name)?;
    let digits = rest
        .strip_prefix(".tmp-")
        .or_else(|| rest.strip_prefix(".old-"))?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// Whether `pid` is another boinc-sim process still running (Linux `/proc`; where
/// there is no `/proc`, no process counts as running).
fn running_elsewhere(pid: u32) -> bool {
    if pid == std::process::id() {
        return false;
    }
    fs::read_to_string(format!("/proc/{pid}/comm"))
        .is_ok_and(|c| c.trim_end() == env!("CARGO_PKG_NAME"))
}

/// Removes the temporary (`.tmp-<pid>`) and set-aside (`.old-<pid>`) siblings of
/// `final_dir` that killed runs left behind, whatever their pid: only those that
/// boinc-sim wrote (see [`is_ours`]) and whose process is no longer running.
pub(crate) fn remove_stale(final_dir: &Path) -> io::Result<()> {
    let (Some(parent), Some(name)) = (final_dir.parent(), final_dir.file_name()) else {
        return Ok(());
    };
    let parent = if parent.as_os_str().is_empty() {
        Path::new(".")
    } else {
        parent
    };
    let name = name.to_string_lossy();
    let Ok(entries) = fs::read_dir(parent) else {
        return Ok(());
    };
    for e in entries.filter_map(|e| e.ok()) {
        let entry = e.file_name().to_string_lossy().into_owned();
        if let Some(pid) = sibling_pid(&entry, &name)
            && !running_elsewhere(pid)
            && is_ours(&e.path())
        {
            remove_any(&e.path())?;
        }
    }
    Ok(())
}

/// Creates the temporary folder `<final_dir>.tmp-<pid>` (and the parent folders),
/// first removing stale ones ([`remove_stale`]), writes the [`MARKER`] into it and
/// registers it for removal on SIGINT/SIGTERM. Pair with [`move_into_place`] or
/// [`discard_temp`].
///
/// [`move_into_place`]: super::output::move_into_place
pub(crate) fn create_temp(final_dir: &Path) -> io::Result<PathBuf> {
    let tmp = sibling(final_dir, "tmp")?;
    if let Some(parent) = tmp.parent() {
        fs::create_dir_all(parent)?;
    }
    remove_stale(final_dir)?;
    if fs::symlink_metadata(&tmp).is_ok() {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!(
                "{} exists and was not written by boinc-sim; remove it or choose another output folder",
                tmp.display()
            ),
        ));
    }
    fs::create_dir(&tmp)?;
    let registered = tmp.clone();
    LIVE.lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(registered);
    if let Err(e) = fs::write(tmp.join(MARKER), MARKER_TEXT) {
        discard_temp(&tmp);
        return Err(e);
    }
    Ok(tmp)
}

/// Removes a temporary folder made by [`create_temp`] and forgets it.
pub(crate) fn discard_temp(tmp: &Path) {
    let mut live = LIVE.lock().unwrap_or_else(|e| e.into_inner());
    live.retain(|p| p != tmp);
    let _ = remove_any(tmp);
}

/// Runs `rename` (the move of `tmp` into place) with the registry locked, so that a
/// signal never removes a folder half-way through its move, and forgets `tmp`.
pub(crate) fn while_moving<T>(tmp: &Path, rename: impl FnOnce() -> io::Result<T>) -> io::Result<T> {
    let mut live = LIVE.lock().unwrap_or_else(|e| e.into_inner());
    let r = rename();
    if r.is_ok() {
        live.retain(|p| p != tmp);
    }
    r
}

/// Installs the SIGINT/SIGTERM handler: on either signal, remove every live
/// temporary folder, print one line and exit 130 (SIGINT) or 143 (SIGTERM), the
/// shell's 128 + signal number. Safe to call more than once (only the first
/// installs). A failure to install is reported and otherwise ignored: the next run
/// removes what a killed run leaves.
pub(crate) fn install_signal_cleanup() {
    use signal_hook::consts::{SIGINT, SIGTERM};
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let mut signals = match signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("warning: cannot catch SIGINT/SIGTERM ({e}); a killed run leaves its temporary folder for the next run to remove");
                return;
            }
        };
        std::thread::spawn(move || {
            if let Some(sig) = signals.forever().next() {
                let live = LIVE.lock().unwrap_or_else(|e| e.into_inner());
                for tmp in live.iter() {
                    // Writer threads may still add files while the folder goes.
                    for _ in 0..5 {
                        if remove_any(tmp).is_ok() {
                            break;
                        }
                    }
                }
                let name = if sig == SIGINT { "SIGINT" } else { "SIGTERM" };
                let what = if live.is_empty() {
                    "no output was written".to_string()
                } else {
                    let shown: Vec<String> =
                        live.iter().map(|p| p.display().to_string()).collect();
                    format!("removed the unfinished output {}", shown.join(", "))
                };
                eprintln!("interrupted by {name}: {what}");
                std::process::exit(128 + sig);
            }
        });
    });
}

/// `<dir>.<kind>-<pid>`, a sibling of `dir`.
pub(crate) fn sibling(dir: &Path, kind: &str) -> io::Result<PathBuf> {
    let name = dir.file_name().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("`{}` does not name an output folder", dir.display()),
        )
    })?;
    let mut name = name.to_os_string();
    name.push(format!(".{kind}-{}", std::process::id()));
    Ok(dir.with_file_name(name))
}

/// Removes a folder or file if it exists.
pub(crate) fn remove_any(path: &Path) -> io::Result<()> {
    match fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => fs::remove_dir_all(path),
        Ok(_) => fs::remove_file(path),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sibling_pids_are_recognized_only_for_the_folder() {
        assert_eq!(sibling_pid("run.tmp-123", "run"), Some(123));
        assert_eq!(sibling_pid("run.old-9", "run"), Some(9));
        assert_eq!(sibling_pid("run.tmp-", "run"), None);
        assert_eq!(sibling_pid("run.tmp-12x", "run"), None);
        assert_eq!(sibling_pid("run2.tmp-12", "run"), None);
        assert_eq!(sibling_pid("run.bak", "run"), None);
    }

    #[test]
    fn a_user_folder_is_refused_and_kept_ours_and_empty_ones_are_replaced() {
        let tmp = tempfile::tempdir().unwrap();
        let user = tmp.path().join("mine");
        fs::create_dir(&user).unwrap();
        fs::write(user.join("thesis.tex"), "x").unwrap();
        let err = check_target(&user, false).unwrap_err().to_string();
        assert!(
            err.contains("was not written by boinc-sim") && err.contains("thesis.tex"),
            "{err}"
        );
        assert!(!may_replace(&user));
        assert_eq!(check_target(&user, true).unwrap(), Target::ReplacesForced);
        assert!(may_replace(&user));

        let empty = tmp.path().join("empty");
        fs::create_dir(&empty).unwrap();
        assert_eq!(check_target(&empty, false).unwrap(), Target::New);
        assert_eq!(
            check_target(&tmp.path().join("none"), false).unwrap(),
            Target::New
        );

        let ours = tmp.path().join("ours");
        fs::create_dir(&ours).unwrap();
        fs::write(ours.join(MANIFEST_JSON), r#"{"crate": "boinc-sim"}"#).unwrap();
        assert_eq!(check_target(&ours, false).unwrap(), Target::ReplacesOurs);
        fs::write(ours.join(MANIFEST_JSON), r#"{"crate": "other"}"#).unwrap();
        assert!(check_target(&ours, false).is_err());
        fs::write(ours.join(MARKER), MARKER_TEXT).unwrap();
        assert_eq!(check_target(&ours, false).unwrap(), Target::ReplacesOurs);

        let file = tmp.path().join("file");
        fs::write(&file, "x").unwrap();
        assert!(
            check_target(&file, false)
                .unwrap_err()
                .to_string()
                .contains("is a file")
        );
    }

    #[test]
    fn the_root_and_the_current_folder_are_never_replaced() {
        for p in ["/", "."] {
            assert!(check_target(Path::new(p), true).is_err(), "{p}");
        }
        let cwd = std::env::current_dir().unwrap();
        let err = check_target(&cwd, true).unwrap_err().to_string();
        assert!(err.contains("the current folder"), "{err}");
        let err = check_target(cwd.parent().unwrap(), true)
            .unwrap_err()
            .to_string();
        assert!(err.contains("parent of the current folder"), "{err}");
    }

    #[test]
    fn stale_marked_temp_folders_of_dead_runs_go_and_others_stay() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("run");
        // A pid far above Linux's pid_max: no process has it.
        let stale = tmp.path().join("run.tmp-4194399");
        fs::create_dir(&stale).unwrap();
        fs::write(stale.join(MARKER), MARKER_TEXT).unwrap();
        let users = tmp.path().join("run.tmp-4194398");
        fs::create_dir(&users).unwrap();
        fs::write(users.join("data.csv"), "x").unwrap();
        let t = create_temp(&dir).unwrap();
        assert!(!stale.exists());
        assert!(users.join("data.csv").exists());
        assert!(t.join(MARKER).is_file());
        assert!(LIVE.lock().unwrap().contains(&t));
        discard_temp(&t);
        assert!(!t.exists());
        assert!(!LIVE.lock().unwrap().contains(&t));
    }
}
