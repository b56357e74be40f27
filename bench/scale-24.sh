#!/usr/bin/env bash
# scale-24: one volbench run driven from 24 client hosts x 8 threads at once
# (the Azure NetApp Files paper's 24-VM layout) on small targets, to check
# that coordinating stays cheap. Prints the coordinator's own CPU time (the
# volbench process itself; the ssh clients are reported apart). Aim: under
# 1% of one core for 24 hosts.
#
# By default the 24 hosts are network namespaces on this machine, each with
# its own sshd on a private bridge (needs root, iproute2, openssh-server,
# openssh-client); they are removed at exit. With real hosts instead:
#   HOSTS_FILE=hosts.txt SSH_COMMAND='ssh -F my_config' bench/scale-24.sh
#
# Settings (environment): HOSTS=24 THREADS=8 TARGETS='{host}' (e.g.
# 'vdb{1..6}/{host}' for the paper's six volumes per VM) SIZE=8m
# DURATION=20s ENGINE=psync VOLBENCH=path/to/volbench (default: the release
# build, built if missing) OUT=dir (default: a temporary one).
set -euo pipefail
cd "$(dirname "$0")/.."

hosts=${HOSTS:-24} threads=${THREADS:-8} size=${SIZE:-8m} duration=${DURATION:-20s}
engine=${ENGINE:-psync} targets=${TARGETS:-'{host}'}
work=$(mktemp -d /tmp/volbench-scale.XXXXXX)
out=${OUT:-$work/out}
octet=99 br=vbs99br
made_hosts=0

cleanup() {
  if ((made_hosts)); then
    for ((i = 1; i <= hosts; i++)); do
      for pid in $(ip netns pids "vbs99h$i" 2>/dev/null); do kill -9 "$pid" 2>/dev/null || true; done
      ip link del "vbs99h$i" 2>/dev/null || true
      ip netns del "vbs99h$i" 2>/dev/null || true
    done
    ip link del "$br" 2>/dev/null || true
  fi
  [[ -n ${OUT:-} ]] || rm -rf "$work"
}
trap cleanup EXIT

if [[ -n ${VOLBENCH:-} ]]; then
  bin=$VOLBENCH
else
  bin=$PWD/target/release/volbench
  [[ -x $bin ]] || cargo build --release --quiet
fi

if [[ -z ${HOSTS_FILE:-} ]]; then
  [[ $(id -u) == 0 ]] || { echo "scale-24: local hosts need root (or set HOSTS_FILE)" >&2; exit 2; }
  command -v ip >/dev/null && [[ -x /usr/sbin/sshd ]] ||
    { echo "scale-24: needs iproute2 and openssh-server" >&2; exit 2; }
  mkdir -p /run/sshd "$work/data"
  ssh-keygen -q -t ed25519 -N '' -f "$work/client_key"
  ssh-keygen -q -t ed25519 -N '' -f "$work/host_key"
  cp "$work/client_key.pub" "$work/authorized_keys"
  made_hosts=1
  ip link del "$br" 2>/dev/null || true
  ip link add "$br" type bridge
  ip addr add "10.77.$octet.1/24" dev "$br"
  ip link set "$br" up
  : >"$work/ssh_config" ; : >"$work/hosts.txt"
  for ((i = 1; i <= hosts; i++)); do
    ns=vbs99h$i addr=10.77.$octet.$((10 + i))
    ip netns del "$ns" 2>/dev/null || true
    ip netns add "$ns"
    ip link add "$ns" type veth peer name eth0 netns "$ns"
    ip link set "$ns" master "$br" up
    ip -n "$ns" addr add "$addr/24" dev eth0
    ip -n "$ns" link set lo up
    ip -n "$ns" link set eth0 up
    cat >"$work/sshd_$i" <<EOF
ListenAddress $addr
HostKey $work/host_key
AuthorizedKeysFile $work/authorized_keys
PidFile none
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
EOF
    ip netns exec "$ns" /usr/sbin/sshd -f "$work/sshd_$i"
    cat >>"$work/ssh_config" <<EOF
Host vm$i
  HostName $addr
  User root
  IdentityFile $work/client_key
  IdentitiesOnly yes
  StrictHostKeyChecking no
  UserKnownHostsFile /dev/null
  LogLevel ERROR
EOF
    echo "vm$i" >>"$work/hosts.txt"
  done
  for ((i = 1; i <= hosts; i++)); do
    for _ in $(seq 100); do ssh -F "$work/ssh_config" -o BatchMode=yes "vm$i" true 2>/dev/null && break; sleep 0.1; done
  done
  hosts_file=$work/hosts.txt
  ssh_command="ssh -F $work/ssh_config"
  target="$work/data/$targets"
  remote=(--remote-volbench "$bin")
else
  hosts_file=$HOSTS_FILE
  ssh_command=${SSH_COMMAND:-ssh}
  target=${TARGET_DIR:-/tmp/volbench-scale}/$targets
  remote=(--push-binary)
fi

if ((made_hosts)); then
  # Stand-ins for the mount points: the parent directory of every target.
  "$bin" run --hosts-file "$hosts_file" --target "$target" --size "$size" --dry-run |
    sed -n 's/.*targets: //p' | tr ' ' '\n' | while read -r t; do mkdir -p "$(dirname "$t")"; done
fi
echo "scale-24: $(grep -cv '^\s*\(#\|$\)' "$hosts_file") hosts x $threads threads, target $target, $engine, $duration" >&2
"$bin" run --hosts-file "$hosts_file" --ssh-command "$ssh_command" "${remote[@]}" \
  --target "$target" --size "$size" --buffered --engine "$engine" --rw randread --bs 4k \
  --threads "$threads" --duration "$duration" --warmup 2s --output "$out" >/dev/null

python3 - "$out/result.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
c = d["cluster"]; k = c["coordinator"]; r = d["runs"][0]; cr = c["runs"][0]
ok = sum(h["status"] == "ok" for h in c["hosts"])
print(f"hosts ok:            {ok}/{len(c['hosts'])}, I/O threads {r['io_threads']}")
print(f"merged:              {r['totals']['read']['iops']:,.0f} IOPS, p99 {r['totals']['read']['lat_us']['p99']:.0f} us")
print(f"start skew:          {cr['start_skew_ms']:.2f} ms")
print(f"coordinator CPU:     user {k['user_s']:.3f} s + sys {k['sys_s']:.3f} s over {k['wall_s']:.1f} s wall"
      f" = {k['cpu_pct']:.2f}% of one core")
print(f"ssh clients (apart): user {k['ssh_user_s']:.2f} s + sys {k['ssh_sys_s']:.2f} s")
EOF
