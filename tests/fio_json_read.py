#!/usr/bin/env python3
"""Reads a `volbench report --format fio-json` file the way fio-plot and
similar fio tooling read fio's own JSON output, and prints one line per job.
Exits non-zero if a field such tools use is missing or has the wrong type."""
import json
import sys

with open(sys.argv[1]) as f:
    data = json.load(f)
assert data["fio version"].startswith("fio-"), data["fio version"]
for job in data["jobs"]:
    opts = job["job options"]
    for d in ("read", "write"):
        r = job[d]
        assert isinstance(r["iops"], (int, float))
        assert isinstance(r["bw"], int)  # KiB/s
        assert isinstance(r["io_bytes"], int)
        assert isinstance(r["runtime"], int)  # ms
        assert isinstance(r["lat_ns"]["mean"], (int, float))
        assert isinstance(r["clat_ns"]["stddev"], (int, float))
        # What fio-plot reads besides (its get_json_mapping).
        assert isinstance(r["iops_stddev"], (int, float))
        assert isinstance(r["lat_ns"]["stddev"], (int, float))
        for k in ("iops_min", "iops_max", "iops_samples", "bw_min", "bw_max", "bw_samples"):
            assert isinstance(r[k], int), k
        if r["total_ios"]:
            assert sum(r["clat_ns"]["bins"].values()) == r["total_ios"]
    for k in ("usr_cpu", "sys_cpu"):
        assert isinstance(job[k], (int, float)), k
    buckets = [job["latency_ns"], job["latency_us"], job["latency_ms"]]
    assert set(job["latency_ms"]) >= {"2000", ">=2000"}
    total = sum(v for b in buckets for v in b.values())
    assert job["read"]["total_ios"] + job["write"]["total_ios"] == 0 or abs(total - 100) < 1e-6, total
    p99 = job["read"]["clat_ns"]["percentile"]["99.000000"]
    p50 = job["read"]["clat_ns"]["percentile"]["50.000000"]
    assert p50 <= p99
    print(job["jobname"], opts["rw"], opts["iodepth"], opts["numjobs"], opts["bs"],
          round(job["read"]["iops"]), round(job["write"]["iops"]), p99)
