#!/usr/bin/env bash
# smb-vs-libsmbclient.sh: the user-space SMB client (src/proto/smb/), both
# bare (examples/smb_bench.rs) and as `volbench run --target smb://` (the
# whole product: the back end, its engine, the worker loop, one process per
# run), against the best other client here, on the same Samba in one
# sitting: a bare C loop over libsmbclient (bench/smb/loop.c) for random
# 4 KiB and sequential 1 MiB reads and writes, smbclient's `get` for
# sequential MiB/s, and the client's own 1 against 2 and 4 channels.
# Rounds alternate; medians.
#
#   bench/smb-vs-libsmbclient.sh [--seconds 5] [--repeat 3] [--size 256M] [--no-build]
#
# The figure compared is work per client CPU-second (IOPS/cpu-s, MiB/s per
# cpu-s: getrusage of each client process), beside the raw rates. Samba
# runs on loopback from a temp dir (its own configuration, state and user),
# stopped at the end. Needs root, samba, smbclient, libsmbclient-dev, cc.
set -euo pipefail
cd "$(dirname "$0")/.."
die() { echo "smb-vs-libsmbclient: $*" >&2; exit 2; }

seconds=5 repeat=3 size=256M build=1
while (($#)); do
  case $1 in
    --seconds) seconds=${2:?}; shift 2 ;;
    --repeat) repeat=${2:?}; shift 2 ;;
    --size) size=${2:?}; shift 2 ;;
    --no-build) build=0; shift ;;
    -h | --help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done
[[ $seconds =~ ^[0-9]+$ && $repeat =~ ^[0-9]+$ ]] || die "numbers only"
[[ $(id -u) == 0 ]] || die "needs root (smbd)"
for b in smbd smbclient smbpasswd cc python3; do command -v $b >/dev/null || die "$b not found (apt-get install samba smbclient libsmbclient-dev gcc)"; done
[[ -f /usr/include/samba-4.0/libsmbclient.h ]] || die "libsmbclient.h not found (apt-get install libsmbclient-dev)"

