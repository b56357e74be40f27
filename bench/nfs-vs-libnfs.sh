#!/usr/bin/env bash
# nfs-vs-libnfs.sh: volbench's user-space NFS client against a C loop over
# libnfs's async API, on the same server, alternating in one sitting. For each
# case it prints the median IOPS and IOPS per client CPU-second of each, and
# their ratios (volbench / libnfs).
#
#   sudo bench/nfs-vs-libnfs.sh [--duration 5] [--repeat 3] [--size 256]
#                               [--cases randread-4k-qd1,randread-4k-qd16,read-64k-qd16,write-64k-qd16]
#                               [--loop PATH]   (a built nfs_loop example to use instead of building one;
#                                                none: leave the loop out, its columns 0)
#                               [--bin PATH]    (a volbench binary to use instead of building one)
#                               [--bare]        (the C loop as the least any client does: no copy of
#                                                read data out of libnfs, one constant write buffer)
#                               [--pin]         (the server's threads on the first CPU, each client on
#                                                the last: the scheduler's placement then sets
#                                                neither side's figure)
#                               [--nagle]       (the C loop with libnfs's own socket, Nagle's
#                                                algorithm on; by default it sets TCP_NODELAY as
#                                                volbench's client and the kernel's do)
#
# Both clients send a request as soon as it is made (TCP_NODELAY; libnfs
# leaves Nagle's algorithm on, so the C loop sets it). On loopback the
# sender's system call runs the receiver's TCP input too, and a request Nagle
# held back is sent later from the server's context when its ACK arrives: the
# client is then charged less CPU for the same work. With Nagle on for the C
# loop and not for volbench, 64 KiB reads measured 11.3 against 12.4 us of
# client CPU per I/O; with the same socket option on both, 15.5 against 12.2
# (libnfs, volbench), and 11.3 against 8.4 with Nagle on for both (#34).
#
# Cases: 4 KiB random reads at queue depth 1 and 16, 64 KiB sequential reads
# and writes at depth 16 (unstable writes, as libnfs sends them), NFSv3 over one
# TCP connection (libnfs 4.0, Debian's, speaks NFSv4.0 but not 4.1, and opens
# one connection). The server is nfs-ganesha in user space on loopback (its
# own ports, a temporary export of a --size MiB file of random data), so
# both clients meet the same server, page cache warm after the first round.
#
# The C loop (bench/nfs-loop/libnfs-loop.c) keeps DEPTH nfs_pread_async /
# nfs_pwrite_async calls in flight, one poll() and nfs_service() per turn,
# each in its own buffer: a read's data copied into it (fio's nfs engine
# does so), a write's made in it with fio's default scramble (no two writes
# alike, as volbench's); --bare drops both.
# volbench's side twice: examples/nfs_loop.rs (the same loop over
# volbench::proto::nfs: the client alone) and `volbench run --target nfs://`
# (the whole tool: the nfs engine under the worker loop, its histograms,
# intervals and result, on a file set of the same size filled once before
# the first round). CPU is each loop's getrusage (user + system) over its
# measured loop, and the whole volbench process for the run (its set-up,
# connect and result included: a little against it); IOPS per CPU-second =
# ops / CPU.
# Where a kernel NFS client exists, the same workload through a mount would go
# beside them; this machine's kernel has none (no nfs module), so it is left out.
# Needs root (ganesha), cc with libnfs-dev, cargo.
set -euo pipefail

die() { echo "nfs-vs-libnfs: $*" >&2; exit 2; }

duration=5 repeat=3 size_mib=256 vbloop="" bin="" pin=() bare=() nodelay=(nodelay)
cases=randread-4k-qd1,randread-4k-qd16,read-64k-qd16,write-64k-qd16
while (($#)); do
  case $1 in
    --duration) duration=${2:?}; shift 2 ;;
    --repeat) repeat=${2:?}; shift 2 ;;
    --size) size_mib=${2:?}; shift 2 ;;
    --cases) cases=${2:?}; shift 2 ;;
    --loop) vbloop=${2:?}; shift 2 ;;
    --bin) bin=${2:?}; shift 2 ;;
    --bare) bare=(bare); shift ;;
    --nagle) nodelay=(); shift ;;
    --pin) pin=(taskset -c "$(($(nproc) - 1))"); shift ;;
    *) die "unknown argument $1" ;;
  esac
