//! The agent's three plumbing threads: stdout writer, stdin reader and the
//! watchdog that notices a silent coordinator.

use std::io::{BufReader, Write};
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, Sender};
use std::time::{Duration, Instant, SystemTime};

use super::{Control, EXIT_LOST, GRACE, Link, Shared, unix_ns};
use crate::remote::protocol::{FromAgent, ToAgent, read_line};

pub(super) fn write_loop(rx: Receiver<String>, shared: &Shared) {
    let mut out = crate::console::Stdout;
    for line in rx {
        if out
            .write_all(line.as_bytes())
            .and_then(|_| out.flush())
            .is_err()
        {
            shared.lose("the coordinator's end of stdout closed");
            return;
        }
        shared
            .last_said_ms
            .store(shared.now_ms(), Ordering::Relaxed);
    }
}

/// `task`: this agent's task when one process carries many agents: each
/// line is framed (`remote/launch/slurm.rs`) and only its own are read.
pub(super) fn read_loop(shared: &Shared, link: &Link, ctl: Sender<Control>, task: Option<u32>) {
    let mut input = BufReader::new(std::io::stdin().lock());
    let mut buf = Vec::new();
    loop {
        let read = match task {
            None => read_line(&mut input, &mut buf),
            Some(t) => read_framed(&mut input, &mut buf, t),
        };
        match read {
            Ok(Some(())) => {}
            Ok(None) => {
                shared.lose("stdin closed (the coordinator is gone)");
                break;
            }
            Err(e) => {
                shared.lose(&format!("cannot read the coordinator: {e}"));
                break;
            }
        }
        shared
            .last_heard_ms
            .store(shared.now_ms(), Ordering::SeqCst);
        let msg: ToAgent = match serde_json::from_slice(&buf) {
            Ok(m) => m,
            Err(e) => {
                link.send(&FromAgent::Error {
                    message: format!("unreadable message from the coordinator: {e}"),
                    code: 2,
                });
                shared.lose("unreadable message from the coordinator");
                break;
            }
        };
        match msg {
            ToAgent::Heartbeat => {}
            ToAgent::Ping { id, sent_ns } => link.send(&FromAgent::Pong {
                id,
                sent_ns,
                agent_ns: unix_ns(SystemTime::now()),
            }),
            ToAgent::Stop => {
                shared.stop.store(true, Ordering::SeqCst);
                let _ = ctl.send(Control::Msg(ToAgent::Stop));
            }
            other => {
                if ctl.send(Control::Msg(other)).is_err() {
                    break;
                }
            }
        }
    }
    let _ = ctl.send(Control::Closed);
}

/// The next line for task `me` from a framed stdin, its frame taken off;
/// Ok(None) at the end of input or of this task's input.
fn read_framed(
    input: &mut impl std::io::BufRead,
    buf: &mut Vec<u8>,
    me: u32,
) -> std::io::Result<Option<()>> {
    use crate::remote::launch::slurm::{Framed, MAX_PREFIX, read_bounded, unframe};
    use crate::remote::protocol::MAX_LINE;
    loop {
        if read_bounded(input, buf, MAX_LINE + MAX_PREFIX + 1)?.is_none() {
            return Ok(None);
        }
        let framed = unframe(me, buf)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
        match framed {
            Framed::Mine(at) => {
                buf.drain(..at);
                return Ok(Some(()));
            }
            Framed::End => return Ok(None),
            Framed::Other => {}
        }
    }
}

/// Sends fill progress, and a heartbeat when nothing else was said for a
/// heartbeat period (a run's intervals already say it is alive: at a
/// thousand hosts, a heartbeat besides each was half the coordinator's
/// lines); stops everything when the coordinator falls silent, and ends
/// the process if the stop hangs.
pub(super) fn watchdog(shared: &Shared, link: &Link) {
    let mut last_beat = Instant::now();
    let mut last_progress = (0, 0);
    let mut lost_at: Option<Instant> = None;
    loop {
        let hb_ms = shared.heartbeat_ms.load(Ordering::Relaxed);
        // A quarter of the heartbeat keeps each beat within a quarter of
        // its period (the coordinator's timeout is five of them), with a
        // quarter as many wake-ups as a fixed 100 ms on a machine of many
        // simulated agents.
        std::thread::sleep(Duration::from_millis((hb_ms / 4).clamp(50, 250)));
        let hb = Duration::from_millis(hb_ms);
        if last_beat.elapsed() >= hb {
            last_beat = Instant::now();
            let p = (
                shared.fill_done.load(Ordering::Relaxed),
                shared.fill_total.load(Ordering::Relaxed),
            );
            if p != last_progress {
                last_progress = p;
                link.send(&FromAgent::Progress {
                    done: p.0,
                    total: p.1,
                });
            }
        }
        let quiet = shared
            .now_ms()
            .saturating_sub(shared.last_said_ms.load(Ordering::Relaxed));
        // A quarter of a period of slack: a run's intervals come once a
        // period too, and one a little late must not draw a beat beside it.
        // The longest quiet, a period and a half, is well inside the
        // coordinator's timeout of at least five.
        if quiet >= hb_ms + hb_ms / 4 {
            link.send(&FromAgent::Heartbeat);
            // Counted from now, not from its write: one beat per period.
            shared
                .last_said_ms
                .store(shared.now_ms(), Ordering::Relaxed);
        }
        let silent = shared
            .now_ms()
            .saturating_sub(shared.last_heard_ms.load(Ordering::SeqCst));
        let timeout = shared.timeout_ms.load(Ordering::Relaxed);
        if silent > timeout {
            shared.lose(&format!(
                "no word from the coordinator for {:.1}s",
                silent as f64 / 1000.0
            ));
        }
        if shared.lost.load(Ordering::SeqCst) {
            let at = *lost_at.get_or_insert_with(Instant::now);
            if at.elapsed() > GRACE {
                crate::console::errln!("volbench agent: the I/O did not stop in time; exiting");
                std::process::exit(EXIT_LOST);
            }
        }
    }
}
