#!/usr/bin/env bash
# vs-fio.sh: volbench and fio side by side, one after the other, on the same
# targets, in one run. For each case it prints the median IOPS and mean
# latency of each tool, their ratios (volbench / fio) and each tool's IOPS
# per CPU-second (how much CPU the tool itself burns per I/O).
#
#   sudo bench/vs-fio.sh [--duration 5] [--warmup 1] [--repeat 3] [--size 1024]
#                        [--cases psync-pagecache,uring-direct,seq-read-64k,seq-write-64k]
#                        [--bin PATH]   (a volbench binary to use instead of building one,
#                                        e.g. to compare two builds, run after run)
#   VSFIO_PROFILE=release  builds the quick profile instead of `dist` (the artifact's)
#   (seq-write-64k-fresh: fio with --refill_buffers, fresh data per write as volbench writes)
#
# Cases (fio's names for the options):
#   psync-pagecache  4 KiB randread, psync, 1 thread, iodepth 1, buffered, on a
#                    page-cached file in /dev/shm (measures the tools, not storage)
#   uring-direct     4 KiB randread, io_uring, iodepth 32, direct, on a loop device
#   seq-read-64k     64 KiB sequential read, io_uring, iodepth 8, direct, loop device
#   seq-write-64k    64 KiB sequential write, io_uring, iodepth 8, direct, loop device
# The loop device (losetup --direct-io=on) sits over an image file filled with
# random data in $VSFIO_DIR (default /var/tmp, a disk file system).
#
# Each case runs --repeat times, alternating which tool goes first, and the
# medians are reported. CPU: fio's jobs[0].usr_cpu + sys_cpu (the job
# thread, after ramp_time) and volbench's runs[0].totals.cpu (the whole
# process, over the measured phase); both are percent of one core, so
# IOPS per CPU-second = IOPS / ((usr + sys) / 100). On a busy machine compare
# the ratios, not the absolute figures. "dev KiB/req" is the average size of
# the requests the loop device completed (from /sys/block/DEV/stat): when a
# tool submits contiguous I/Os together, the block layer merges them, the
# device does fewer, larger requests, and IOPS are not like for like.
#
# fio runs with --norandommap --randrepeat=0 (uniform offsets with
# replacement, as volbench draws them; fio's default random map is extra work
# volbench does not do) and, for io_uring, --fixedbufs --registerfiles (as
# volbench registers its buffers and files). Needs root (loop device), fio
# (installed with apt-get if missing), cargo and python3.
set -euo pipefail

die() { echo "vs-fio: $*" >&2; exit 2; }

duration=5 warmup=1 repeat=3 size_mib=1024 bin=""
cases=psync-pagecache,uring-direct,seq-read-64k,seq-write-64k
while (($#)); do
  case $1 in
    --duration) duration=${2:?}; shift 2 ;;
    --warmup) warmup=${2:?}; shift 2 ;;
    --repeat) repeat=${2:?}; shift 2 ;;
    --size) size_mib=${2:?}; shift 2 ;;
    --cases) cases=${2:?}; shift 2 ;;
    --bin) bin=${2:?}; shift 2 ;;
    -h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done
for v in "$duration" "$warmup" "$repeat" "$size_mib"; do
  [[ $v =~ ^[0-9]+$ ]] || die "numbers only (seconds, count, MiB): '$v'"
done
((repeat >= 1 && duration >= 1 && size_mib >= 64)) || die "need --repeat >= 1, --duration >= 1, --size >= 64"

[[ $(id -u) == 0 ]] || die "must run as root: it attaches a loop device and writes to it (try: sudo $0)"
command -v losetup >/dev/null || die "losetup not found (Debian: apt-get install mount)"
command -v python3 >/dev/null || die "python3 not found; it parses the JSON results"
[[ -n $bin ]] || command -v cargo >/dev/null || die "cargo not found; it builds volbench (or give --bin)"
if ! command -v fio >/dev/null; then
  echo "vs-fio: installing fio" >&2
  command -v apt-get >/dev/null || die "fio is not installed and there is no apt-get; install fio"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fio >/dev/null ||
    { apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fio >/dev/null; } ||
    die "cannot install fio"
fi

repo=$(cd "$(dirname "$0")/.." && pwd)
if [[ -n $bin ]]; then
  volbench=$bin
