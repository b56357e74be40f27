//! `volbench baseline set ID` and `baseline list`: the run a target and
//! suite are compared with (`compare --against baseline`, `store:baseline`).

use crate::error::{Result, VbError, exit};
use crate::input::args::results::BaselineCommand;
use crate::store::refs::shown_key;
use crate::store::{Location, Store};

pub(crate) fn cmd_baseline(c: &BaselineCommand) -> Result<i32> {
    match c {
        BaselineCommand::Set { id, store } => {
            let text = id.trim().trim_start_matches(crate::store::refs::PREFIX);
            let id = text.parse::<i64>().ok().filter(|&i| i > 0).ok_or_else(|| {
                VbError::input(format!(
                    "baseline set '{}': a run's id is a number `volbench history` lists",
                    crate::units::bounds::one_line(id)
                ))
            })?;
            let mut s = Store::open(&Location::for_reading(store.store.as_deref())?, true)?;
            let (target, suite, before) = s.set_baseline(id)?;
            let was = match before {
                Some(b) if b != id => format!(" (was store:{b})"),
                Some(_) => " (already)".into(),
                None => String::new(),
            };
            crate::console::outln!(
                "baseline of {}: store:{id}{was}",
                shown_key(&target, &suite)
            );
            Ok(exit::OK)
        }
        BaselineCommand::List { store } => {
            let mut s = Store::open(&Location::for_reading(store.store.as_deref())?, false)?;
            let all = s.baselines()?;
            if all.is_empty() {
                crate::console::errln!(
                    "baseline: {} has none (volbench baseline set ID)",
                    s.shown()
                );
            }
            for (target, suite, id, at) in all {
                crate::console::outln!("store:{id}\t{}\tset {at}", shown_key(&target, &suite));
            }
            Ok(exit::OK)
        }
    }
}
