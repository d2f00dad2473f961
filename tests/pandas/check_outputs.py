"""Loads every CSV of a boinc-sim run folder with pandas' read_csv and no options,
and checks column types and row counts against summary.json (docs/outputs.md).

Usage: python3 tests/pandas/check_outputs.py RUN_DIR
Exits non-zero with a message on the first mismatch.
"""
import json
import sys
from pathlib import Path

import pandas as pd


def fail(msg):
    print(f"check_outputs: {msg}", file=sys.stderr)
    sys.exit(1)


def expect_kind(df, name, cols, kind):
    for c in cols:
        if c not in df.columns:
            fail(f"{name}: missing column {c}")
        k = df[c].dtype.kind
        if k not in kind:
            fail(f"{name}: column {c} has dtype {df[c].dtype}, expected kind {kind}")


def check_window_figures(summary, wu, res, summ):
    """The throughput, deadline and outcome figures of summary.csv, recomputed from
    the row tables as docs/outputs.md defines them ("The measured window"): after
    the warm-up, up to the end."""
    warmup, end = summary["warmup_s"], summary["duration_s"]
    days = (end - warmup) / 86400
    for _, row in summ.iterrows():
        name = row["project"]
        w = wu[(wu["project"] == name) & (wu["assimilate_state"] == 2)]
        w = w[w["assimilated_time_s"] >= warmup]
        valid = (w["canonical_resultid"] != 0) & (w["error_mask"] == 0)
        r = res[(res["project"] == name) & res["sent_time_s"].notna()]
        r = r[r["sent_time_s"] >= warmup]
        censored = r["report_deadline_s"] >= end
        passed = r[~censored]
        reported = passed["outcome"].isin([1, 3, 6]) & passed["received_time_s"].notna()
        late = reported & (passed["received_time_s"] > passed["report_deadline_s"])
        detached = ~reported & (
            (passed["outcome"] == 7)
            | ((passed["outcome"] == 4) & passed["received_time_s"].notna())
        )
        no_reply = ~reported & ~detached
        judged = res[
            (res["project"] == name)
            & (res["outcome"] == 1)
            & res["validate_state"].isin([1, 2])
            & (res["received_time_s"] >= warmup)
        ]
        mine = res[(res["project"] == name)]
        mine = mine[mine["sent_time_s"].isna() | (mine["sent_time_s"] >= warmup)]
        with_outcome = mine[mine["outcome"] != 0]
        want = {
            "workunits_valid_per_day": valid.sum() / days,
            "workunits_error_per_day": (~valid).sum() / days,
            "results_censored": censored.sum(),
            "results_deadline_passed": len(passed),
            "results_deadline_late": late.sum(),
            "results_deadline_no_reply": no_reply.sum(),
            "results_deadline_detached": detached.sum(),
            "deadline_fail_frac": (late.sum() + no_reply.sum() + detached.sum()) / len(passed)
            if len(passed)
            else None,
            "invalid_frac": (judged["validate_state"] == 2).sum() / len(judged)
            if len(judged)
            else None,
            "error_frac": (with_outcome["outcome"] == 3).sum() / len(with_outcome)
            if len(with_outcome)
            else None,
        }
        for c, v in want.items():
            got = row[c]
            if (v is None) != pd.isna(got) or (
                v is not None and abs(got - v) > 1e-9 * max(1.0, abs(v))
            ):
                fail(f"summary.csv {name}.{c} = {got}, recomputed from the row tables {v}")


