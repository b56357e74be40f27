//! `[[include]]`: runs join in place, defaults scoped to the included
//! file's runs, whole-job keys only repeated, and every bad include (a
//! cycle, a missing file, too deep, twice) one line naming it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::path::{Path, PathBuf};

use super::super::include::{Files, Reader, Source};
use super::super::*;
use crate::spec::JobSpec;

/// Suite files held in memory, named as includes name them.
struct Mem(Vec<(&'static str, String)>);

impl Reader for Mem {
    fn read(&mut self, _: &Path, name: &str) -> Result<Source> {
        let (n, text) = self
            .0
            .iter()
            .find(|(n, _)| *n == name)
            .ok_or_else(|| VbError::input(format!("cannot read suite file {name}: missing")))?;
        Ok(Source {
            origin: n.to_string(),
            text: text.clone(),
            key: n.to_string(),
            path: PathBuf::from(n),
        })
    }
}

fn resolved(main: &str, files: &[(&'static str, &str)], published: bool) -> Result<Resolved> {
    let mut mem = Mem(files.iter().map(|(n, t)| (*n, t.to_string())).collect());
    let mut suite = parse("main.toml", main)?;
    if published {
        suite = published::select(suite, "main.toml")?.0;
    }
    resolve(
        "main.toml",
        main,
        Some(Path::new("main.toml")),
        suite,
        &mut mem,
        published,
    )
}

fn job_with(main: &str, files: &[(&'static str, &str)], o: &Overrides) -> Result<JobSpec> {
    expand(&resolved(main, files, false)?, o)
}

fn job(main: &str, files: &[(&'static str, &str)]) -> Result<JobSpec> {
    job_with(main, files, &Overrides::new("/tmp/x".into()))
}

fn names(j: &JobSpec) -> Vec<&str> {
    j.runs.iter().map(|r| r.name.as_str()).collect()
}

const HEAD: &str = "name = \"main\"\ntable = \"patterns\"\nwarmup_run = false\n";

fn inc(name: &str, body: &str) -> String {
    format!("name = \"{name}\"\ntable = \"patterns\"\n{body}")
}

#[test]
fn included_runs_join_where_the_include_stands() {
    let main = format!(
        "{HEAD}[[run]]\nname = \"first\"\n\n[[include]]\nfile = \"b.toml\"\n\n[[run]]\nname = \"last\"\n"
    );
    let b = inc("b", "[[run]]\nname = \"b1\"\n[[run]]\nname = \"b2\"\n");
    let j = job(&main, &[("b.toml", &b)]).unwrap();
    assert_eq!(names(&j), ["first", "b1", "b2", "last"]);
    // The suite's own name and table are the job's.
    assert_eq!(j.suite.as_ref().unwrap().name, "main");
}

#[test]
fn an_included_files_defaults_hold_for_its_runs_only() {
    let main = format!(
        "{HEAD}[defaults]\nthreads = 2\nduration = \"7s\"\n\n[[include]]\nfile = \"b.toml\"\n\n[[run]]\nname = \"mine\"\n"
    );
    let b = inc(
        "b",
        "[defaults]\nthreads = 8\niodepth = 4\n[[run]]\nname = \"b1\"\n[[run]]\nname = \"b2\"\nthreads = 3\n",
    );
    let j = job(&main, &[("b.toml", &b)]).unwrap();
    let by = |n: &str| j.runs.iter().find(|r| r.name == n).unwrap();
    // Its own default, a run's own key over it, the suite's where it is silent.
    assert_eq!((by("b1").threads, by("b1").iodepth), (8, 4));
    assert_eq!(by("b2").threads, 3);
    assert_eq!(by("b1").duration_s, 7.0);
    // Nothing leaks back out to the suite's own runs.
    assert_eq!((by("mine").threads, by("mine").iodepth), (2, 1));
    // A flag wins over every file's defaults, as it always does.
    let o = Overrides {
        threads: Some(vec![5]),
        ..Overrides::new("/tmp/x".into())
    };
    let j = job_with(&main, &[("b.toml", &b)], &o).unwrap();
    assert!(
        j.runs
            .iter()
            .filter(|r| r.name != "b2")
            .all(|r| r.threads == 5)
    );
}

#[test]
fn an_included_files_size_is_its_runs_own_file_set() {
    let main = format!(
        "{HEAD}[defaults]\nsize = \"1G\"\n[[run]]\nname = \"mine\"\n[[include]]\nsuite = \"six-patterns\"\n"
    );
    let j = job(&main, &[]).unwrap();
    let sets: Vec<String> = j.layouts().iter().map(|l| j.subset_name(l)).collect();
    // six-patterns' [defaults] size = "4G" is its runs' own set.
    assert_eq!(sets, ["files-1", "files-1-size-4GiB"]);
    assert_eq!(j.runs.len(), 7);
    // --size gives every run the one set.
    let o = Overrides {
        size: Some(2 << 30),
        ..Overrides::new("/tmp/x".into())
    };
    let j = job_with(&main, &[], &o).unwrap();
    assert_eq!(j.layouts().len(), 1);
}

#[test]
fn whole_job_keys_may_only_be_repeated() {
    let main = format!("{HEAD}[defaults]\nengine = \"sync\"\n[[include]]\nfile = \"b.toml\"\n");
    let same = inc(
        "b",
        "[defaults]\nengine = \"sync\"\n[[run]]\nname = \"b1\"\n",
    );
    job(&main, &[("b.toml", &same)]).unwrap();
    let other = inc("b", "[defaults]\nseed = 9\n[[run]]\nname = \"b1\"\n");
    let e = job(&main, &[("b.toml", &other)]).unwrap_err();
    assert_eq!(
        e.message,
        "b.toml line 4: seed: sets the whole job (one engine, cache policy, data and fill for every run), \
         so an included file may only repeat the suite's value (main.toml does not set it); set it there"
    );
    let total = format!(
        "threads_total = true\n{}",
        inc("b", "[[run]]\nname = \"b1\"\n")
    );
    let e = job(&main, &[("b.toml", &total)]).unwrap_err();
    assert!(
        e.message
            .starts_with("b.toml: threads_total = true differs from main.toml's"),
        "{e}"
    );
}

#[test]
fn a_cycle_is_one_line_naming_the_chain() {
    let main = format!("{HEAD}[[include]]\nfile = \"a.toml\"\n");
    let a = inc("a", "[[include]]\nfile = \"b.toml\"\n");
    let b = inc(
        "b",
        "[[run]]\nname = \"b1\"\n[[include]]\nfile = \"a.toml\"\n",
    );
    let e = job(&main, &[("a.toml", &a), ("b.toml", &b)]).unwrap_err();
    assert_eq!(
        e.message,
        "b.toml line 5: include: an include cycle: main.toml includes a.toml includes b.toml includes a.toml"
    );
    let own = format!("{HEAD}[[run]]\nname = \"x\"\n[[include]]\nfile = \"main.toml\"\n");
    let e = job(&own, &[("main.toml", &own)]).unwrap_err();
    assert!(e.message.ends_with("main.toml includes main.toml"), "{e}");
}

#[test]
fn a_missing_file_a_second_inclusion_and_a_bad_entry_are_named() {
    let main = format!("{HEAD}[[include]]\nfile = \"gone.toml\"\n");
    let e = job(&main, &[]).unwrap_err();
    assert_eq!(
        e.message,
        "main.toml line 4: include: cannot read suite file gone.toml: missing"
    );
    let twice = format!("{HEAD}[[include]]\nfile = \"b.toml\"\n[[include]]\nfile = \"b.toml\"\n");
    let b = inc("b", "[[run]]\nname = \"b1\"\n");
    let e = job(&twice, &[("b.toml", &b)]).unwrap_err();
    assert!(e.message.contains("b.toml is included twice"), "{e}");
    for entry in ["", "file = \"b.toml\"\nsuite = \"six-patterns\"\n"] {
        let main = format!("{HEAD}[[include]]\n{entry}");
        let e = job(&main, &[("b.toml", &b)]).unwrap_err();
        assert!(e.message.contains("give one of file = "), "{e}");
    }
    let main = format!("{HEAD}[[include]]\nsuite = \"seven-patterns\"\n");
    let e = job(&main, &[]).unwrap_err();
    assert!(
        e.message
            .contains("no built-in suite named 'seven-patterns'"),
        "{e}"
    );
}

#[test]
fn includes_nest_at_most_the_bound_deep() {
    let depth = bounds::MAX_INCLUDE_DEPTH;
    let names: Vec<&'static str> = (0..=depth)
        .map(|i| &*Box::leak(format!("f{i}.toml").into_boxed_str()))
        .collect();
    let chain = |levels: usize| -> Vec<(&'static str, String)> {
        (0..levels)
            .map(|i| {
                let body = if i + 1 < levels {
                    format!("[[include]]\nfile = \"{}\"\n", names[i + 1])
                } else {
                    "[[run]]\nname = \"leaf\"\n".to_string()
                };
                (names[i], inc(names[i], &body))
            })
            .collect()
    };
    let main = format!("{HEAD}[[include]]\nfile = \"f0.toml\"\n");
    let files = chain(depth);
    let refs: Vec<(&'static str, &str)> = files.iter().map(|(n, t)| (*n, t.as_str())).collect();
    assert_eq!(names_of(&job(&main, &refs).unwrap()), ["leaf"]);
    let files = chain(depth + 1);
    let refs: Vec<(&'static str, &str)> = files.iter().map(|(n, t)| (*n, t.as_str())).collect();
    let e = job(&main, &refs).unwrap_err();
    assert!(
        e.message.starts_with(&format!(
            "f{}.toml line 3: include: include nests deeper than {depth} files (main.toml includes f0.toml",
            depth - 1
        )),
        "{e}"
    );
}

fn names_of(j: &JobSpec) -> Vec<String> {
    names(j).into_iter().map(String::from).collect()
}

#[test]
fn an_error_in_an_included_file_names_that_file_and_line() {
    let main = format!("{HEAD}[[include]]\nfile = \"b.toml\"\n");
    let b = inc("b", "[[run]]\nname = \"b1\"\nbs = \"12Q\"\n");
    let e = job(&main, &[("b.toml", &b)]).unwrap_err();
    assert!(e.message.starts_with("b.toml line 5: "), "{e}");
    let b = inc("b", "[defaults]\nthreads = 0\n[[run]]\nname = \"b1\"\n");
    let e = job(&main, &[("b.toml", &b)]).unwrap_err();
    assert!(e.message.starts_with("b.toml line 4: threads"), "{e}");
    let b = inc(
        "b",
        "[[run]]\nname = \"r\"\nreplay = { file = \"t.trace\" }\n",
    );
    let e = job(&main, &[("b.toml", &b)]).unwrap_err();
    assert!(e.message.contains("cannot be included"), "{e}");
    // A file of includes only is a suite; one of neither is refused.
    let e = parse("e.toml", "name = \"e\"\ntable = \"patterns\"\n").unwrap_err();
    assert!(
        e.message.contains("no [[run]] or [[include]] entries"),
        "{e}"
    );
}

#[test]
fn published_takes_each_included_files_variant_and_says_so() {
    let main = format!(
        "{HEAD}[[run]]\nname = \"mine\"\n[[include]]\nsuite = \"six-patterns\"\n\
         [published]\nsource = \"mine\"\n[published.defaults]\nfill_bs = \"64k\"\n"
    );
    let r = resolved(&main, &[], true).unwrap();
    assert!(
        r.said
            .iter()
            .any(|l| l.starts_with("published variant of six-patterns"))
    );
    let j = expand(&r, &Overrides::new("/tmp/x".into())).unwrap();
    let read = j.runs.iter().find(|r| r.name == "8k-random-read").unwrap();
    assert_eq!((read.threads, read.duration_s), (25, 600.0));
    // Not published: its scaled-down runs, and the suite says which file has a paper's.
    let r = resolved(&main, &[], false).unwrap();
    assert_eq!(r.unpublished(), ["six-patterns"]);
    // --published needs every included file to have one.
    let b = inc("b", "[[run]]\nname = \"b1\"\n");
    let main = format!("{HEAD}[[include]]\nfile = \"b.toml\"\n[published]\nsource = \"mine\"\n");
    let e = resolved(&main, &[("b.toml", &b)], true).unwrap_err();
    assert!(
        e.message.starts_with("b.toml has no published variant"),
        "{e}"
    );
}

#[test]
fn a_suite_that_is_not_a_file_includes_only_built_in_suites() {
    let main = format!("{HEAD}[[include]]\nfile = \"b.toml\"\n");
    let s = parse("import.fio", &main).unwrap();
    let e = to_job("import.fio", &main, &s, &Overrides::new("/tmp/x".into())).unwrap_err();
    assert!(e.message.contains("import.fio is not a file"), "{e}");
    let main = format!("{HEAD}[[include]]\nsuite = \"metadata\"\n");
    let s = parse("import.fio", &main).unwrap();
    to_job("import.fio", &main, &s, &Overrides::new("/tmp/x".into())).unwrap();
}

#[test]
fn files_are_read_relative_to_the_including_file_and_known_however_named() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    let main_path = dir.path().join("main.toml");
    let main = format!("{HEAD}[[include]]\nfile = \"sub/a.toml\"\n");
    std::fs::write(&main_path, &main).unwrap();
    // a.toml names b.toml beside itself, and b.toml names a.toml as ./a.toml.
    std::fs::write(
        sub.join("a.toml"),
        inc(
            "a",
            "[[run]]\nname = \"a1\"\n[[include]]\nfile = \"b.toml\"\n",
        ),
    )
    .unwrap();
    std::fs::write(sub.join("b.toml"), inc("b", "[[run]]\nname = \"b1\"\n")).unwrap();
    let origin = main_path.display().to_string();
    let s = parse(&origin, &main).unwrap();
    let r = resolve(
        &origin,
        &main,
        Some(&main_path),
        s.clone(),
        &mut Files,
        false,
    )
    .unwrap();
    let j = expand(&r, &Overrides::new("/tmp/x".into())).unwrap();
    assert_eq!(names(&j), ["a1", "b1"]);
    std::fs::write(
        sub.join("b.toml"),
        inc(
            "b",
            "[[run]]\nname = \"b1\"\n[[include]]\nfile = \"./a.toml\"\n",
        ),
    )
    .unwrap();
    let e = resolve(&origin, &main, Some(&main_path), s, &mut Files, false).unwrap_err();
    assert!(e.message.contains("an include cycle"), "{e}");
}
