#!/usr/bin/env bash
# scale: N simulated client hosts on this one machine. Each "host" is a
# `volbench agent` started through the exec launcher
# (`--launcher 'env VB_SIM_HOST={host}'`), running the null engine at
# RATE IOPS, so what is measured is the coordination itself, not storage.
# Prints: launch time, coordinator CPU (while the I/O ran, and over the
# whole invocation), start skew, whether the merge is exact, and the
# agents' RSS (sampled from /proc while they run).
#
#   bench/scale.sh 64          # or 256, 1000 (1,000 agents need ~8 GB)
#
# Settings (environment): DURATION=10s RATE=100 (IOPS per agent; at 1,000
# agents on 2 cores use RATE=10: 100,000 null-engine wake-ups a second
# leave no CPU for the agents' own stdin readers, which then miss the
# coordinator's heartbeats and stop early, and the run is reported CUT SHORT)
# VOLBENCH=path/to/volbench (default: the static release build that
# `cargo xtask dist` ships, built if missing)
# OUT=dir (default: a temporary one, removed) EXTRA='more run flags'.
set -euo pipefail
cd "$(dirname "$0")/.."

n=${1:?usage: bench/scale.sh N}
duration=${DURATION:-10s} rate=${RATE:-100}
work=$(mktemp -d /tmp/volbench-scale.XXXXXX)
out=${OUT:-$work/out}
session=vbscale-$$
sampler=
cleanup() {
  [[ -z $sampler ]] || kill "$sampler" 2>/dev/null || true
  [[ -n ${OUT:-} ]] || rm -rf "$work"
}
trap cleanup EXIT

if [[ -n ${VOLBENCH:-} ]]; then
  bin=$VOLBENCH
elif [[ $(uname -m) == x86_64 ]]; then
  # The binary that ships (`cargo xtask dist`): the release build linked
  # statically, so an agent maps no libc, libm or loader of its own (about
  # 2 MB less RSS per agent than the dynamic target/release/volbench).
  triple=x86_64-unknown-linux-gnu
  bin=$PWD/target/$triple/release/volbench
  [[ -x $bin ]] || RUSTFLAGS='-C target-feature=+crt-static' \
    cargo build --release --quiet --target $triple
else
  bin=$PWD/target/release/volbench
  [[ -x $bin ]] || cargo build --release --quiet
fi

# One agent per host: 3 pipes each on the coordinator, a few fds each agent.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
mkdir -p "$work/data"
hosts=$(seq -f 'sim%g' 1 "$n" | paste -sd,)

