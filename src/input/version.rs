//! What `volbench --version` says: the package version, the commit it was
//! built from (`build.rs`), and whether the binary is statically linked.

/// `0.1.0 (commit 1a2b3c4d5e6f)`: a dynamically linked build.
const DYNAMIC: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (",
    env!("VOLBENCH_COMMIT"),
    ")"
);
/// `0.1.0 (commit 1a2b3c4d5e6f, static)`: a static build.
const STATIC: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (",
    env!("VOLBENCH_COMMIT"),
    ", static)"
);

/// `0.1.0 (commit 1a2b3c4d5e6f)`, `-dirty` when built from uncommitted
/// changes, `, static` for a static build.
pub(crate) fn long() -> &'static str {
    if linked_static() { STATIC } else { DYNAMIC }
}

/// Whether this process runs without a dynamic loader. Asked of the
/// process, not of the compiler: `+crt-static` is a link-time choice, and
/// the library compiled once serves both links (test.sh links its static
/// twin from the very library of the debug build).
#[cfg(target_os = "linux")]
fn linked_static() -> bool {
    // SAFETY: getauxval only reads the auxiliary vector the kernel gave the
    // process. AT_BASE is where the kernel put the program's interpreter
    // (ld.so): 0 when it named none, as for a static executable.
    unsafe { libc::getauxval(libc::AT_BASE) == 0 }
}

#[cfg(not(target_os = "linux"))]
fn linked_static() -> bool {
    cfg!(target_feature = "crt-static")
}

#[cfg(test)]
mod tests {
    /// The test harness is linked dynamically, like every debug build.
    #[test]
    fn a_dynamic_build_says_no_static() {
        assert!(!super::long().contains("static"), "{}", super::long());
        assert!(super::long().starts_with(env!("CARGO_PKG_VERSION")));
    }
}
