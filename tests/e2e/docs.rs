//! The docs cannot rot: every command README.md and docs/ show in a block
//! tagged `sh` is run against the debug binary, and must exit as shown.
//!
//! The convention (README.md, "Documentation"): a `sh` block holds only
//! `volbench` command lines that run offline in seconds; a line ending in
//! `# exit N` must exit N, the others 0. Blocks that need root, a device,
//! hosts or a real volume are tagged `bash`, transcripts `console` or
//! `text`. The tag is the only thing that decides whether a block runs, so
//! an untagged block is an error rather than a silent skip.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// README.md and every Markdown file under docs/, sorted so failures are
/// reported in a stable order.
fn doc_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "md") {
                out.push(p);
            }
        }
    }
    let mut out = vec![root().join("README.md")];
    walk(&root().join("docs"), &mut out);
    out.sort();
    out
}

/// A fenced block: where it opens (1-based line), its tag, its lines
/// (with their line numbers, the list indentation of the fence removed).
struct Block {
    line: usize,
    tag: String,
    body: Vec<(usize, String)>,
}

fn blocks(text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut open: Option<(usize, Block)> = None;
    for (i, l) in text.lines().enumerate() {
        let indent = l.len() - l.trim_start().len();
        let t = l.trim_start();
        match open.take() {
            None => {
                if let Some(tag) = t.strip_prefix("```") {
                    // A line like ```` ```sh ```` is inline code, not a fence.
                    if !tag.starts_with('`') {
                        let tag = tag.trim().to_string();
                        open = Some((
                            indent,
                            Block {
                                line: i + 1,
                                tag,
                                body: Vec::new(),
                            },
                        ));
                    }
                }
            }
            Some((ind, mut b)) => {
                if t == "```" {
                    out.push(b);
                } else {
                    let body = if l.len() >= ind { &l[ind..] } else { t };
                    b.body.push((i + 1, body.to_string()));
                    open = Some((ind, b));
                }
            }
        }
    }
    if let Some((_, b)) = open {
        out.push(Block {
            tag: format!("UNCLOSED {}", b.tag),
            ..b
        });
    }
    out
}

fn rel(p: &Path) -> String {
    p.strip_prefix(root()).unwrap_or(p).display().to_string()
}

/// The commands of a `sh` block, continuation lines joined: (line, command).
fn commands(b: &Block) -> Vec<(usize, String)> {
    let mut out: Vec<(usize, String)> = Vec::new();
    let mut cont = false;
    for (n, l) in &b.body {
        if l.trim().is_empty() {
            continue;
        }
        let piece = l.trim_end().trim_end_matches('\\').trim().to_string();
        match out.last_mut() {
            Some(last) if cont => last.1 = format!("{} {piece}", last.1),
            _ => out.push((*n, piece)),
        }
        cont = l.trim_end().ends_with('\\');
    }
    out
}

/// `# exit N` at the end of a line; 0 otherwise.
fn expected_exit(cmd: &str) -> i32 {
    cmd.rsplit_once('#')
        .and_then(|(_, c)| c.trim().strip_prefix("exit "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0)
}

#[test]
fn every_doc_block_is_tagged_and_sh_blocks_hold_only_volbench_commands() {
    let mut bad = Vec::new();
    for f in doc_files() {
        let text = std::fs::read_to_string(&f).unwrap();
        for b in blocks(&text) {
            if b.tag.is_empty() || b.tag.starts_with("UNCLOSED") {
                bad.push(format!(
                    "{}:{}: a code block without a tag (sh runs; bash, console, text do not) or unclosed",
                    rel(&f),
                    b.line
                ));
            }
            if b.tag == "sh" {
                for (n, c) in commands(&b) {
                    if !c.starts_with("volbench ") {
                        bad.push(format!(
                            "{}:{n}: a sh block runs only `volbench` lines; tag the block bash: {c}",
                            rel(&f)
                        ));
                    }
                }
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn every_sh_command_in_the_docs_runs_and_exits_as_shown() {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_volbench"));
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut failed = Vec::new();
    let mut ran = 0;
    for f in doc_files() {
        let text = std::fs::read_to_string(&f).unwrap();
        for b in blocks(&text).into_iter().filter(|b| b.tag == "sh") {
            // Each block in a fresh directory: the commands of one block
            // may use what the earlier ones wrote (a run, then its report).
            let dir = tempfile::tempdir().unwrap();
            copy_dir(
                &root().join("docs/examples"),
                &dir.path().join("docs/examples"),
            );
            for (n, c) in commands(&b) {
                let want = expected_exit(&c);
                let out = Command::new("sh")
                    .arg("-c")
                    .arg(&c)
                    .current_dir(dir.path())
                    .env("PATH", &path)
                    .output()
                    .unwrap();
                ran += 1;
                if out.status.code() != Some(want) {
                    failed.push(format!(
                        "{}:{n}: `{c}` exited {:?}, the docs say {want}: {}",
                        rel(&f),
                        out.status.code(),
                        String::from_utf8_lossy(&out.stderr).trim()
                    ));
                }
            }
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
    // The README's examples alone are more than this; none found means the
    // parser, not the docs, is broken.
    assert!(ran >= 5, "only {ran} commands found in sh blocks");
}

#[test]
fn relative_links_in_the_docs_name_files_that_exist() {
    let mut bad = Vec::new();
    for f in doc_files() {
        let text = std::fs::read_to_string(&f).unwrap();
        for (i, l) in text.lines().enumerate() {
            for part in l.split("](").skip(1) {
                let Some(end) = part.find(')') else { continue };
                let target = &part[..end];
                let file = target.split('#').next().unwrap_or("");
                if file.is_empty() || file.contains("://") {
                    continue;
                }
                if !f.parent().unwrap().join(file).exists() {
                    bad.push(format!("{}:{}: link to missing {target}", rel(&f), i + 1));
                }
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        let dest = to.join(p.file_name().unwrap());
        if p.is_dir() {
            copy_dir(&p, &dest);
        } else {
            std::fs::copy(&p, &dest).unwrap();
        }
    }
}

/// The many-host flags in docs/reference/commands.md are `run --help`'s own
/// text, so a new flag cannot go unlisted there.
#[test]
fn the_many_host_flags_in_the_reference_are_runs_help() {
    let help = Command::new(env!("CARGO_BIN_EXE_volbench"))
        .args(["run", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8(help.stdout).unwrap();
    // The section runs to the next heading (--help's long form puts a
    // blank line between options).
    let mut section: Vec<&str> = help
        .lines()
        .skip_while(|l| *l != "Many hosts:")
        .enumerate()
        .take_while(|(i, l)| *i == 0 || l.is_empty() || l.starts_with(' '))
        .map(|(_, l)| l)
        .collect();
    while section.last().is_some_and(|l| l.is_empty()) {
        section.pop();
    }
    assert!(section.len() > 10, "no many-host section in run --help");
    let doc = std::fs::read_to_string(root().join("docs/reference/commands.md")).unwrap();
    let block: Vec<&str> = doc
        .lines()
        .skip_while(|l| *l != "Many hosts:")
        .take_while(|l| !l.starts_with("```"))
        .collect();
    assert_eq!(
        block.join("\n"),
        section.join("\n"),
        "docs/reference/commands.md differs from `volbench run --help`: paste its Many hosts section"
    );
}
