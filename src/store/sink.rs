//! The results store as a result sink (`output::sink::Sink`): `run --store`
//! (or `$VOLBENCH_STORE`) opened, made or migrated, and checked before any
//! I/O, so a store that cannot be reached is one line before the run, not a
//! lost result after it; the one finish hands it the finished result after
//! result.json is written, on every ending that writes one.

use std::sync::{Arc, Mutex};

use super::rows::Origin;
use super::{Location, Store};
use crate::error::Result;
use crate::output::sink::Sink;
use crate::result::ResultDoc;

/// A store a run's result is kept in.
struct StoreSink {
    /// Behind a lock: a sink is shared, a store's writes take `&mut`.
    store: Mutex<Store>,
    shown: String,
}

/// The store `--store`'s text names (`Some("")`: the flag alone, the
/// default store), else `$VOLBENCH_STORE`'s, opened for writing now.
pub(crate) fn open(flag: Option<&str>) -> Result<Arc<dyn Sink>> {
    let at = Location::for_run(flag)?.map_or_else(|| Location::for_reading(None), Ok)?;
    let store = Store::open(&at, true)?;
    Ok(Arc::new(StoreSink {
        shown: store.shown(),
        store: Mutex::new(store),
    }))
}

impl Sink for StoreSink {
    fn name(&self) -> String {
        format!("--store {}", self.shown)
    }

    fn put(&self, doc: &ResultDoc) -> Result<String> {
        let json = crate::output::to_json(doc)?;
        let origin = Origin {
            source: "run",
            path: String::new(),
        };
        let mut store = self.store.lock().unwrap_or_else(|p| p.into_inner());
        let put = store.put(doc, &json, &origin)?;
        Ok(format!("stored: store:{} in {}", put.id, self.shown))
    }
}