work=$(mktemp -d /tmp/vb-smb-bench.XXXXXX)
pid=
cleanup() { [[ -n $pid ]] && kill -- -"$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
st=$work/state share=$work/share
mkdir -p "$st" "$share"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat > "$st/smb.conf" <<CONF
[global]
  server role = standalone server
  smb ports = $port
  interfaces = 127.0.0.1
  bind interfaces only = yes
  server multi channel support = yes
  disable netbios = yes
  pid directory = $st
  lock directory = $st
  state directory = $st
  cache directory = $st
  private dir = $st
  ncalrpc dir = $st/ncalrpc
  log file = $st/log.%m
  log level = 0
  passdb backend = tdbsam:$st/passdb.tdb
  load printers = no
  printing = bsd
  printcap name = /dev/null
  disable spoolss = yes
[bench]
  path = $share
  read only = no
  force user = root
CONF
export SMB_USER=root VOLBENCH_SMB_PASSWORD="bench-$RANDOM-$RANDOM"
printf '%s\n%s\n' "$VOLBENCH_SMB_PASSWORD" "$VOLBENCH_SMB_PASSWORD" | smbpasswd -c "$st/smb.conf" -s -a root >/dev/null
umask 077
printf 'username=root\npassword=%s\n' "$VOLBENCH_SMB_PASSWORD" > "$work/auth"
setsid smbd --foreground --no-process-group -s "$st/smb.conf" </dev/null >"$st/smbd.out" 2>&1 &
pid=$!
for _ in $(seq 200); do (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.05; done
bytes=$(python3 -c "import sys; s='$size'; m={'K':1<<10,'M':1<<20,'G':1<<30}; print(int(s[:-1])*m[s[-1]] if s[-1] in m else int(s))")
head -c "$bytes" /dev/urandom > "$share/data"
cp "$share/data" "$share/wdata"

echo "building the C loop and the harness..." >&2
cc -O2 -o "$work/loop" bench/smb/loop.c -I/usr/include/samba-4.0 -lsmbclient
# SMB_BENCH_PROFILE=dev measures the dev build (quicker to make, slower).
profile=${SMB_BENCH_PROFILE:-release}
((build)) && cargo build --quiet --profile "$profile" --example smb_bench --bin volbench
out=target/$([[ $profile == dev ]] && echo debug || echo "$profile")
vb=$out/examples/smb_bench
bin=$out/volbench
url="smb://127.0.0.1:$port/bench"
# volbench's own file set for `volbench run`, filled once (the runs reuse it).
seturl="smb://root@127.0.0.1:$port/bench/set"
"$bin" run --target "$seturl" --size "$bytes" --rw read --io-limit 4k \
  --warmup 0 --duration 5s --no-counters >/dev/null 2>&1 || die "volbench could not fill its set"

c_run() { "$work/loop" "$url/$2" "$1" "$3" "$bytes" "$seconds"; }
vb_run() { "$vb" --addr "127.0.0.1:$port" --share bench --user root --file "$2" --rw "$1" --bs "$3" --qd "$4" --channels "$5" --size "$bytes" --seconds "$seconds"; }
# `volbench run` on its set: the measured phase's ops and bytes, the whole
# process's CPU (start-up and log-on included, so this is the product's
# cost, not the loop's alone).
run_run() {
  python3 - "$bin" "$seturl" "$bytes" "$seconds" "$1" "$2" "$3" "$4" <<'PY'
import json, resource, subprocess, sys
bin, url, size, secs, rw, bs, qd, ch = sys.argv[1:]
before = resource.getrusage(resource.RUSAGE_CHILDREN)
p = subprocess.run([bin, "run", "--target", url, "--size", size, "--rw", rw, "--bs", bs,
                    "--iodepth", qd, "--smb-channels", ch, "--threads", "1", "--warmup", "0",
                    "--duration", secs + "s", "--no-counters", "--json"],
                   capture_output=True, check=True)
after = resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
run = json.loads(p.stdout)["runs"][0]
t = run["totals"]
ops = t["read"]["ops"] + t["write"]["ops"]
nbytes = t["read"]["bytes"] + t["write"]["bytes"]
measured = sum(ph["duration_s"] for ph in run["phases"] if ph["name"] == "measure")
print(json.dumps({"client": "volbench run", "rw": rw, "bs": int(bs), "qd": int(qd),
                  "channels": int(ch), "ops": ops, "bytes": nbytes, "errors": 0,
                  "seconds": measured, "cpu": cpu}))
PY
}
get_run() {
  local t0 c0 out
  out=$( { TIMEFORMAT='%3U %3S %3R'; time smbclient -p "$port" //127.0.0.1/bench -A "$work/auth" -m SMB3_11 -c 'get data /dev/null' >/dev/null 2>&1; } 2>&1 )
  python3 -c "u,s,r='$out'.split(); print('{\"client\":\"smbclient get\",\"rw\":\"read\",\"bs\":0,\"qd\":0,\"channels\":1,\"ops\":1,\"bytes\":$bytes,\"errors\":0,\"seconds\":%s,\"cpu\":%s}' % (r, float(u)+float(s)))"
}

cases=(
  "c randread data 4096 1 1"
  "vb randread data 4096 1 1"
  "vb randread data 4096 16 1"
  "run randread - 4096 1 1"
  "run randread - 4096 16 1"
  "c randwrite wdata 4096 1 1"
  "vb randwrite wdata 4096 1 1"
  "vb randwrite wdata 4096 16 1"
  "c read data 1048576 1 1"
  "vb read data 1048576 1 1"
  "vb read data 1048576 4 1"
  "run read - 1048576 1 1"
  "get read data 0 0 1"
  "c write wdata 1048576 1 1"
  "vb write wdata 1048576 1 1"
  "vb write wdata 1048576 4 1"
  "vb read data 1048576 8 1"
  "vb read data 1048576 8 2"
  "vb read data 1048576 8 4"
  "vb randread data 4096 32 1"
  "vb randread data 4096 32 2"
  "vb randread data 4096 32 4"
  "run randread - 4096 32 2"
)
results=$work/results.jsonl
for ((r = 1; r <= repeat; r++)); do
  echo "round $r of $repeat" >&2
  for c in "${cases[@]}"; do
    read -r who rw file bs qd ch <<<"$c"
    case $who in
      c) line=$(c_run "$rw" "$file" "$bs") ;;
      vb) line=$(vb_run "$rw" "$file" "$bs" "$qd" "$ch") ;;
      get) line=$(get_run) ;;
      run) line=$(run_run "$rw" "$bs" "$qd" "$ch") ;;
    esac
    echo "$line" >> "$results"
  done
