//! vdbench's own command-line switches for data validation, as `volbench
//! vdbench` takes them: `-v` (and its `-vr`/`-vw`/`-vt` forms) and `-j`
//! (and `-jn`, the recovery forms), onto volbench's `verify` and its
//! journal. Each is mapped, with what differs said, or refused in one line
//! naming what to run instead.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::path::{Path, PathBuf};

use super::super::{How, Imported, Mapping};
use crate::error::{Result, VbError};
use crate::input::suite::write::value;

/// What the switches ask for, as clap read them: the letters after `-v`
/// or `-j` ("" for the bare switch), and `--journal`'s path.
pub(crate) struct Switches<'a> {
    pub(crate) validate: Option<&'a str>,
    pub(crate) journal: Option<&'a str>,
    pub(crate) journal_file: Option<&'a Path>,
}

const VERIFY_HOW: &str = "verify = true: volbench checks every read against the block's last write \
     as it goes (offset, write counter and checksum of each 512-byte sector, its own stamp \
     rather than vdbench's key), reads nothing before a write or after it, and stops at the \
     first mismatch (exit 1)";

/// Applies the switches to the import: `verify` in its suite, the mapping
/// said first; the journal's path when `-j` asked for one (named by
/// `--journal`, else `<first parameter file's stem>.jnl` in the current
/// directory).
pub(crate) fn apply(
    s: &Switches,
    files: &[PathBuf],
    imp: &mut Imported,
) -> Result<Option<PathBuf>> {
    let mut said = Vec::new();
    let mut verify = false;
    if let Some(v) = s.validate {
        let option = format!("-v{v}");
        match v {
            "" | "w" => {
                verify = true;
                // -vw leaves out vdbench's read before each write, which
                // volbench never does: the same checks.
                let how = if v == "w" {
                    How::Exact(VERIFY_HOW.into())
                } else {
                    How::Note(format!(
                        "{VERIFY_HOW}; vdbench also reads a block before writing it (-vw turns that off)"
                    ))
                };
                said.push(mapping(&option, how));
            }
            "r" => {
                return Err(refuse(
                    &option,
                    "vdbench reads each block back right after writing it; volbench checks every \
                     read against the last write but adds no read (use -v)",
                ));
            }
            "t" => {
                return Err(refuse(
                    &option,
                    "volbench keeps a write counter per block, not the time of its last write (use -v)",
                ));
            }
            _ => return Err(refuse(&option, "not a vdbench switch (-v, -vr, -vw, -vt)")),
        }
    }
    let journal = match s.journal {
        None => {
            if let Some(f) = s.journal_file {
                return Err(VbError::input(format!(
                    "--journal {}: give -j too (the journal keeps -j's write counters)",
                    f.display()
                )));
            }
            None
        }
        Some(j) => {
            let option = format!("-j{j}");
            match j {
                "" | "n" => {}
                "r" | "ro" | "ri" | "rs" | "rn" | "rno" => {
                    return Err(refuse(
                        &option,
                        "journal recovery is `volbench verify --target DIR --journal FILE` (it checks \
                         the set against the journal after a crash and marks it clean); then run \
                         again with -j",
                    ));
                }
                "m" | "mn" => {
                    return Err(refuse(
                        &option,
                        "volbench's journal always keeps every block's write counters, never a map alone (use -j)",
                    ));
                }
                _ => {
                    return Err(refuse(
                        &option,
                        "not a vdbench switch (-j, -jn, -jr, -jro, -jm)",
                    ));
                }
            }
            let path = match s.journal_file {
                Some(f) => f.to_path_buf(),
                None => default_journal(files),
            };
            verify = true;
            let sync = if j == "n" {
                "as -jn, the journal's writes are not synced one by one"
            } else {
                "vdbench -j syncs the journal before and after each write; volbench keeps the \
                 counters in memory and syncs them every second, so after a crash the last \
                 second's writes are checked as in flight (either the old data or the new)"
            };
            said.push(mapping(
                &option,
                How::Note(format!(
                    "verify = true with the journal {} ({sync}); after a crash, `volbench verify \
                     --target DIR --journal {}` checks the set against it",
                    path.display(),
                    path.display()
                )),
            ));
            Some(path)
        }
    };
    if verify {
        imp.suite.defaults.verify = value(true);
    }
    said.append(&mut imp.said);
    imp.said = said;
    Ok(journal)
}

