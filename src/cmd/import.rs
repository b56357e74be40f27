//! `volbench import fio|vdbench|diskspd` (print or write the suite) and
//! `volbench fio|vdbench|diskspd` (the same import, then `suite run`).

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::{Result, VbError, exit};
use crate::input::args::{
    CommonArgs, DiskspdRunArgs, FioRunArgs, ImportCommand, ImportRunArgs, ImportTo, VdbenchRunArgs,
};
use crate::input::hosts::HostSpec;
use crate::input::import::{self, Imported, PathMap, render};
use crate::units::bounds;
use crate::units::bounds::one_line;

fn read(path: &Path) -> Result<String> {
    crate::input::file::read_text(path, "job file", bounds::MAX_INPUT_FILE)
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

fn fio(file: &Path, map: &PathMap) -> Result<Imported> {
    let cwd = std::env::current_dir()
        .map_err(|e| VbError::input(format!("cannot tell the current directory: {e}")))?;
    let src = import::fio::Sources {
        env: &env,
        read: &read,
        cwd,
    };
    // `-` is a job on stdin, as fio reads it (`cat job.fio | fio -`);
    // an include in it is found from the current directory, as fio does.
    if file == Path::new("-") {
        let text = stdin_job()?;
        return import::fio::import_text("stdin", &text, file, map, &src);
    }
    import::fio::import_file(file, map, &src)
}

/// The job read from stdin, bounded like a job file.
fn stdin_job() -> Result<String> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .take(bounds::MAX_INPUT_FILE + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| VbError::input(format!("cannot read the job from stdin: {e}")))?;
    if bytes.len() as u64 > bounds::MAX_INPUT_FILE {
        return Err(VbError::input(format!(
            "the job on stdin is larger than {} bytes: not a job file",
            bounds::MAX_INPUT_FILE
        )));
    }
    let text = String::from_utf8(bytes)
        .map_err(|_| VbError::input("the job on stdin is not UTF-8 text".to_string()))?;
    Ok(crate::input::file::strip_bom(&text).to_string())
}

fn vdbench(files: &[PathBuf], map: &PathMap) -> Result<Imported> {
    import::vdbench::import_files(files, map, &import::vdbench::Sources { read: &read })
}

fn print_notes(imp: &Imported) {
    for n in imp.printed() {
        crate::console::errln!("volbench: note: {}", bounds::one_line(&n));
    }
}

/// Writes a new file; what already sits at the path is never replaced.
fn write_new(path: &Path, text: &str) -> Result<()> {
    let mut f = crate::io::gate::create_new(path, crate::io::sys::fs::OFlags::WRONLY, 0o644)
        .map(std::fs::File::from)
        .map_err(|e| {
            let e = std::io::Error::from(e);
            VbError::target(format!(
                "cannot create {} ({e}); an existing file is never replaced",
                path.display()
            ))
        })?;
    f.write_all(text.as_bytes())
        .map_err(|e| VbError::target(format!("cannot write {}: {e}", path.display())))
}

pub(crate) fn cmd_import(c: &ImportCommand) -> Result<i32> {
    let (imp, to): (Imported, &ImportTo) = match c {
        ImportCommand::Fio { file, to } => (fio(file, &PathMap::parse(&to.map.map)?)?, to),
        ImportCommand::Vdbench { files, to } => {
            (vdbench(files, &PathMap::parse(&to.map.map)?)?, to)
        }
        ImportCommand::Diskspd { to, args } => (
            import::diskspd::import_args(args, &PathMap::parse(&to.map.map)?)?,
            to,
        ),
    };
    print_notes(&imp);
    // `-o -` and `-o /dev/stdout` print, as no -o does.
    let to_file = (to.output.as_deref()).filter(|p| !crate::output::file::is_stdout(p));
    match to_file {
        None => {
            crate::console::out!("{}", render::suite_toml(&imp, "SUITE.toml", "HOSTS.txt")?);
        }
        Some(path) => {
            let hosts_path = PathBuf::from(format!("{}.hosts", path.display()));
            let shown = path.display().to_string();
            let text = render::suite_toml(&imp, &shown, &hosts_path.display().to_string())?;
            // The suite must load as written before anything is saved.
            crate::input::suite::parse(&shown, &text)?;
            if let Some(h) = render::hosts_file(&imp) {
                write_new(&hosts_path, &h)?;
                crate::console::errln!("hosts: {}", one_line(&hosts_path.display().to_string()));
            }
            write_new(path, &text)?;
            // The paths are the user's text: escaped for the terminal.
            crate::console::errln!("suite: {}", one_line(&shown));
            crate::console::errln!(
                "run it: {}",
                one_line(&render::command_line(
                    &imp,
                    &shown,
                    &hosts_path.display().to_string()
                ))
            );
        }
    }
    Ok(exit::OK)
}

