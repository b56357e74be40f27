#!/usr/bin/env bash
# windows-engine.sh: the cost of volbench's overlapped-I/O engine, under Wine. Wine runs
# Windows calls on Linux files, so its figures say nothing about Windows speed; what it
# can compare is two programs' CPU per I/O on the same calls. Both are built by
# `scripts/windows-build harness` with the same toolchain: `bare.exe`, a bare loop of
# ReadFile + GetQueuedCompletionStatusEx, and `engine.exe`, the same loop through
# src/io/engine/overlapped.rs compiled unchanged. 4 KiB random reads at queue depth 8,
# FILE_FLAG_NO_BUFFERING, on one file; IOPS per CPU-second = I/Os / (CPU of the program
# + CPU wineserver spent on its behalf). The target is engine/bare >= 0.9.
#
#   bench/windows-engine.sh [--duration 5] [--repeat 3] [--size 256] [--dir DIR]
#
# Runs alternate (bare, engine, bare, ...) so a slow moment hits both; medians printed.
# Needs `scripts/windows-build up` once. DIR (default: a temporary directory under
# /var/tmp) holds the file.
set -euo pipefail
die() { echo "windows-engine: $*" >&2; exit 2; }
duration=5 repeat=3 size_mib=256 dir=
while (($#)); do
  case $1 in
    --duration) duration=${2:?}; shift 2 ;;
    --repeat) repeat=${2:?}; shift 2 ;;
    --size) size_mib=${2:?}; shift 2 ;;
    --dir) dir=${2:?}; shift 2 ;;
    -h | --help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/windows-build" harness --quiet
out=$root/bench/overlapped-loop/target/x86_64-pc-windows-gnu/release
own=0
if [[ -z $dir ]]; then dir=$(mktemp -d /var/tmp/windows-engine.XXXXXX); own=1; fi
file=$dir/bench.dat
[[ -f $file ]] || head -c "$((size_mib << 20))" /dev/urandom >"$file"
winpath="Z:${file//\//\\}"
export WINEPREFIX=${WINEPREFIX:-$HOME/.volbench-wine} WINEDEBUG=-all
# One wineserver for every run, so its CPU can be read before and after each.
wineserver -p 600 </dev/null >/dev/null 2>&1 || true  # already running: that one
"$root/scripts/windows-build" run "$out/bare.exe" "$winpath" 0 8 >/dev/null 2>&1 || true
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
server=$(pgrep -n wineserver) || die "no wineserver"
hz=$(getconf CLK_TCK)
one() { # prints "iops_per_cpu_s iops"
  local exe=$1 s0 s1 t
  s0=$(ticks "$server")
  t=$( { /usr/bin/time -f 'cpu=%U+%S' "$root/scripts/windows-build" run "$out/$exe" "$winpath" "$duration" 8; } 2>&1 )
  s1=$(ticks "$server")
  python3 - "$t" "$s0" "$s1" "$hz" <<'PY'
import re, sys
t, s0, s1, hz = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
ios = int(re.search(r"ios=(\d+)", t).group(1))
secs = float(re.search(r"seconds=([\d.]+)", t).group(1))
u, s = map(float, re.search(r"cpu=([\d.]+)\+([\d.]+)", t).group(1, 2))
cpu = u + s + (s1 - s0) / hz
print(f"{ios / cpu:.0f} {ios / secs:.0f}")
PY
}
bare=() engine=() bare_iops=() engine_iops=()
for ((i = 0; i < repeat; i++)); do
  read -r a b < <(one bare.exe); bare+=("$a"); bare_iops+=("$b")
  read -r a b < <(one engine.exe); engine+=("$a"); engine_iops+=("$b")
done
python3 - "${bare[*]}" "${engine[*]}" "${bare_iops[*]}" "${engine_iops[*]}" <<'PY'
import statistics as st, sys
b, e, bi, ei = ([float(x) for x in a.split()] for a in sys.argv[1:5])
mb, me = st.median(b), st.median(e)
print(f"bare   : {st.median(bi):>9.0f} IOPS  {mb:>9.0f} IOPS per CPU-second  (runs: {' '.join(f'{x:.0f}' for x in b)})")
print(f"engine : {st.median(ei):>9.0f} IOPS  {me:>9.0f} IOPS per CPU-second  (runs: {' '.join(f'{x:.0f}' for x in e)})")
print(f"engine/bare IOPS per CPU-second: {me / mb:.2f}x (target >= 0.9x)")
PY
((own)) && rm -rf "$dir"
