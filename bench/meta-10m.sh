#!/usr/bin/env bash
# meta-10m.sh: a tree of millions of files on one client: create, stat and
# delete it, then interrupt a create with SIGINT and clean what it left.
# Prints each phase's rate and volbench's maximum RSS (/usr/bin/time -v).
#
#   bench/meta-10m.sh [--files 10000000] [--threads 1] [--interrupt-after 5]
#
# The tree is --depth 2 --width 100 (10,000 leaf directories) with
# FILES/10000 empty files in each. It lives on a fresh tmpfs mounted for the
# run (size 64 MiB: empty files use no pages; nr_inodes sized for the tree)
# and unmounted at the end. A tmpfs inode and its dentry cost the kernel
# about 1 KiB, so 10 million files take about 10 GiB of the machine's
# memory while the tree exists: check `free -g` first.
# The figure of merit is RSS, which must not grow with the tree: run it with
# --files 100000 and with the full count and compare.
# Needs root (mount), /usr/bin/time (Debian: apt-get install time).
set -euo pipefail

die() { echo "meta-10m: $*" >&2; exit 2; }

files=10000000 threads=1 interrupt_after=5
while (($#)); do
  case $1 in
    --files) files=${2:?}; shift 2 ;;
    --threads) threads=${2:?}; shift 2 ;;
    --interrupt-after) interrupt_after=${2:?}; shift 2 ;;
    -h | --help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done
[[ $files =~ ^[0-9]+$ && $threads =~ ^[0-9]+$ && $interrupt_after =~ ^[0-9]+$ ]] ||
  die "numbers only: --files $files --threads $threads --interrupt-after $interrupt_after"
((files >= 10000 && files % 10000 == 0 && files <= 100000000)) ||
  die "--files must be a multiple of 10000 in 10000..100000000"
((threads >= 1 && threads <= 64)) || die "--threads must be 1..64"
((interrupt_after >= 1 && interrupt_after <= 3600)) || die "--interrupt-after must be 1..3600 s"
[[ $(id -u) == 0 ]] || die "needs root to mount a tmpfs"
[[ -x /usr/bin/time ]] || die "/usr/bin/time not found (Debian: apt-get install time)"
command -v python3 >/dev/null || die "python3 not found; it reads result.json"

root=$(cd "$(dirname "$0")/.." && pwd)
if [[ -n ${VOLBENCH:-} ]]; then
  vb=$VOLBENCH
else
  (cd "$root" && cargo build --release --quiet) || die "cargo build failed"
  vb=$root/target/release/volbench
fi

work=$(mktemp -d /tmp/vb-meta-10m.XXXXXX)
mnt=$work/mnt
mkdir "$mnt"
cleanup() {
  umount "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
mount -t tmpfs -o "size=64m,nr_inodes=$((files + files / 50 + 100000)),mode=0755" vb-meta-10m "$mnt" ||
  die "cannot mount a tmpfs on $mnt"
tree=$mnt/tree
per=$((files / 10000))
shape=(--depth 2 --width 100 --files-per-dir "$per" --file-size 0 --threads "$threads")

# One phase under /usr/bin/time: prints op, files, seconds, files/s, max RSS.
phase() {
  local op=$1 out=$work/out-$1
  /usr/bin/time -v -o "$work/time-$op" "$vb" run --target "$tree" --ops "$op" "${shape[@]}" \
    --output "$out" >/dev/null || die "$op failed (see above)"
  python3 - "$out/result.json" "$work/time-$op" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["runs"][0]
o = r["ops"][0]["totals"]
rss = next(int(l.split(":")[1]) for l in open(sys.argv[2]) if "Maximum resident" in l)
secs = next(p["duration_s"] for p in r["phases"] if p["name"] == "measure")
print(f"| {r['ops'][0]['op']} | {o['ops']:,} | {secs:.1f} | {o['iops']:,.0f} | {rss / 1024:.1f} MiB |")
PY
}

echo "$files files, --depth 2 --width 100 --files-per-dir $per, $threads thread(s), tmpfs $mnt"
echo "| op | files | seconds | files/s | max RSS |"
echo "|---|---:|---:|---:|---:|"
for op in create stat delete; do phase "$op"; done

# SIGINT mid-create: the result so far is written, the tree stays a tree
# (its marker intact) and `clean` removes it whole.
out=$work/out-int
"$vb" run --target "$tree" --ops create "${shape[@]}" --output "$out" >/dev/null 2>"$work/int.err" &
pid=$!
sleep "$interrupt_after"
kill -INT "$pid"
wait "$pid" && rc=0 || rc=$?
[[ -f $out/result.json ]] || die "no result.json after SIGINT (exit $rc): $(tail -3 "$work/int.err")"
python3 - "$out/result.json" "$rc" "$interrupt_after" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["runs"][0]
print(f"SIGINT after {sys.argv[3]} s: exit {sys.argv[2]}, interrupted={r['interrupted']}, "
      f"{r['ops'][0]['totals']['ops']:,} creates kept in result.json")
PY
"$vb" clean --target "$tree" >/dev/null 2>"$work/clean.err" || die "clean failed: $(tail -3 "$work/clean.err")"
left=0
[[ -e $tree ]] && left=$(find "$tree" -mindepth 1 | head -5 | wc -l)
((left == 0)) || die "clean left entries in $tree"
echo "clean after SIGINT: the tree is empty"