pub(crate) fn cmd_fio(a: &FioRunArgs) -> Result<i32> {
    let imp = fio(&a.file, &PathMap::parse(&a.run.map.map)?)?;
    run(imp, &a.run)
}

pub(crate) fn cmd_vdbench(a: &VdbenchRunArgs) -> Result<i32> {
    let mut imp = vdbench(&a.files, &PathMap::parse(&a.run.map.map)?)?;
    let switches = import::vdbench::cli::Switches {
        validate: a.validate.as_deref(),
        journal: a.journal.as_deref(),
        journal_file: a.journal_file.as_deref(),
    };
    let journal = import::vdbench::cli::apply(&switches, &a.files, &mut imp)?;
    run_with(imp, &a.run, journal)
}

pub(crate) fn cmd_diskspd(a: &DiskspdRunArgs) -> Result<i32> {
    let args: Vec<String> = a
        .args
        .iter()
        .skip_while(|s| s.as_str() == "--")
        .cloned()
        .collect();
    let imp = import::diskspd::import_args(&args, &PathMap::parse(&a.run.map.map)?)?;
    run(imp, &a.run)
}

/// The imported suite through the same path as `suite run`.
fn run(imp: Imported, a: &ImportRunArgs) -> Result<i32> {
    run_with(imp, a, None)
}

/// As `run`, with a journal for the suite's verification (vdbench's -j).
fn run_with(imp: Imported, a: &ImportRunArgs, journal: Option<PathBuf>) -> Result<i32> {
    print_notes(&imp);
    let origin = format!("suite imported from {}", imp.suite.source);
    let text = render::suite_toml(&imp, "SUITE.toml", "HOSTS.txt")?;
    if a.out.dry_run {
        crate::console::outln!("# the imported suite:");
        crate::console::out!("{text}");
        if let Some(h) = render::hosts_file(&imp) {
            crate::console::outln!("# its hosts:");
            crate::console::out!("{h}");
        }
    }
    let target = a
        .target
        .clone()
        .unwrap_or_else(|| PathBuf::from(&imp.target));
    let listed: Option<Vec<HostSpec>> = if imp.hosts.is_empty() || a.remote.is_multi_host() {
        None
    } else {
        Some(
            imp.hosts
                .iter()
                .map(|h| HostSpec {
                    // --target replaces every host's own targets.
                    target: if a.target.is_some() {
                        None
                    } else {
                        h.target.clone()
                    },
                    ..h.clone()
                })
                .collect(),
        )
    };
    let threads_total = imp.suite.threads_total
        && (a.target.is_none() || crate::input::targets::expand_local(&target)?.len() > 1);
    let common = CommonArgs {
        target,
        // The import's threads are the total over its list (diskspd -F, fio's
        // jobs over filename=a:b), over a --target list given instead too.
        targets: crate::input::args::targets::TargetListArgs { threads_total },
        allow_overwrite: a.allow_overwrite,
        out: a.out.clone(),
        remote: a.remote.clone(),
        data: crate::input::args::data::DataArgs {
            verify: journal.is_some(),
            journal,
            ..Default::default()
        },
        ..CommonArgs::default()
    };
    super::run::run_suite_text(&origin, &text, &common, true, listed)
}