# The agents' RSS, every 200 ms while the run goes on: the largest one
# seen, the largest sum over all of them at one moment, and the largest
# private part (RssAnon: the binary's pages are shared by every agent, so
# RSS alone counts them once per agent). Also the largest Pss of the
# first 20 agents each round (smaps_rollup: shared pages divided among the
# processes that map them, what one more agent really costs), only 20 as
# it walks every mapping.
# And the mappings of the largest agent (smaps), printed grouped by what
# they are: the binary's text, read-only data and data, each shared
# library, the heap, the anonymous mappings (thread stacks, histograms,
# buffers) and the main stack.
(
  max=0 sum_max=0 count_max=0 anon_max=0 pss_max=0
  while :; do
    pids=$(pgrep -f -- " agent --session $session" || true)
    # All agents' status files in one awk, so that at 1,000 agents a round
    # still sees them all at one moment (an awk per agent took seconds).
    # An agent that ends meanwhile is skipped (cat reads what is there).
    read -r one sum count anon big < <(
      for pid in $pids; do cat "/proc/$pid/status" 2>/dev/null; done |
        awk '/^Pid:/ { p = $2 } /^VmRSS/ { r = $2; s += r; n++; if (r > m) { m = r; b = p } }
             /^RssAnon/ { if ($2 > a) a = $2 }
             END { print m + 0, s + 0, n + 0, a + 0, b + 0 }')
    # The largest agent's mappings, for the breakdown printed at the end.
    # (kept only if read whole: an agent that is ending has no mappings left)
    if ((one > max)) && cat "/proc/$big/smaps" >"$work/smaps.new" 2>/dev/null &&
      [[ -s $work/smaps.new ]]; then
      mv "$work/smaps.new" "$work/smaps"
    fi
    for pid in $(head -n 20 <<<"$pids"); do
      pss=$(awk '/^Pss:/ { print $2 }' "/proc/$pid/smaps_rollup" 2>/dev/null) || pss=0
      ((${pss:-0} > pss_max)) && pss_max=$pss
    done
    ((one > max)) && max=$one
    ((anon > anon_max)) && anon_max=$anon
    ((sum > sum_max)) && sum_max=$sum count_max=$count
    echo "$max $sum_max $count_max $anon_max $pss_max" >"$work/rss"
    sleep 0.2
  done
) &
sampler=$!

echo "scale: $n agents, null engine, $rate IOPS each, $duration" >&2
t0=$(date +%s.%N)
"$bin" run --hosts "$hosts" --launcher 'env VB_SIM_HOST={host}' --remote-volbench "$bin" \
  --session "$session" --target "$work/data/{host}" --engine null --rw randread --bs 4k \
  --rate "$rate" --duration "$duration" --warmup 1s --interval 1s ${EXTRA:-} \
  --output "$out" >/dev/null
t1=$(date +%s.%N)
kill "$sampler" 2>/dev/null || true
wait "$sampler" 2>/dev/null || true
sampler=

python3 - "$out/result.json" "$n" "$rate" "$work/rss" "$t0" "$t1" "$work/smaps" <<'EOF'
import json, re, sys
d = json.load(open(sys.argv[1]))
n, rate = int(sys.argv[2]), float(sys.argv[3])
rss_max, rss_sum, rss_n, anon_max, pss_max = (int(x) for x in open(sys.argv[4]).read().split())
c = d["cluster"]; k = c["coordinator"]; r = d["runs"][0]; cr = c["runs"][0]
hosts = c["hosts"]
ok = sum(h["status"] == "ok" for h in hosts)
per_host = sum(h["runs"][0]["totals"]["read"]["ops"] for h in hosts if h["runs"])
merged = r["totals"]["read"]["ops"]
hist = sum(b[2] for b in r["histograms"]["read"]["buckets"])
exact = merged == per_host == hist
# A run the agents cut short (one that lost word from the coordinator
# stops its I/O) still merges exactly: the length says whether it ran.
asked = r["workload"]["duration_s"]
ran = min(p["duration_s"] for h in hosts if h["runs"] for p in h["runs"][0]["phases"]
          if p["name"] == "measure")
full = ran >= asked * 0.98
print(f"hosts ok:             {ok}/{n}")
print(f"launch:               {k.get('launch_s', float('nan')):.2f} s until every agent said hello")
print(f"coordinator CPU:      {k.get('run_cpu_pct', float('nan')):.2f}% of one core while the I/O ran; "
      f"{k['cpu_pct']:.2f}% over the whole {k['wall_s']:.1f} s")
print(f"start skew:           {cr['start_skew_ms']:.2f} ms")
print(f"merged:               {r['totals']['read']['iops']:,.0f} IOPS of {n * rate:,.0f} asked; "
      f"{merged:,} ops = sum of hosts {per_host:,} = histogram {hist:,}: "
      f"{'exact' if exact else 'NOT EXACT'}")
print(f"run length:           shortest host {ran:.2f} s of {asked:.2f} s asked: "
      f"{'full' if full else 'CUT SHORT'}")
print(f"agent RSS:            largest {rss_max / 1024:.1f} MB, of it private {anon_max / 1024:.1f} MB; "
      f"largest Pss {pss_max / 1024:.1f} MB; all {rss_n} together {rss_sum / 1024:.0f} MB RSS")
print(f"wall:                 {float(sys.argv[6]) - float(sys.argv[5]):.1f} s")
# Rss and Private (clean + dirty) kB per mapping group of the largest agent.
groups, key = {}, None
try:
    smaps = open(sys.argv[7]).read().splitlines()
except OSError:
    smaps = []
for line in smaps:
    m = re.match(r"^[0-9a-f]+-[0-9a-f]+ (\S+) \S+ \S+ \S+\s*(.*)$", line)
    if m:
        perms, name = m.group(1), m.group(2).strip()
        base = name.rsplit("/", 1)[-1] or "anonymous"
        kind = "text" if "x" in perms else "data" if "w" in perms else "rodata"
        key = base if base.startswith("[") or base == "anonymous" else f"{base} {kind}"
        groups.setdefault(key, [0, 0])
    elif key and line.startswith(("Rss:", "Private_Clean:", "Private_Dirty:")):
        kb = int(line.split()[1])
        groups[key][0 if line.startswith("Rss:") else 1] += kb
rows = sorted(((v[0], v[1], k) for k, v in groups.items() if v[0]), reverse=True)
if rows:
    print("largest agent's RSS by mapping (kB, of it private):")
    for rss, private, k in rows:
        print(f"  {k:34} {rss:6} {private:6}")
sys.exit(0 if exact and full and ok == n else 1)
EOF
