//! One child process carrying many agents (`--launcher slurm`: every agent
//! a task of one srun step). srun gives every task the same stdin and
//! labels each task's output lines with its task number, so this file is
//! the small framing on top, the protocol's messages unchanged inside it:
//!
//! - to the agents: `TASKS LINE`, TASKS being `*` (every task) or task
//!   numbers separated by commas; TASKS alone on a line ends those tasks'
//!   input (their stdin's end, which a shared stdin cannot give one task);
//! - from the agents: srun's `--label` prefix (`  7: `), and lines longer
//!   than srun's 1024-byte message cut into pieces, joined again here.

use std::io::{self, BufRead};
use std::sync::mpsc::Sender;

use super::super::protocol::MAX_LINE;
use super::RemoteCmd;

/// The agent's flag naming the variable that holds its task number.
pub(crate) const TASK_ENV_FLAG: &str = "--task-env";
/// srun's variable for a task's number within the step.
pub(crate) const SLURM_TASK_ENV: &str = "SLURM_PROCID";
/// Task numbers on one framed line at most: a broadcast to a subset of a
/// thousand tasks is cut into several lines, so a prefix stays short.
pub(crate) const MAX_TASKS_PER_LINE: usize = 256;
/// The longest prefix a framed line can carry (256 numbers of at most 10
/// digits and their commas): what the agent allows above `MAX_LINE`.
pub(crate) const MAX_PREFIX: usize = MAX_TASKS_PER_LINE * 11;
/// slurmstepd forwards a task's output in messages of at most this many
/// bytes (Slurm's `MAX_MSG_LEN`); with `--label` each becomes a line of its
/// own, so a piece this long is continued by the next one of its task,
/// and a line of exactly a multiple of it ends with an empty piece.
pub(crate) const SRUN_PIECE: usize = 1024;

/// A line for one task, or its end of input (None).
pub(crate) struct ToTask {
    pub(crate) task: u32,
    pub(crate) line: Option<String>,
}

/// A host's way to its task's input: lines go to the step's one writer;
/// dropped, it ends the task's input (the agent stops).
pub(crate) struct Tap {
    task: u32,
    tx: Sender<ToTask>,
}

impl Tap {
    pub(crate) fn new(task: u32, tx: Sender<ToTask>) -> Self {
        Tap { task, tx }
    }

    pub(crate) fn send(&self, line: &str) {
        let _ = self.tx.send(ToTask {
            task: self.task,
            line: Some(line.to_owned()),
        });
    }
}

impl Drop for Tap {
    fn drop(&mut self) {
        let _ = self.tx.send(ToTask {
            task: self.task,
            line: None,
        });
    }
}

/// The srun command that starts one agent per host as one step: task i on
/// `hosts[i]` (`--distribution=arbitrary` lays tasks out in `--nodelist`
/// order), more tasks than the allocation has CPUs allowed (agents are
/// light; `--overcommit`), a task that fails leaving the others running
/// (`--kill-on-bad-exit=0 --wait=0`: `--on-host-loss` decides), stdin to
/// every task (srun's default) and output labelled by task.
pub(crate) fn srun_argv(hosts: &[&str], remote: &RemoteCmd) -> Vec<String> {
    let mut v: Vec<String> = [
        "srun",
        "--overlap",
        "--overcommit",
        "--kill-on-bad-exit=0",
        "--wait=0",
        "--label",
        "--distribution=arbitrary",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    v.push(format!("--ntasks={}", hosts.len()));
    v.push(format!("--nodelist={}", hosts.join(",")));
    match remote {
        // A Windows host never reaches here (`one_remote` refuses it: Slurm
        // runs no Windows node); its argv would be taken as given.
        RemoteCmd::Argv(a) | RemoteCmd::WinArgv(a) => {
            v.extend(a.iter().cloned());
            v.push(TASK_ENV_FLAG.into());
            v.push(SLURM_TASK_ENV.into());
        }
        // srun runs no shell: a script (a `~/` path, a pushed binary) is
        // sh's, the flag appended inside it.
        // Never started as a step (a Windows host's); what a template gets.
        RemoteCmd::Sftp => v.push("sftp-server".into()),
        RemoteCmd::Script(s) => {
            v.extend(["sh".to_string(), "-c".to_string()]);
            v.push(format!("{s} {TASK_ENV_FLAG} {SLURM_TASK_ENV}"));
        }
    }
    v
}

/// The framed lines for `payload` (None: end of input) to `tasks`, or to
/// every task when `all`. `payload` ends with its newline.
pub(crate) fn frame(tasks: &[u32], all: bool, payload: Option<&str>) -> Vec<String> {
    let body = |prefix: String| match payload {
        Some(p) => format!("{prefix} {p}"),
        None => format!("{prefix}\n"),
    };
    if all {
        return vec![body("*".into())];
    }
    tasks
        .chunks(MAX_TASKS_PER_LINE)
        .map(|c| {
            body(
                c.iter()
                    .map(|t| t.to_string())
                    .collect::<Vec<_>>()
                    .join(","),
            )
        })
        .collect()
}

/// What one framed line means to task `me`.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Framed {
    /// A protocol line for it, starting at this offset.
    Mine(usize),
    /// Its input ends here.
    End,
    /// For other tasks.
    Other,
}

