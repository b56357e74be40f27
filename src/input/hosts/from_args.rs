//! `HostArgs` read once into the hosts' spec part (`HostsSpec`): here,
//! beside the host sources it runs, so the flags' file (`input::args`)
//! stays a leaf the readers use.

use crate::error::{Result, VbError};
use crate::input::args::HostArgs;
use crate::input::args::hosts::HostLoss;
use crate::input::args::launch;
use crate::input::hosts::launcher::LaunchSpec;
use crate::input::hosts::spec::{Binary, HostsSpec, K8sSpec};
use crate::input::hosts::{self, HostSpec};
use crate::units::{bounds, parse_duration_in};

impl HostArgs {
    /// The hosts and how they are reached, read once: the launcher and
    /// every value checked first, then the host list (a `--hosts-from`
    /// command run here, within `HOSTS_FROM_TIMEOUT`), else `listed` (an
    /// import's hosts), else the pods `--k8s-job` will make. `counts` is a
    /// host-count sweep: the flag or suite key that asked, and its text.
    pub(crate) fn spec(
        &self,
        listed: Option<Vec<HostSpec>>,
        counts: Option<(&'static str, String)>,
    ) -> Result<HostsSpec> {
        let k8s = match self.launch.k8s_job {
            Some(_) if listed.is_some() => {
                return Err(VbError::input(
                    "--k8s-job makes the hosts, and this job lists its own: give one of them",
                ));
            }
            // Its bound before the hosts are named after its pods.
            Some(pods) if !(1..=bounds::MAX_K8S_PODS).contains(&pods) => {
                return Err(VbError::input(format!(
                    "--k8s-job {pods}: a Job has 1 to {} pods",
                    bounds::MAX_K8S_PODS
                )));
            }
            Some(pods) => Some(K8sSpec {
                name: format!("volbench-{}-{}", unix_now_s(), std::process::id()),
                pods,
                image: self.launch.k8s_image.clone().unwrap_or_default(),
                namespace: self.launch.k8s_namespace.clone(),
                volume: self.launch.k8s_volume.clone(),
                requests: self.launch.k8s_requests.clone(),
                limits: self.launch.k8s_limits.clone(),
                one_per_node: self.launch.k8s_one_per_node != Some(launch::OnOff::Off),
            }),
            None => None,
        };
        // The launcher first: a template naming no program is refused
        // before --hosts-from runs anything.
        let ssh_command = LaunchSpec::ssh_command(self.ssh_command.as_deref());
        let launcher = LaunchSpec::new(self.launch.launcher.as_deref(), ssh_command.as_deref())?;
        let timeout = parse_duration_in(
            "--host-timeout",
            &self.host_timeout,
            bounds::MIN_HOST_TIMEOUT,
            bounds::MAX_HOST_TIMEOUT,
        )?;
        if let Some(s) = &self.session {
            bounds::name("--session", s)?;
        }
        let counts = match counts {
            Some((flag, text)) => Some((flag, hosts::counts::parse(flag, &text)?)),
            None => None,
        };
        let hosts = match (
            &self.hosts,
            &self.hosts_file,
            &self.launch.hosts_from,
            listed,
        ) {
            (Some(list), _, _, _) => hosts::parse_list(list)?,
            (None, Some(file), _, _) => hosts::read_file(file)?,
            (None, None, Some(cmd), _) => hosts::from_command::read(cmd)?,
            (None, None, None, Some(l)) => l,
            (None, None, None, None) => match &k8s {
                Some(k) => k.hosts(),
                None => return Err(VbError::input("no hosts given")),
            },
        };
        Ok(HostsSpec {
            hosts,
            launcher,
            k8s,
            launch_parallel: self.launch.launch_parallel,
            ssh_mux: self.launch.ssh_mux == launch::OnOff::On,
            binary: if self.push_binary {
                Binary::Push {
                    dir: self.push_dir.clone(),
                    windows_exe: self.windows_exe.clone(),
                }
            } else {
                Binary::Installed(self.remote_volbench.clone())
            },
            shared_target: self.shared_target,
            timeout,
            keep_going: self.on_host_loss == HostLoss::Continue,
            session: self.session.clone(),
            counts,
        })
    }
}

/// Seconds since the epoch, for a name no earlier run has.
fn unix_now_s() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}
