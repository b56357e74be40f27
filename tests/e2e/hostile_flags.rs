//! Issue 9, generalised: every option of every subcommand, and every key of
//! the suite schema, fed hostile values. The option list is walked from
//! clap's own `Command` tree and the suite keys from the suite parser's
//! "expected one of" message, so a flag or key added later is covered
//! without touching this file. Every invocation is a --dry-run or a form
//! that cannot reach a disk (a missing directory, stdout), run in a
//! throw-away working directory.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Output, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use clap::CommandFactory;
use volbench::input::args::Cli;

use crate::common::*;

/// The values every option and key is tried with: zero, negative, huge,
/// tiny, not-a-number, infinite, a unit that does not exist, empty, very
/// long, control characters, one past u64::MAX.
fn hostile_values() -> Vec<String> {
    vec![
        "0".into(),
        "-1".into(),
        "1e30".into(),
        "1e-300".into(),
        "NaN".into(),
        "inf".into(),
        "12Q".into(),
        String::new(),
        "7".repeat(10_000),
        "a\nb\x1b[31mred".into(),
        "18446744073709551616".into(),
    ]
}

/// How long one invocation may take before it counts as a hang. Generous:
/// the machine running the suite may be busy building.
const HANG: Duration = Duration::from_secs(20);

/// Runs the binary in `cwd` with a watchdog; None when it had to be killed.
fn run_bounded(cwd: &Path, args: &[String]) -> Option<Output> {
    let mut child = volbench()
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the volbench binary starts");
    // Outputs here are small (dry-run plans, one-line errors), far below a
    // pipe's buffer, so polling for the exit cannot deadlock on a full pipe.
    let start = Instant::now();
    loop {
        match child.try_wait().expect("wait for volbench") {
            Some(_) => return Some(child.wait_with_output().expect("volbench output")),
            None if start.elapsed() > HANG => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
            None => std::thread::sleep(Duration::from_millis(2)),
        }
    }
}

/// What is wrong with one invocation's outcome, if anything.
fn judge(o: Option<Output>, agent: bool) -> Option<String> {
    use std::os::unix::process::ExitStatusExt;
    let Some(o) = o else {
        return Some(format!("still running after {HANG:?}"));
    };
    if let Some(sig) = o.status.signal() {
        return Some(format!("killed by signal {sig}"));
    }
    let code = o.status.code().unwrap_or(-1);
    let err = String::from_utf8_lossy(&o.stderr);
    if code == 101 || err.contains("panicked") {
        return Some(format!("panicked: {err}"));
    }
    if code != 0 && !agent {
        // Notes an importer prints about the job it read may come first;
        // the failure itself is one line, the last.
        let lines: Vec<&str> = err
            .lines()
            .filter(|l| !l.starts_with("volbench: note: "))
            .collect();
        if lines.len() != 1
            || !err
                .trim_end()
                .lines()
                .last()
                .is_some_and(|l| l.starts_with("volbench: error: "))
        {
            return Some(format!(
                "exit {code} without one error line on stderr: {err:?}"
            ));
        }
    }
    // A value echoed back raw would let an argument drive the terminal.
    for (name, bytes) in [("stderr", &o.stderr), ("stdout", &o.stdout)] {
        if let Some(b) = bytes
            .iter()
            .find(|&&b| (b < 0x20 && b != b'\n' && b != b'\t') || b == 0x7f)
        {
            return Some(format!(
                "control byte {b:#04x} on {name}: {:?}",
                String::from_utf8_lossy(bytes)
            ));
        }
    }
    None
}

/// Runs every case on a few threads; returns the failures, each with the
/// command line that produced it (long values shortened).
fn run_all(cwd: &Path, cases: Vec<Vec<String>>) -> Vec<(usize, String)> {
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(args) = cases.get(i) else { break };
                    // The agent speaks its protocol to a coordinator, not a user:
                    // its exit codes and messages are its own.
                    let agent = args.first().is_some_and(|a| a == "agent");
                    if let Some(why) = judge(run_bounded(cwd, args), agent) {
                        let shown: Vec<String> = args
                            .iter()
                            .map(|a| {
                                if a.len() > 40 {
                                    format!("<{} chars>", a.len())
                                } else {
                                    format!("{a:?}")
                                }
                            })
                            .collect();
                        let mut why = why;
                        why.truncate(400);
                        failures
                            .lock()
                            .unwrap()
                            .push((i, format!("volbench {}: {why}", shown.join(" "))));
                    }
                }
            });
        }
    });
    failures.into_inner().unwrap()
}

