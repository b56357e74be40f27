//! The one runner interface: what runs a planned job, on this host
//! (`Local`, here) or on many hosts (`remote::coordinator::Hosts`), and
//! what every runner is given to report to and be stopped by. The command
//! layer picks one from the plan and never looks inside.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use super::Observer;
use crate::error::{Result, VbError};
use crate::events::Raise as _;
use crate::plan::HerePlan;
use crate::result::ResultDoc;

/// What a runner reports to and is stopped by.
pub(crate) struct Watch<'a> {
    pub(crate) obs: &'a dyn Observer,
    pub(crate) stop: &'a Arc<AtomicBool>,
    /// Registers what to undo however the process ends, a stop that ends
    /// it included (a Kubernetes Job to delete).
    pub(crate) on_exit: &'a dyn Fn(Box<dyn FnOnce() + Send>),
}

pub(crate) trait Runner {
    /// What `--dry-run` prints: the plan and the resolved spec; nothing runs.
    fn dry_run(&self) -> Result<String>;
    /// How much longer than a local job a stopped job needs to write its
    /// own result (a coordinator waits for its hosts' reports).
    fn stop_grace(&self) -> Duration {
        Duration::ZERO
    }
    /// Runs the job to its end or its stop: the result, however it ended
    /// (an error only before any I/O).
    fn run(self: Box<Self>, w: &Watch<'_>) -> Result<ResultDoc>;
}

/// A job on this host's targets: the executor.
pub(crate) struct Local(HerePlan);

impl Local {
    pub(crate) fn new(plan: HerePlan) -> Self {
        Self(plan)
    }
}

impl Runner for Local {
    fn dry_run(&self) -> Result<String> {
        let spec =
            serde_json::to_string_pretty(&self.0.job).map_err(|e| VbError::run(e.to_string()))?;
        Ok(format!("{}resolved spec:\n{spec}\n", self.0.shown))
    }

    fn run(self: Box<Self>, w: &Watch<'_>) -> Result<ResultDoc> {
        let HerePlan {
            job,
            plans,
            shown,
            show,
        } = self.0;
        if show {
            crate::console::err!("{shown}");
        }
        if let [one] = plans.as_slice() {
            for n in &one.notes {
                w.obs.note(n);
            }
        }
        super::execute(&job, &plans, w.obs, w.stop)
    }
}