else
  # The artifact's profile (Cargo.toml: `dist`, what `cargo xtask dist`
  # ships); VSFIO_PROFILE=release measures the quick first-build profile.
  profile=${VSFIO_PROFILE:-dist}
  echo "vs-fio: building volbench (profile $profile)" >&2
  (cd "$repo" && cargo build --profile "$profile" --quiet) || die "cargo build --profile $profile failed"
  volbench=${CARGO_TARGET_DIR:-$repo/target}/$profile/volbench
fi
[[ -x $volbench ]] || die "no binary at $volbench"

work=$(mktemp -d "${VSFIO_DIR:-/var/tmp}/vs-fio.XXXXXX")
shm=$(mktemp /dev/shm/vs-fio.XXXXXX)
loopdev=""
cleanup() {
  [[ -n $loopdev ]] && losetup -d "$loopdev" 2>/dev/null
  rm -rf "$work" "$shm"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

need_loop=0
[[ ,$cases, =~ ,(uring-direct|seq-read-64k|seq-write-64k|seq-write-64k-fresh), ]] && need_loop=1
# The page-cache file lives in tmpfs, so it is in memory by construction.
if [[ ,$cases, == *,psync-pagecache,* ]]; then
  echo "vs-fio: filling ${size_mib} MiB in $shm" >&2
  head -c "$((size_mib * 1024 * 1024))" /dev/urandom >"$shm"
fi
if ((need_loop)); then
  echo "vs-fio: filling a ${size_mib} MiB image in $work" >&2
  head -c "$((size_mib * 1024 * 1024))" /dev/urandom >"$work/volume.img"
  sync "$work/volume.img"
  loopdev=$(losetup -f --show --direct-io=on "$work/volume.img")
  [[ $(cat "/sys/block/${loopdev#/dev/}/loop/dio") == 1 ]] ||
    echo "vs-fio: note: $loopdev is not using direct I/O on its image" >&2
fi

common_fio=(--time_based "--runtime=$duration" "--ramp_time=$warmup" --output-format=json
  --norandommap --randrepeat=0 --numjobs=1 --group_reporting)
common_vb=(--duration "${duration}s" --warmup "${warmup}s" --threads 1 --json)

# case -> "fio args|volbench args|op"
case_args() {
  case $1 in
    psync-pagecache) echo "--filename=$shm --rw=randread --bs=4k --ioengine=psync --iodepth=1 --direct=0|--target $shm --rw randread --bs 4k --engine psync --iodepth 1 --buffered|read" ;;
    uring-direct) echo "--filename=$loopdev --rw=randread --bs=4k --ioengine=io_uring --iodepth=32 --direct=1 --fixedbufs --registerfiles|--target $loopdev --rw randread --bs 4k --engine io_uring --iodepth 32 --direct|read" ;;
    seq-read-64k) echo "--filename=$loopdev --rw=read --bs=64k --ioengine=io_uring --iodepth=8 --direct=1 --fixedbufs --registerfiles|--target $loopdev --rw read --bs 64k --engine io_uring --iodepth 8 --direct|read" ;;
    seq-write-64k) echo "--filename=$loopdev --rw=write --bs=64k --ioengine=io_uring --iodepth=8 --direct=1 --fixedbufs --registerfiles|--target $loopdev --rw write --bs 64k --engine io_uring --iodepth 8 --direct --allow-overwrite|write" ;;
    # The same, with fio writing fresh data each time (refill_buffers), as
    # volbench's default does: fio's default reuses its buffer with a few
    # bytes scrambled, which zstd compresses across blocks.
    seq-write-64k-fresh) echo "--filename=$loopdev --rw=write --bs=64k --ioengine=io_uring --iodepth=8 --direct=1 --fixedbufs --registerfiles --refill_buffers|--target $loopdev --rw write --bs 64k --engine io_uring --iodepth 8 --direct --allow-overwrite|write" ;;
    *) die "unknown case '$1'" ;;
  esac
}

# Prints "iops lat_us cpu_pct" from one result file.
extract() { # tool op file
  python3 - "$@" <<'PY'
import json, sys
tool, op, path = sys.argv[1:]
d = json.load(open(path))
if tool == "fio":
    j = d["jobs"][0]
    t = j[op]
    print(t["iops"], t["lat_ns"]["mean"] / 1000.0, j["usr_cpu"] + j["sys_cpu"])
else:
    r = d["runs"][0]
    t = r["totals"][op]
    c = r["totals"]["cpu"]
    print(t["iops"], t["lat_us"]["mean"], c["user_pct"] + c["sys_pct"])
PY
}

