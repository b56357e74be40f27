//! Fill progress: the one event the I/O layer itself raises (how many bytes
//! of a file set are written), so a fill can be watched without the I/O
//! layer knowing who watches; `events::Observer` builds on it.

/// Receives fill progress; the terminal shows a bar, tests and pipes nothing.
pub(crate) trait Progress: Sync {
    fn start(&self, total_bytes: u64, what: &str);
    fn advance(&self, bytes: u64);
    fn finish(&self);
}
