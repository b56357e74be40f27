#!/usr/bin/env bash
# windows-engine.sh: the cost of volbench's overlapped-I/O engine, under Wine. Wine runs
# Windows calls on Linux files, so its figures say nothing about Windows speed; what it
# can compare is programs' CPU per I/O on the same calls. Three programs, each built
# with the same toolchain: `bare.exe`, a bare loop of ReadFile +
# GetQueuedCompletionStatusEx, and `engine.exe`, the same loop through
# src/io/engine/overlapped.rs compiled unchanged (both from `scripts/windows-build
# harness`), and volbench.exe itself in the release profile (`scripts/windows-build
# --release`), a whole `volbench.exe run`: start, the set's checks, the workers, result.json
# and the report. 4 KiB random reads at queue depth 8 (one thread), FILE_FLAG_NO_BUFFERING,
# on one file (the file set volbench makes; the loops read its file); IOPS per CPU-second =
# I/Os / (CPU of the program + CPU wineserver spent on its behalf). The issue's target is
# volbench.exe / bare >= 0.9.
#
#   bench/windows-engine.sh [--duration 5] [--repeat 3] [--size 256] [--dir DIR] [--exe EXE]
#
# Runs alternate (bare, engine, volbench, bare, ...) so a slow moment hits all three;
# medians printed. Needs `scripts/windows-build up` once. DIR (default: a temporary
# directory under /var/tmp) holds the file set; EXE (default: this tree's release
# volbench.exe, built if missing or stale) is the volbench.exe measured.
set -euo pipefail
die() { echo "windows-engine: $*" >&2; exit 2; }
duration=5 repeat=3 size_mib=256 dir= exe=
while (($#)); do
  case $1 in
    --duration) duration=${2:?}; shift 2 ;;
    --repeat) repeat=${2:?}; shift 2 ;;
    --size) size_mib=${2:?}; shift 2 ;;
    --dir) dir=${2:?}; shift 2 ;;
    --exe) exe=${2:?}; shift 2 ;;
    -h | --help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/windows-build" harness --quiet
out=$root/bench/overlapped-loop/target/x86_64-pc-windows-gnu/release
if [[ -z $exe ]]; then
  "$root/scripts/windows-build" --release --quiet
  exe=$root/target/x86_64-pc-windows-gnu/release/volbench.exe
fi
[[ -f $exe ]] || die "no volbench.exe at $exe"
own=0
if [[ -z $dir ]]; then dir=$(mktemp -d /var/tmp/windows-engine.XXXXXX); own=1; fi
win() { local p=$1; echo "Z:${p//\//\\}"; }
# volbench.exe's job, the same for every run; the first run makes and fills the set.
vbargs=(run --target "$(win "$dir/set")" --size "${size_mib}M" --rw randread --bs 4k
  --threads 1 --iodepth 8 --duration "$duration" --warmup 0)
file=$dir/set/volbench.0.dat
winpath=$(win "$file")
export WINEPREFIX=${WINEPREFIX:-$HOME/.volbench-wine} WINEDEBUG=-all
# One wineserver for every run, so its CPU can be read before and after each.
wineserver -p 600 </dev/null >/dev/null 2>&1 || true  # already running: that one
[[ -f $file ]] || "$root/scripts/windows-build" run "$exe" "${vbargs[@]}" --output "$(win "$dir/fill")" \
  >/dev/null 2>&1 || die "volbench.exe could not make the file set in $dir/set"
rm -rf "$dir/fill"
"$root/scripts/windows-build" run "$out/bare.exe" "$winpath" 0 8 >/dev/null 2>&1 || true
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
server=$(pgrep -n wineserver) || die "no wineserver"
hz=$(getconf CLK_TCK)
one() { # prints "iops_per_cpu_s iops"
  local prog=$1 s0 s1 t res=
  s0=$(ticks "$server")
  if [[ $prog == volbench ]]; then
    res=$dir/out
    rm -rf "$res"  # volbench never replaces an output directory
    t=$( { /usr/bin/time -f 'cpu=%U+%S' "$root/scripts/windows-build" run "$exe" "${vbargs[@]}" \
      --output "$(win "$res")" >/dev/null; } 2>&1 )
  else
    t=$( { /usr/bin/time -f 'cpu=%U+%S' "$root/scripts/windows-build" run "$out/$prog" "$winpath" "$duration" 8; } 2>&1 )
  fi
  s1=$(ticks "$server")
  python3 - "$t" "$s0" "$s1" "$hz" "$res" <<'PY'
import json, re, sys
t, s0, s1, hz, res = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
if res:
    run = json.load(open(res + "/result.json"))["runs"][0]
    ios, secs = run["totals"]["read"]["ops"], run["totals"]["read"]["ops"] / run["totals"]["read"]["iops"]
else:
    ios = int(re.search(r"ios=(\d+)", t).group(1))
    secs = float(re.search(r"seconds=([\d.]+)", t).group(1))
u, s = map(float, re.search(r"cpu=([\d.]+)\+([\d.]+)", t).group(1, 2))
cpu = u + s + (s1 - s0) / hz
print(f"{ios / cpu:.0f} {ios / secs:.0f}")
PY
}
bare=() engine=() vb=() bare_iops=() engine_iops=() vb_iops=()
for ((i = 0; i < repeat; i++)); do
  read -r a b < <(one bare.exe); bare+=("$a"); bare_iops+=("$b")
  read -r a b < <(one engine.exe); engine+=("$a"); engine_iops+=("$b")
  read -r a b < <(one volbench); vb+=("$a"); vb_iops+=("$b")
done
rm -rf "$dir/out"
python3 - "${bare[*]}" "${engine[*]}" "${vb[*]}" "${bare_iops[*]}" "${engine_iops[*]}" "${vb_iops[*]}" <<'PY'
import statistics as st, sys
b, e, v, bi, ei, vi = ([float(x) for x in a.split()] for a in sys.argv[1:7])
mb, me, mv = st.median(b), st.median(e), st.median(v)
for name, m, i, runs in (("bare", mb, bi, b), ("engine", me, ei, e), ("volbench", mv, vi, v)):
    print(f"{name:<9}: {st.median(i):>9.0f} IOPS  {m:>9.0f} IOPS per CPU-second  (runs: {' '.join(f'{x:.0f}' for x in runs)})")
print(f"engine/bare IOPS per CPU-second: {me / mb:.2f}x")
print(f"volbench.exe/bare IOPS per CPU-second: {mv / mb:.2f}x (target >= 0.9x)")
PY
if ((own)); then rm -rf "$dir"; fi