done
[[ $(id -u) == 0 ]] || die "needs root (nfs-ganesha)"
command -v ganesha.nfsd >/dev/null || die "nfs-ganesha is not installed"
[[ -e /usr/include/nfsc/libnfs.h ]] || die "libnfs-dev is not installed"

here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/vb-nfsbench.XXXXXX)
pid=""
cleanup() {
  if [[ -n $pid ]]; then
    kill "$pid" 2>/dev/null || true
    # ganesha writes its recovery files as it stops: rm after it is gone.
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  fi
  rm -rf "$work"
}
trap cleanup EXIT

echo "building the two loops..." >&2
cc -O2 -o "$work/libnfs-loop" "$here/nfs-loop/libnfs-loop.c" -lnfs
if [[ -z $vbloop ]]; then
  (cd "$here/.." && cargo build --release --quiet --example nfs_loop)
  vbloop=$here/../target/release/examples/nfs_loop
fi
if [[ -z $bin ]]; then
  (cd "$here/.." && cargo build --release --quiet)
  bin=$here/../target/release/volbench
fi

# The server: ganesha on two free loopback ports, exporting $work/export.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
port=$(free_port) mport=$(free_port)
mkdir -p "$work/export" "$work/recovery"
rpcinfo -p >/dev/null 2>&1 || rpcbind -w
cat > "$work/ganesha.conf" <<CONF
NFS_CORE_PARAM { Protocols = 3, 4; NFS_Port = $port; MNT_Port = $mport; Bind_addr = 127.0.0.1;
  Enable_NLM = false; Enable_RQUOTA = false; Enable_UDP = false; }
NFSV4 { Graceless = true; RecoveryBackend = fs; RecoveryRoot = $work/recovery; Minor_Versions = 1; }
EXPORT { Export_Id = 1; Path = $work/export; Pseudo = $work/export; Access_Type = RW;
  Squash = No_Root_Squash; Protocols = 3, 4; Transports = TCP; SecType = sys; FSAL { Name = VFS; } }
