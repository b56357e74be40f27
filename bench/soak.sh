#!/usr/bin/env bash
# soak.sh: a long mixed run with every live output on, checked for what a
# leak looks like. One volbench run (random 70/30 reads and writes of a
# 4k/64k mix, 4 threads x iodepth 4, psync, buffered, 1 s intervals) with
# --live, --live-csv and --metrics-listen, scraped every second by curl (as
# Prometheus would) while a second client holds a connection open and says
# nothing (reconnecting whenever the endpoint drops it). Every 10 s the
# process's RSS, open descriptors and threads are sampled from /proc.
#
#   bench/soak.sh [--duration 30m] [--dir DIR] [--bin PATH]
#
# Passes when, after the first tenth of the run (allocator and page cache
# settling), RSS grows by less than 8 MiB and 5%, descriptors and threads
# stay within 4 of where they were (scrape connections come and go), every
# scrape answered, and the live file holds every interval: one total line
# per interval, none missing (each line starting where the last ended; a
# late one, long after a stall of a busy machine, is counted apart), the
# last at the run's end. Prints the figures
# and exits 1 when a check fails. Needs cargo (unless --bin), curl, python3.
set -euo pipefail

die() { echo "soak: $*" >&2; exit 2; }

duration=30m dir="" bin=""
while [ $# -gt 0 ]; do
  case "$1" in
    --duration) duration="$2"; shift 2 ;;
    --dir) dir="$2"; shift 2 ;;
    --bin) bin="$2"; shift 2 ;;
    *) die "unknown option $1" ;;
  esac
done
command -v curl >/dev/null || die "curl is missing"
command -v python3 >/dev/null || die "python3 is missing"
if [ -z "$bin" ]; then
  cargo build --release --quiet
  bin="$(cd "$(dirname "$0")/.." && pwd)/target/release/volbench"
fi
if [ -z "$dir" ]; then
  dir="$(mktemp -d /tmp/vb-soak.XXXXXX)"
fi
mkdir -p "$dir"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')

"$bin" run --target "$dir/t" --size 256m --buffered --engine psync \
  --rw randrw --read-pct 70 --bs 4k:3,64k:1 --threads 4 --iodepth 4 \
  --duration "$duration" --warmup 0 --interval 1s \
  --live "$dir/live.jsonl" --live-csv "$dir/live.csv" \
  --metrics-listen "127.0.0.1:$port" --output "$dir/out" -q \
  >"$dir/stdout" 2>"$dir/stderr" &
vb=$!

# The scraper: one GET a second, its failures counted.
(
  ok=0 bad=0
  while kill -0 "$vb" 2>/dev/null; do
    if curl -sf -o /dev/null --max-time 5 "http://127.0.0.1:$port/metrics"; then
      ok=$((ok + 1))
    else
      bad=$((bad + 1))
    fi
    echo "$ok $bad" >"$dir/scrapes"
    sleep 1
  done
) &
scraper=$!

# The idle client: connects, says nothing, and is dropped at the request
# deadline; then again.
python3 - "$port" "$vb" >"$dir/idle" 2>&1 <<'EOF' &
import os, socket, sys, time
port, pid = int(sys.argv[1]), int(sys.argv[2])
held = 0
while os.path.exists(f"/proc/{pid}"):
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=30)
        s.settimeout(30)
        s.recv(4096)
        held += 1
        s.close()
    except OSError:
        time.sleep(1)
print(held, "idle connections held to their deadline")
EOF
idle=$!

echo "t_s,rss_kib,fds,threads" >"$dir/samples.csv"
start=$(date +%s)
while kill -0 "$vb" 2>/dev/null; do
  rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$vb/status" 2>/dev/null || true)
  threads=$(awk '/^Threads:/ {print $2}' "/proc/$vb/status" 2>/dev/null || true)
  fds=$(ls "/proc/$vb/fd" 2>/dev/null | wc -l || true)
  [ -n "$rss" ] && echo "$(( $(date +%s) - start )),$rss,$fds,$threads" >>"$dir/samples.csv"
  sleep 10
done
rc=0
wait "$vb" || rc=$?
wait "$scraper" "$idle" 2>/dev/null || true
[ "$rc" -eq 0 ] || { cat "$dir/stderr" >&2; die "volbench exited $rc"; }

python3 - "$dir" <<'EOF'
import csv, json, sys
d = sys.argv[1]
rows = [(float(r["t_s"]), int(r["rss_kib"]), int(r["fds"]), int(r["threads"]))
        for r in csv.DictReader(open(f"{d}/samples.csv"))]
if len(rows) < 3:
    sys.exit("soak: too few samples")
end = rows[-1][0]
settled = [r for r in rows if r[0] >= end / 10] or rows
base, rest = settled[0], settled[1:] or settled
rss_growth = max(r[1] for r in rest) - base[1]
fd_span = max(abs(r[2] - base[2]) for r in rest)
th_span = max(abs(r[3] - base[3]) for r in rest)
ok, bad = map(int, open(f"{d}/scrapes").read().split())
doc = json.load(open(f"{d}/out/result.json"))
run = doc["runs"][0]
interval = 1.0  # --interval 1s
measured = sum(p["duration_s"] for p in run["phases"])
totals = [json.loads(l) for l in open(f"{d}/live.jsonl") if '"scope":"total"' in l]
ts = [t["t_s"] for t in totals]
# An interval is missing when the next line does not start where the last
# ended (its t_s less its own interval_s). A late wake-up (the machine
# busy) makes one interval long and the next short, missing nothing: those
# are counted apart.
missing = sum(1 for a, b in zip(totals, totals[1:])
              if abs(b["t_s"] - b["interval_s"] - a["t_s"]) > 0.05)
late = [t["interval_s"] for t in totals if t["interval_s"] > 1.5 * interval]
csv_rows = sum(1 for _ in open(f"{d}/live.csv")) - 1
print(f"soak: {measured:.0f} s measured, {len(rows)} samples")
print(f"  RSS      {base[1] / 1024:.1f} MiB after the first tenth, max {max(r[1] for r in rows) / 1024:.1f} MiB, "
      f"growth {rss_growth / 1024:.2f} MiB ({100 * rss_growth / base[1]:.2f}%)")
print(f"  fds      {base[2]} then {min(r[2] for r in rest)}..{max(r[2] for r in rest)}")
print(f"  threads  {base[3]} then {min(r[3] for r in rest)}..{max(r[3] for r in rest)}")
print(f"  scrapes  {ok} answered, {bad} failed")
print(f"  live     {len(totals)} total lines for {measured / interval:.0f} intervals, {missing} missing, "
      f"{len(late)} late (longest {max(late, default=0):.2f} s), last at {ts[-1] if ts else 0:.1f} s; "
      f"{csv_rows} CSV rows")
print(f"  run      {run['totals']['read']['iops'] + run['totals']['write']['iops']:.0f} IOPS")
fail = []
if rss_growth > 8 * 1024 and rss_growth > 0.05 * base[1]:
    fail.append("RSS grew")
if fd_span > 4:
    fail.append("descriptors moved")
if th_span > 4:
    fail.append("threads moved")
if bad:
    fail.append("scrapes failed")
if missing or abs(len(totals) - measured / interval) > 2 or (ts and ts[-1] < measured - 2 * interval):
    fail.append("intervals missing from the live file")
if fail:
    sys.exit("soak: FAILED: " + ", ".join(fail))
print("soak: flat")
EOF
