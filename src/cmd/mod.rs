//! Command handlers: each turns parsed arguments into a plan, executes it and
//! writes the outputs, returning the process exit code.

use std::path::{Path, PathBuf};

use crate::error::{Result, VbError, exit};
use crate::executor;
use crate::input::args::{
    Cli, Command, CommonArgs, CompareArgs, QuickArgs, ReportArgs, ReportFormat, RunArgs,
    SuiteCommand, SuiteRunArgs,
};
use crate::input::flags;
use crate::input::suite;
use crate::output;
use crate::output::file::OutputDir;
use crate::output::ui::TerminalObserver;
use crate::plan::{self, Plan};
use crate::report;
use crate::result::ResultDoc;
use crate::spec::JobSpec;
use crate::units::{parse_duration_in, parse_size_in};

pub(crate) mod clean;
pub(crate) mod hosts;
pub(crate) mod import;
pub(crate) mod install;
pub mod littles_law;
pub(crate) mod service;
pub(crate) mod stop;
pub(crate) mod targets;
pub(crate) mod verify;

pub fn main(cli: Cli) -> Result<i32> {
    // The commands that run I/O catch their stop signals from the start:
    // one arriving while the job is still being read or planned must not
    // end the process silently, with an output directory left empty.
    if matches!(
        cli.command,
        Command::Run(_)
            | Command::Quick(_)
            | Command::Suite(SuiteCommand::Run(_))
            | Command::Fio(_)
            | Command::Vdbench(_)
            | Command::Diskspd(_)
    ) {
        stop_flag()?;
    }
    match cli.command {
        Command::Run(a) => cmd_run(&a),
        Command::Quick(a) => cmd_quick(&a),
        Command::Agent(_) => crate::remote::agent::main(),
        Command::Clean(a) => clean::cmd_clean(&a),
        Command::Verify(a) => verify::cmd_verify(&a),
        Command::Suite(SuiteCommand::List) => cmd_suite_list(),
        Command::Suite(SuiteCommand::Show { suite, published }) => {
            let (origin, text) = suite::load(&suite)?;
            if published.published {
                suite::parse(&origin, &text)?;
                let section = suite::published::section(&origin, &text)?;
                let runs = suite::published::runs_summary(&origin, &text)?;
                print!("{}", output::fmt::terminal(&format!("{section}{runs}")));
            } else {
                print!("{}", output::fmt::terminal(&text));
            }
            Ok(exit::OK)
        }
        Command::Suite(SuiteCommand::Run(a)) => cmd_suite_run(&a),
        Command::Plan(a) => {
            println!("{}", littles_law::answer(&a)?);
            Ok(exit::OK)
        }
        Command::Size(a) => service::cmd_size(&a),
        Command::Service(c) => service::cmd_service(&c),
        Command::Report(a) => cmd_report(&a),
        Command::Compare(a) => cmd_compare(&a),
        Command::Import(c) => import::cmd_import(&c),
        Command::Fio(a) => import::cmd_fio(&a),
        Command::Vdbench(a) => import::cmd_vdbench(&a),
        Command::Diskspd(a) => import::cmd_diskspd(&a),
        Command::Completions(a) => install::cmd_completions(a.shell),
        Command::Man(a) => install::cmd_man(&a),
    }
}

pub(crate) use stop::stop_flag;

fn cmd_run(a: &RunArgs) -> Result<i32> {
    let expect = service::expectation(&a.common)?;
    let paths = targets::local_targets(&a.common, a.common.remote.is_multi_host())?;
    if a.common.remote.is_multi_host() {
        return hosts::cmd_run(a, expect);
    }
    if a.common.remote.counts.host_counts.is_some() {
        return Err(crate::input::hosts::counts::refuse_local("--host-counts"));
    }
    if paths.len() > 1 {
        return targets::cmd_run(a, paths, expect);
    }
    let mut a = a.clone();
    a.common.target = paths.into_iter().next().unwrap_or_default();
    let a = &a;
    let job = flags::job_from_run_args(a)?;
    let plan = plan::plan(job)?;
    if a.common.out.dry_run {
        print_dry_run(&plan)?;
        return Ok(exit::OK);
    }
    execute_and_report(
        &plan,
        expect,
        a.common.out.output.as_deref(),
        a.common.out.json,
    )
}