LOG { Default_Log_Level = EVENT; }
CONF
ganesha.nfsd -f "$work/ganesha.conf" -L "$work/ganesha.log" -p "$work/ganesha.pid" -N NIV_EVENT
for _ in $(seq 300); do grep -q "NFS SERVER INITIALIZED" "$work/ganesha.log" 2>/dev/null && break; sleep 0.2; done
grep -q "NFS SERVER INITIALIZED" "$work/ganesha.log" || die "ganesha did not start"
pid=$(cat "$work/ganesha.pid")
# Pinned, each client's wake-ups meet the same CPU every round: unpinned on
# a small shared machine the IOPS per CPU-second of either moved by 2x
# between sittings, set by where the scheduler put the client and the
# server's threads (docs/benchmarks.md).
if ((${#pin[@]})); then
  (($(nproc) > 1)) || die "--pin needs two CPUs"
  taskset -a -p -c 0 "$pid" >/dev/null
fi
head -c $((size_mib << 20)) /dev/urandom > "$work/export/data"
url="nfs://127.0.0.1$work/export/data?version=3&nfsport=$port&mountport=$mport"
seturl="nfs://127.0.0.1$work/export/set?version=3&nfsport=$port&mountport=$mport"
# volbench's own file set, filled once (the runs reuse it).
"$bin" run --target "$seturl" --size "${size_mib}m" --rw read --io-limit 4k \
  --warmup 0 --duration 5s --no-counters >/dev/null 2>&1 || die "volbench could not fill its set"

# One run: prints "iops iops_per_cpu".
run() { # tool bs depth mode
  local out
  if [[ $1 == libnfs ]]; then
    out=$("${pin[@]}" "$work/libnfs-loop" "$url" "$duration" "$3" "$2" "$4" "${bare[@]}" "${nodelay[@]}")
  elif [[ $1 == run ]]; then
    out=$("${pin[@]}" python3 - "$bin" "$seturl" "$size_mib" "$duration" "$3" "$2" "$4" <<'PY'
import json, resource, subprocess, sys
bin, url, size, secs, depth, bs, mode = sys.argv[1:]
before = resource.getrusage(resource.RUSAGE_CHILDREN)
p = subprocess.run([bin, "run", "--target", url, "--size", size + "m", "--rw", mode,
                    "--bs", bs, "--iodepth", depth, "--threads", "1", "--warmup", "0",
                    "--duration", secs + "s", "--no-counters", "--json"],
                   capture_output=True, check=True)
after = resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
run = json.loads(p.stdout)["runs"][0]
t = run["totals"]
ops = t["read"]["ops"] + t["write"]["ops"]
measured = sum(ph["duration_s"] for ph in run["phases"] if ph["name"] == "measure")
print(f"ops={ops} seconds={measured} cpu={cpu}")
PY
)
  else
    out=$("${pin[@]}" "$vbloop" "$url" "$duration" "$3" "$2" "$4" 1 2>/dev/null)
  fi
  python3 - "$out" <<'PY'
import sys
kv = dict(p.split("=") for p in sys.argv[1].split())
ops, secs, cpu = float(kv["ops"]), float(kv["seconds"]), float(kv["cpu"])
print(f"{ops / secs:.0f} {ops / max(cpu, 1e-6):.0f}")
PY
}

median() { python3 -c 'import sys,statistics; print(statistics.median(float(x) for x in sys.argv[1:]))' "$@"; }

printf "%-18s %12s %12s %12s %8s %8s %16s %16s %16s %8s %8s\n" case "loop IOPS" "run IOPS" "libnfs IOPS" "loop/c" "run/c" \
  "loop IOPS/CPU-s" "run IOPS/CPU-s" "libnfs IOPS/CPU-s" "loop/c" "run/c"
IFS=, read -ra list <<<"$cases"
for c in "${list[@]}"; do
  case $c in
    randread-4k-qd1) bs=4096 depth=1 mode=randread ;;
    randread-4k-qd16) bs=4096 depth=16 mode=randread ;;
    read-64k-qd16) bs=65536 depth=16 mode=read ;;
    write-64k-qd16) bs=65536 depth=16 mode=write ;;
    *) die "unknown case $c" ;;
  esac
  vi=() vc=() ri=() rc=() li=() lc=()
  for r in $(seq "$repeat"); do
    # Alternate which goes first, so none always meets a warmer cache.
    order=(vb run libnfs)
    ((r % 2 == 0)) && order=(libnfs run vb)
    if [[ $vbloop == none ]]; then
      order=(run libnfs)
      ((r % 2 == 0)) && order=(libnfs run)
      vi+=(0) vc+=(0)
    fi
    for t in "${order[@]}"; do
      read -r iops per < <(run "$t" "$bs" "$depth" "$mode")
      case $t in
        vb) vi+=("$iops") vc+=("$per") ;;
        run) ri+=("$iops") rc+=("$per") ;;
        *) li+=("$iops") lc+=("$per") ;;
      esac
    done
  done
  python3 - "$c" "$(median "${vi[@]}")" "$(median "${ri[@]}")" "$(median "${li[@]}")" \
    "$(median "${vc[@]}")" "$(median "${rc[@]}")" "$(median "${lc[@]}")" <<'PY'
import sys
c, vi, ri, li, vc, rc, lc = sys.argv[1], *map(float, sys.argv[2:])
print(f"{c:<18} {vi:12.0f} {ri:12.0f} {li:12.0f} {vi / li:7.2f}x {ri / li:7.2f}x "
      f"{vc:16.0f} {rc:16.0f} {lc:16.0f} {vc / lc:7.2f}x {rc / lc:7.2f}x")
PY
done