/// A base invocation per subcommand (its path of names, then the arguments
/// that make it a valid no-I/O call); an option under test replaces the
/// base's value of the same option, else it goes right after the names.
struct Base {
    path: &'static [&'static str],
    args: Vec<String>,
}

fn bases(t: &Path) -> Vec<Base> {
    let p = |x: &str| t.join(x).to_str().unwrap().to_string();
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let missing = p("missing");
    let result = p("r/result.json");
    let job = p("job.fio");
    let parm = p("parm.vdb");
    vec![
        // The store's commands, each on a store of the test's own.
        Base {
            path: &["history"],
            args: vec!["--store".into(), p("store.db")],
        },
        Base {
            path: &["baseline", "set"],
            args: vec!["1".into(), "--store".into(), p("store.db")],
        },
        Base {
            path: &["baseline", "list"],
            args: vec!["--store".into(), p("store.db")],
        },
        Base {
            path: &["store", "import"],
            args: vec![result.clone(), "--store".into(), p("store.db")],
        },
        Base {
            path: &["run"],
            args: vec!["--target".into(), missing.clone(), "--dry-run".into()],
        },
        Base {
            path: &["run"],
            args: s(&[
                "--target",
                "/mnt/x/{host}",
                "--hosts",
                "vm1,vm2",
                "--dry-run",
            ]),
        },
        Base {
            // A device that does not exist: refused by name before any
            // watching, whatever the other options hold.
            path: &["capture"],
            args: s(&["--device", "/dev/vb-no-such-disk", "--duration", "1s", "-o"])
                .into_iter()
                .chain([p("profile.json")])
                .collect(),
        },
        Base {
            path: &["quick"],
            args: vec!["--dir".into(), missing.clone()],
        },
        Base {
            path: &["suite", "list"],
            args: vec![],
        },
        Base {
            path: &["suite", "show"],
            args: s(&["six-patterns"]),
        },
        Base {
            path: &["suite", "run"],
            args: vec![
                "six-patterns".into(),
                "--target".into(),
                missing.clone(),
                "--dry-run".into(),
            ],
        },
        Base {
            path: &["plan"],
            args: s(&["--iops", "5", "--latency", "1ms"]),
        },
        Base {
            path: &["plan"],
            args: s(&["--latency", "1ms", "--concurrency", "4"]),
        },
        Base {
            path: &["size"],
            args: s(&["--service", "anf-premium", "--quota", "4TiB"]),
        },
        Base {
            path: &["size"],
            args: s(&["--service", "anf-premium", "--need", "1GiB/s"]),
        },
        Base {
            path: &["service", "list"],
            args: vec![],
        },
        Base {
            path: &["service", "show"],
            args: s(&["anf-premium"]),
        },
        Base {
            path: &["report"],
            args: vec![
                result.clone(),
                "-o".into(),
                "-".into(),
                "--format".into(),
                "md".into(),
            ],
        },
        Base {
            path: &["compare"],
            args: vec![result.clone(), result, "-o".into(), p("cmp.html")],
        },
        Base {
            path: &["clean"],
            args: vec!["--target".into(), missing.clone()],
        },
        Base {
            path: &["verify"],
            args: vec!["--target".into(), missing.clone()],
        },
        Base {
            path: &["import", "fio"],
            args: vec![job.clone()],
        },
        Base {
            path: &["import", "vdbench"],
            args: vec![parm.clone()],
        },
        Base {
            path: &["import", "diskspd"],
            args: vec!["--".into(), "-c1G".into(), "-d10".into(), p("x.dat")],
        },
        Base {
            path: &["fio"],
            args: vec![job, "--dry-run".into()],
        },
        Base {
            path: &["vdbench"],
            args: vec!["-f".into(), parm, "--dry-run".into()],
        },
        Base {
            path: &["diskspd"],
            args: vec!["--dry-run".into(), "-c1G".into(), "-d10".into(), p("x.dat")],
        },
        Base {
            path: &["agent"],
            args: vec![],
        },
        Base {
            path: &["completions"],
            args: s(&["bash"]),
        },
        Base {
            path: &["man"],
            args: vec![],
        },
    ]
}

