#!/usr/bin/env bash
# The whole test suite: checks formatting and lints, then runs every unit and
# end-to-end test. Tests that need root, loop devices, namespaces, io_uring,
# a package or Wine probe for them and skip, saying why; the skips are listed
# at the end.
#
#   ./test.sh            everything this machine can run; installs nothing
#                        system-wide (fio-plot goes into target/py, a venv)
#   ./test.sh --install  also, as root on Debian: the packages the tests need
#                        (apt-get), then the Windows build (mingw-w64, Debian's
#                        rustc-web 1.85 in /usr/bin, Wine and a Wine prefix in
#                        ~/.volbench-wine) and its Wine tests, and rustc 1.85's
#                        check of the Linux build (the MSRV). CI=true implies
#                        it (VOLBENCH_INSTALL=1 too); .ci/run passes it.
#   ./test.sh --quick    format, lints and unit tests only: the fast lane while editing
set -euo pipefail
cd "$(dirname "$0")"

usage() { echo "usage: ./test.sh [--quick] [--install]" >&2; exit 2; }
quick=0
install=${VOLBENCH_INSTALL:-0}
[[ ${CI:-} == true ]] && install=1
for arg in "$@"; do
  case $arg in
    --quick) quick=1 ;;
    --install) install=1 ;;
    *) usage ;;
  esac
done
[[ $install == 1 ]] || install=0

