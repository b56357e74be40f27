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
    p99 = job["read"]["clat_ns"]["percentile"]["99.000000"]
    p50 = job["read"]["clat_ns"]["percentile"]["50.000000"]
    assert p50 <= p99
    print(job["jobname"], opts["rw"], opts["iodepth"], opts["numjobs"], opts["bs"],
          round(job["read"]["iops"]), round(job["write"]["iops"]), p99)
