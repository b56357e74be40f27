//! The flags of a run on many hosts (`--hosts`, `--hosts-file`, launchers,
//! host counts, pushing the binary), shared by `run` and `suite run`.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::{host_counts, launch};

/// `--push-dir`'s default: under the home directory on every system.
const PUSH_DIR: &str = "~/.cache/volbench";
/// `--remote-volbench`'s default: the one on the host's PATH.
const REMOTE_VOLBENCH: &str = "volbench";

/// Running one job on many client hosts at once, over ssh.
#[derive(Args, Debug, Clone, Default)]
#[command(next_help_heading = "Many hosts")]
pub(crate) struct HostArgs {
    /// Run on these hosts at once (comma list; anything ssh accepts: names,
    /// addresses, user@host, ~/.ssh/config aliases). --target becomes a
    /// template: {host}, {index} (position from 0), {1..6}, {a,b}.
    #[arg(long, value_name = "HOST,...", conflicts_with = "hosts_file")]
    pub(crate) hosts: Option<String>,

    /// Like --hosts, one host a line; '#' comments; per-host overrides after
    /// the name: target=TEMPLATE threads=N, os=windows (started through
    /// cmd.exe over ssh), volbench=PATH (its installed volbench).
    #[arg(long, value_name = "FILE")]
    pub(crate) hosts_file: Option<PathBuf>,

    /// The command that reaches a host, run as CMD HOST REMOTE-COMMAND
    /// [default: ssh, or $VOLBENCH_SSH_COMMAND]. When the program is ssh,
    /// -T -o BatchMode=yes -o ServerAliveInterval=5 -o ServerAliveCountMax=3
    /// -o ConnectTimeout=10 are added after your words.
    #[arg(long, value_name = "CMD")]
    pub(crate) ssh_command: Option<String>,

    #[command(flatten)]
    pub(crate) launch: launch::LaunchArgs,

    #[command(flatten)]
    pub(crate) counts: host_counts::HostCountArgs,

    /// Copy this volbench binary to each host (into --push-dir, named by
    /// its content hash, reused when already there) and run that copy.
    #[arg(long)]
    pub(crate) push_binary: bool,

    /// Cache directory on the hosts for --push-binary (a host's push_dir=
    /// in the hosts file comes first; on a Windows host ~/ is its home,
    /// or give a drive path).
    #[arg(long, value_name = "DIR", default_value = PUSH_DIR)]
    pub(crate) push_dir: String,

    /// The volbench.exe --push-binary sends to os=windows hosts (default:
    /// this binary on Windows; on Linux the volbench.exe of this build
    /// beside it, as scripts/windows-build leaves it).
    #[arg(long, value_name = "PATH")]
    pub(crate) windows_exe: Option<std::path::PathBuf>,

    /// volbench on the hosts, when not pushed: a command on their PATH or a path.
    #[arg(long, value_name = "PATH", default_value = REMOTE_VOLBENCH)]
    pub(crate) remote_volbench: String,

    /// Let several hosts use the same target path (each host's own disk
    /// under one name, or deliberately shared files). Hosts sharing a path
    /// prepare it one after the other.
    #[arg(long)]
    pub(crate) shared_target: bool,

    /// Give up on a host silent this long (1s..1h; no heartbeat, no data, or
    /// no hello from its agent at the start); an agent that hears nothing
    /// from here as long stops its I/O and exits.
    #[arg(
        long,
        value_name = "D",
        default_value = "5s",
        allow_negative_numbers = true
    )]
    pub(crate) host_timeout: String,

    /// When a host is lost (it dies, falls silent past --host-timeout, or
    /// never answers): fail stops the others and keeps what was measured,
    /// naming the lost hosts; continue drops it and goes on with the rest,
    /// the totals marked partial. On this host, the same for a list of
    /// targets whose nfs:// or smb:// server is lost (past the URL's reconnect=):
    /// fail ends every target's run, continue leaves that target out.
    #[arg(long, value_enum, value_name = "WHAT", default_value = "fail")]
    pub(crate) on_host_loss: HostLoss,

    /// Name shown on the agents' command lines (to find them with ps).
    #[arg(long, value_name = "NAME", hide = true)]
    pub(crate) session: Option<String>,
}

impl HostArgs {
    pub(crate) fn is_multi_host(&self) -> bool {
        self.hosts.is_some()
            || self.hosts_file.is_some()
            || self.launch.hosts_from.is_some()
            || self.launch.k8s_job.is_some()
    }

    /// The first flag given that means something only on many hosts (so a
    /// run here refuses it rather than ignore it): the push's and the
    /// installed binary's.
    pub(crate) fn hosts_only_flag(&self) -> Option<&'static str> {
        [
            (self.push_binary, "--push-binary"),
            (self.windows_exe.is_some(), "--windows-exe"),
            (self.push_dir != PUSH_DIR, "--push-dir"),
            (self.remote_volbench != REMOTE_VOLBENCH, "--remote-volbench"),
        ]
        .into_iter()
        .find_map(|(given, flag)| given.then_some(flag))
    }
}

/// `--on-host-loss`.
#[derive(ValueEnum, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum HostLoss {
    #[default]
    Fail,
    Continue,
}