if ((!quick)); then
  need=()
  command -v fio >/dev/null || need+=(fio)
  [[ -x /usr/sbin/sshd ]] || need+=(openssh-server)
  command -v ssh >/dev/null || need+=(openssh-client)
  command -v ip >/dev/null || need+=(iproute2)
  command -v losetup >/dev/null || need+=(mount)
  command -v mkfs.ext4 >/dev/null || need+=(e2fsprogs)
  command -v sshfs >/dev/null || need+=(sshfs)
  command -v chromium >/dev/null || need+=(chromium)
  command -v slurmctld >/dev/null || need+=(slurm-wlm)
  command -v munged >/dev/null || need+=(munge)
  # The data tests measure --compress with the real compressors.
  command -v zstd >/dev/null || need+=(zstd)
  command -v lz4 >/dev/null || need+=(lz4)
  command -v gzip >/dev/null || need+=(gzip)
  # The fill-size test watches the fill's writes.
  command -v strace >/dev/null || need+=(strace)
  # fio's fio_jsonplus_clat2csv (Debian's python3) imports six, which fio
  # does not depend on.
  /usr/bin/python3 -c 'import six' 2>/dev/null || need+=(python3-six)
  # fio-plot's virtual environment below.
  /usr/bin/python3 -c 'import venv, ensurepip' 2>/dev/null || need+=(python3-venv)
  # The live tests start a real Prometheus scraping --metrics-listen and
  # check the exposition with promtool; they query it with curl.
  command -v prometheus >/dev/null || need+=(prometheus)
  command -v curl >/dev/null || need+=(curl)
  # The NFS client's tests start nfs-ganesha in user space (and rpcbind,
  # where it registers); ss counts the client's connections.
  command -v ganesha.nfsd >/dev/null || need+=(nfs-ganesha)
  [[ -e /usr/lib/x86_64-linux-gnu/ganesha/libfsalvfs.so ]] || need+=(nfs-ganesha-vfs)
  command -v rpcbind >/dev/null || need+=(rpcbind)
  command -v ss >/dev/null || need+=(iproute2)
  # bench/nfs-vs-libnfs.sh's C loop.
  [[ -e /usr/include/nfsc/libnfs.h ]] || need+=(libnfs-dev)
  # The SMB client's tests run a real Samba (smbd, smbpasswd); the bench
  # compares with a C loop over libsmbclient and smbclient's transfers.
  [[ -x /usr/sbin/smbd ]] || need+=(samba)
  command -v smbclient >/dev/null || need+=(smbclient)
  [[ -f /usr/include/samba-4.0/libsmbclient.h ]] || need+=(libsmbclient-dev)
  # The results store's PostgreSQL tests start their own cluster
  # (tests/e2e/common/postgres.rs) from Debian's server binaries.
  compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || need+=(postgresql)
  # The man pages are read back with man -l (and the Windows zip's pages
  # are made with it).
  command -v man >/dev/null || need+=(man-db)
  # The release artifact's check below asks `file` whether it is static;
  # cargo xtask dist zips the Windows build.
  command -v file >/dev/null || need+=(file)
  command -v zip >/dev/null || need+=(zip)
  command -v unzip >/dev/null || need+=(unzip)
  if ((${#need[@]})); then
    if ((install)) && [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
      echo "test.sh: installing ${need[*]}" >&2
      export DEBIAN_FRONTEND=noninteractive
      apt-get update -qq >/dev/null
      apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
    elif ((install)); then
      echo "test.sh: missing ${need[*]} (--install needs root and apt-get); the tests that need them will skip" >&2
    else
      echo "test.sh: missing ${need[*]}; the tests that need them will skip (./test.sh --install, as root, installs them)" >&2
    fi
  fi
fi

if ((!quick)); then
  # fio's ecosystem reads volbench's fio JSON in the tests: the real
  # fio-plot, pinned (fio's own fio_jsonplus_clat2csv comes with fio), in a
  # virtual environment of the checkout's own, never the system's Python.
  if python3 -c 'import fio_plot' 2>/dev/null; then
    :
  elif [[ -x target/py/bin/python ]] && target/py/bin/python -c 'import fio_plot' 2>/dev/null; then
    export VOLBENCH_FIO_PLOT_PYTHON=$PWD/target/py/bin/python
  elif python3 -m venv target/py >/dev/null 2>&1 &&
      target/py/bin/python -m pip install -q fio-plot==1.1.21 >/dev/null 2>&1; then
    export VOLBENCH_FIO_PLOT_PYTHON=$PWD/target/py/bin/python
  else
    echo "test.sh: cannot install fio-plot into target/py; the test that draws with it will skip" >&2
  fi
fi

# CI builds once from a clean checkout: the incremental caches (GiBs for the
# debug build, its static twin and the Windows build) would only cost disk.
if [[ ${CI:-} == true ]]; then
  export CARGO_INCREMENTAL=0
fi

# Every test that skips appends "name: why" here (tests/e2e/common skip()),
# listed at the end: a skip is never only a line in captured output.
export VOLBENCH_SKIP_LOG=$PWD/target/test-skips.txt
mkdir -p target
: >"$VOLBENCH_SKIP_LOG"
skips() {
  local n
  n=$(sort -u "$VOLBENCH_SKIP_LOG" | grep -c . || true)
  if ((n)); then
    echo "test.sh: $n tests skipped:" >&2
    sort -u "$VOLBENCH_SKIP_LOG" | sed 's/^/  SKIP /' >&2
  else
    echo "test.sh: no test skipped" >&2
  fi
}
# Each step's wall time, listed at the end (also when a step fails or the
# run is stopped): CI's budget is 90 minutes, and a slow step must be seen.
steps=()
step_name=
step_start=0
step() {
  step_name=$1
  step_start=$SECONDS
  shift
  "$@"
  steps+=("$(printf '%6d s  %s' $((SECONDS - step_start)) "$step_name")")
  step_name=
}
finish() {
  local rc=$?
  skips
  echo "test.sh: steps (wall time):" >&2
  local s
  for s in "${steps[@]}"; do echo "  $s" >&2; done
  [[ -z $step_name ]] || printf '  %6d s  %s (unfinished, exit %d)\n' $((SECONDS - step_start)) "$step_name" "$rc" >&2
  if [[ -s ${test_log:-} ]] && grep -q 'has been running for over' "$test_log"; then
    echo "test.sh: tests that ran past 60 s:" >&2
    grep -o 'test .* has been running for over' "$test_log" | sed 's/^test /  /; s/ has been.*//' >&2
  fi
  echo "test.sh: $SECONDS s in all" >&2
}
trap finish EXIT

# Guardrails: formatting and lints fail the run like a failing test. The
# layering (no import cycle) and file-size rules are tests/architecture.rs.
rustup component list --installed 2>/dev/null | grep -q '^rustfmt' || rustup component add rustfmt clippy >/dev/null 2>&1 || true
step fmt cargo fmt --all -- --check
step clippy cargo clippy --quiet --all-targets -- -D warnings
# The code's own documentation builds without a broken link or tag, private
# items included (most of the crate is pub(crate): unreachable_pub is denied).
RUSTDOCFLAGS='-D warnings' step doc cargo doc --quiet --no-deps --lib --document-private-items

if ((quick)); then
  # One command a line: under `set -e` a failure inside `a && b` does not
  # stop the script, and the lane would have said 0 over failing unit tests.
  step unit cargo test --quiet --lib
  step architecture cargo test --quiet --test e2e architecture::
  exit 0
fi
# Windows (docs/guide/windows.md): Debian's rustc-web 1.85 and mingw-w64
# build volbench.exe, which tests/e2e/windows.rs runs under Wine (the exe:
# target/x86_64-pc-windows-gnu/debug/volbench.exe), and volbench's
# overlapped engine in its harness. It installs system-wide (mingw-w64,
# rustc-web in /usr/bin, Wine, a Wine prefix in the home directory): only
# with --install (CI). Without it the Wine tests skip (VOLBENCH_WINE=0),
# whatever old volbench.exe lies in target/.
#
# One step after another: run beside the stable builds (a lane of its own,
# tried), these builds made the whole slower, cold on a 2-core machine
# 1,208 s of builds against 1,117 s in this order: two cargo builds at -j2
# only share the cores, and each then waits for the other's link.
if ((install)) && [[ $(uname -m) == x86_64 && $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
  step "windows: packages and Wine prefix" scripts/windows-build up >/dev/null
  # The declared rust-version: rustc 1.85 checks the Linux build, all
  # targets. (Debian's rustc is not profile-optimised as rustup's is: it
  # compiles at about half the speed, so it checks here, and builds only
  # what only it can build, for Windows.)
  step "msrv (rustc 1.85)" scripts/windows-build msrv --quiet
  windows=1
elif ((!install)); then
  export VOLBENCH_WINE=0
fi
step build cargo build --quiet --all-targets
if [[ ${windows:-} ]]; then
  # One compile of volbench.exe, its warnings denied (scripts/windows-build
  # check would compile it a second time to deny them).
  step "windows build" scripts/windows-build strict
  step "windows harness" scripts/windows-build harness --quiet
  windows_built=1
fi
# The static build the launchers test runs in a root with no C library,
# linked from the library and dependencies `build` just compiled: `cargo
# rustc` gives +crt-static to the binary's own crate alone, whose link makes
# it static (one compiled library serves both links; the features are those
# `--all-targets` unified, so it is that very library). Seconds, where a
# build of its own (RUSTFLAGS and --target: every crate again) took three
# minutes, four on a cold CI. Test harnesses are not linked so: statically
# linked against glibc they crash (the library's unit tests died of SIGSEGV
# when tried).
if [[ $(uname -m) == x86_64 ]]; then
  step "static build" cargo rustc --quiet --bin volbench --features test-fixtures,fuzzing -- -C target-feature=+crt-static
  mkdir -p target/static
  cp target/debug/volbench target/static/volbench
  # target/debug/volbench is the dynamic build's again (cargo puts back the
  # binary of the build it was asked for; nothing is compiled).
  cargo build --quiet --all-targets
  export VOLBENCH_STATIC_BIN=$PWD/target/static/volbench
fi
if [[ $(uname -m) == x86_64 ]]; then
  # The release artifact's layout (`cargo xtask dist`), packed from that
  # same static build (--debug: no release build of minutes): a static
  # binary, a man page per subcommand, completions for bash, zsh and fish.
  step dist cargo xtask dist --debug --bin "$VOLBENCH_STATIC_BIN" >/dev/null
  dist=target/dist/debug
  (cd "$dist" && sha256sum --quiet -c SHA256SUMS)
  tarball=$(ls "$dist"/volbench-*-x86_64-linux.tar.gz)
  top=$(basename "$tarball" .tar.gz)
  listing=$(tar -tzf "$tarball")
  fail() { echo "test.sh: cargo xtask dist: $*" >&2; exit 1; }
  file -b "$dist/$top/volbench" | grep -q 'static.*linked' || fail "$(file -b "$dist/$top/volbench")"
  # The Windows zip, when the build above made volbench.exe: the exe, its
  # pages as text, the licences; in SHA256SUMS (checked above).
  zip=$(ls "$dist"/volbench-*-x86_64-windows.zip 2>/dev/null || true)
  if [[ ${windows_built:-} && -z $zip ]]; then fail "no Windows zip though volbench.exe was built"; fi
  if [[ -n $zip ]]; then
    ztop=$(basename "$zip" .zip)
    zlisting=$(unzip -Z1 "$zip")
    for f in volbench.exe man/volbench.txt man/volbench-run.txt README.md LICENSE-MIT THIRD-PARTY-NOTICES.txt; do
      grep -qx "$ztop/$f" <<<"$zlisting" || fail "no $f in $(basename "$zip")"
    done
  fi
  for sub in $("$dist/$top/volbench" --help | awk '/^Commands:/{f=1;next} f&&/^$/{exit} f&&/^  [a-z]/{print $1}'); do
    [[ $sub == help ]] || grep -qx "$top/man/man1/volbench-$sub.1" <<<"$listing" || fail "no man page for $sub"
  done
  for f in man/man1/volbench.1 completions/volbench.bash completions/_volbench completions/volbench.fish \
      README.md docs/reference/exit-codes.md LICENSE-MIT LICENSE-APACHE THIRD-PARTY-NOTICES.txt; do
    grep -qx "$top/$f" <<<"$listing" || fail "no $f"
  done
fi
echo "test.sh: built; target/ holds $(du -sh target 2>/dev/null | cut -f1), $(df -h --output=avail target | tail -1 | tr -d ' ') free" >&2
# The fuzz targets (tests/e2e/fuzz.rs, docs/reference/fuzzing.md) each run
# over their seeds and then mutations for this many seconds: CI's bounded
# fuzzing is 14 targets x 8 s, under a minute of wall time among the
# suite's test threads. scripts/fuzz runs them for long (10 min a target).
export VOLBENCH_FUZZ_SECS="${VOLBENCH_FUZZ_SECS:-8}"
# libtest names each test that runs past 60 s; the names are listed again
# at the end, where they are seen. On CI the tests stop five minutes before
# its 90: a test that hangs is then named, and the steps' times are printed.
test_log=target/test-output.txt
: >"$test_log"
# Four tests at a time on a 2-core machine: most of the suite's time is
# waiting (runs of seconds, servers starting, throttled devices), not CPU,
# so four cut its wall time by a third (944 s at two, 629 s at four, the
# same machine); the tests that need the machine to themselves take
# `heavy_io()`'s lock, and the rest hold with four CPU-bound processes
# beside them.
run_tests() {
  local deadline=()
  local left=$((5100 - SECONDS))
  ((left > 60)) || left=60
  [[ ${CI:-} == true ]] && deadline=(timeout --kill-after=30 "$left")
  "${deadline[@]}" cargo test --quiet -- --test-threads="${VOLBENCH_TEST_THREADS:-4}" 2>&1 | tee "$test_log"
}
step tests run_tests