def main(run_dir):
    d = Path(run_dir)
    summary = json.loads((d / "summary.json").read_text())
    manifest = json.loads((d / "manifest.json").read_text())
    projects = summary["projects"]

    wu = pd.read_csv(d / "workunits.csv")
    res = pd.read_csv(d / "results.csv")
    hosts = pd.read_csv(d / "hosts.csv")
    ts = pd.read_csv(d / "timeseries.csv")
    hist = pd.read_csv(d / "histograms.csv")
    summ = pd.read_csv(d / "summary.csv")

    # Row counts agree with the summary.
    for name, t in projects.items():
        n_wu = int((wu["project"] == name).sum())
        n_res = int((res["project"] == name).sum())
        if n_wu != t["workunits"]:
            fail(f"workunits.csv has {n_wu} rows for {name}, summary says {t['workunits']}")
        if n_res != t["results"]:
            fail(f"results.csv has {n_res} rows for {name}, summary says {t['results']}")
    if len(hosts) != summary["clients"]["hosts"]:
        fail(f"hosts.csv has {len(hosts)} rows, summary says {summary['clients']['hosts']}")

    # Types: integers stay integers (or floats where a value may be empty), floats
    # are floats, names are text.
    expect_kind(wu, "workunits.csv", ["id", "create_time_s", "min_quorum", "error_mask"], "i")
    expect_kind(wu, "workunits.csv", ["rsc_fpops_est_flops", "true_size_flops", "canonical_credit"], "f")
    expect_kind(res, "results.csv", ["id", "server_state", "outcome", "validate_state"], "i")
    expect_kind(res, "results.csv", ["cpu_time_s", "granted_credit"], "f")
    expect_kind(res, "results.csv", ["sent_time_s", "received_time_s"], "if")
    expect_kind(hosts, "hosts.csv", ["host", "p_ncpus", "rpcs", "jobs_received"], "i")
    expect_kind(hosts, "hosts.csv", ["p_fpops", "wasted_frac", "idle_frac", "monotony"], "f")
    expect_kind(ts, "timeseries.csv", ["time_s"], "i")
    expect_kind(ts, "timeseries.csv", ["value"], "f")
    expect_kind(hist, "histograms.csv", ["count"], "i")
    expect_kind(hist, "histograms.csv", ["bin_lower", "bin_upper"], "f")
    cv = pd.read_csv(d / "credit_versions.csv")
    expect_kind(cv, "credit_versions.csv", ["time_s", "app_id", "app_version_id", "results"], "i")
    expect_kind(cv, "credit_versions.csv", ["credit", "true_flops", "credit_per_gflop", "pfc_scale", "neutrality_ratio"], "f")
    # Every VALID result granted credit is counted once, with its credit.
    valid = res[(res["validate_state"] == 1) & (res["granted_credit"] > 0)]
    if int(cv["results"].sum()) != len(valid):
        fail(f"credit_versions.csv counts {cv['results'].sum()} results, results.csv has {len(valid)} VALID with credit")
    if abs(cv["credit"].sum() - valid["granted_credit"].sum()) > 1e-6 * max(1.0, valid["granted_credit"].sum()):
        fail("credit_versions.csv credit does not add up to results.csv granted_credit")
    for extra in ["credit_devices.csv", "credit_groups.csv"]:
        df = pd.read_csv(d / extra)
        expect_kind(df, extra, ["results"], "i")
        expect_kind(df, extra, ["credit", "true_flops", "credit_per_gflop"], "f")
        if int(df["results"].sum()) != len(valid):
            fail(f"{extra}: {df['results'].sum()} results, expected {len(valid)}")
    check_join(res, hosts, projects)
    for df, name in [(wu, "workunits.csv"), (res, "results.csv"), (ts, "timeseries.csv")]:
        if not pd.api.types.is_string_dtype(df["project"]):
            fail(f"{name}: project column is {df['project'].dtype}, expected text")

    # The time series cover every bucket of every project and metric.
    # plots/ and report.html (`run --plot`, `boinc-sim plot`) are drawn from the data
    # files the manifest lists, and are not listed themselves.
    derived = {"plots", "report.html"}
    if manifest["files"] != sorted(p.name for p in d.iterdir() if p.name not in derived):
        fail("manifest.json does not list the folder's files")
    # A project may have metrics of its own (the server-load gauges of a project
    # with daemon outages), each over every bucket.
    per = ts.groupby(["project", "metric"]).size()
    if per.nunique() != 1:
        fail("timeseries.csv: projects or metrics have different numbers of buckets")
    n_metrics = ts.groupby("project")["metric"].nunique()
    if len(ts) != int(n_metrics.sum()) * per.iloc[0]:
        fail("timeseries.csv: row count is not Σ (a project's metrics) × buckets")
    load = ["backlog_transitioner_workunits", "job_cache_fill", "daemons_down"]
    for p, names in ts.groupby("project")["metric"].unique().items():
        if len(set(load) & set(names)) not in (0, len(load)):
            fail(f"timeseries.csv: project {p} has some of the server-load gauges only")
    sent = ts[ts["metric"] == "results_sent"]["value"].sum()
    want = sum(t["results_sent"] for t in projects.values())
    if int(sent) != want:
        fail(f"timeseries.csv: {sent} results sent, summary says {want}")
    # summary.csv: one row per project, every figure a float, equal to summary.json.
    if sorted(summ["project"]) != sorted(projects):
        fail(f"summary.csv projects {list(summ['project'])}, summary.json has {list(projects)}")
    if not pd.api.types.is_string_dtype(summ["project"]):
        fail(f"summary.csv: project column is {summ['project'].dtype}, expected text")
    for c in summ.columns[1:]:
        if summ[c].dtype.kind != "f":
            fail(f"summary.csv: column {c} is {summ[c].dtype}, expected floats")
    for _, row in summ.iterrows():
        head = projects[row["project"]]["headline"]
        for c in summ.columns[1:]:
            want = head[c]
            if (want is None) != pd.isna(row[c]) or (
                want is not None and abs(row[c] - want) > 1e-9 * max(1.0, abs(want))
            ):
                fail(f"summary.csv {row['project']}.{c} = {row[c]}, summary.json says {want}")
    check_science(summary, wu, res, ts, summ)
    check_apps(d, wu, res, summ)
    check_window_figures(summary, wu, res, summ)
    print(
        f"check_outputs: ok ({len(wu)} workunits, {len(res)} results, {len(hosts)} hosts, "
        f"{len(ts)} series rows, {len(hist)} histogram rows)"
    )


