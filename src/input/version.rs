//! What `volbench --version` says: the package version, the commit it was
//! built from (`build.rs`), and whether the binary is statically linked.

/// `0.1.0 (commit 1a2b3c4d5e6f)`, `-dirty` when built from uncommitted
/// changes, `, static` for a static build.
#[cfg(target_feature = "crt-static")]
pub(crate) const LONG: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (",
    env!("VOLBENCH_COMMIT"),
    ", static)"
);
#[cfg(not(target_feature = "crt-static"))]
pub(crate) const LONG: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (",
    env!("VOLBENCH_COMMIT"),
    ")"
);
