//! The import guide's tables (`docs/guide/import.md`) held against the
//! importers' rows: every option a table names is a row of its tool (by
//! its name or another of the tool's names) with the rule the table gives
//! it, and every row, with each of its other names, is in the guide. A new
//! row without its line in the guide, or a line the rows do not back,
//! fails here.

use super::*;
use crate::input::import::table::{Doc, docs};

const GUIDE: &str = include_str!("../../../../docs/guide/import.md");

/// A table line's cells, split at the `|` that `\|` does not escape.
fn cells(line: &str) -> Vec<String> {
    let inner = line.trim().trim_start_matches('|').trim_end_matches('|');
    let mut out = vec![String::new()];
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                chars.next();
                out.last_mut().unwrap().push('|');
            }
            '|' => out.push(String::new()),
            c => out.last_mut().unwrap().push(c),
        }
    }
    out.iter().map(|c| c.trim().to_string()).collect()
}

/// The text between backticks in a cell.
fn ticked(cell: &str) -> Vec<String> {
    cell.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// The body rows (line number, cells) of every table of the guide whose
/// header starts with `header`.
fn tables(header: &[&str]) -> Vec<(usize, Vec<String>)> {
    let mut out = Vec::new();
    let mut inside = false;
    for (i, line) in GUIDE.lines().enumerate() {
        if !line.trim_start().starts_with('|') {
            inside = false;
            continue;
        }
        let c = cells(line);
        if c.len() >= header.len() && c.iter().zip(header).all(|(a, b)| a == b) {
            inside = true;
            continue;
        }
        if inside && !c.iter().all(|x| x.chars().all(|ch| ch == '-' || ch == ':')) {
            out.push((i + 1, c));
        }
    }
    assert!(!out.is_empty(), "no table headed {header:?} in the guide");
    out
}

/// One tool's rows against its table: each named option's rule, and each
/// row's names present. `key` turns a ticked text into the name a row is
/// found by (`rw=randread:N` is `rw`; diskspd's `-rs<pct>` is `r`).
fn hold(tool: &str, rows: &[Doc], named: &[(usize, Vec<String>, String)], key: fn(&str) -> String) {
    let mut seen: Vec<String> = Vec::new();
    let mut wrong = Vec::new();
    for (line, ticks, rule) in named {
        for t in ticks {
            let k = key(t);
            match rows
                .iter()
                .find(|r| r.name == k || r.aliases.contains(&k.as_str()))
            {
                None => wrong.push(format!("line {line}: `{t}` is no {tool} row")),
                Some(r) if r.kind.word() != rule => wrong.push(format!(
                    "line {line}: `{t}` says {rule}, its row is {}",
                    r.kind.word()
                )),
                Some(_) => seen.push(k),
            }
        }
    }
    for r in rows {
        for n in std::iter::once(&r.name).chain(r.aliases) {
            if !seen.iter().any(|s| s == n) {
                wrong.push(format!("{tool} row `{n}` is not in the guide"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "docs/guide/import.md:\n{}",
        wrong.join("\n")
    );
}

/// fio's name in `rw=randread:N`, `size`, `ioengine=filecreate`.
fn fio_key(t: &str) -> String {
    t.split(['=', ':', ' ']).next().unwrap_or(t).to_string()
}

#[test]
fn the_guide_names_every_fio_option_with_its_rule() {
    let rows = |header: &[&str]| -> Vec<(usize, Vec<String>, String)> {
        tables(header)
            .into_iter()
            .map(|(line, c)| (line, ticked(&c[0]), c[1].clone()))
            .collect()
    };
    hold(
        "fio option",
        &docs(fio::options::OPTIONS),
        &rows(&["fio option", "rule", "volbench"]),
        fio_key,
    );
    hold(
        "fio file-engine option",
        &docs(fio::engines::ENGINE_OPTIONS),
        &rows(&["fio option (file engines)", "rule", "volbench"]),
        fio_key,
    );
    hold(
        "libnfs URL argument",
        &docs(fio::nfs::URL_ARGS),
        &rows(&["libnfs URL argument", "rule", "volbench"]),
        fio_key,
    );
}

#[test]
fn the_guide_names_every_vdbench_key_with_its_rule() {
    let named = tables(&["kind", "vdbench key", "rule", "volbench"]);
    for (kind, rows) in vdbench::keys::tables() {
        let of_kind: Vec<(usize, Vec<String>, String)> = named
            .iter()
            .filter(|(_, c)| c[0] == kind)
            .map(|(line, c)| (*line, ticked(&c[1]), c[2].clone()))
            .collect();
        hold(&format!("vdbench {kind}"), &rows, &of_kind, fio_key);
    }
    let kinds: Vec<&str> = vdbench::keys::tables().iter().map(|(k, _)| *k).collect();
    for (line, c) in &named {
        assert!(
            kinds.contains(&c[0].as_str()),
            "line {line}: no kind '{}'",
            c[0]
        );
    }
}

#[test]
fn the_guide_names_every_diskspd_switch_with_its_value_and_rule() {
    let named = tables(&["diskspd switch", "value", "rule", "volbench"]);
    let rows = docs(diskspd::switches::SWITCHES);
    let switch = |t: &str| {
        t.trim_start_matches('-')
            .chars()
            .take(1)
            .collect::<String>()
    };
    let listed: Vec<(usize, Vec<String>, String)> = named
        .iter()
        .map(|(line, c)| (*line, ticked(&c[0]), c[2].clone()))
        .collect();
    hold("diskspd switch", &rows, &listed, |t| {
        t.trim_start_matches('-').chars().take(1).collect()
    });
    // The value each switch takes, as diskspd's usage shows it.
    for (line, c) in &named {
        for t in ticked(&c[0]) {
            let row = rows.iter().find(|r| r.name == switch(&t)).unwrap();
            let value = ticked(&c[1]).join(" ");
            assert_eq!(
                value, row.value,
                "line {line}: -{} takes `{}`",
                row.name, row.value
            );
        }
    }
}

#[test]
fn the_cell_reader_keeps_escaped_bars_and_finds_ticked_names() {
    assert_eq!(
        cells("| `-S` | `[b\\|h]` | map | direct |"),
        ["`-S`", "`[b|h]`", "map", "direct"]
    );
    assert_eq!(
        ticked("`rw`/`readwrite`, `rwmixread`"),
        ["rw", "readwrite", "rwmixread"]
    );
    assert_eq!(fio_key("rw=randread:N"), "rw");
}
