#!/usr/bin/env bash
# meta-vs-c.sh: metadata operations per CPU-second, side by side in one run:
# volbench's --ops phases, a bare C loop of the same system calls (the floor),
# and fio's filecreate / filestat / filedelete engines.
#
#   bench/meta-vs-c.sh [--files 100000] [--fio-files 20000] [--repeat 3] [--dir /dev/shm]
#
# Single thread. The tree is volbench's default layout, one level of 10
# directories (--depth 1 --width 10 --files-per-dir FILES/10); the C loop
# uses the same names and, like volbench, reaches each file relative to its
# directory's descriptor with O_NOFOLLOW and reads the clock around every
# operation. Operations:
#   create  openat(O_CREAT|O_EXCL) + close, 0-byte files (fio's filecreate
#           creates empty files)
#   stat    fstatat(AT_SYMLINK_NOFOLLOW)            (fio: filestat)
#   read    openat + read a 4 KiB file to EOF + close (fio has no such engine)
#   delete  statx(AT_SYMLINK_NOFOLLOW) + unlinkat: the same system calls as
#           volbench, which proves each file the tree's own (type, one link,
#           owner, device, birth) before it unlinks it (P1's rule: never
#           relaxed for speed)              (fio: filedelete, files in one
#           directory, as fio lays them out)
#   unlink  the bare unlinkat, C only: the row "delete, bare" shows what the
#           ownership check costs against a loop that checks nothing
# fio gets fewer files (--fio-files): it is far slower per file, and the
# figure compared is per operation.
# CPU is getrusage of the C process, volbench's totals.cpu (the whole
# process, measured phase) and fio's usr_cpu + sys_cpu over the job runtime.
# On tmpfs (the default, /dev/shm) this measures the tools, not storage.
# Needs cc and python3; fio is installed with apt-get when missing (root).
set -euo pipefail

die() { echo "meta-vs-c: $*" >&2; exit 2; }

files=100000 fio_files=20000 repeat=3 base=/dev/shm
while (($#)); do
  case $1 in
    --files) files=${2:?}; shift 2 ;;
    --repeat) repeat=${2:?}; shift 2 ;;
    --fio-files) fio_files=${2:?}; shift 2 ;;
    --dir) base=${2:?}; shift 2 ;;
    -h | --help) sed -n '2,29p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done
[[ $files =~ ^[0-9]+$ && $fio_files =~ ^[0-9]+$ && $repeat =~ ^[0-9]+$ ]] ||
  die "numbers only: --files $files --fio-files $fio_files --repeat $repeat"
((files >= 100 && files % 10 == 0 && files <= 10000000)) || die "--files must be a multiple of 10 in 100..10000000"
((repeat >= 1 && repeat <= 100)) || die "--repeat must be 1..100"
((fio_files >= 1 && fio_files <= files)) || die "--fio-files must be 1..--files"
[[ -d $base ]] || die "$base is not a directory"
command -v cc >/dev/null || die "cc not found (Debian: apt-get install gcc)"
command -v python3 >/dev/null || die "python3 not found; it parses the JSON results"
if ! command -v fio >/dev/null; then
  if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
    echo "meta-vs-c: installing fio" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fio >/dev/null ||
      { apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fio >/dev/null; }
  fi
fi
have_fio=0
command -v fio >/dev/null && have_fio=1

root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "$base/vb-meta-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
per=$((files / 10))

if [[ -n ${VOLBENCH:-} ]]; then
  vb=$VOLBENCH
else
  (cd "$root" && cargo build --release --quiet) || die "cargo build failed"
  vb=$root/target/release/volbench
fi

cat >"$work/loop.c" <<'EOF'
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static unsigned long long now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (unsigned long long)t.tv_sec * 1000000000ull + t.tv_nsec;
}

