#!/usr/bin/env bash
# store: what keeping history costs. (1) Storing a 1,000-host result of 600
# intervals per run (two runs): the time of the store's write (the rows and
# the compressed result.json, in one transaction; `store import` reports it
# apart from reading and checking the file) and the store's size per run.
# (2) `volbench history` over 10,000 stored runs: the time of the command,
# process start included, default listing (50 newest) and a filtered one.
# Medians of ROUNDS rounds, on SQLite (the default store).
#
#   bench/store.sh               # ROUNDS=5
#
# The inputs are made by the fixture builder of the end-to-end tests
# (tests/e2e/store.rs, store_bench_inputs, run with --ignored).
# VOLBENCH=path/to/volbench (default: the release build, built if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-5}
work=$(mktemp -d /tmp/volbench-store.XXXXXX)
trap 'rm -rf "$work"' EXIT
vb=${VOLBENCH:-target/release/volbench}
[[ -x $vb ]] || cargo build --release --quiet
echo "making the inputs in $work (1,000-host result, 10,000 small results)..." >&2
VOLBENCH_BENCH_OUT=$work cargo test --quiet --test e2e store_bench_inputs -- --ignored \
  >/dev/null
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ms() { echo "$(( ($(date +%s%N) - $1) / 1000000 ))"; }

big=$work/big
echo "result.json of the 1,000-host run: $(du -m "$big/result.json" | cut -f1) MiB" >&2
for ((i = 0; i < rounds; i++)); do
  rm -f "$work/big.db"
  "$vb" store import --store "$work/big.db" "$big" 2>&1 >/dev/null |
    sed -n 's/.*reading \([0-9.]*\) s, storing \([0-9.]*\) s.*/\1 \2/p' >>"$work/big.times"
done
read_med=$(cut -d' ' -f1 "$work/big.times" | median)
store_med=$(cut -d' ' -f2 "$work/big.times" | median)
size=$(stat -c %s "$work/big.db")
echo "1,000 hosts x 600 intervals: storing ${store_med} s (median of $rounds; reading and" \
  "checking the file ${read_med} s), store $((size / 1024)) KiB for the run"

echo "importing 10,000 results..." >&2
t=$(date +%s%N)
"$vb" store import --store "$work/many.db" "$work/many" >/dev/null 2>"$work/many.log"
echo "10,000 runs imported in $(ms "$t") ms ($(tail -1 "$work/many.log"));" \
  "store $(( $(stat -c %s "$work/many.db") / 1024 / 1024 )) MiB," \
  "$(( $(stat -c %s "$work/many.db") / 10000 )) bytes a run"
for what in "" "--target /mnt/vol3 --since 2026-05-01" "--limit 10000 --json"; do
  : >"$work/h.times"
  for ((i = 0; i < rounds * 2 + 1; i++)); do
    t=$(date +%s%N)
    # shellcheck disable=SC2086
    "$vb" history --store "$work/many.db" $what >/dev/null
    ms "$t" >>"$work/h.times"
  done
  echo "history ${what:-(50 newest)} over 10,000 runs: $(median <"$work/h.times") ms (median of $((rounds * 2 + 1)))"
done
