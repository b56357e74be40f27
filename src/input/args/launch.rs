//! Command-line types for launchers and for installing volbench
//! (completions, man page): flattened into `cli.rs`'s structs.

use clap::{Args, ValueEnum};

/// How the hosts of a multi-host run are reached and found.
#[derive(Args, Debug, Clone, Default)]
#[command(next_help_heading = "Many hosts")]
pub(crate) struct LaunchArgs {
    /// How a host is reached: ssh (the default), slurm (inside an
    /// allocation: ONE srun step for all hosts, task i on host i, its stdin
    /// and output split by task), kubectl (kubectl exec -i {host} --),
    /// docker (docker exec -i {host}: containers as the hosts), or a
    /// command template. With {host} in it the template is
    /// run as an argument vector, {host} replaced and volbench's command
    /// appended as separate arguments, no shell ('docker exec -i {host}',
    /// 'ip netns exec {host}'); without {host} it is ssh's form, like
    /// --ssh-command: CMD HOST REMOTE-COMMAND.
    #[arg(long, value_name = "NAME|TEMPLATE", conflicts_with = "ssh_command")]
    pub(crate) launcher: Option<String>,

    /// Take the hosts from a command's output, one host a line (run here as
    /// an argument vector, no shell): 'kubectl get pods -l app=vb -o name'
    /// (a pod/ prefix is dropped), 'scontrol show hostnames'. Slurm host
    /// lists (node[01-24]) are expanded, here as in --hosts.
    #[arg(long, value_name = "CMD", conflicts_with_all = ["hosts", "hosts_file"])]
    pub(crate) hosts_from: Option<String>,

    /// Make the hosts: N pods (1..1024) of a Kubernetes Indexed Job that
    /// volbench applies with kubectl, waits for, starts one agent in each
    /// (kubectl exec -i POD --, --remote-volbench inside the image) and
    /// deletes at the end, on a stop or on a failure. The pods get
    /// --host-timeout (at least 120s) to be Ready; the Job's
    /// activeDeadlineSeconds (the runs' time, that start, --host-timeout
    /// and one hour) ends them even if volbench is killed.
    #[arg(
        long,
        value_name = "N",
        requires = "k8s_image",
        conflicts_with_all = ["hosts", "hosts_file", "hosts_from", "launcher", "ssh_command"]
    )]
    pub(crate) k8s_job: Option<usize>,

    /// The image of --k8s-job's pods: it must hold volbench (at
    /// --remote-volbench, `volbench` on its PATH by default) and sleep.
    #[arg(long, value_name = "IMAGE", requires = "k8s_job")]
    pub(crate) k8s_image: Option<String>,

    /// Mount this PersistentVolumeClaim at PATH in every pod of --k8s-job
    /// (CLAIM:PATH; a claim the pods share: ReadWriteMany, or
    /// ReadWriteOnce with the pods on one node); without it the targets are
    /// in the containers' own file system.
    #[arg(long, value_name = "CLAIM:PATH", requires = "k8s_job")]
    pub(crate) k8s_volume: Option<String>,

    /// The namespace of --k8s-job's Job (default: kubectl's context's).
    #[arg(long, value_name = "NS", requires = "k8s_job")]
    pub(crate) k8s_namespace: Option<String>,

    /// What each pod of --k8s-job asks of its node, as Kubernetes writes
    /// it: cpu, memory and ephemeral-storage, 'cpu=2,memory=4Gi', or none
    /// [default: cpu=1,memory=512Mi].
    #[arg(long, value_name = "LIST", requires = "k8s_job")]
    pub(crate) k8s_requests: Option<String>,

    /// The most each pod of --k8s-job may use, as --k8s-requests, or none
    /// [default: memory=8Gi: a memory bound that keeps a runaway agent from
    /// its node, and no CPU limit, whose throttling would read as storage
    /// latency].
    #[arg(long, value_name = "LIST", requires = "k8s_job")]
    pub(crate) k8s_limits: Option<String>,

    /// One pod of --k8s-job per node (a required pod anti-affinity on the
    /// node's host name), so N pods are N clients; off lets pods share a
    /// node (a one-node test cluster).
    #[arg(long, value_enum, value_name = "ON|OFF", requires = "k8s_job")]
    pub(crate) k8s_one_per_node: Option<OnOff>,

    /// Launches in flight at once (1..1024): a launch lasts until its agent
    /// answers (or --host-timeout), so a thousand hosts are not a thousand
    /// ssh handshakes at once. --push-binary copies are bounded the same.
    #[arg(
        long,
        value_name = "N",
        default_value_t = crate::units::bounds::DEFAULT_LAUNCH_PARALLEL,
        value_parser = parse_launch_parallel,
        allow_negative_numbers = true
    )]
    pub(crate) launch_parallel: usize,

    /// With ssh: agents that ssh resolves to one machine (user, host name,
    /// port: aliases too) share one master connection, up to 10 agents a
    /// master (sshd's default MaxSessions); off: one connection an agent.
    #[arg(long, value_enum, value_name = "ON|OFF", default_value = "on")]
    pub(crate) ssh_mux: OnOff,
}

/// `--ssh-mux`.
#[derive(ValueEnum, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum OnOff {
    #[default]
    On,
    Off,
}

fn parse_launch_parallel(s: &str) -> Result<usize, String> {
    let max = crate::units::bounds::MAX_LAUNCH_PARALLEL;
    match s.trim().parse::<usize>() {
        Ok(n) if (1..=max).contains(&n) => Ok(n),
        _ => Err(format!("'{s}' is not a whole number from 1 to {max}")),
    }
}

/// `volbench completions SHELL`.
#[derive(Args, Debug, Clone)]
pub(crate) struct CompletionsArgs {
    #[arg(value_enum)]
    pub(crate) shell: CompletionShell,
}

#[derive(ValueEnum, Debug, Clone, Copy)]
pub(crate) enum CompletionShell {
    Bash,
    Zsh,
    Fish,
}

/// `volbench man`: one page printed, or every page written to a directory.
#[derive(Args, Debug, Clone)]
pub(crate) struct ManArgs {
    /// The command whose page to print (`run`, `suite run`); none: volbench(1).
    #[arg(value_name = "COMMAND")]
    pub(crate) command: Vec<String>,

    /// Write every page (volbench.1, volbench-run.1, volbench-suite-run.1...)
    /// into this directory instead, e.g. /usr/local/share/man/man1.
    #[arg(long, value_name = "DIR", conflicts_with = "command")]
    pub(crate) dir: Option<std::path::PathBuf>,
}