# Requests the device completed and sectors moved, for one op type: read
# from /sys/block/DEV/stat around each run, so the table can show the size
# of the requests the device actually saw (the block layer merges
# contiguous I/Os submitted together).
dev_counters() { # op
  local ios=0 sectors=0
  if [[ -n $loopdev ]]; then
    read -r r_ios _ r_sect _ w_ios _ w_sect _ <"/sys/block/${loopdev#/dev/}/stat"
    if [[ $1 == read ]]; then ios=$r_ios sectors=$r_sect; else ios=$w_ios sectors=$w_sect; fi
  fi
  echo "$ios $sectors"
}

results=$work/results.tsv
: >"$results"
run_tool() { # tool case rep fio_args vb_args op
  local tool=$1 name=$2 rep=$3 out=$work/$1-$2-$3.json
  local before after
  before=$(dev_counters "$6")
  if [[ $tool == fio ]]; then
    # shellcheck disable=SC2086 # the case's arguments are meant to split
    fio --name=vs-fio "${common_fio[@]}" $4 >"$out" || die "fio failed on $name (see $out)"
  else
    # shellcheck disable=SC2086
    "$volbench" run $5 "${common_vb[@]}" >"$out" 2>"$out.err" || die "volbench failed on $name: $(tail -1 "$out.err")"
  fi
  after=$(dev_counters "$6")
  local kib=0
  read -r b_ios b_sect <<<"$before"
  read -r a_ios a_sect <<<"$after"
  if ((a_ios > b_ios)); then kib=$(((a_sect - b_sect) / 2 / (a_ios - b_ios))); fi
  [[ $name == psync-pagecache ]] && kib=0
  printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$tool" "$rep" "$(extract "$tool" "$6" "$out")" "$kib" >>"$results"
}

echo "vs-fio: $(nproc) CPUs, kernel $(uname -r), $(fio --version), $("$volbench" --version 2>/dev/null || echo volbench)" >&2
IFS=, read -ra case_list <<<"$cases"
for name in "${case_list[@]}"; do
  IFS='|' read -r fio_args vb_args op <<<"$(case_args "$name")"
  for ((rep = 1; rep <= repeat; rep++)); do
    # Alternate the order so neither tool always runs on a warmer machine.
    if ((rep % 2)); then order=(fio volbench); else order=(volbench fio); fi
    for tool in "${order[@]}"; do
      echo "vs-fio: $name, run $rep/$repeat: $tool" >&2
      run_tool "$tool" "$name" "$rep" "$fio_args" "$vb_args" "$op"
    done
  done
done

python3 - "$results" "$duration" "$warmup" "$repeat" <<'PY'
import sys, statistics
from collections import defaultdict
path, duration, warmup, repeat = sys.argv[1:]
rows = defaultdict(lambda: defaultdict(list))
order = []
for line in open(path):
    case, tool, _rep, iops, lat, cpu, kib = line.split()
    if case not in order:
        order.append(case)
    rows[case][tool].append((float(iops), float(lat), float(cpu), float(kib)))

def med(samples, i):
    return statistics.median(s[i] for s in samples)

def per_cpu(samples):
    # The median of per-run ratios, so one noisy run cannot skew it.
    return statistics.median(s[0] / (s[2] / 100.0) if s[2] > 0 else float("inf") for s in samples)

print(f"\nmedians of {repeat} runs each ({duration}s measured after {warmup}s warm-up), tools alternating\n")
hdr = f"{'case':<16} {'tool':<9} {'IOPS':>10} {'mean lat us':>11} {'CPU %':>7} {'IOPS/CPU-s':>11} {'dev KiB/req':>11}"
print(hdr)
print("-" * len(hdr))
ratios = []
for case in order:
    for tool in ("fio", "volbench"):
        s = rows[case][tool]
        kib = f"{med(s,3):.0f}" if med(s, 3) > 0 else "-"
        print(f"{case:<16} {tool:<9} {med(s,0):>10.0f} {med(s,1):>11.2f} {med(s,2):>7.1f} {per_cpu(s):>11.0f} {kib:>11}")
    f, v = rows[case]["fio"], rows[case]["volbench"]
    ratios.append((case, med(v,0)/med(f,0), med(v,1)/med(f,1), per_cpu(v)/per_cpu(f)))
print(f"\n{'case':<16} {'IOPS ratio':>10} {'lat ratio':>10} {'IOPS/CPU-s ratio':>17}   (volbench / fio)")
for case, ri, rl, rc in ratios:
    print(f"{case:<16} {ri:>10.3f} {rl:>10.3f} {rc:>17.3f}")
print("\ndev KiB/req: average size of the requests the loop device completed during the run")
print("(larger than the block size when the block layer merged contiguous I/Os).")
PY