/// Reads a framed line as task `me` sees it; Err: not a framed line.
pub(crate) fn unframe(me: u32, line: &[u8]) -> Result<Framed, String> {
    let (prefix, start) = match line.iter().position(|&b| b == b' ') {
        Some(at) => (&line[..at], Some(at + 1)),
        None => (line, None),
    };
    if prefix.len() > MAX_PREFIX {
        return Err(format!("a task list over {MAX_PREFIX} bytes"));
    }
    let text = std::str::from_utf8(prefix).map_err(|_| "a task list that is not text")?;
    let mine = if text == "*" {
        true
    } else {
        let mut found = false;
        for t in text.split(',') {
            let n: u32 = t
                .parse()
                .map_err(|_| format!("'{t}' is not a task number"))?;
            found |= n == me;
        }
        found
    };
    Ok(match (mine, start) {
        (false, _) => Framed::Other,
        (true, Some(at)) => Framed::Mine(at),
        (true, None) => Framed::End,
    })
}

/// Splits srun's `--label` prefix (`  7: `) from a line: the task and the
/// rest. None for srun's own lines (`srun: error: ...`).
pub(crate) fn label(line: &[u8]) -> Option<(u32, &[u8])> {
    let s = line.iter().position(|&b| b != b' ')?;
    let rest = &line[s..];
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 || digits > 9 || rest.get(digits) != Some(&b':') {
        return None;
    }
    let task = std::str::from_utf8(&rest[..digits]).ok()?.parse().ok()?;
    let body = &rest[digits + 1..];
    Some((task, body.strip_prefix(b" ").unwrap_or(body)))
}

/// The tasks srun names in its own report of tasks that ended
/// (`srun: error: node2: tasks 1-3,7: Killed`), else empty.
pub(crate) fn ended_tasks(line: &str) -> Vec<u32> {
    let Some(rest) = line.strip_prefix("srun: ") else {
        return Vec::new();
    };
    let Some(at) = rest.find(" task") else {
        return Vec::new();
    };
    let after = rest[at + 5..].trim_start_matches('s').trim_start();
    let Some((list, _why)) = after.split_once(':') else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for part in list.split(',') {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        match (a.trim().parse::<u32>(), b.trim().parse::<u32>()) {
            // A range no longer than the hosts can be (srun names only
            // tasks of the step).
            (Ok(a), Ok(b)) if a <= b && b - a < crate::units::bounds::MAX_HOSTS as u32 => {
                out.extend(a..=b)
            }
            _ => return Vec::new(),
        }
    }
    out
}

/// Joins srun's pieces of each task's lines again.
pub(crate) struct Joiner {
    partial: Vec<Vec<u8>>,
}

impl Joiner {
    pub(crate) fn new(tasks: usize) -> Self {
        Joiner {
            partial: vec![Vec::new(); tasks],
        }
    }

    /// One piece from `task`: Ok(Some(line)) when it completes a line, Err
    /// when the line grows past `MAX_LINE` (or the task is not in the step).
    pub(crate) fn push(&mut self, task: u32, piece: &[u8]) -> Result<Option<Vec<u8>>, String> {
        let Some(buf) = self.partial.get_mut(task as usize) else {
            return Err(format!("srun labelled a line with task {task}"));
        };
        if buf.len() + piece.len() > MAX_LINE {
            buf.clear();
            return Err(format!("sent a line over {MAX_LINE} bytes"));
        }
        buf.extend_from_slice(piece);
        if piece.len() >= SRUN_PIECE {
            return Ok(None);
        }
        Ok(Some(std::mem::take(buf)))
    }
}