fn cmd_suite_list() -> Result<i32> {
    for (name, description, source) in suite::list() {
        println!("{name:<14} {description}");
        if !source.is_empty() {
            println!("{:<14} from: {source}", "");
        }
        let (origin, text) = suite::load(&name)?;
        let (scaled, published) = suite::published::variants(&origin, &text)?;
        match published {
            Some(p) => {
                println!("{:<14} default:     {scaled} (scaled down)", "");
                println!("{:<14} --published: {p} (as the paper ran it)", "");
            }
            None => println!("{:<14} runs:        {scaled}", ""),
        }
    }
    println!(
        "\n`volbench suite show NAME` prints a suite to copy and edit; `volbench suite run NAME|FILE --target PATH` runs it; \
         --published (run and show) takes the paper's threads, sizes and durations instead of the scaled-down defaults."
    );
    Ok(exit::OK)
}

fn cmd_suite_run(a: &SuiteRunArgs) -> Result<i32> {
    let (origin, text) = suite::load(&a.suite)?;
    let mut parsed = suite::parse(&origin, &text)?;
    let mut first = None;
    if a.published.published {
        let (p, lines) = suite::published::select(parsed, &origin)?;
        for l in lines {
            eprintln!("{l}");
        }
        parsed = p;
    } else if parsed.published.is_some() {
        // First once the job is valid, so no one reads a scaled-down run's
        // figures as the paper's, and bad input is still one error line.
        let (scaled, published) = suite::published::variants(&origin, &text)?;
        first = Some(format!(
            "volbench: note: {} runs its scaled-down defaults ({scaled}); --published runs the paper's ({})",
            parsed.name,
            published.unwrap_or_default()
        ));
    }
    let run = SuiteRun {
        origin: &origin,
        text: &text,
        no_warmup_run: a.no_warmup_run,
        listed: None,
        first,
    };
    run_suite_parsed(run, parsed, &a.common)
}

/// `suite run` on a suite's text; `listed` hosts (an import's) replace the
/// host flags' list.
pub(crate) fn run_suite_text(
    origin: &str,
    text: &str,
    c: &CommonArgs,
    no_warmup_run: bool,
    listed: Option<Vec<crate::input::hosts::HostSpec>>,
) -> Result<i32> {
    let parsed = suite::parse(origin, text)?;
    let run = SuiteRun {
        origin,
        text,
        no_warmup_run,
        listed,
        first: None,
    };
    run_suite_parsed(run, parsed, c)
}

/// A suite about to run: its text, and a line to print once its job is
/// valid (before any I/O).
struct SuiteRun<'a> {
    origin: &'a str,
    text: &'a str,
    no_warmup_run: bool,
    listed: Option<Vec<crate::input::hosts::HostSpec>>,
    first: Option<String>,
}

impl SuiteRun<'_> {
    fn say_first(&self) {
        if let Some(l) = &self.first {
            eprintln!("{l}");
        }
    }
}

