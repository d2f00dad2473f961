//! Outputs never destroy what the user did not make, end to end: a
//! folder boinc-sim did not write is left intact (exit 2) unless `--force`, an
//! earlier output is replaced with a notice, a killed run removes its temporary
//! folder, stale ones are removed by the next run, and bad sizes and names are
//! refused in the user's words.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_boinc-sim"));
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

fn scenario(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join(name)
        .display()
        .to_string()
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("binary runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// A user's folder: two files and a sub-folder.
fn user_folder(dir: &Path) -> PathBuf {
    let u = dir.join("thesis");
    fs::create_dir_all(u.join("figures")).unwrap();
    fs::write(u.join("chapter1.tex"), "my work").unwrap();
    fs::write(u.join("figures").join("f1.pdf"), "pdf").unwrap();
    u
}

fn s1(out: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "run".to_string(),
        scenario("spec/s1-single-success.toml"),
        "--out".into(),
        out.display().to_string(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    bin().args(&args).output().expect("binary runs")
}

#[test]
fn a_folder_with_user_files_is_left_intact_and_the_run_exits_2() {
    let tmp = tempfile::tempdir().unwrap();
    let u = user_folder(tmp.path());
    let o = s1(&u, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("was not written by boinc-sim"), "{e}");
    assert!(e.contains("chapter1.tex") && e.contains("--force"), "{e}");
    assert_eq!(e.lines().count(), 1, "{e}");
    assert_eq!(entries(&u), ["chapter1.tex", "figures"]);
    assert_eq!(
        fs::read_to_string(u.join("chapter1.tex")).unwrap(),
        "my work"
    );
    assert_eq!(entries(tmp.path()), ["thesis"], "no temporary folder left");
}

#[test]
fn force_replaces_a_user_folder_and_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let u = user_folder(tmp.path());
    let o = s1(&u, &["--force"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("(--force)"), "{}", stderr(&o));
    assert!(u.join("manifest.json").is_file());
    assert!(!u.join("chapter1.tex").exists());
    assert_eq!(entries(tmp.path()), ["thesis"]);
}

#[test]
fn a_second_run_replaces_the_earlier_output_with_a_notice() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("s1");
    let first = s1(&out, &[]);
    assert!(first.status.success(), "{}", stderr(&first));
    assert!(!stderr(&first).contains("replaced"), "{}", stderr(&first));
    let second = s1(&out, &[]);
    assert!(second.status.success(), "{}", stderr(&second));
    let e = stderr(&second);
    assert!(
        e.contains(&format!("replaced the earlier output in {}", out.display())),
        "{e}"
    );
    assert_eq!(entries(tmp.path()), ["s1"]);
}

#[test]
fn the_current_folder_and_its_parents_are_never_replaced_even_with_force() {
    let tmp = tempfile::tempdir().unwrap();
    let inner = tmp.path().join("work");
    fs::create_dir(&inner).unwrap();
    fs::write(inner.join("keep.txt"), "x").unwrap();
    for out in [".", "../work", ".."] {
        let o = bin()
            .current_dir(&inner)
            .args([
                "run",
                &scenario("spec/s1-single-success.toml"),
                "--out",
                out,
                "--force",
            ])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{out}: {}", stderr(&o));
        assert!(stderr(&o).contains("never replaces") || stderr(&o).contains("does not name"));
    }
    assert_eq!(entries(&inner), ["keep.txt"]);
    assert_eq!(entries(tmp.path()), ["work"]);
}

#[test]
fn compare_and_plot_leave_user_folders_intact() {
    let tmp = tempfile::tempdir().unwrap();
    let run_dir = tmp.path().join("s1");
    assert!(s1(&run_dir, &["-q"]).status.success());
    let r = run_dir.display().to_string();

    let u = user_folder(tmp.path());
    let o = run(&["compare", &r, &r, "--out", &u.display().to_string()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(entries(&u), ["chapter1.tex", "figures"]);

    fs::create_dir(run_dir.join("plots")).unwrap();
    fs::write(run_dir.join("plots").join("notes.txt"), "mine").unwrap();
    let o = run(&["plot", &r, "-q"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--force"), "{}", stderr(&o));
    assert_eq!(entries(&run_dir.join("plots")), ["notes.txt"]);
    let o = run(&["plot", &r, "-q", "--force"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!run_dir.join("plots").join("notes.txt").exists());
    // Its own plots/ (marked) is replaced without --force.
    let o = run(&["plot", &r, "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn stale_temporary_folders_of_killed_runs_are_removed_and_user_ones_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("s1");
    // pids above Linux's largest pid_max: no process has them.
    let stale = tmp.path().join("s1.tmp-4194390");
    fs::create_dir(&stale).unwrap();
    fs::write(stale.join(".boinc-sim"), "").unwrap();
    fs::write(stale.join("results.csv"), "half").unwrap();
    let users = tmp.path().join("s1.tmp-4194391");
    fs::create_dir(&users).unwrap();
    fs::write(users.join("data.csv"), "mine").unwrap();
    let o = s1(&out, &["-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(entries(tmp.path()), ["s1", "s1.tmp-4194391"]);
    assert_eq!(entries(&users), ["data.csv"]);
}

#[test]
fn sigterm_removes_the_temporary_folder_and_exits_143() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("long");
    let child = bin()
        .args([
            "run",
            &scenario("quickstart.toml"),
            "--set",
            "simulation.duration=3650d",
            "--no-progress",
            "--out",
            &out.display().to_string(),
        ])
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let tmp_dir = tmp.path().join(format!("long.tmp-{}", child.id()));
    // Wait (bounded) until the run has made its temporary folder.
    for _ in 0..600 {
        if tmp_dir.join(".boinc-sim").exists() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(tmp_dir.is_dir(), "the run made no temporary folder");
    let k = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(k.success());
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(143), "{}", stderr(&o));
    let e = stderr(&o);
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(
        e.starts_with("interrupted by SIGTERM: removed the unfinished output"),
        "{e}"
    );
    assert!(entries(tmp.path()).is_empty(), "{:?}", entries(tmp.path()));
}

#[test]
fn a_misspelled_project_in_set_exits_2_and_names_the_projects() {
    let o = run(&[
        "check",
        &scenario("multi-project.toml"),
        "--set",
        "project.alpah.workunit.min_quorum=2",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("there is no project `alpah`"), "{e}");
    assert!(e.contains("the scenario's projects are: "), "{e}");
}

#[test]
fn four_billion_hosts_are_refused_with_the_estimate_before_allocating() {
    let o = run(&[
        "run",
        &scenario("quickstart.toml"),
        "--set",
        "host_group.0.count=4000000000",
        "--out",
        "/nonexistent/never-created",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("needs at least 59.6 TiB of memory") && e.contains("this run may use"),
        "{e}"
    );
    assert!(e.contains("`host_group.0.count`"), "{e}");
}

/// Every key that sizes an allocation is in the estimate: a cushion or a feeder
/// cache of 2^31 is refused by `check` and by `run`, naming the key, before the work
/// generator or the cache allocates anything (both were found by fuzzing).
#[test]
fn sizing_keys_are_refused_by_check_and_run_before_allocating() {
    for (set, key) in [
        (
            "project.main.work_generator.cushion=2147483648",
            "`project.main.work_generator.cushion`",
        ),
        (
            "project.main.config.shmem_work_items=2147483648",
            "`project.main.config.shmem_work_items`",
        ),
    ] {
        for cmd in [
            vec!["check"],
            vec!["run", "--out", "/nonexistent/never-created"],
        ] {
            let q = scenario("quickstart.toml");
            let mut args = vec![cmd[0], q.as_str(), "--set", set];
            args.extend(&cmd[1..]);
            let o = run(&args);
            assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
            let e = stderr(&o);
            assert!(
                e.contains(key) && e.contains("needs at least"),
                "{args:?}: {e}"
            );
            assert!(!e.contains("panicked") && !e.contains("backtrace"), "{e}");
        }
    }
    // A scripted creation of 2^32 - 1 workunits is refused at its event.
    let o = run(&[
        "check",
        &scenario("quickstart.toml"),
        "--set",
        "event=[{ at = 0, project = \"main\", create_workunits = 4294967295 }]",
    ]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(
        e.contains("`event.0.create_workunits`") && e.contains("needs at least"),
        "{e}"
    );
}

#[test]
fn a_count_out_of_range_is_said_in_words() {
    let o = run(&[
        "check",
        &scenario("quickstart.toml"),
        "--set",
        "host_group.0.count=5000000000",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("`5000000000` is out of range; expected a whole number from 0 to 4,294,967,295"),
        "{e}"
    );
    assert!(!e.contains("u32"), "{e}");
}

#[test]
fn a_short_bare_duration_warns_which_unit_was_assumed() {
    let o = run(&[
        "check",
        &scenario("quickstart.toml"),
        "--set",
        "project.main.workunit.delay_bound=3",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.starts_with("warning: ")
            && e.contains(
                "`project.main.workunit.delay_bound`: the bare number 3 is read as 3 seconds"
            ),
        "{e}"
    );
    let o = run(&[
        "check",
        &scenario("quickstart.toml"),
        "--set",
        "project.main.workunit.delay_bound=3s",
    ]);
    assert!(o.status.success() && o.stderr.is_empty(), "{}", stderr(&o));
}

#[test]
fn the_audit_trail_is_opt_in_for_unscripted_runs_and_gzip_compressed() {
    let tmp = tempfile::tempdir().unwrap();
    let short = [
        "--set",
        "simulation.duration=1d",
        "--set",
        "host_group.0.count=20",
        "-q",
    ];
    let plain = tmp.path().join("plain");
    let mut args = vec![
        "run".to_string(),
        scenario("quickstart.toml"),
        "--out".into(),
    ];
    args.push(plain.display().to_string());
    args.extend(short.iter().map(|s| s.to_string()));
    assert!(bin().args(&args).output().unwrap().status.success());
    let files = entries(&plain);
    assert!(
        !files.iter().any(|f| f.starts_with("transitions")),
        "{files:?}"
    );

    let audited = tmp.path().join("audited");
    args[3] = audited.display().to_string();
    args.push("--audit".into());
    assert!(bin().args(&args).output().unwrap().status.success());
    let gz = fs::read(audited.join("transitions.csv.gz")).unwrap();
    assert_eq!(&gz[..2], [0x1f, 0x8b], "gzip magic");
    assert!(!audited.join("transitions.csv").exists());

    // Scripted scenarios keep the plain CSV on by default.
    let s1_dir = tmp.path().join("s1");
    assert!(s1(&s1_dir, &["-q"]).status.success());
    assert!(s1_dir.join("transitions.csv").is_file());
}

/// A write that fails while the run goes on (here the file-size limit, `ulimit -f`,
/// with SIGXFSZ ignored so that the write returns EFBIG instead of killing the
/// process): the files are written by a thread of their own, and its error ends the
/// run as any unwritable output does: exit 1, one clean message naming the cause,
/// no panic, and no folder left, finished or temporary.
#[test]
#[cfg(target_os = "linux")]
fn a_write_error_during_the_run_ends_it_cleanly_and_leaves_no_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let o = Command::new("sh")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "-c",
            "trap '' XFSZ; ulimit -f 2048; exec \"$@\"",
            "sh",
            env!("CARGO_BIN_EXE_boinc-sim"),
            "run",
            &scenario("bench-short-jobs.toml"),
            "--set",
            "host_group.0.count=100",
            "--out",
            &out.display().to_string(),
            "-q",
        ])
        .output()
        .expect("sh runs");
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(e.contains("File too large"), "{e}");
    assert!(
        !e.contains("panicked") && !e.contains("RUST_BACKTRACE"),
        "{e}"
    );
    assert_eq!(entries(tmp.path()), Vec::<String>::new(), "{e}");
}
