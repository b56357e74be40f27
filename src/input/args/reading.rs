//! Flags about recording what the results are read with: `--no-counters`
//! and `--vm-size`, shared by `run` and `suite run` (flattened into
//! `CommonArgs`).

use clap::Args;

use crate::error::{Result, VbError};
use crate::spec::reading::ReadingSpec;
use crate::units::bounds::MAX_VM_SIZE_LEN;

// The heading reset: these come after the many-host flags, whose heading
// would otherwise run on over every flag after them (--rw, --bs, ...).
#[derive(Args, Debug, Clone, Default)]
#[command(next_help_heading = None::<&str>)]
pub(crate) struct ReadingArgs {
    /// Sample no client counters (CPU, devices, interfaces, NFS/SMB) during
    /// the runs; result.json records that they were off. Same as
    /// VOLBENCH_NO_COUNTERS=1, and passed to every host.
    #[arg(long)]
    pub(crate) no_counters: bool,

    /// The machine's size as you name it (e.g. Standard_D16s_v5,
    /// m6i.4xlarge), recorded with the host and compared by `compare`.
    /// A hosts file's `vm_size=NAME` sets it per host.
    #[arg(long, value_name = "NAME")]
    pub(crate) vm_size: Option<String>,
}

impl ReadingArgs {
    pub(crate) fn spec(&self) -> Result<ReadingSpec> {
        let vm_size = match &self.vm_size {
            Some(v) => Some(vm_size(v).map_err(|m| VbError::input(format!("--vm-size: {m}")))?),
            None => None,
        };
        Ok(ReadingSpec {
            no_counters: self.no_counters,
            vm_size,
        })
    }
}

/// A machine size name: printable, no spaces, at most `MAX_VM_SIZE_LEN`
/// characters (it is shown in tables and compared as text).
pub(crate) fn vm_size(v: &str) -> std::result::Result<String, String> {
    if v.is_empty() {
        return Err("empty (give a name such as Standard_D16s_v5)".into());
    }
    if v.chars().count() > MAX_VM_SIZE_LEN {
        return Err(format!("longer than {MAX_VM_SIZE_LEN} characters"));
    }
    if !v.chars().all(|c| c.is_ascii_graphic()) {
        return Err(format!(
            "'{v}' has a space or a character that is not printable ASCII"
        ));
    }
    Ok(v.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vm_size_names_are_bounded_and_printable() {
        assert_eq!(vm_size("m6i.4xlarge").unwrap(), "m6i.4xlarge");
        assert!(vm_size("").is_err());
        assert!(vm_size("a b").is_err());
        assert!(vm_size("x\u{1b}[31m").is_err());
        assert!(
            vm_size(&"x".repeat(MAX_VM_SIZE_LEN + 1))
                .unwrap_err()
                .contains("64")
        );
    }
}
