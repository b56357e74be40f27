#!/usr/bin/env bash
# The whole test suite, from a fresh machine: installs what the tests need
# (when run as root on Debian), checks formatting and lints, then runs every
# unit and end-to-end test. Tests that need root, loop devices, namespaces or
# io_uring probe for them and print why they skip.
#
#   ./test.sh          everything (what CI runs)
#   ./test.sh --quick  format, lints and unit tests only: the fast lane while editing
set -euo pipefail
cd "$(dirname "$0")"

quick=0
case "${1:-}" in
  --quick) quick=1 ;;
  "") ;;
  *) echo "usage: ./test.sh [--quick]" >&2; exit 2 ;;
esac

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
  # The live tests start a real Prometheus scraping --metrics-listen and
  # check the exposition with promtool; they query it with curl.
  command -v prometheus >/dev/null || need+=(prometheus)
  command -v curl >/dev/null || need+=(curl)
  # The man pages are read back with man -l.
  command -v man >/dev/null || need+=(man-db)
  # The release artifact's check below asks `file` whether it is static.
  command -v file >/dev/null || need+=(file)
  if ((${#need[@]})); then
    if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
      echo "test.sh: installing ${need[*]}" >&2
      export DEBIAN_FRONTEND=noninteractive
      apt-get update -qq >/dev/null
      apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
    else
      echo "test.sh: missing ${need[*]}; the tests that need them will skip" >&2
    fi
  fi
fi

if ((!quick)); then
  # fio's ecosystem reads volbench's fio JSON in the tests: the real
  # fio-plot, pinned (fio's own fio_jsonplus_clat2csv comes with fio).
  if ! python3 -c 'import fio_plot' 2>/dev/null; then
    python3 -m pip install -q fio-plot==1.1.21 >/dev/null ||
      echo "test.sh: cannot install fio-plot; the test that draws with it will skip" >&2
  fi
fi

# Guardrails: formatting and lints fail the run like a failing test. The
# layering (no import cycle) and file-size rules are tests/architecture.rs.
rustup component list --installed 2>/dev/null | grep -q '^rustfmt' || rustup component add rustfmt clippy >/dev/null 2>&1 || true
cargo fmt --all -- --check
cargo clippy --quiet --all-targets -- -D warnings
# The code's own documentation builds without a broken link or tag, private
# items included (most of the crate is pub(crate): unreachable_pub is denied).
RUSTDOCFLAGS='-D warnings' cargo doc --quiet --no-deps --lib --document-private-items

if ((quick)); then
  cargo test --quiet --lib && cargo test --quiet --test e2e architecture::
  exit 0
fi
cargo build --quiet --all-targets
# The static build the launchers test runs in a root with no C library
# (dev profile: a fraction of a release build's time; same linking).
if [[ $(uname -m) == x86_64 ]]; then
  RUSTFLAGS='-C target-feature=+crt-static' cargo build --quiet --target x86_64-unknown-linux-gnu
  export VOLBENCH_STATIC_BIN=$PWD/target/x86_64-unknown-linux-gnu/debug/volbench
  # The release artifact's layout (`cargo xtask dist`), packed from that
  # same static build (--debug: no release build of minutes): a static
  # binary, a man page per subcommand, completions for bash, zsh and fish.
  cargo xtask dist --debug >/dev/null
  dist=target/dist/debug
  (cd "$dist" && sha256sum --quiet -c SHA256SUMS)
  tarball=$(ls "$dist"/volbench-*-x86_64-linux.tar.gz)
  top=$(basename "$tarball" .tar.gz)
  listing=$(tar -tzf "$tarball")
  fail() { echo "test.sh: cargo xtask dist: $*" >&2; exit 1; }
  file -b "$dist/$top/volbench" | grep -q 'static.*linked' || fail "$(file -b "$dist/$top/volbench")"
  for sub in $("$dist/$top/volbench" --help | awk '/^Commands:/{f=1;next} f&&/^$/{exit} f&&/^  [a-z]/{print $1}'); do
    [[ $sub == help ]] || grep -qx "$top/man/man1/volbench-$sub.1" <<<"$listing" || fail "no man page for $sub"
  done
  for f in man/man1/volbench.1 completions/volbench.bash completions/_volbench completions/volbench.fish; do
    grep -qx "$top/$f" <<<"$listing" || fail "no $f"
  done
fi
# Windows (docs/guide/windows.md): Debian's rustc-web 1.85 checks the Linux
# build against the declared rust-version, and builds volbench's overlapped
# engine and volbench.exe for Windows, which tests/e2e/windows.rs runs under
# Wine (the exe: target/x86_64-pc-windows-gnu/debug/volbench.exe).
if [[ $(uname -m) == x86_64 && $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
  scripts/windows-build up >/dev/null
  scripts/windows-build msrv --quiet
  scripts/windows-build check --quiet
  scripts/windows-build harness --quiet
  scripts/windows-build --quiet
fi
# The fuzz targets (tests/e2e/fuzz.rs, docs/reference/fuzzing.md) each run
# over their seeds and then mutations for this many seconds: CI's bounded
# fuzzing is 12 targets x 8 s, 48 s of wall time on two test threads
# (measured: 48 s). scripts/fuzz runs them for long (10 min a target).
export VOLBENCH_FUZZ_SECS="${VOLBENCH_FUZZ_SECS:-8}"
cargo test --quiet -- --test-threads="${VOLBENCH_TEST_THREADS:-2}"
