#!/usr/bin/env python3
"""Writes host-sample.xml and host-sample.xml.gz: an invented project's hosts in the
layout of BOINC's statistics export (sched/db_dump.cpp, write_host with detail).
The values are made up, plausible and varied; no real project's data is used.
Deterministic: run it again and the files are the same bytes."""
import gzip, random, pathlib

NOW = 1_700_000_000
rng = random.Random(20231114)
here = pathlib.Path(__file__).parent

CPUS = [
    ("GenuineIntel", "Intel(R) Core(TM) i5-8400 CPU @ 2.80GHz", 6, 3.6e9),
    ("GenuineIntel", "Intel(R) Core(TM) i7-12700K", 20, 6.1e9),
    ("GenuineIntel", "Intel(R) Xeon(R) CPU E5-2680 v4 @ 2.40GHz", 28, 3.9e9),
    ("AuthenticAMD", "AMD Ryzen 7 5800X 8-Core Processor", 16, 5.4e9),
    ("AuthenticAMD", "AMD Ryzen 5 3600 6-Core Processor", 12, 4.6e9),
    ("AuthenticAMD", "AMD EPYC 7452 32-Core Processor", 64, 4.2e9),
    ("Apple", "Apple M1", 8, 5.9e9),
    ("ARM", "Cortex-A72", 4, 1.1e9),
]
OSES = [
    ("Microsoft Windows", "Professional x64 Edition, (10.00.19045.00)", 0.55),
    ("Linux Ubuntu", "Ubuntu 22.04.3 LTS [6.5.0-14-generic|libc 2.35]", 0.25),
    ("Linux Debian", "Debian GNU/Linux 12 (bookworm) [6.1.0-13-amd64|libc 2.36]", 0.10),
    ("Darwin", "22.6.0", 0.10),
]
GPUS = [("nvidia", "NVIDIA GeForce RTX 3060", 12044), ("nvidia", "NVIDIA GeForce GTX 1660", 6144),
        ("amd", "AMD Radeon RX 6700 XT", 12272), ("intel", "Intel(R) UHD Graphics 630", 3072)]

def pick_os():
    x = rng.random()
    for name, ver, w in OSES:
        if x < w:
            return name, ver
        x -= w
    return OSES[0][0], OSES[0][1]

out = ['<?xml version="1.0" encoding="utf-8"?>', "<hosts>"]
for i in range(120):
    hid = 1000 + i * 7 + rng.randrange(7)
    vendor, model, ncpus, fpops = rng.choice(CPUS)
    if vendor in ("Apple",):
        os_name, os_ver = "Darwin", "22.6.0"
    elif vendor == "ARM":
        os_name, os_ver = "Linux Raspbian", "Raspbian GNU/Linux 11 (bullseye) [6.1.21-v8+|libc 2.31]"
    else:
        os_name, os_ver = pick_os()
        if os_name == "Darwin":
            os_name, os_ver = "Linux Ubuntu", OSES[1][1]
    fpops *= rng.uniform(0.85, 1.1)
    create = NOW - rng.randrange(3 * 86400, 3 * 365 * 86400)
    if rng.random() < 0.7:
        rpc = NOW - rng.randrange(0, 2 * 86400)
    else:
        rpc = create + int((NOW - create) * rng.uniform(0.05, 0.95))
    gpus = []
    if vendor not in ("Apple", "ARM") and rng.random() < 0.35:
        t, name, ram = rng.choice(GPUS)
        gpus.append((t, name, 2 if rng.random() < 0.1 else 1, ram))
    misc = '{\n    "client_version": "%s"' % rng.choice(["7.20.2", "7.22.2", "7.24.1", "8.0.2"])
    if gpus:
        misc += ',\n    "gpus": [\n' + ",\n".join(
            '        {\n            "type": "%s",\n            "model": "%s",\n            "count": %d,\n'
            '            "ram_mb": %d,\n            "driver_version": "%s",\n            "opencl_version": "300"\n        }'
            % (t, name, n, ram, "53514") for t, name, n, ram in gpus) + "\n    ]"
    misc += "\n}"
    total = rng.uniform(0, 2e6) * (NOW - create) / (3 * 365 * 86400)
    out.append("<host>")
    out.append("    <id>%d</id>" % hid)
    if rng.random() < 0.8:
        out.append("    <userid>%d</userid>" % (100 + rng.randrange(80)))
    out += [
        "    <total_credit>%f</total_credit>" % total,
        "    <expavg_credit>%f</expavg_credit>" % (total / 500 if rpc > NOW - 86400 * 7 else 0.0),
        "    <expavg_time>%f</expavg_time>" % float(rpc),
        "    <p_vendor>%s</p_vendor>" % vendor,
        "    <p_model>%s</p_model>" % model,
        "    <os_name>%s</os_name>" % os_name,
        "    <os_version>%s</os_version>" % os_ver,
        "    <misc><![CDATA[%s]]></misc>" % misc,
        "  <create_time>%d</create_time>" % create,
        "  <rpc_time>%d</rpc_time>" % rpc,
        "  <timezone>%d</timezone>" % (3600 * rng.choice([-8, -5, -3, 0, 1, 2, 3, 5, 8, 9, 10])),
        "  <ncpus>%d</ncpus>" % ncpus,
        "  <p_fpops>%f</p_fpops>" % fpops,
        "  <p_iops>%f</p_iops>" % (fpops * rng.uniform(3, 5)),
        "  <p_membw>%f</p_membw>" % 1e9,
        "  <m_nbytes>%f</m_nbytes>" % (rng.choice([4, 8, 16, 32, 64, 128]) * 2**30),
        "  <m_cache>%f</m_cache>" % rng.choice([262144.0, 524288.0, 1048576.0]),
        "  <m_swap>%f</m_swap>" % (rng.choice([2, 4, 8]) * 2**30),
        "  <d_total>%f</d_total>" % (rng.choice([256, 512, 1000, 2000]) * 1e9),
        "  <d_free>%f</d_free>" % (rng.uniform(10, 200) * 1e9),
        "  <n_bwup>%f</n_bwup>" % rng.uniform(1e5, 5e6),
        "  <n_bwdown>%f</n_bwdown>" % rng.uniform(1e6, 5e7),
        "  <avg_turnaround>%f</avg_turnaround>" % rng.uniform(3600, 5 * 86400),
        "  <credit_per_cpu_sec>%f</credit_per_cpu_sec>" % 0.0,
        "  <host_cpid>%032x</host_cpid>" % rng.getrandbits(128),
        "</host>",
    ]
out.append("</hosts>")
text = "\n".join(out) + "\n"
(here / "host-sample.xml").write_text(text)
with open(here / "host-sample.xml.gz", "wb") as f:
    with gzip.GzipFile(filename="host-sample.xml", mode="wb", fileobj=f, mtime=0) as g:
        g.write(text.encode())
