//! `--hosts-from CMD`: the hosts a command prints, one a line (pods by
//! label, `scontrol show hostnames`), the command run here as an argument
//! vector, with no shell, no stdin and a time limit.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::process::{Command, Stdio};

use super::{HostSpec, check_host_name};
use crate::error::{Result, VbError, clip};
use crate::units::bounds::HOSTS_FROM_TIMEOUT as TIMEOUT;
use crate::units::bounds::{MAX_HOSTS, MAX_INPUT_FILE};

/// Runs `command` and takes each non-empty line of its output as a host;
/// a command that has not ended within `HOSTS_FROM_TIMEOUT` (it, and
/// anything it left holding its output) is one error line.
pub(crate) fn read(command: &str) -> Result<Vec<HostSpec>> {
    read_within(command, TIMEOUT)
}

fn read_within(command: &str, timeout: std::time::Duration) -> Result<Vec<HostSpec>> {
    let bad = |msg: String| VbError::input(format!("--hosts-from '{}': {msg}", clip(command)));
    let words = super::super::words::split_words(command).map_err(&bad)?;
    let Some((program, args)) = words.split_first() else {
        return Err(VbError::input("--hosts-from is empty"));
    };
    let mut c = Command::new(program);
    c.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // Its own process group, so the deadline kills what it started too.
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut c, 0);
    let child = c
        .spawn()
        .map_err(|e| bad(format!("cannot run '{program}': {e}")))?;
    // One byte past the cap tells an oversized list apart.
    let done = crate::io::child::finish(child, &[], MAX_INPUT_FILE + 1, 4096, timeout);
    let (status, out, err) = (done.status, done.stdout, done.stderr);
    let err = String::from_utf8_lossy(&err);
    let err = err.trim();
    match status {
        None => return Err(bad(format!("no answer within {}s", timeout.as_secs()))),
        Some(st) if !st.success() => {
            return Err(bad(format!(
                "failed ({st}){}",
                if err.is_empty() {
                    String::new()
                } else {
                    format!(": {err}")
                }
            )));
        }
        Some(_) => {}
    }
    if out.len() as u64 > MAX_INPUT_FILE {
        return Err(bad(format!(
            "printed more than {MAX_INPUT_FILE} bytes; a host list is at most that"
        )));
    }
    parse(&String::from_utf8_lossy(&out)).map_err(|e| bad(e.message))
}

/// One host a line; `pod/NAME` (kubectl's `-o name`) is NAME; a Slurm
/// list on a line (`node[01-04]`) expands.
pub(crate) fn parse(text: &str) -> Result<Vec<HostSpec>> {
    let mut hosts = Vec::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let line = line
            .strip_prefix("pod/")
            .or_else(|| line.strip_prefix("pods/"))
            .unwrap_or(line);
        let names = super::slurm::expand(line).map_err(VbError::input)?;
        for name in names {
            check_host_name(&name)
                .map_err(|e| VbError::input(format!("--hosts-from: {}", e.message)))?;
            if hosts.len() == MAX_HOSTS {
                return Err(VbError::input(format!("more than {MAX_HOSTS} hosts")));
            }
            hosts.push(HostSpec {
                name,
                target: None,
                threads: None,
                vm_size: None,
                agent: Default::default(),
            });
        }
    }
    if hosts.is_empty() {
        return Err(VbError::input("printed no host"));
    }
    Ok(hosts)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[test]
    fn pods_and_node_lists_become_hosts() {
        let h = parse("pod/vb-0\npod/vb-1\n\n  node[07-08]\n").unwrap();
        let names: Vec<&str> = h.iter().map(|h| h.name.as_str()).collect();
        assert_eq!(names, ["vb-0", "vb-1", "node07", "node08"]);
    }

    #[test]
    fn a_command_that_never_ends_is_one_line_at_its_deadline() {
        let t0 = std::time::Instant::now();
        let e = read_within(
            "sh -c 'sleep 30; echo h'",
            std::time::Duration::from_secs(1),
        )
        .unwrap_err();
        assert!(t0.elapsed() < std::time::Duration::from_secs(20));
        assert_eq!(e.kind, crate::error::Kind::Input);
        let line = e.to_string();
        assert!(
            line.contains("--hosts-from") && line.contains("no answer within 1s"),
            "{line}"
        );
        assert_eq!(line.lines().count(), 1, "{line}");
    }

    #[test]
    fn a_command_that_answers_and_leaves_a_process_holding_its_output_is_not_waited_for() {
        // The command ended with its answer; what it left behind holding
        // the pipe is read for io::child's short grace at most, not waited
        // for to its end (30 s here).
        let t0 = std::time::Instant::now();
        let h = read_within(
            "sh -c 'sleep 30 & echo h'",
            std::time::Duration::from_secs(60),
        )
        .unwrap();
        assert!(t0.elapsed() < std::time::Duration::from_secs(20));
        assert_eq!(h.len(), 1);
        assert_eq!(h[0].name, "h");
    }

    #[test]
    fn a_failing_or_empty_command_is_bad_input_naming_it() {
        let e = read("sh -c 'echo no pods here >&2; exit 3'").unwrap_err();
        assert_eq!(e.kind, crate::error::Kind::Input);
        assert!(e.to_string().contains("no pods here"), "{e}");
        assert!(e.to_string().contains("--hosts-from"), "{e}");
        let e = read("true").unwrap_err();
        assert!(e.to_string().contains("printed no host"), "{e}");
        let e = read("/nonexistent/kubectl get pods").unwrap_err();
        assert!(
            e.to_string().contains("cannot run '/nonexistent/kubectl'"),
            "{e}"
        );
        let e = read("echo -oProxyCommand=x").unwrap_err();
        assert!(e.to_string().contains("starts with '-'"), "{e}");
        assert_eq!(read("printf 'a\\nb\\n'").unwrap().len(), 2);
    }
}