fn run_suite_parsed(r: SuiteRun<'_>, parsed: suite::SuiteFile, c: &CommonArgs) -> Result<i32> {
    let (origin, text, no_warmup_run) = (r.origin, r.text, r.no_warmup_run);
    let listed = r.listed.clone();
    let expect = service::expectation(c)?;
    // Like `run`: an existing file or device is used whole unless --size says
    // otherwise; the suite's default size is for the file sets it creates.
    // With --hosts the targets are on the hosts: each agent does this.
    let multi_host = c.remote.is_multi_host() || listed.is_some();
    let c = &targets::with_suite_threads_total(c, parsed.threads_total, multi_host)?;
    let host_counts = match (&c.remote.counts.host_counts, parsed.host_counts_text()) {
        (Some(t), _) => Some(("--host-counts", t.clone())),
        (None, Some(t)) => Some(("host_counts", t)),
        (None, None) => None,
    };
    if !multi_host && let Some((flag, _)) = &host_counts {
        return Err(crate::input::hosts::counts::refuse_local(flag));
    }
    let mut args = c.clone();
    let paths = targets::local_targets(c, multi_host)?;
    if paths.len() > 1 {
        args.target = paths.first().cloned().unwrap_or_default();
        let overrides = suite::Overrides {
            args,
            no_warmup_run,
        };
        let mut job = suite::to_job(origin, text, &parsed, &overrides)?;
        crate::input::targets::attach(&mut job, paths, c.targets.threads_total)?;
        r.say_first();
        return targets::run_job(&job, c, expect);
    }
    if !multi_host {
        args.target = paths.into_iter().next().unwrap_or_default();
    }
    if !multi_host && args.size.is_none() {
        let insp = crate::io::target::inspect(&args.target)?;
        args.size = insp.existing_size.map(|n| n.to_string());
    }
    let overrides = suite::Overrides {
        args,
        no_warmup_run,
    };
    let job = suite::to_job(origin, text, &parsed, &overrides)?;
    if multi_host {
        r.say_first();
        let run = hosts::JobRun {
            job,
            size_given: c.size.is_some(),
            hosts: &c.remote,
            listed,
            output: c.out.output.as_deref(),
            json: c.out.json,
            dry_run: c.out.dry_run,
            expect,
            host_counts,
        };
        return hosts::run_job(run);
    }
    let plan = plan::plan(job)?;
    r.say_first();
    if c.out.dry_run {
        print_dry_run(&plan)?;
        return Ok(exit::OK);
    }
    eprint!("{}", plan.describe());
    execute_and_report(&plan, expect, c.out.output.as_deref(), c.out.json)
}

fn print_dry_run(plan: &Plan) -> Result<()> {
    print!("{}", plan.describe());
    println!("resolved spec:");
    println!(
        "{}",
        serde_json::to_string_pretty(&plan.job).map_err(|e| VbError::run(e.to_string()))?
    );
    Ok(())
}

fn execute_and_report(
    plan: &Plan,
    expect: Option<crate::result::expect::Expectation>,
    out_dir: Option<&Path>,
    json: bool,
) -> Result<i32> {
    // The output directory is proven usable before the benchmark, not
    // found unusable after it.
    let out = out_dir.map(OutputDir::open).transpose()?;
    let (stop, job) = stop::arm(out, json, expect)?;
    let obs = TerminalObserver::new(true);
    for n in &plan.notes {
        crate::executor::Observer::note(&obs, n);
    }
    let doc = executor::execute(plan, &obs, &stop)?;
    job.finish(doc)
}

/// Writes and prints a result, and picks the exit code from how it ended.
/// The table is printed first: whatever happens to the files, the numbers
/// reach the user. If the output directory cannot be written after all,
/// the files go to a new private directory instead, and the user is told.
pub(crate) fn finish(doc: &ResultDoc, out_dir: Option<&OutputDir>, json: bool) -> Result<i32> {
    let summary = output::summary(doc);
    if json {
        eprintln!("{summary}");
        println!("{}", output::to_json(doc)?);
    } else {
        println!("{summary}");
    }
    let mut write_error = None;
    if let Some(dir) = out_dir {
        let write = |dir: &OutputDir| -> Result<()> {
            let html = report::html::report_html(&report::own_source(doc, dir.path()))?;
            output::write_dir(doc, dir, &[("report.html", html)])
        };
        let saved_in = match write(dir) {
            Ok(()) => Some(dir.path().to_path_buf()),
            Err(e) => {
                let fallback =
                    OutputDir::fallback().and_then(|f| write(&f).map(|_| f.path().to_path_buf()));
                match &fallback {
                    Ok(p) => eprintln!(
                        "volbench: error: {e}; the results were saved in {} instead",
                        p.display()
                    ),
                    Err(f) => eprintln!(
                        "volbench: error: {e}; saving them elsewhere failed too ({f}): \
                         the table above is all that is left"
                    ),
                }
                write_error = Some(e.exit_code());
                fallback.ok()
            }
        };
        if let Some(p) = saved_in {
            eprintln!("results: {}", p.join("result.json").display());
            eprintln!("report: {}", p.join("report.html").display());
        }
    }
    if let Some(e) = &doc.error {
        eprintln!("volbench: error: {e}");
        return Ok(crate::error::failed_run_code(e));
    }
    if let Some(code) = write_error {
        return Ok(code);
    }
    Ok(if doc.interrupted {
        exit::INTERRUPTED
    } else {
        exit::OK
    })
}

