#!/usr/bin/env python3
"""Writes jobs-sample.csv and hosts-sample.csv: a small synthetic job log for
`boinc-sim credit` (docs/credit.md). One app with a CPU version (id 1) and a GPU
version (id 2); 180 CPU-only hosts and 120 GPU hosts; 3000 workunits over 10 days,
two replicas each (min_quorum 2) on hosts of the same kind (homogeneous app
version); 2 % of results return a wrong output, 1 % fail. The GPU version's
`flops_estimate` is 10x the GPU's real peak speed (a wrong plan-class estimate), so
its raw claimed PFC is about 25x the CPU version's per FLOP until credit_new's
`update_av_scales` corrects it. Deterministic (seeded): re-running it rewrites the
same files.
"""
import csv
import random

rng = random.Random(13)
DAY = 86400
N_WU, DAYS = 3000, 10
EST = 3.6e13  # rsc_fpops_est of every workunit
hosts = []
for h in range(1, 301):
    gpu = h > 180
    p_fpops = rng.uniform(3e9, 5e9)
    p_iops = p_fpops * rng.uniform(1.5, 2.5)
    if gpu:
        peak = rng.uniform(30e9, 80e9)  # the GPU's real peak FLOPS
        speed = 0.2 * peak  # what it really sustains
        estimate = 10 * peak  # what the server believes: 10x wrong
    else:
        speed = 0.5 * p_fpops
        estimate = p_fpops
    hosts.append(dict(id=h, gpu=gpu, p_fpops=p_fpops, p_iops=p_iops, speed=speed, estimate=estimate))
cpu_hosts = [h for h in hosts if not h["gpu"]]
gpu_hosts = [h for h in hosts if h["gpu"]]

rows = []
rid = 0
for wu in range(1, N_WU + 1):
    created = int(wu * DAYS * DAY / N_WU)
    gpu = rng.random() < 0.6
    true_flops = EST * rng.uniform(0.8, 1.25)
    pool = gpu_hosts if gpu else cpu_hosts
    for h in rng.sample(pool, 2):
        rid += 1
        sent = created + rng.randint(0, 600)
        elapsed = true_flops / h["speed"] * rng.uniform(0.95, 1.05)
        received = sent + int(elapsed) + rng.randint(60, 3600)
        u = rng.random()
        outcome = "client_error" if u < 0.01 else "success"
        output = float(wu) if u >= 0.03 else float(-rid)
        rows.append(dict(
            result_id=rid, workunit_id=wu, app_id=1,
            app_version_id=2 if gpu else 1, device="gpu" if gpu else "cpu",
            host_id=h["id"], elapsed_time_s=round(elapsed, 1),
            cpu_time_s=round(elapsed * (0.05 if gpu else 1.0), 1),
            flops_estimate_flops=round(h["estimate"]), rsc_fpops_est_flops=EST,
            rsc_fpops_bound_flops=10 * EST, true_flops=round(true_flops),
            min_quorum=2, sent_time_s=sent, received_time_s=received,
            outcome=outcome, output=output if outcome == "success" else "",
        ))
rows.sort(key=lambda r: (r["received_time_s"], r["result_id"]))
with open("jobs-sample.csv", "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0].keys()), lineterminator="\n")
    w.writeheader()
    for r in rows:
        if r["output"] == "":
            r["output"] = 0.0
        w.writerow(r)
with open("hosts-sample.csv", "w", newline="") as f:
    w = csv.writer(f, lineterminator="\n")
    w.writerow(["host_id", "group", "p_fpops", "p_iops"])
    for h in hosts:
        w.writerow([h["id"], "gpu" if h["gpu"] else "cpu_only", round(h["p_fpops"]), round(h["p_iops"])])