/// Reads one line of at most `max` bytes (without its newline); Ok(None)
/// at the end of input. A longer line is an InvalidData error.
pub(crate) fn read_bounded(
    r: &mut impl BufRead,
    buf: &mut Vec<u8>,
    max: usize,
) -> io::Result<Option<()>> {
    buf.clear();
    loop {
        let chunk = r.fill_buf()?;
        if chunk.is_empty() {
            return Ok((!buf.is_empty()).then_some(()));
        }
        let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        if buf.len() + take > max + 1 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("a line longer than {max} bytes"),
            ));
        }
        buf.extend_from_slice(&chunk[..take]);
        r.consume(take);
        if done {
            buf.pop();
            return Ok(Some(()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_framed_line_reaches_exactly_the_tasks_it_names() {
        let all = frame(&[], true, Some("{\"t\":1}\n"));
        assert_eq!(all, ["* {\"t\":1}\n"]);
        assert_eq!(
            unframe(9, all[0].trim_end().as_bytes()),
            Ok(Framed::Mine(2))
        );
        let some = frame(&[1, 12], false, Some("x\n"));
        assert_eq!(some, ["1,12 x\n"]);
        let l = some[0].trim_end().as_bytes();
        assert_eq!(unframe(12, l), Ok(Framed::Mine(5)));
        assert_eq!(unframe(2, l), Ok(Framed::Other), "2 is not 12's prefix");
        let end = frame(&[3], false, None);
        assert_eq!(unframe(3, end[0].trim_end().as_bytes()), Ok(Framed::End));
        assert_eq!(unframe(4, end[0].trim_end().as_bytes()), Ok(Framed::Other));
        // A protocol line without a frame is refused, not read as one.
        assert!(unframe(0, b"{\"type\":\"bye\"}").is_err());
        assert!(unframe(0, b"-1 x").is_err());
    }

    #[test]
    fn a_broadcast_to_many_tasks_is_cut_into_bounded_prefixes() {
        let tasks: Vec<u32> = (0..1000).collect();
        let lines = frame(&tasks, false, Some("x\n"));
        assert_eq!(lines.len(), 4);
        for l in &lines {
            let prefix = l.split(' ').next().unwrap();
            assert!(prefix.len() <= MAX_PREFIX, "{}", prefix.len());
        }
        let reached: usize = (0..1000)
            .filter(|&t| {
                lines
                    .iter()
                    .any(|l| matches!(unframe(t, l.trim_end().as_bytes()), Ok(Framed::Mine(_))))
            })
            .count();
        assert_eq!(reached, 1000);
        assert!(unframe(0, format!("{} x", "1,".repeat(MAX_PREFIX)).as_bytes()).is_err());
    }

    #[test]
    fn srun_labels_and_pieces_become_each_tasks_lines() {
        assert_eq!(label(b" 7: {}"), Some((7, &b"{}"[..])));
        assert_eq!(label(b"10: "), Some((10, &b""[..])));
        assert_eq!(label(b"srun: error: vb2: task 1: Killed"), None);
        assert_eq!(label(b"{\"a\":1}"), None);
        let mut j = Joiner::new(2);
        let long = vec![b'x'; SRUN_PIECE];
        // Task 0's 2048-byte line arrives as two full pieces and an empty
        // one, task 1's short line in between.
        assert_eq!(j.push(0, &long), Ok(None));
        assert_eq!(j.push(1, b"short"), Ok(Some(b"short".to_vec())));
        assert_eq!(j.push(0, &long), Ok(None));
        assert_eq!(j.push(0, b""), Ok(Some(vec![b'x'; 2 * SRUN_PIECE])));
        assert!(j.push(2, b"x").is_err());
    }

    #[test]
    fn srun_reports_of_ended_tasks_name_them() {
        assert_eq!(ended_tasks("srun: error: vb2: task 1: Killed"), [1]);
        assert_eq!(
            ended_tasks("srun: error: n1: tasks 0-2,5: Exited with exit code 75"),
            [0, 1, 2, 5]
        );
        assert!(ended_tasks("srun: Job step aborted").is_empty());
        assert!(ended_tasks("srun: error: n: tasks 0-4000000000: Killed").is_empty());
    }

    #[test]
    fn the_step_is_one_srun_with_every_host_in_task_order() {
        let a = srun_argv(
            &["vb2", "vb1"],
            &RemoteCmd::Argv(vec!["volbench".into(), "agent".into()]),
        );
        assert_eq!(a[0], "srun");
        assert!(a.contains(&"--nodelist=vb2,vb1".to_string()), "{a:?}");
        assert!(a.contains(&"--ntasks=2".to_string()));
        assert_eq!(
            a[a.len() - 4..],
            ["volbench", "agent", "--task-env", "SLURM_PROCID"]
        );
    }

    #[test]
    fn lines_are_read_within_their_bound() {
        let mut r = io::BufReader::new(&b"abc\nlonger line\n"[..]);
        let mut buf = Vec::new();
        assert!(read_bounded(&mut r, &mut buf, 5).unwrap().is_some());
        assert_eq!(buf, b"abc");
        assert!(read_bounded(&mut r, &mut buf, 5).is_err());
    }
}