def check_join(res, hosts, projects):
    """results.csv joins hosts.csv on `host` (docs/outputs.md, "Joining results to
    hosts"): every result sent has the world index of a host in hosts.csv, each
    (project, hostid) is one host, and per host and project the results sent there
    are the jobs hosts.csv says it received."""
    sent = res[res["hostid"] > 0]
    if sent["host"].isna().any():
        fail("results.csv: a result sent (hostid > 0) has no host")
    if res.loc[res["hostid"] == 0, "host"].notna().any():
        fail("results.csv: a result never sent has a host")
    expect_kind(sent.astype({"host": "int64"}), "results.csv", ["host"], "i")
    joined = sent.merge(hosts, on="host", how="left", validate="many_to_one", indicator=True)
    if (joined["_merge"] != "both").any():
        fail("results.csv: a host index that hosts.csv does not have")
    if sent.groupby(["project", "hostid"])["host"].nunique().max() != 1:
        fail("results.csv: one (project, hostid) names two hosts")
    for name in projects:
        col = f"{name}_jobs_received"
        got = joined[joined["project"] == name].groupby("host").size()
        got = got.reindex(hosts["host"], fill_value=0).to_numpy()
        if (got != hosts[col].to_numpy()).any():
            fail(f"results.csv sent per host of {name} differ from hosts.csv {col}")


