//! Sinks: where a finished result goes that is not a text file (a results
//! store is the first). `output::export` writes views of results as text
//! files into a directory; a sink takes the result itself somewhere else.
//! The sinks an `OutputSpec` names are each reached and checked before any
//! I/O (`cmd::finish::Outputs::open`, which knows every kind: a sink may
//! live in a layer above this one, as the results store, `store::sink`,
//! does); the one finish (`cmd::finish`) hands every sink
//! the finished result on every ending that writes result.json (the run's
//! end, a stop, the rescue), after result.json is written, so a sink that
//! fails costs one line and never the result (without an output directory,
//! the finish saves it in a new private one).

use std::sync::Arc;

use crate::error::{Result, VbError};
use crate::result::ResultDoc;

/// A place a finished result goes.
pub(crate) trait Sink: Send + Sync {
    /// How messages name it: its flag and where it points
    /// (`--store postgres://db/bench`).
    fn name(&self) -> String;
    /// Puts the finished result (annotated: expectation, diagnosis);
    /// returns where it went, said on one line ("stored: run 42 in ...").
    fn put(&self, doc: &ResultDoc) -> Result<String>;
}

/// The sinks a job's result goes to, in order.
#[derive(Clone, Default)]
pub(crate) struct Sinks(Vec<Arc<dyn Sink>>);

impl Sinks {
    /// These sinks, in this order (each opened before any I/O).
    pub(crate) fn new(sinks: Vec<Arc<dyn Sink>>) -> Self {
        Sinks(sinks)
    }

    /// A sink made elsewhere (a test's).
    #[cfg(test)]
    pub(crate) fn push(&mut self, sink: Arc<dyn Sink>) {
        self.0.push(sink);
    }

    /// Gives every sink the result, saying where each put it; a sink that
    /// fails does not stop the others. The failures, by sink name.
    pub(crate) fn put(&self, doc: &ResultDoc) -> Vec<(String, VbError)> {
        let mut failed = Vec::new();
        for s in &self.0 {
            match s.put(doc) {
                Ok(at) => crate::console::errln!("{at}"),
                Err(e) => failed.push((s.name(), e)),
            }
        }
        failed
    }
}

/// A sink for the seam's own tests: it keeps what it was given and whether
/// result.json was already on disk then, or fails as a store that went
/// away would.
#[cfg(test)]
#[allow(clippy::unwrap_used)]
pub(crate) mod testing {
    use std::path::{Path, PathBuf};
    use std::sync::{Arc, Mutex};

    use super::Sink;
    use crate::error::{Result, VbError};
    use crate::result::ResultDoc;

    pub(crate) struct Kept {
        fails: bool,
        json: PathBuf,
        /// Per result given: its first run's name, and whether result.json
        /// was on disk.
        pub(crate) seen: Mutex<Vec<(String, bool)>>,
    }

    /// A sink beside the output directory `dir`; `fails`: every put fails.
    pub(crate) fn kept(fails: bool, dir: &Path) -> Arc<Kept> {
        Arc::new(Kept {
            fails,
            json: dir.join("result.json"),
            seen: Mutex::new(Vec::new()),
        })
    }

    impl Sink for Kept {
        fn name(&self) -> String {
            "--test-sink".into()
        }
        fn put(&self, doc: &ResultDoc) -> Result<String> {
            let on_disk = self.json.is_file();
            let name = doc.runs.first().map(|r| r.name.clone()).unwrap_or_default();
            self.seen.lock().unwrap().push((name, on_disk));
            if self.fails {
                return Err(VbError::target("the store is gone"));
            }
            Ok("kept: 1 result".into())
        }
    }
}