/// Removes quick's scratch directory when the command returns, however it
/// returns; a stop that ends the process runs the same removal
/// (`stop::on_exit`).
struct Scratch;

impl Drop for Scratch {
    fn drop(&mut self) {
        stop::cleanup();
    }
}

fn cmd_quick(a: &QuickArgs) -> Result<i32> {
    let duration = parse_duration_in(
        "--duration",
        &a.duration,
        crate::units::bounds::MIN_DURATION,
        crate::units::bounds::MAX_DURATION,
    )?
    .as_secs_f64();
    let size = parse_size_in("--size", &a.size, 1, crate::units::bounds::MAX_SIZE)?;
    if !a.dir.is_dir() {
        return Err(VbError::target(format!(
            "{} is not a directory",
            a.dir.display()
        )));
    }
    let dir = a.dir.join(format!("volbench-quick-{}", std::process::id()));
    let _scratch = Scratch;
    if !a.keep {
        let at = dir.clone();
        stop::on_exit(Box::new(move || {
            // Through the file set's own removal: only the files its
            // marker lists, the marker and the lock, then the empty
            // directory; nothing else is deleted.
            if at.exists()
                && let Err(e) = crate::io::target::remove_set_dir(&at)
            {
                eprintln!("volbench: the scratch directory was left: {e}");
            }
        }));
    }
    let make = |direct: bool| -> Result<JobSpec> {
        let (origin, text) = suite::load("six-patterns")?;
        let parsed = suite::parse(&origin, &text)?;
        let overrides = suite::Overrides {
            args: CommonArgs {
                target: dir.clone(),
                size: Some(size.to_string()),
                files: Some("1".into()),
                threads: Some("4".into()),
                iodepth: Some("8".into()),
                duration: Some(duration.to_string()),
                // Bare seconds: the unit parser takes any decimal that way.
                warmup: Some((((duration * 0.4).min(2.0) * 10.0).round() / 10.0).to_string()),
                buffered: !direct,
                ..CommonArgs::default()
            },
            no_warmup_run: true,
        };
        suite::to_job(&origin, &text, &parsed, &overrides)
    };
    let mut job = make(true)?;
    crate::io::gate::create_dir_all(&dir)
        .map_err(|e| VbError::target(format!("cannot create {}: {e}", dir.display())))?;
    let mut notes = Vec::new();
    if crate::io::target::probe_dir_direct(&dir).is_err() {
        notes.push(format!(
            "{} does not support direct I/O; quick falls back to buffered I/O (page cache included)",
            a.dir.display()
        ));
        job = make(false)?;
    }
    let mut plan = plan::plan(job)?;
    plan.notes.splice(0..0, notes);
    eprint!("{}", plan.describe());
    execute_and_report(&plan, None, a.output.as_deref(), false)
}

/// Writes `text` to `path` as a regular file (see `outfile`), or to stdout
/// for `-` or no path.
fn emit(path: Option<&Path>, text: &str) -> Result<()> {
    match path {
        None => {
            print!("{text}");
            Ok(())
        }
        Some(p) => crate::output::file::write_file(p, text.as_bytes()),
    }
}