/// `-j`'s journal when `--journal` names none: the first parameter file's
/// name with `.jnl`, in the current directory, as vdbench keeps its own.
fn default_journal(files: &[PathBuf]) -> PathBuf {
    let stem = files
        .first()
        .and_then(|f| f.file_stem())
        .map(|s| s.to_string_lossy().into_owned())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "vdbench".into());
    PathBuf::from(format!("{stem}.jnl"))
}

fn mapping(option: &str, how: How) -> Mapping {
    Mapping {
        at: "the command line".into(),
        option: option.into(),
        how,
    }
}

fn refuse(option: &str, why: &str) -> VbError {
    VbError::input(format!(
        "the command line: {}: {why}",
        crate::error::clip(option)
    ))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::input::suite::SuiteFile;
    use crate::spec::TableKind;

    fn imp() -> Imported {
        Imported::new(
            SuiteFile::new("p", "vdbench", TableKind::Patterns, false),
            "/t".into(),
        )
    }

    fn switches<'a>(v: Option<&'a str>, j: Option<&'a str>, f: Option<&'a Path>) -> Switches<'a> {
        Switches {
            validate: v,
            journal: j,
            journal_file: f,
        }
    }

    fn run(s: &Switches) -> Result<(Imported, Option<PathBuf>)> {
        let mut i = imp();
        let files = [PathBuf::from("/etc/vd/parmfile.txt")];
        let j = apply(s, &files, &mut i)?;
        Ok((i, j))
    }

    #[test]
    fn minus_v_and_minus_vw_turn_verification_on_and_say_how() {
        let (i, j) = run(&switches(Some(""), None, None)).unwrap();
        assert!(j.is_none());
        assert!(i.suite.defaults.verify.is_some());
        assert_eq!(i.said[0].option, "-v");
        assert!(
            matches!(&i.said[0].how, How::Note(n) if n.contains("reads a block before writing"))
        );
        let (i, _) = run(&switches(Some("w"), None, None)).unwrap();
        assert!(matches!(&i.said[0].how, How::Exact(_)));
    }

    #[test]
    fn minus_j_journals_beside_the_current_directory_or_where_told() {
        let (i, j) = run(&switches(None, Some(""), None)).unwrap();
        assert_eq!(j, Some(PathBuf::from("parmfile.jnl")));
        assert!(
            i.suite.defaults.verify.is_some(),
            "-j validates too, as vdbench's"
        );
        assert!(matches!(&i.said[0].how, How::Note(n) if n.contains("syncs them every second")));
        let f = PathBuf::from("/var/j/vol1.jnl");
        let (_, j) = run(&switches(Some(""), Some("n"), Some(&f))).unwrap();
        assert_eq!(j, Some(f.clone()));
        let e = run(&switches(None, None, Some(&f))).unwrap_err();
        assert!(e.to_string().contains("give -j too"), "{e}");
    }

    #[test]
    fn what_has_no_equal_is_refused_in_one_line() {
        for (v, j, says) in [
            (Some("r"), None, "-vr: vdbench reads each block back"),
            (Some("t"), None, "-vt: volbench keeps a write counter"),
            (Some("x"), None, "-vx: not a vdbench switch"),
            (None, Some("r"), "-jr: journal recovery is `volbench verify"),
            (None, Some("ro"), "-jro: journal recovery"),
            (None, Some("m"), "-jm: volbench's journal always keeps"),
            (None, Some("q"), "-jq: not a vdbench switch"),
        ] {
            let e = run(&switches(v, j, None)).unwrap_err().to_string();
            assert!(e.contains(says), "{v:?} {j:?}: {e}");
            assert_eq!(e.lines().count(), 1);
        }
    }
}
