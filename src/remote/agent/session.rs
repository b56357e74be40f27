//! The conversation with the coordinator: hello, job, prepare, runs, bye.

use std::sync::Mutex;
use std::sync::atomic::Ordering;
use std::sync::mpsc::Receiver;

use super::job::{plan_job, planned_target, prepare_all, run_targets};
use super::{Control, DEFAULT_TIMEOUT, EXIT_LOST, Link, Shared};
use crate::error::VbError;
use crate::executor::OnHost;
use crate::plan::Plan;
use crate::remote::protocol::{AgentJob, FromAgent, PROTOCOL, ToAgent};

/// The conversation; returns the exit code.
pub(super) fn session(shared: &Shared, link: &Link, ctl: Receiver<Control>) -> i32 {
    // The hello comes first and fast: the coordinator sends it on connect.
    let hello = match ctl.recv_timeout(DEFAULT_TIMEOUT) {
        Ok(Control::Msg(m)) => m,
        Ok(Control::Closed) => return EXIT_LOST,
        Err(_) => {
            crate::console::errln!(
                "volbench agent: no hello from a coordinator; this command is started by `volbench run --hosts`"
            );
            return EXIT_LOST;
        }
    };
    let ToAgent::Hello {
        protocol,
        version,
        heartbeat_ms,
        timeout_ms,
    } = hello
    else {
        link.send(&FromAgent::Error {
            message: "the coordinator did not start with hello".into(),
            code: 2,
        });
        return 2;
    };
    link.send(&FromAgent::Hello {
        protocol: PROTOCOL,
        version: env!("CARGO_PKG_VERSION").into(),
        host: Some(Box::new(crate::io::host::this_host())),
        pid: std::process::id(),
    });
    if protocol != PROTOCOL {
        let message = format!(
            "this agent is volbench {} speaking protocol {PROTOCOL}; the coordinator is volbench {version} speaking protocol {protocol}",
            env!("CARGO_PKG_VERSION")
        );
        crate::console::errln!("volbench agent: refused: {message}");
        link.send(&FromAgent::Error { message, code: 2 });
        return 2;
    }
    if heartbeat_ms > 0 {
        shared.heartbeat_ms.store(heartbeat_ms, Ordering::Relaxed);
    }
    if timeout_ms > 0 {
        shared.timeout_ms.store(timeout_ms, Ordering::Relaxed);
    }
    let ctl = Mutex::new(ctl);
    // The job's plans, one per target, until they are prepared.
    let mut planned: Option<Vec<Plan>> = None;
    // A replay's part, as the coordinator sends it before the job.
    let mut trace: Vec<u8> = Vec::new();
    // The targets once prepared: their file sets, and each one's runs so
    // far (a rate given as a percentage of an earlier run is resolved
    // against the target's own share).
    let mut host: Option<OnHost> = None;
    loop {
        let msg = {
            let rx = match ctl.lock() {
                Ok(g) => g,
                Err(_) => return 1,
            };
            match rx.recv() {
                Ok(Control::Msg(m)) => m,
                Ok(Control::Closed) | Err(_) => {
                    return if shared.lost.load(Ordering::SeqCst) {
                        EXIT_LOST
                    } else {
                        0
                    };
                }
            }
        };
        match msg {
            ToAgent::Trace { data } => {
                if (trace.len() + data.len()) as u64 > crate::units::bounds::MAX_REMOTE_TRACE_BYTES
                {
                    return fail(
                        link,
                        VbError::input("the coordinator sent more trace than a host holds"),
                    );
                }
                trace.extend_from_slice(data.as_bytes());
            }
            ToAgent::Job(mut j) => {
                match attach_trace(&mut j, std::mem::take(&mut trace)).and_then(|()| plan_job(&j)) {
                    Ok(plans) => {
                        link.send(&FromAgent::Planned {
                            targets: plans.iter().map(planned_target).collect(),
                            notes: plans.iter().flat_map(|p| p.notes.iter().cloned()).collect(),
                        });
                        planned = Some(plans);
                        host = None;
                    }
                    Err(e) => return fail(link, e),
                }
            }
            ToAgent::Prepare => {
                let Some(plans) = planned.take() else {
                    return fail(link, VbError::input("prepare before the job"));
                };
                match prepare_all(plans, shared, link) {
                    Ok(Some(h)) => {
                        link.send(&FromAgent::Prepared {
                            targets: (0..h.plans.len())
                                .filter_map(|t| h.target_info(t))
                                .collect(),
                            notes: Vec::new(),
                            fill: h.fills().cloned().collect(),
                        });
                        host = Some(h);
                    }
                    Ok(None) => {
                        return fail(link, VbError::run("stopped while preparing the targets"));
                    }
                    Err(e) => return fail(link, e),
                }
            }
            ToAgent::Run { index, step } => {
                let Some(h) = host.as_mut() else {
                    return fail(link, VbError::input("run before the targets are prepared"));
                };
                if h.plans
                    .first()
                    .is_none_or(|p| index as usize >= p.runs.len())
                {
                    return fail(link, VbError::input(format!("run {index} is not planned")));
                }
                let done = run_targets(h, (index, step.as_ref()), shared, link, &ctl);
                link.send(&done);
            }
            ToAgent::Bye => return 0,
            // A stop between runs: the flag is set; the next run ends at once.
            ToAgent::Stop => {}
            other => {
                return fail(
                    link,
                    VbError::input(format!("unexpected message now: {other:?}")),
                );
            }
        }
    }
}

/// Gives the job's replay the part of the trace sent before it, checking
/// that all of it came.
fn attach_trace(j: &mut AgentJob, trace: Vec<u8>) -> crate::error::Result<()> {
    let text: std::sync::Arc<[u8]> = std::sync::Arc::from(trace);
    for r in j.job.runs.iter_mut().filter_map(|r| r.replay.as_mut()) {
        if let Some(p) = &r.part {
            if p.bytes != text.len() as u64 {
                return Err(VbError::input(format!(
                    "the replay's part of the trace is {} bytes, {} arrived",
                    p.bytes,
                    text.len()
                )));
            }
            r.text = Some(text.clone());
        }
    }
    Ok(())
}

fn fail(link: &Link, e: VbError) -> i32 {
    link.send(&FromAgent::Error {
        message: e.to_string(),
        code: e.exit_code(),
    });
    e.exit_code()
}