static double cpu(void) {
    struct rusage r;
    getrusage(RUSAGE_SELF, &r);
    return r.ru_utime.tv_sec + r.ru_stime.tv_sec + (r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e6;
}

int main(int argc, char **argv) {
    if (argc != 5) return 2;
    const char *op = argv[1];
    int root = open(argv[2], O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    long per = atol(argv[3]), size = atol(argv[4]);
    static char buf[1 << 16];
    memset(buf, 'x', sizeof buf);
    char name[32];
    unsigned long long lat = 0;
    double c0 = cpu();
    long n = 0;
    for (int d = 0; d < 10; d++) {
        snprintf(name, sizeof name, "d%d", d);
        if (!strcmp(op, "create")) mkdirat(root, name, 0755);
        int dir = openat(root, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
        if (dir < 0) { perror(name); return 1; }
        for (long f = 0; f < per; f++) {
            snprintf(name, sizeof name, "f%ld", f);
            unsigned long long t0 = now();
            if (!strcmp(op, "create")) {
                int fd = openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
                if (fd < 0) { perror("create"); return 1; }
                if (size && write(fd, buf, size) != size) { perror("write"); return 1; }
                close(fd);
            } else if (!strcmp(op, "stat")) {
                struct stat st;
                if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW)) { perror("stat"); return 1; }
            } else if (!strcmp(op, "read")) {
                int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
                if (fd < 0) { perror("open"); return 1; }
                while (read(fd, buf, sizeof buf) > 0) {}
                close(fd);
            } else if (!strcmp(op, "delete")) {
                struct statx sx;
                if (statx(dir, name, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS | STATX_BTIME, &sx)) {
                    perror("statx"); return 1;
                }
                if (!S_ISREG(sx.stx_mode) || sx.stx_nlink != 1 || sx.stx_uid != geteuid()) { fputs("not ours\n", stderr); return 1; }
                if (unlinkat(dir, name, 0)) { perror("unlink"); return 1; }
            } else if (!strcmp(op, "unlink")) {
                if (unlinkat(dir, name, 0)) { perror("unlink"); return 1; }
            } else return 2;
            lat += now() - t0;
            n++;
        }
        close(dir);
    }
    printf("%ld %.6f %.1f\n", n, cpu() - c0, lat / (double)n);
    return 0;
}
EOF
cc -O2 -o "$work/loop" "$work/loop.c" || die "cannot compile the C loop"

results=$work/results.txt
: >"$results"
record() { echo "$1 $2 $3 $4" >>"$results"; } # tool op ops cpu_s

c_round() {
  local d=$work/c size
  for size in 0 4096; do
    rm -rf "$d"; mkdir "$d"
    local ops=(create stat delete)
    ((size)) && ops=(create read unlink)
    for op in "${ops[@]}"; do
      read -r n cpu _ < <("$work/loop" "$op" "$d" "$per" "$size")
      record c "$op" "$n" "$cpu"
    done
  done
}

vb_round() {
  local d=$work/vb size ops
  for size in 0 4k; do
    rm -rf "$d"
    ops=create,stat,delete
    [[ $size == 4k ]] && ops=create,read,delete
    "$vb" run --target "$d" --ops "$ops" --depth 1 --width 10 --files-per-dir "$per" \
      --file-size "$size" --threads 1 --json 2>/dev/null |
      python3 -c '
import json, sys
doc = json.load(sys.stdin)
size = sys.argv[1]
for r in doc["runs"]:
    op = r["ops"][0]
    secs = next(p["duration_s"] for p in r["phases"] if p["name"] == "measure")
    cpu = (r["totals"]["cpu"]["user_pct"] + r["totals"]["cpu"]["sys_pct"]) / 100 * secs
    if op["op"] in ("stat", "read") or size == "0":
        print("volbench", op["op"], op["totals"]["ops"], cpu)
' "$size" >>"$results"
  done
}

fio_round() {
  ((have_fio)) || return 0
  local d=$work/fio engine op
  for engine in filecreate filestat filedelete; do
    rm -rf "$d"; mkdir "$d"
    case $engine in filecreate) op=create ;; filestat) op=stat ;; filedelete) op=delete ;; esac
    fio --name=meta --ioengine=$engine --directory="$d" --nrfiles="$fio_files" --filesize=4k \
      --bs=4k --openfiles=1 --fallocate=none --thread --output-format=json 2>/dev/null |
      python3 -c '
import json, sys
j = json.load(sys.stdin)["jobs"][0]
cpu = (j["usr_cpu"] + j["sys_cpu"]) / 100 * j["job_runtime"] / 1000
print("fio", sys.argv[1], sys.argv[2], cpu)
' "$op" "$fio_files" >>"$results"
  done
}

for ((i = 0; i < repeat; i++)); do
  # Alternate the order so no tool always runs on a warmer cache.
  if ((i % 2)); then vb_round; c_round; fio_round; else fio_round; c_round; vb_round; fi
done

python3 - "$results" "$files" "$repeat" "$fio_files" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
rate = {}
for tool, op, n, cpu in rows:
    n, cpu = float(n), float(cpu)
    if cpu > 0:
        rate.setdefault((tool, op), []).append(n / cpu)
med = {k: statistics.median(v) for k, v in rate.items()}
print(f"{sys.argv[2]} files (fio: {sys.argv[4]}), 1 thread, medians of {sys.argv[3]} rounds: operations per CPU-second")
print(f"| op | C loop | volbench | fio | volbench / C | volbench / fio |")
print(f"|---|---:|---:|---:|---:|---:|")
k = lambda x: f"{x/1000:.0f}k" if x else "-"
r = lambda a, b: f"{a/b:.2f}x" if a and b else "-"
for op in ["create", "stat", "read", "delete"]:
    c, v, f = (med.get((t, op)) for t in ("c", "volbench", "fio"))
    print(f"| {op} | {k(c)} | {k(v)} | {k(f)} | {r(v, c)} | {r(v, f)} |")
# The C loop's delete checks each file as volbench must; a bare unlinkat
# shows what that check costs.
c, v = med.get(("c", "unlink")), med.get(("volbench", "delete"))
print(f"| delete, bare | {k(c)} | {k(v)} | - | {r(v, c)} | - |")
EOF