/// The fixtures the bases name: a result, a fio job, a vdbench parameter file.
fn fixtures(t: &Path) {
    write_result(&t.join("r"), &volbench::report::fixtures::six_patterns());
    let data = t.join("missing").join("f");
    std::fs::write(
        t.join("job.fio"),
        format!(
            "[j]\nrw=randread\nbs=4k\nsize=16m\nruntime=5\nfilename={}\n",
            data.display()
        ),
    )
    .unwrap();
    std::fs::write(
        t.join("parm.vdb"),
        format!(
            "sd=sd1,lun={}\nwd=wd1,sd=sd1,xfersize=4k,rdpct=100\nrd=rd1,wd=wd1,iorate=max,elapsed=10,interval=1\n",
            data.display()
        ),
    )
    .unwrap();
}

/// Every leaf subcommand with the long (or short) spelling of each option
/// that takes a value.
fn leaves() -> Vec<(Vec<String>, Vec<String>)> {
    fn walk(c: &clap::Command, path: Vec<String>, out: &mut Vec<(Vec<String>, Vec<String>)>) {
        let subs: Vec<&clap::Command> = c
            .get_subcommands()
            .filter(|s| s.get_name() != "help")
            .collect();
        if subs.is_empty() {
            let opts = c
                .get_arguments()
                .filter(|a| !a.is_positional() && a.get_action().takes_values())
                .filter_map(|a| {
                    a.get_long()
                        .map(|l| format!("--{l}"))
                        .or_else(|| a.get_short().map(|s| format!("-{s}")))
                })
                .collect();
            out.push((path.clone(), opts));
        }
        for s in subs {
            let mut p = path.clone();
            p.push(s.get_name().to_string());
            walk(s, p, out);
        }
    }
    let mut out = Vec::new();
    walk(&Cli::command(), Vec::new(), &mut out);
    out
}

