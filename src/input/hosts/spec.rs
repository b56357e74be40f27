//! The hosts of a job and how they are reached, read once at input: the
//! host list (a `--hosts-from` command run here, within its bound), the
//! launcher, the binary the hosts run, the timeouts and a host-count sweep.
//! The plan (`plan::hosts`) and the coordinator take it from here; neither
//! reads a flag.

use std::path::PathBuf;
use std::time::Duration;

use super::HostSpec;
use super::launcher::LaunchSpec;

#[derive(Debug, Clone)]
pub(crate) struct HostsSpec {
    /// The hosts, in order: listed, read from a file, printed by a command,
    /// an import's, or the pods `--k8s-job` will make (named before they
    /// exist, as Kubernetes names an Indexed Job's pods).
    pub(crate) hosts: Vec<HostSpec>,
    /// How a host is reached.
    pub(crate) launcher: LaunchSpec,
    /// `--k8s-job`: the Job whose pods are the hosts.
    pub(crate) k8s: Option<K8sSpec>,
    /// `--launch-parallel`.
    pub(crate) launch_parallel: usize,
    /// `--ssh-mux on`.
    pub(crate) ssh_mux: bool,
    pub(crate) binary: Binary,
    /// `--shared-target`.
    pub(crate) shared_target: bool,
    /// `--host-timeout`.
    pub(crate) timeout: Duration,
    /// `--on-host-loss continue`.
    pub(crate) keep_going: bool,
    /// `--session`, checked.
    pub(crate) session: Option<String>,
    /// A host-count sweep: the flag or suite key that asked, and its
    /// points.
    pub(crate) counts: Option<(&'static str, Vec<u32>)>,
}

/// Which volbench the hosts run.
#[derive(Debug, Clone)]
pub(crate) enum Binary {
    /// A command or path on the host (`volbench` from its PATH by default).
    Installed(String),
    /// This binary, copied into a content-named file in this cache dir
    /// (a host's own `push_dir=` first); Windows hosts get volbench.exe
    /// (`--windows-exe`, else found beside this binary).
    Push {
        dir: String,
        windows_exe: Option<PathBuf>,
    },
}

/// `--k8s-job N` and its flags, as given (`remote::launch::k8s` checks and builds
/// the Job).
#[derive(Debug, Clone)]
pub(crate) struct K8sSpec {
    /// The Job's name, chosen here so the hosts can be named (and their
    /// targets planned) before the Job exists.
    pub(crate) name: String,
    pub(crate) pods: usize,
    pub(crate) image: String,
    pub(crate) namespace: Option<String>,
    pub(crate) volume: Option<String>,
    /// `--k8s-requests` and `--k8s-limits` as given (read, with their
    /// defaults, where the Job is built: `remote::launch::k8s::Placement`).
    pub(crate) requests: Option<String>,
    pub(crate) limits: Option<String>,
    /// `--k8s-one-per-node` (on unless `off`).
    pub(crate) one_per_node: bool,
}

impl K8sSpec {
    /// The hosts before the pods exist, named as each pod's hostname is
    /// (`NAME-INDEX`: Kubernetes' rule for an Indexed Job); the coordinator
    /// gives each its pod's name once the Job runs. A target's `{host}` is
    /// this name.
    pub(crate) fn hosts(&self) -> Vec<HostSpec> {
        (0..self.pods)
            .map(|i| HostSpec {
                name: format!("{}-{i}", self.name),
                ..HostSpec::default()
            })
            .collect()
    }
}