def check_science(summary, wu, res, ts, summ):
    """The science error figures (docs/outputs.md) recomputed from the row tables:
    truth columns hold 1, 0 or nothing; summary.csv (over the measured window), the
    per-bucket series and the last bucket of the cumulative wrong_canonical_frac
    series (over the whole run) agree with them."""
    warmup = summary["warmup_s"]
    expect_kind(res, "results.csv", ["output_correct"], "if")
    expect_kind(wu, "workunits.csv", ["canonical_correct"], "if")
    for df, c in [(res, "output_correct"), (wu, "canonical_correct")]:
        if not df[c].dropna().isin([0, 1]).all():
            fail(f"{c} holds values other than 0, 1 and empty")
    interval = int(ts["time_s"].drop_duplicates().sort_values().diff().min())
    for _, row in summ.iterrows():
        p = row["project"]
        w_all = wu[(wu["project"] == p) & (wu["canonical_resultid"] != 0)]
        w = w_all[w_all["canonical_found_time_s"] >= warmup]
        known = w["canonical_correct"].notna().sum()
        wrong = (w["canonical_correct"] == 0).sum()
        r = res[(res["project"] == p) & (res["received_time_s"] >= warmup)]
        want = {
            "workunits_wrong_canonical": wrong,
            "results_wrong_valid": ((r["output_correct"] == 0) & (r["validate_state"] == 1)).sum(),
            "results_correct_invalid": (
                (r["output_correct"] == 1) & (r["validate_state"] == 2)
            ).sum(),
            "wrong_canonical_frac": wrong / known if known else None,
        }
        for c, v in want.items():
            got = row[c]
            if (v is None) != pd.isna(got) or (v is not None and abs(got - v) > 1e-12):
                fail(f"summary.csv {p}.{c} = {got}, recomputed {v}")
        def per_bucket(metric):
            s = ts[(ts["project"] == p) & (ts["metric"] == metric)]
            return list(zip(s["time_s"], s["value"]))

        found = w_all[w_all["canonical_correct"].notna()]["canonical_found_time_s"] // interval
        wrong_by = (w_all[w_all["canonical_correct"] == 0]["canonical_found_time_s"] // interval).value_counts()
        known_by = found.value_counts()
        for t, v in per_bucket("workunits_wrong_canonical"):
            if v != wrong_by.get(t // interval, 0):
                fail(f"timeseries.csv {p}: workunits_wrong_canonical at {t} is {v}")
        for t, v in per_bucket("workunits_canonical_known"):
            if v != known_by.get(t // interval, 0):
                fail(f"timeseries.csv {p}: workunits_canonical_known at {t} is {v}")
        # The bucket's own rate: empty without a canonical result of known truth.
        for t, v in per_bucket("wrong_canonical_frac_interval"):
            k = known_by.get(t // interval, 0)
            rate = wrong_by.get(t // interval, 0) / k if k else None
            if (rate is None) != pd.isna(v) or (rate is not None and abs(v - rate) > 1e-12):
                fail(f"timeseries.csv {p}: wrong_canonical_frac_interval at {t} is {v}, recomputed {rate}")
        frac = ts[(ts["project"] == p) & (ts["metric"] == "wrong_canonical_frac")]["value"]
        last = frac.iloc[-1]
        run_known = w_all["canonical_correct"].notna().sum()
        run_frac = (w_all["canonical_correct"] == 0).sum() / run_known if run_known else 0.0
        if abs(last - run_frac) > 1e-12:
            fail(f"timeseries.csv {p}: last wrong_canonical_frac {last}, recomputed {run_frac}")


def check_apps(d, wu, res, summ):
    """summary_apps.csv (docs/outputs.md): one row per (project, app), summary.csv's
    columns but the per-project ones, floats; the counts are those of each app's rows
    in the row tables, and a one-app project's row repeats its summary.csv row."""
    apps = pd.read_csv(d / "summary_apps.csv")
    expect_kind(apps, "summary_apps.csv", ["app_id"], "i")
    for c in ["project", "app"]:
        if not pd.api.types.is_string_dtype(apps[c]):
            fail(f"summary_apps.csv: {c} column is {apps[c].dtype}, expected text")
    figures = list(apps.columns[3:])
    if [c for c in summ.columns if c in figures] != figures:
        fail(f"summary_apps.csv columns {figures} are not summary.csv's, in order")
    for c in figures:
        if apps[c].dtype.kind != "f":
            fail(f"summary_apps.csv: column {c} is {apps[c].dtype}, expected floats")
    if sorted(set(apps["project"])) != sorted(summ["project"]):
        fail(f"summary_apps.csv projects {list(apps['project'])}, summary.csv {list(summ['project'])}")
    app_of = wu.set_index(["project", "id"])["appid"]
    res_app = app_of.loc[list(zip(res["project"], res["workunitid"]))].to_numpy()
    for _, a in apps.iterrows():
        mine = (wu["project"] == a["project"]) & (wu["appid"] == a["app_id"])
        r = res[(res["project"] == a["project"]) & (res_app == a["app_id"])]
        want = {
            "workunits_created": mine.sum(),
            "results_created": len(r),
            "results_sent": r["sent_time_s"].notna().sum(),
        }
        for c, v in want.items():
            if a[c] != v:
                fail(f"summary_apps.csv {a['project']}/{a['app']}.{c} = {a[c]}, recomputed {v}")
    for _, row in summ.iterrows():
        mine = apps[apps["project"] == row["project"]]
        if len(mine) != 1:
            continue
        for c in figures:
            got, want = mine.iloc[0][c], row[c]
            if pd.isna(got) != pd.isna(want) or (not pd.isna(want) and got != want):
                fail(f"summary_apps.csv {row['project']}.{c} = {got}, summary.csv says {want}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        fail("usage: check_outputs.py RUN_DIR")
    main(sys.argv[1])
