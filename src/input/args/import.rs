//! The flags of `volbench import fio|vdbench|diskspd` and of the commands
//! that import and run (`volbench fio|vdbench|diskspd`).

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::{HostArgs, OutputArgs};

/// `volbench import TOOL ...`.
#[derive(Subcommand, Debug)]
pub(crate) enum ImportCommand {
    /// A fio job file (`include` followed, `${VAR}` from the environment).
    Fio {
        #[arg(value_name = "FILE")]
        file: PathBuf,
        #[command(flatten)]
        to: ImportTo,
    },
    /// vdbench parameter files, read as one (`include=` followed).
    Vdbench {
        #[arg(value_name = "FILE", required = true)]
        files: Vec<PathBuf>,
        #[command(flatten)]
        to: ImportTo,
    },
    /// A diskspd command line, after `--`: `import diskspd -- -c50G -d300 ...`
    /// (required, so diskspd's `-o4` is never read as this command's `-o`).
    Diskspd {
        #[command(flatten)]
        to: ImportTo,
        #[arg(
            value_name = "ARGS",
            required = true,
            last = true,
            allow_hyphen_values = true
        )]
        args: Vec<String>,
    },
}

/// Where an import goes and how foreign paths are found.
#[derive(Args, Debug, Clone, Default)]
pub(crate) struct ImportTo {
    /// Write the suite here (and, for many hosts, its hosts file beside it
    /// as FILE.hosts) instead of printing it (`-` or /dev/stdout prints
    /// it); an existing file is never replaced.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub(crate) output: Option<PathBuf>,

    #[command(flatten)]
    pub(crate) map: MapArgs,
}

#[derive(Args, Debug, Clone, Default)]
pub(crate) struct MapArgs {
    /// Where a Windows path or disk number is on this machine:
    /// 'z:\=/mnt/share/', '#1=/dev/sdb', or a share reached by volbench's
    /// own client: '\\srv\share\=smb://user@srv/share/' (an nfs:// URL
    /// too; the password from VOLBENCH_SMB_PASSWORD). Repeatable; the
    /// longest prefix wins, in any case.
    #[arg(long = "map", value_name = "FROM=TO")]
    pub(crate) map: Vec<String>,
}

/// The flags of `volbench fio|vdbench|diskspd`: the import's target can be
/// replaced, and the run flags of `suite run` apply.
#[derive(Args, Debug, Clone, Default)]
pub(crate) struct ImportRunArgs {
    /// Run against this target instead of the one the job names.
    #[arg(long, value_name = "PATH")]
    pub(crate) target: Option<PathBuf>,

    /// Allow writing to a block device or to an existing file volbench did
    /// not create. Its data is destroyed.
    #[arg(long)]
    pub(crate) allow_overwrite: bool,

    #[command(flatten)]
    pub(crate) map: MapArgs,

    #[command(flatten)]
    pub(crate) out: OutputArgs,

    #[command(flatten)]
    pub(crate) remote: HostArgs,
}

#[derive(Args, Debug, Clone)]
pub(crate) struct FioRunArgs {
    #[arg(value_name = "FILE")]
    pub(crate) file: PathBuf,
    #[command(flatten)]
    pub(crate) run: ImportRunArgs,
}

#[derive(Args, Debug, Clone)]
pub(crate) struct VdbenchRunArgs {
    /// Parameter files, as vdbench's -f.
    #[arg(short = 'f', value_name = "FILE", required = true, num_args = 1..)]
    pub(crate) files: Vec<PathBuf>,
    /// vdbench's data validation: -v checks every read against the block's
    /// last write (volbench's --verify), as -vw; -vr and -vt are refused
    /// with the reason. Here -v is not --verbose (give that in full).
    #[arg(short = 'v', value_name = "r|w|t", num_args = 0..=1, default_missing_value = "")]
    pub(crate) validate: Option<String>,
    /// vdbench's journal: -j (or -jn) validates as -v and keeps the write
    /// counters in a journal (--journal, else PARMFILE.jnl in the current
    /// directory) for `volbench verify` after a crash; -jr and the other
    /// recovery forms are refused with the command to run instead.
    #[arg(short = 'j', value_name = "n|r|ro", num_args = 0..=1, default_missing_value = "")]
    pub(crate) journal: Option<String>,
    /// With -j: the journal's path [default: the first parameter file's
    /// name with .jnl, in the current directory].
    #[arg(long = "journal", value_name = "FILE")]
    pub(crate) journal_file: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) run: ImportRunArgs,
}

#[derive(Args, Debug, Clone)]
pub(crate) struct DiskspdRunArgs {
    #[command(flatten)]
    pub(crate) run: ImportRunArgs,
    /// diskspd's switches and targets, as written for diskspd.
    #[arg(
        value_name = "ARGS",
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    pub(crate) args: Vec<String>,
}
