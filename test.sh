#!/usr/bin/env bash
# The whole test suite, from a fresh machine: installs what the tests need
# (when run as root on Debian), then runs every unit and end-to-end test.
# Tests that need root, loop devices, namespaces or io_uring probe for them
# and print why they skip.
set -euo pipefail
cd "$(dirname "$0")"

need=()
command -v fio >/dev/null || need+=(fio)
[[ -x /usr/sbin/sshd ]] || need+=(openssh-server)
command -v ssh >/dev/null || need+=(openssh-client)
command -v ip >/dev/null || need+=(iproute2)
command -v losetup >/dev/null || need+=(mount)
command -v chromium >/dev/null || need+=(chromium)
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

cargo build --quiet --all-targets
cargo test --quiet -- --test-threads="${VOLBENCH_TEST_THREADS:-2}"