#[test]
fn every_option_of_every_subcommand_survives_hostile_values() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    fixtures(t);
    let cwd = t.join("cwd");
    std::fs::create_dir(&cwd).unwrap();
    let bases = bases(t);
    let mut cases = Vec::new();
    let mut options = 0;
    for (path, opts) in leaves() {
        let mine: Vec<&Base> = bases.iter().filter(|b| b.path == path.as_slice()).collect();
        assert!(
            !mine.is_empty(),
            "subcommand {path:?} has no base invocation here: add one to bases() so its options are tried"
        );
        for opt in &opts {
            options += 1;
            let holding: Vec<&&Base> = mine.iter().filter(|b| b.args.contains(opt)).collect();
            let use_bases: Vec<&Base> = if holding.is_empty() {
                mine.clone()
            } else {
                holding.into_iter().copied().collect()
            };
            for b in use_bases {
                for v in hostile_values() {
                    let mut args = path.clone();
                    match b.args.iter().position(|a| a == opt) {
                        Some(i) => {
                            let mut rest = b.args.clone();
                            rest[i + 1] = v;
                            args.extend(rest);
                        }
                        None => {
                            args.push(opt.clone());
                            args.push(v);
                            args.extend(b.args.iter().cloned());
                        }
                    }
                    cases.push(args);
                }
            }
        }
    }
    // The positionals too: names, files and the diskspd command line.
    for v in hostile_values() {
        let r = t.join("r/result.json").to_str().unwrap().to_string();
        let missing = t.join("missing").to_str().unwrap().to_string();
        for args in [
            vec!["suite".into(), "show".into(), v.clone()],
            vec![
                "suite".into(),
                "run".into(),
                v.clone(),
                "--target".into(),
                missing.clone(),
                "--dry-run".into(),
            ],
            vec!["service".into(), "show".into(), v.clone()],
            vec!["completions".into(), v.clone()],
            vec![
                "report".into(),
                v.clone(),
                "-o".into(),
                "-".into(),
                "--format".into(),
                "md".into(),
            ],
            vec!["compare".into(), r.clone(), v.clone(), "--markdown".into()],
            vec!["import".into(), "fio".into(), v.clone()],
            vec!["import".into(), "vdbench".into(), v.clone()],
            vec![
                "import".into(),
                "diskspd".into(),
                "--".into(),
                v.clone(),
                missing.clone(),
            ],
            vec![
                "import".into(),
                "diskspd".into(),
                "--".into(),
                format!("-b{v}"),
                missing.clone(),
            ],
            vec![
                "diskspd".into(),
                "--dry-run".into(),
                format!("-t{v}"),
                missing.clone(),
            ],
            vec!["fio".into(), v.clone(), "--dry-run".into()],
        ] {
            cases.push(args);
        }
    }
    assert!(options > 60, "the walk found only {options} options");
    let n = cases.len();
    let failures: Vec<String> = run_all(&cwd, cases).into_iter().map(|(_, f)| f).collect();
    assert!(
        failures.is_empty(),
        "{} of {n} hostile invocations misbehaved:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The keys the suite parser accepts in one place, read from its own
/// "expected one of" message for an unknown key.
fn suite_keys(cwd: &Path, file: &Path, text: &str) -> Vec<String> {
    std::fs::write(file, text).unwrap();
    let o = run_bounded(
        cwd,
        &[
            "suite".into(),
            "run".into(),
            file.to_str().unwrap().into(),
            "--target".into(),
            "m".into(),
            "--dry-run".into(),
        ],
    )
    .expect("an unknown key is refused at once");
    let err = stderr(&o);
    let list = err
        .split("expected one of")
        .nth(1)
        .unwrap_or_else(|| panic!("no key list in {err}"));
    list.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// A TOML spelling of a hostile value: bare where TOML has the literal, a
/// string otherwise, both for numbers past TOML's range.
fn toml_spellings(v: &str) -> Vec<String> {
    let quoted = format!("{:?}", v).replace("\\u{1b}", "\\u001b");
    match v {
        "0" | "-1" | "1e30" | "1e-300" | "inf" => vec![v.to_string(), quoted],
        "NaN" => vec!["nan".into(), quoted],
        "18446744073709551616" => vec![v.to_string(), quoted],
        _ if v.chars().all(|c| c == '7') => vec![v.to_string(), quoted],
        _ => vec![quoted],
    }
}

#[test]
fn every_suite_key_survives_hostile_values() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let probe = t.join("probe.toml");
    let head = "name = \"h\"\ntable = \"patterns\"\n";
    let run_keys = suite_keys(
        t,
        &probe,
        &format!("{head}[[run]]\nname = \"a\"\nbogus = 1\n"),
    );
    let default_keys = suite_keys(t, &probe, &format!("{head}[defaults]\nbogus = 1\n"));
    for k in [
        "distribution",
        "seek_pct",
        "fsync_every",
        "think_time",
        "cooldown",
        "ops",
        "files_per_dir",
    ] {
        assert!(
            run_keys.iter().any(|r| r == k),
            "{k} missing from {run_keys:?}"
        );
    }
    let mut texts = BTreeSet::new();
    for v in hostile_values() {
        for sv in toml_spellings(&v) {
            for k in run_keys.iter().filter(|k| *k != "name") {
                // A block-I/O run and a metadata run: the tree keys only
                // mean something beside ops.
                texts.insert(format!(
                    "{head}[[run]]\nname = \"a\"\nrw = \"randread\"\n{k} = {sv}\n"
                ));
                if k != "ops" {
                    texts.insert(format!(
                        "{head}[[run]]\nname = \"a\"\nops = \"create\"\n{k} = {sv}\n"
                    ));
                }
            }
            for k in &default_keys {
                texts.insert(format!(
                    "{head}[defaults]\n{k} = {sv}\n[[run]]\nname = \"a\"\nrw = \"randread\"\n"
                ));
            }
        }
    }
    let missing = t.join("missing").to_str().unwrap().to_string();
    let mut cases = Vec::new();
    for (i, text) in texts.iter().enumerate() {
        let f = t.join(format!("s{i}.toml"));
        std::fs::write(&f, text).unwrap();
        cases.push(vec![
            "suite".into(),
            "run".into(),
            f.to_str().unwrap().into(),
            "--target".into(),
            missing.clone(),
            "--dry-run".into(),
        ]);
    }
    let n = cases.len();
    let texts: Vec<&String> = texts.iter().collect();
    let failures: Vec<String> = run_all(t, cases)
        .into_iter()
        .map(|(i, f)| format!("{f}\n  suite: {:?}", texts[i]))
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {n} hostile suites misbehaved:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