done

python3 - "$results" <<'PY'
import json, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    d = json.loads(line)
    key = (d["client"], d["rw"], d["bs"], d["qd"], d["channels"])
    rows.setdefault(key, []).append(d)
def med(ds, f):
    return statistics.median(f(d) for d in ds)
print(f"{'client':14} {'rw':9} {'bs':>8} {'qd':>3} {'ch':>3} {'IOPS':>9} {'MiB/s':>8} {'IOPS/cpu-s':>11} {'MiB/s/cpu-s':>12} {'err':>4}")
table = {}
for key, ds in rows.items():
    iops = med(ds, lambda d: d["ops"] / d["seconds"])
    mibs = med(ds, lambda d: d["bytes"] / d["seconds"] / 2**20)
    per = med(ds, lambda d: d["ops"] / max(d["cpu"], 1e-6))
    mper = med(ds, lambda d: d["bytes"] / 2**20 / max(d["cpu"], 1e-6))
    err = sum(d["errors"] for d in ds)
    table[key] = (iops, mibs, per, mper)
    c, rw, bs, qd, ch = key
    print(f"{c:14} {rw:9} {bs:>8} {qd:>3} {ch:>3} {iops:>9.0f} {mibs:>8.1f} {per:>11.0f} {mper:>12.1f} {err:>4}")
def ratio(a, b, i):
    return table[a][i] / table[b][i] if a in table and b in table and table[b][i] else float("nan")
print()
for rw, bs, i, unit in [("randread", 4096, 2, "IOPS/cpu-s"), ("randwrite", 4096, 2, "IOPS/cpu-s"), ("read", 1048576, 3, "MiB/s/cpu-s"), ("write", 1048576, 3, "MiB/s/cpu-s")]:
    print(f"{rw} {bs}: volbench-smb qd1 / libsmbclient = {ratio(('volbench-smb', rw, bs, 1, 1), ('libsmbclient', rw, bs, 1, 1), i):.2f} ({unit})")
for rw, bs, qd, i, unit in [("randread", 4096, 1, 2, "IOPS/cpu-s"), ("randread", 4096, 16, 2, "IOPS/cpu-s"), ("read", 1048576, 1, 3, "MiB/s/cpu-s")]:
    print(f"{rw} {bs} qd{qd}: volbench run / bare client = {ratio(('volbench run', rw, bs, qd, 1), ('volbench-smb', rw, bs, qd, 1), i):.2f} ({unit})")
print(f"randread 4096 qd1: volbench run / libsmbclient = {ratio(('volbench run', 'randread', 4096, 1, 1), ('libsmbclient', 'randread', 4096, 1, 1), 2):.2f} (IOPS/cpu-s)")
print(f"read 1M: volbench-smb qd1 / smbclient get = {ratio(('volbench-smb', 'read', 1048576, 1, 1), ('smbclient get', 'read', 0, 0, 1), 3):.2f} (MiB/s/cpu-s)")
for ch in (2, 4):
    print(f"read 1M qd8: {ch} channels / 1 channel = {ratio(('volbench-smb', 'read', 1048576, 8, ch), ('volbench-smb', 'read', 1048576, 8, 1), 1):.2f} (MiB/s)")
    print(f"randread 4K qd32: {ch} channels / 1 channel = {ratio(('volbench-smb', 'randread', 4096, 32, ch), ('volbench-smb', 'randread', 4096, 32, 1), 0):.2f} (IOPS)")
PY