fn cmd_report(a: &ReportArgs) -> Result<i32> {
    // fio-plot reads a directory of one-run files (bench-fio's layout): a
    // directory given to -o gets one file per run.
    if let (ReportFormat::FioJson, Some(o)) = (a.format, &a.output)
        && std::fs::symlink_metadata(o).is_ok_and(|m| m.is_dir())
    {
        let dir = OutputDir::open(o)?;
        let sources = report::load(&a.dirs)?;
        let files = report::fio_json::fio_json_per_run(&sources)?;
        for (name, text) in &files {
            dir.write(name, text)?;
        }
        eprintln!("report: {} fio JSON files in {}", files.len(), o.display());
        return Ok(exit::OK);
    }
    if let Some(o) = &a.output {
        crate::output::file::check_file(o)?;
    }
    let sources = report::load(&a.dirs)?;
    let text = match a.format {
        ReportFormat::Html => report::html::report_html(&sources)?,
        ReportFormat::Json => report::export::json(&sources)? + "\n",
        ReportFormat::Csv => report::export::csv(&sources)?,
        ReportFormat::Md => report::export::markdown(&sources),
        ReportFormat::FioJson => report::fio_json::fio_json(&sources)? + "\n",
        ReportFormat::IntervalsCsv => report::intervals_csv::intervals_csv(&sources)?,
        ReportFormat::LatencyBuckets => report::buckets_csv::buckets_csv(&sources)?,
    };
    let out: Option<PathBuf> = match (&a.output, a.format, a.dirs.as_slice()) {
        (Some(o), _, _) => Some(o.clone()),
        (None, ReportFormat::Html, [one]) => Some(if one.is_dir() {
            one.join("report.html")
        } else {
            one.with_file_name("report.html")
        }),
        (None, ReportFormat::Html, _) => {
            return Err(VbError::input(
                "several results make one report: say where with -o FILE (or -o - for stdout)",
            ));
        }
        (None, _, _) => None,
    };
    emit(out.as_deref(), &text)?;
    if let Some(p) = out.filter(|p| !crate::output::file::is_stdout(p)) {
        eprintln!("report: {}", p.display());
    }
    Ok(exit::OK)
}

fn cmd_compare(a: &CompareArgs) -> Result<i32> {
    let gate = report::compare::gate::Gate::parse(a.fail_below.as_deref(), a.fail_on.as_deref())?;
    crate::output::file::check_file(&a.output)?;
    let sources = report::load(&a.dirs)?;
    let all = report::items(&sources);
    let c = report::compare::match_runs(&sources, &all);
    let verdict = gate.judge(&c, &sources, &all);
    if a.json {
        println!("{}", gate.json(&verdict)?);
    } else {
        print_comparison(a, &c, &sources, &all);
    }
    for w in &c.warnings {
        eprintln!("warning: {w}");
    }
    if a.output.as_os_str() != "-" {
        let html = report::html::render(&report::compare::page(&sources))?;
        emit(Some(&a.output), &html)?;
        eprintln!("comparison report: {}", a.output.display());
    }
    Ok(gate.exit_code(&verdict))
}

fn print_comparison(
    a: &CompareArgs,
    c: &report::compare::Comparison,
    sources: &[report::Source],
    all: &[report::Item],
) {
    let table = report::compare::table(c, sources, all);
    let conditions = report::sections::conditions::differing(sources);
    // Metadata runs: each operation's figures and their change, after the classes.
    let per_op = report::compare::meta::table(c, sources, all);
    if a.markdown {
        if let Some(t) = &conditions {
            println!("{}", t.to_markdown());
        }
        print!("{}", table.to_markdown());
        if let Some(t) = &per_op {
            print!("\n{}", t.to_markdown());
        }
    } else {
        if let Some(t) = &conditions {
            println!("{}\n", t.to_terminal());
        }
        println!("{}", table.to_terminal());
        for line in report::compare::headlines(c, all) {
            println!("{line}");
        }
        if let Some(t) = &per_op {
            println!("\n{}", t.to_terminal());
            for line in report::compare::meta::headlines(c, all) {
                println!("{line}");
            }
        }
    }
}
