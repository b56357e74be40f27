//! The layering in ARCHITECTURE.md, checked: each top-level module of `src/`
//! may use only the modules below it in `LAYERS`, so the flow stays one
//! direction and no import cycle can come back.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Top to bottom. A module may use itself and anything after it.
const LAYERS: &[&str] = &[
    "fuzz", "cmd", "remote", "report", "store", "output", "executor", "events", "plan", "input",
    "io", "proto", "result", "spec", "units", "stats", "console", "error",
];

/// No file in src/ may grow past this many lines: past it, a file does
/// several jobs and should be split by job.
const MAX_LINES: usize = 700;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The top-level module a file belongs to (`src/io/engine/uring.rs` -> io).
fn owner(file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src()).ok()?;
    let first = rel.components().next()?.as_os_str().to_string_lossy();
    Some(first.trim_end_matches(".rs").to_string())
}

/// The text with comments and string and character literals blanked out
/// (newlines kept), so a path in a doc comment or a message is not read as
/// a use, and a `"` in a char literal does not start a string.
fn code_only(text: &str) -> String {
    blank_out(text, true)
}

/// As `code_only`, but string literals are kept when `strings` is false.
fn blank_out(text: &str, strings: bool) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let blank = |out: &mut String, s: &[u8]| {
        for &c in s {
            out.push(if c == b'\n' { '\n' } else { ' ' });
        }
    };
    let literal = |out: &mut String, s: &[u8]| {
        if strings {
            blank(out, s);
        } else {
            out.push_str(&String::from_utf8_lossy(s));
        }
    };
    while i < b.len() {
        let rest = &b[i..];
        if rest.starts_with(b"//") {
            let end = rest.iter().position(|&c| c == b'\n').unwrap_or(rest.len());
            blank(&mut out, &rest[..end]);
            i += end;
        } else if rest.starts_with(b"/*") {
            // Block comments nest in Rust.
            let (mut depth, mut j) = (0usize, 0);
            while j < rest.len() {
                if rest[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if rest[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            blank(&mut out, &rest[..j]);
            i += j;
        } else if rest[0] == b'r' && (rest.starts_with(b"r\"") || rest.starts_with(b"r#")) {
            let hashes = rest[1..].iter().take_while(|&&c| c == b'#').count();
            if rest.get(1 + hashes) != Some(&b'"') {
                out.push('r');
                i += 1;
                continue;
            }
            let close: Vec<u8> = std::iter::once(b'"')
                .chain(std::iter::repeat_n(b'#', hashes))
                .collect();
            let body = 2 + hashes;
            let end = rest[body..]
                .windows(close.len())
                .position(|w| w == close.as_slice())
                .map_or(rest.len(), |p| body + p + close.len());
            literal(&mut out, &rest[..end]);
            i += end;
        } else if rest[0] == b'"' {
            let mut j = 1;
            while j < rest.len() && rest[j] != b'"' {
                j += if rest[j] == b'\\' { 2 } else { 1 };
            }
            let end = (j + 1).min(rest.len());
            literal(&mut out, &rest[..end]);
            i += end;
        } else if rest[0] == b'\'' {
            // 'x' or '\n' is a char literal; 'a (no closing quote) a lifetime.
            let len = if rest.get(1) == Some(&b'\\') {
                rest[2..].iter().position(|&c| c == b'\'').map(|p| p + 3)
            } else {
                let ch = text[i + 1..].chars().next().map_or(1, char::len_utf8);
                (rest.get(1 + ch) == Some(&b'\'')).then_some(2 + ch)
            };
            match len {
                Some(n) => {
                    blank(&mut out, &rest[..n]);
                    i += n;
                }
                None => {
                    out.push('\'');
                    i += 1;
                }
            }
        } else {
            let ch = text[i..].chars().next().unwrap_or(' ');
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

fn ident(s: &str) -> String {
    s.trim_start()
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

/// The first name of each item of a `{...}` group at its top level
/// (`{a::{b, c}, d}` -> a, d), and the text after the group.
fn group_heads(after_brace: &str) -> Vec<String> {
    let (mut depth, mut item, mut heads) = (0usize, String::new(), Vec::new());
    for c in after_brace.chars() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => break,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                heads.push(ident(&item));
                item.clear();
                continue;
            }
            _ => {}
        }
        if depth == 0 {
            item.push(c);
        }
    }
    heads.push(ident(&item));
    heads.retain(|h| !h.is_empty() && h != "self");
    heads
}

/// The names a path continues with after `crate::` (or after enough
/// `super::` to reach the crate root): one name, or each head of a group.
fn names_after(rest: &str) -> Vec<String> {
    let rest = rest.trim_start();
    match rest.strip_prefix('{') {
        Some(group) => group_heads(group),
        None => vec![ident(rest)]
            .into_iter()
            .filter(|n| !n.is_empty())
            .collect(),
    }
}

/// Every top-level module a file names as `crate::X` (in a `use`, a type,
/// an expression, a grouped import over several lines, `pub(in crate::X)`),
/// or reaches through `super::super::...` from `depth` levels down
/// (`src/io/engine/uring.rs` is 3 deep; a `mod.rs` counts as its folder).
fn uses_from(text: &str, depth: usize) -> BTreeSet<String> {
    let code = code_only(text);
    let mut found = BTreeSet::new();
    let word_start = |i: usize| {
        code[..i]
            .chars()
            .next_back()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == '$'))
    };
    for (i, _) in code.match_indices("crate") {
        if !word_start(i) {
            continue;
        }
        let rest = code[i + "crate".len()..].trim_start();
        if let Some(rest) = rest.strip_prefix("::") {
            found.extend(names_after(rest));
        }
    }
    let inline = inline_mod_depths(&code);
    for (i, _) in code.match_indices("super") {
        if !word_start(i) || code[..i].trim_end().ends_with("::") {
            continue;
        }
        // Inside `mod tests { ... }` one `super` only leaves that block.
        let depth = depth + inline.get(i).copied().unwrap_or(0);
        let mut rest = &code[i..];
        let mut k = 0;
        while let Some(r) = rest.strip_prefix("super") {
            let Some(r) = r.trim_start().strip_prefix("::") else {
                break;
            };
            k += 1;
            rest = r.trim_start();
        }
        if depth > 0 && k >= depth {
            found.extend(names_after(rest));
        }
    }
    found
}

/// For each byte of `code`, how many inline `mod NAME { ... }` blocks
/// enclose it.
fn inline_mod_depths(code: &str) -> Vec<usize> {
    let mut out = Vec::with_capacity(code.len());
    let (mut braces, mut open_mods) = (0usize, Vec::new());
    for (i, c) in code.char_indices() {
        match c {
            '{' => {
                braces += 1;
                let before = code[..i].trim_end();
                let name_len = before
                    .chars()
                    .rev()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .count();
                let head = before[..before.len() - name_len].trim_end();
                let is_mod = name_len > 0
                    && head.ends_with("mod")
                    && head[..head.len() - 3]
                        .chars()
                        .next_back()
                        .is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
                if is_mod {
                    open_mods.push(braces);
                }
            }
            '}' => {
                if open_mods.last() == Some(&braces) {
                    open_mods.pop();
                }
                braces = braces.saturating_sub(1);
            }
            _ => {}
        }
        out.extend(std::iter::repeat_n(open_mods.len(), c.len_utf8()));
    }
    out
}

/// As `uses_from` for a top-level file (`use crate::...` only).
fn uses(text: &str) -> BTreeSet<String> {
    uses_from(text, 1)
}

/// How many modules deep a file sits: `src/spec.rs` 1, `src/io/mod.rs` 1,
/// `src/io/engine/uring.rs` 3.
fn depth(file: &Path) -> usize {
    let Ok(rel) = file.strip_prefix(src()) else {
        return 0;
    };
    let n = rel.components().count();
    if rel.file_name().is_some_and(|f| f == "mod.rs") {
        n - 1
    } else {
        n
    }
}

/// The modules `src/lib.rs` declares.
fn declared_in_lib() -> BTreeSet<String> {
    let text = fs::read_to_string(src().join("lib.rs")).unwrap_or_default();
    let code = code_only(&text);
    let mut found = BTreeSet::new();
    for (i, _) in code.match_indices("mod ") {
        let before = code[..i].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let name = ident(&code[i + 4..]);
        if !name.is_empty() {
            found.insert(name);
        }
    }
    found
}

fn rank(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| *l == module)
}

#[test]
fn modules_use_only_the_layers_below_them() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut wrong = Vec::new();
    for f in &files {
        let Some(me) = owner(f) else { continue };
        if me == "lib" || me == "main" {
            continue;
        }
        let Some(my_rank) = rank(&me) else {
            wrong.push(format!(
                "{}: top-level module '{me}' has no place in LAYERS (tests/architecture.rs and ARCHITECTURE.md)",
                f.display()
            ));
            continue;
        };
        let text = fs::read_to_string(f).unwrap_or_default();
        if code_only(&text).contains("#[path") {
            wrong.push(format!(
                "{}: #[path] makes a file of one folder a module of another; move the file",
                f.display()
            ));
        }
        for used in uses_from(&text, depth(f)) {
            match rank(&used) {
                Some(r) if r < my_rank => wrong.push(format!(
                    "{}: '{me}' uses '{used}', which is above it",
                    f.display()
                )),
                Some(_) => {}
                None => wrong.push(format!(
                    "{}: uses crate::{used}, which has no place in LAYERS",
                    f.display()
                )),
            }
        }
    }
    assert!(wrong.is_empty(), "layering broken:\n{}", wrong.join("\n"));
}

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|s| s.to_string()).collect()
}

#[test]
fn the_import_scanner_sees_grouped_and_nested_paths() {
    let found = uses(
        "use crate::{error::Result, spec};\nlet x = crate::io::target::inspect(p); // crate::cmd",
    );
    assert_eq!(found, set(&["error", "spec", "io"]));
}

#[test]
fn the_import_scanner_sees_every_form_of_reference() {
    // A group over several lines, as rustfmt writes a long one, with a
    // nested group whose inner names are not top-level modules.
    let multi = "use crate::{\n    output::{fmt, table::Table},\n    units::bounds,\n};\n";
    assert_eq!(uses(multi), set(&["output", "units"]));
    // A type, an expression, a visibility, spaces around `::`.
    let inline = "fn f(d: &crate::result::ResultDoc) -> crate :: report::Html {\n\
                  pub(in crate::plan) struct S;\n crate::cmd::run() }";
    assert_eq!(uses(inline), set(&["result", "report", "plan", "cmd"]));
    // `super` chains: from src/io/engine/uring.rs (3 deep) two supers stay
    // in io, three reach the crate root; a mod.rs counts as its folder.
    let up = "use super::super::target;\nuse super::super::super::report::Html;";
    assert_eq!(uses_from(up, 3), set(&["report"]));
    assert_eq!(
        uses_from("use super::{plan, cmd};", 1),
        set(&["plan", "cmd"])
    );
    assert_eq!(uses_from("use super::Engine;", 2), set(&[]));
    // In an inline module, one `super` only leaves the block.
    let tests =
        "mod tests {\n    use super::Pattern;\n    use super::super::cmd;\n}\nuse super::report;";
    assert_eq!(uses_from(tests, 1), set(&["cmd", "report"]));
    // Comments, doc comments, strings and char literals are not code.
    let quiet = "/* crate::cmd */ /// crate::report\nlet s = \"crate::remote\";\n\
                 let r = r#\"crate::plan\"#; let q = '\"'; let l: &'static str = crate::spec::X;";
    assert_eq!(uses(quiet), set(&["spec"]));
    assert_eq!(depth(&src().join("io/engine/uring.rs")), 3);
    assert_eq!(depth(&src().join("io/engine/mod.rs")), 2);
    assert_eq!(depth(&src().join("spec.rs")), 1);
}

#[test]
fn every_top_level_module_has_a_layer() {
    let declared = declared_in_lib();
    let layers: BTreeSet<String> = LAYERS.iter().map(|s| s.to_string()).collect();
    let mut wrong = Vec::new();
    for m in declared.difference(&layers) {
        wrong.push(format!(
            "src/lib.rs declares '{m}', which has no place in LAYERS"
        ));
    }
    for m in layers.difference(&declared) {
        wrong.push(format!(
            "LAYERS names '{m}', which src/lib.rs does not declare"
        ));
    }
    // A file or folder in src/ that lib.rs does not declare is dead or
    // reached by #[path]; either way it has no layer.
    for e in fs::read_dir(src()).into_iter().flatten().flatten() {
        let name = e
            .file_name()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_string();
        let is_rs_or_dir = e.path().is_dir() || e.path().extension().is_some_and(|x| x == "rs");
        if is_rs_or_dir && name != "lib" && name != "main" && !declared.contains(&name) {
            wrong.push(format!("src/{}: not a module src/lib.rs declares", name));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// ARCHITECTURE.md names every folder (`io/engine/`) and every file
/// (`io/engine/uring.rs`) of src/, so the map cannot fall behind the tree.
/// Unit-test files (`tests.rs`, `tests/`) go with the code they test.
#[test]
fn every_source_folder_and_file_is_on_the_map() {
    let doc = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("ARCHITECTURE.md"))
        .unwrap_or_default();
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut missing = BTreeSet::new();
    for f in &files {
        let Ok(rel) = f.strip_prefix(src()) else {
            continue;
        };
        let rel = rel.to_string_lossy().replace('\\', "/");
        if rel.ends_with("tests.rs") || rel.contains("tests/") {
            continue;
        }
        let want = match rel.strip_suffix("mod.rs") {
            Some(folder) => folder.to_string(),
            None => rel.clone(),
        };
        if !doc.contains(&format!("`{want}`")) {
            missing.insert(want);
        }
        // A folder beside its module file (`spec.rs` and `spec/`) too.
        if let Some((folder, _)) = rel.rsplit_once('/') {
            if !doc.contains(&format!("`{folder}/`")) {
                missing.insert(format!("{folder}/"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md does not name these (add each, in backquotes, to the file map):\n{}",
        missing.into_iter().collect::<Vec<_>>().join("\n")
    );
}

#[test]
fn every_source_file_stays_small_enough_to_do_one_job() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let long: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let n = fs::read_to_string(f).ok()?.lines().count();
            (n > MAX_LINES).then(|| format!("{}: {n} lines", f.display()))
        })
        .collect();
    assert!(
        long.is_empty(),
        "files over {MAX_LINES} lines (split them by job):\n{}",
        long.join("\n")
    );
}

/// Functions longer than this are split by what each part owns; the one
/// exception is the measured hot path, io/worker.rs's run_loop, where a call
/// per I/O would show in the figures.
const MAX_FN_LINES: usize = 200;

/// (name, first line, lines) of every `fn` with a body in `code` (comments
/// and strings already blanked), nested ones included.
fn function_spans(code: &str) -> Vec<(String, usize, usize)> {
    let b = code.as_bytes();
    let mut line_at = Vec::with_capacity(b.len() + 1);
    let mut line = 1;
    for &c in b {
        line_at.push(line);
        if c == b'\n' {
            line += 1;
        }
    }
    line_at.push(line);
    let is_ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(off) = code[i..].find("fn") {
        let at = i + off;
        i = at + 2;
        if at > 0 && is_ident(b[at - 1]) {
            continue;
        }
        let rest = &code[at + 2..];
        let trimmed = rest.trim_start();
        let name: String = trimmed
            .bytes()
            .take_while(|&c| is_ident(c))
            .map(char::from)
            .collect();
        if trimmed.len() == rest.len() || name.is_empty() {
            continue;
        }
        // The body opens at the first `{` outside brackets; a `;` first
        // (a trait's declaration, an extern) means there is none.
        let (mut j, mut nest, mut open) = (at + 2, 0i32, None);
        while j < b.len() {
            match b[j] {
                b'(' | b'[' => nest += 1,
                b')' | b']' => nest -= 1,
                b';' if nest == 0 => break,
                b'{' if nest == 0 => {
                    open = Some(j);
                    break;
                }
                _ => {}
            }
            j += 1;
        }
        let Some(open) = open else { continue };
        let (mut k, mut depth) = (open, 0i32);
        while k < b.len() {
            match b[k] {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                _ => {}
            }
            k += 1;
        }
        let end = line_at[k.min(b.len())];
        out.push((name, line_at[at], end - line_at[at] + 1));
    }
    out
}

#[test]
fn no_function_in_src_runs_over_200_lines_but_the_hot_path() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut long = Vec::new();
    for f in &files {
        let text = fs::read_to_string(f).expect("a source file reads");
        let rel = f.strip_prefix(src()).unwrap_or(f);
        let rel = rel.to_string_lossy().replace('\\', "/");
        for (name, line, n) in function_spans(&code_only(&text)) {
            let exempt = rel == "io/worker.rs" && name == "run_loop";
            if n > MAX_FN_LINES && !exempt {
                long.push(format!("src/{rel}:{line}: fn {name}: {n} lines"));
            }
        }
    }
    assert!(
        long.is_empty(),
        "functions over {MAX_FN_LINES} lines (split them by what each part owns):\n{}",
        long.join("\n")
    );
}

#[test]
fn the_function_scanner_measures_bodies_not_braces_in_text() {
    let code = code_only(
        "trait T {\n    fn decl(&self) -> [u8; 2];\n}\nfn short() {}\n\
         pub(crate) fn body<F: Fn(u8)>(f: F) -> u8 {\n    let s = \"}\"; // }\n    \
         if true { 1 } else { 2 }\n}\n",
    );
    let spans = function_spans(&code);
    assert_eq!(
        spans,
        vec![("short".to_string(), 4, 1), ("body".to_string(), 5, 4)]
    );
}

/// Clap stops at the door: only `input/` (which reads each flag group once
/// into its spec part) and `cmd/` (which hands the job on) name
/// `input::args`; `main.rs` parses the command line with it. Everything
/// past the input takes the typed job (`input::job::Job`), so a new flag
/// cannot leak its clap text into the plan, the runners or the outputs.
#[test]
fn only_input_and_cmd_name_the_command_line_types() {
    let args = |p: &Vec<String>| p.len() >= 2 && p[0] == "input" && p[1] == "args";
    // The scanner sees a use, a group and a path in code.
    let me = vec!["plan".to_string()];
    assert!(
        resolved_paths("use crate::input::{args::HostArgs, job};", &me)
            .iter()
            .any(args)
    );
    assert!(
        resolved_paths("fn f(a: &crate::input::args::LiveArgs) {}", &me)
            .iter()
            .any(args)
    );
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut wrong = Vec::new();
    for f in &files {
        let me = module_path(f);
        let front = me.first().map(String::as_str);
        if matches!(front, None | Some("input" | "cmd" | "main" | "lib")) {
            continue;
        }
        let text = fs::read_to_string(f).unwrap_or_default();
        if resolved_paths(&text, &me).iter().any(args) {
            wrong.push(format!("src/{}", f.strip_prefix(src()).unwrap().display()));
        }
    }
    assert!(
        wrong.is_empty(),
        "outside input/ and cmd/, these name input::args (take the spec part its flag group makes):\n{}",
        wrong.join("\n")
    );
}

/// A module's path from the crate root (`src/io/engine/uring.rs` ->
/// io::engine::uring; a `mod.rs` is its folder; `src/spec.rs` and
/// `src/spec/mod.rs` are both `spec`).
fn module_path(file: &Path) -> Vec<String> {
    let Ok(rel) = file.strip_prefix(src()) else {
        return Vec::new();
    };
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| {
            c.as_os_str()
                .to_string_lossy()
                .trim_end_matches(".rs")
                .to_string()
        })
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

/// Every path a use tree names, in full (`a::{b::{c, d}, e}` -> a::b::c,
/// a::b::d, a::e); a `self` item names the path it stands in, an alias
/// (`x as y`) names `x`. `rest` starts after the path's first `::`.
fn use_paths(rest: &str, prefix: &[String], out: &mut Vec<Vec<String>>) {
    let mut path = prefix.to_vec();
    let mut rest = rest.trim_start();
    loop {
        if let Some(group) = rest.strip_prefix('{') {
            let (mut depth, mut start) = (0usize, 0);
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth > 0 => depth -= 1,
                    ',' | '}' if depth == 0 => {
                        let item = group[start..i].trim();
                        if item == "self" {
                            out.push(path.clone());
                        } else if !item.is_empty() {
                            use_paths(item, &path, out);
                        }
                        start = i + 1;
                        if c == '}' {
                            return;
                        }
                    }
                    _ => {}
                }
            }
            return;
        }
        let name = ident(rest);
        if name.is_empty() || name == "self" {
            out.push(path);
            return;
        }
        path.push(name.clone());
        rest = rest.trim_start()[name.len()..].trim_start();
        match rest.strip_prefix("::") {
            Some(r) => rest = r.trim_start(),
            None => {
                out.push(path);
                return;
            }
        }
    }
}

/// The child modules of module `m`: the files and folders in its folder
/// (`src/io/` for io, `src/spec/` for `src/spec.rs`), unit tests aside.
fn children(m: &[String]) -> BTreeSet<String> {
    let dir = m.iter().fold(src(), |d, p| d.join(p));
    let mut out = BTreeSet::new();
    for e in fs::read_dir(dir).into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        let stem = if e.path().is_dir() {
            Some(name.as_str())
        } else {
            name.strip_suffix(".rs")
        };
        if let Some(stem) = stem.filter(|s| *s != "mod" && *s != "tests") {
            out.insert(stem.to_string());
        }
    }
    out
}

/// Every path a file's code names inside the crate, resolved from the
/// crate root: `crate::a::b`, `super::x` (in an inline `mod` block the
/// first `super` only leaves the block), `self::x`, and a bare `child::x`
/// for a child module of the file's own module.
fn resolved_paths(text: &str, me: &[String]) -> Vec<Vec<String>> {
    let code = code_only(text);
    let inline = inline_mod_depths(&code);
    let kids = children(me);
    let mut out = Vec::new();
    let word_start = |i: usize| {
        code[..i]
            .chars()
            .next_back()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == '$'))
    };
    let mut i = 0;
    while i < code.len() {
        let rest = &code[i..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if name.is_empty() {
            i += rest.chars().next().map_or(1, char::len_utf8);
            continue;
        }
        let after = rest[name.len()..].trim_start();
        let tail = after.strip_prefix("::");
        let (Some(tail), true) = (tail, word_start(i) && !code[..i].trim_end().ends_with("::"))
        else {
            i += name.len();
            continue;
        };
        match name.as_str() {
            "crate" => use_paths(tail, &[], &mut out),
            "self" => use_paths(tail, me, &mut out),
            "super" => {
                let (mut up, mut t) = (1, tail.trim_start());
                while let Some(r) = t.strip_prefix("super") {
                    let Some(r) = r.trim_start().strip_prefix("::") else {
                        break;
                    };
                    up += 1;
                    t = r.trim_start();
                }
                let up = up - inline.get(i).copied().unwrap_or(0).min(up);
                if up > 0 && up <= me.len() {
                    use_paths(t, &me[..me.len() - up], &mut out);
                }
                i += rest.len() - t.len();
                continue;
            }
            n if kids.contains(n) => {
                let mut p = me.to_vec();
                p.push(n.to_string());
                use_paths(tail, &p, &mut out);
            }
            _ => {}
        }
        i += name.len();
    }
    out
}

/// The names a module file re-exports from its children (`pub use
/// child::Thing;`, `pub(crate) use self::child::{A, B}`): (name, child).
fn reexports(text: &str, me: &[String]) -> Vec<(String, String)> {
    let code = code_only(text);
    let kids = children(me);
    let mut out = Vec::new();
    for (i, _) in code.match_indices("use ") {
        let head = code[..i].trim_end();
        if !(head.ends_with("pub") || head.ends_with(')')) {
            continue;
        }
        let stmt = &code[i + 4..];
        let stmt = stmt[..stmt.find(';').unwrap_or(stmt.len())].trim_start();
        let mut paths = Vec::new();
        use_paths(stmt.strip_prefix("self::").unwrap_or(stmt), &[], &mut paths);
        for p in paths {
            if let (Some(first), Some(last), true) = (p.first(), p.last(), p.len() > 1) {
                if kids.contains(first) {
                    out.push((last.clone(), first.clone()));
                }
            }
        }
    }
    out
}

/// The arrows between the children of every module, at every depth:
/// folder -> (from child, to child) -> the first file that draws it.
type Arrows = BTreeMap<Vec<String>, BTreeMap<(String, String), String>>;

fn folder_arrows() -> Arrows {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut reexported: BTreeMap<Vec<String>, Vec<(String, String)>> = BTreeMap::new();
    let mut texts = Vec::new();
    for f in &files {
        let me = module_path(f);
        if me.is_empty() || me == ["lib"] || me == ["main"] {
            continue;
        }
        let text = fs::read_to_string(f).unwrap_or_default();
        reexported
            .entry(me.clone())
            .or_default()
            .extend(reexports(&text, &me));
        texts.push((f, me, text));
    }
    let mut arrows = Arrows::new();
    for (f, me, text) in &texts {
        // A unit-test file is its parent's code.
        let from_path: Vec<String> = me.iter().filter(|p| *p != "tests").cloned().collect();
        for to in resolved_paths(text, me) {
            let common = from_path
                .iter()
                .zip(&to)
                .take_while(|(a, b)| a == b)
                .count();
            // Into the file's own children, or to an enclosing module itself.
            if common >= from_path.len() || common >= to.len() {
                continue;
            }
            let folder = from_path[..common].to_vec();
            let from = from_path[common].clone();
            let mut to_child = to[common].clone();
            if !children(&folder).contains(&to_child) {
                // An item of the folder's own module file (its face), or a
                // name it re-exports from a child: then that child.
                match reexported
                    .get(&folder)
                    .and_then(|r| r.iter().find(|(n, _)| *n == to_child))
                {
                    Some((_, child)) => to_child = child.clone(),
                    None => continue,
                }
            }
            if to_child != from {
                let file = f.strip_prefix(src()).unwrap_or(f).display().to_string();
                arrows
                    .entry(folder)
                    .or_default()
                    .entry((from, to_child))
                    .or_insert(file);
            }
        }
    }
    arrows
}

/// The circles (sets of two or more that all reach each other) of one
/// folder's arrows.
fn circles(arrows: &BTreeMap<(String, String), String>) -> Vec<Vec<String>> {
    let nodes: BTreeSet<&String> = arrows.keys().flat_map(|(a, b)| [a, b]).collect();
    let reach = |start: &String| {
        let mut seen = BTreeSet::from([start.clone()]);
        let mut todo = vec![start.clone()];
        while let Some(n) = todo.pop() {
            for (a, b) in arrows.keys() {
                if *a == n && seen.insert(b.clone()) {
                    todo.push(b.clone());
                }
            }
        }
        seen
    };
    let reach: BTreeMap<&String, BTreeSet<String>> = nodes.iter().map(|n| (*n, reach(n))).collect();
    let mut out: Vec<Vec<String>> = Vec::new();
    for n in &nodes {
        let ring: Vec<String> = nodes
            .iter()
            .filter(|m| reach[*n].contains(**m) && reach[**m].contains(*n))
            .map(|m| m.to_string())
            .collect();
        if ring.len() > 1 && !out.contains(&ring) {
            out.push(ring);
        }
    }
    out
}

/// No import circle among the files and subfolders of any folder, at any
/// depth (the layer test above holds the top level to one order; this holds
/// every folder below it to some order). An arrow is a child naming a
/// sibling by any path (`super::x`, `crate::a::x`, a bare `x::` from the
/// module file); an arrow from deeper down counts for the child it comes
/// from (`input/import/fio/job.rs` naming `input::flags` is import -> flags
/// in `input/`), so an arrow back up into an ancestor's sibling that uses
/// the folder closes a circle there. A folder's module file (`mod.rs`) is
/// its face, not a sibling: it declares the children and may use them, and
/// children may use what it defines (a trait, like `io::engine::Engine`);
/// a name it re-exports from a child counts as that child. What a family
/// shares goes in a leaf file, never back into its face. Unit-test files
/// count as their parent.
#[test]
fn no_folder_has_an_import_circle_among_its_files() {
    let mut wrong = Vec::new();
    for (folder, arrows) in folder_arrows() {
        for ring in circles(&arrows) {
            let drawn: Vec<String> = arrows
                .iter()
                .filter(|((a, b), _)| ring.contains(a) && ring.contains(b))
                .map(|((a, b), file)| format!("{a} -> {b} (src/{file})"))
                .collect();
            let place = format!("src/{}/", folder.join("/")).replace("//", "/");
            wrong.push(format!(
                "{place}: {{{}}} use each other: {}",
                ring.join(", "),
                drawn.join("; ")
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "import circles inside a folder (move what they share to a leaf file both use):\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_folder_scanner_resolves_every_path_to_its_module() {
    let me: Vec<String> = ["input", "import", "fio_job"].map(String::from).to_vec();
    let text = "use super::{fio::{Job, Opt}, Notes};\nuse crate::units::{bounds, parse_size};\n\
                fn f() { super::super::flags::x(); crate :: spec::Pattern::Read; }\n\
                mod tests { use super::*; use super::super::render::quote; }\n\
                // super::vdbench::x\nlet s = \"crate::cmd\";";
    let got: BTreeSet<String> = resolved_paths(text, &me)
        .into_iter()
        .map(|p| p.join("::"))
        .collect();
    let want = [
        "input::import::fio::Job",
        "input::import::fio::Opt",
        "input::import::Notes",
        "units::bounds",
        "units::parse_size",
        "input::flags::x",
        "spec::Pattern::Read",
        "input::import::render::quote",
    ];
    assert_eq!(got, set(&want));
    // A circle of three and a pair, apart from a one-way arrow.
    let arrows: BTreeMap<(String, String), String> = [
        ("a", "b"),
        ("b", "c"),
        ("c", "a"),
        ("c", "d"),
        ("e", "f"),
        ("f", "e"),
    ]
    .iter()
    .map(|(a, b)| ((a.to_string(), b.to_string()), String::new()))
    .collect();
    let found: Vec<String> = circles(&arrows).iter().map(|r| r.join(" ")).collect();
    assert_eq!(found, ["a b c", "e f"]);
}

/// The calls that create, truncate, rename or remove anything on disk.
/// Outside `src/io/gate/` none may appear (test code aside): every such
/// change goes through the gate, where the rules against following links
/// and touching what volbench did not make live.
const GATED: &[&str] = &[
    "unlinkat",
    "unlink",
    "renameat",
    "renameat_with",
    "mkdirat",
    "mkdir",
    "rmdir",
    "linkat",
    "hard_link",
    "symlinkat",
    "ftruncate",
    "fallocate",
    "set_len",
    "OpenOptions",
    "remove_file",
    "remove_dir",
    "remove_dir_all",
    "create_dir",
    "create_dir_all",
    "O_CREAT",
    "O_TRUNC",
    "REMOVEDIR",
];

/// Gated calls spelled as a path (`OFlags::CREATE`, `File::create`, `fs::write`).
const GATED_PATHS: &[&str] = &[
    "OFlags::CREATE",
    "OFlags::TRUNC",
    "OFlags::TMPFILE",
    "File::create",
    "File::create_new",
    "fs::write",
    "fs::rename",
    "fs::copy",
];

/// Opening an existing file for writing changes it as surely as a truncate:
/// outside the gate a write access may only be asked of a create that
/// fails on an existing name (`create_new*`), so every write into a file
/// already there is a gate function with its proof (`setdir::open_ours`,
/// `gate::open_named`, `gate::open_own_file`).
const WRITE_OPENS: &[&str] = &[
    "OFlags::WRONLY",
    "OFlags::RDWR",
    "OFlags::APPEND",
    "O_WRONLY",
    "O_RDWR",
    "O_APPEND",
    ".write(true)",
    ".append(true)",
];

/// Crates that create or write files by themselves (a database engine, a
/// memory map of a file, atomic-write helpers): the text of our calls does
/// not show their writes, so using one is allowed only in the named gate
/// wrapper that keeps the gate's rules for it (`FILE_WRITING_WRAPPERS`;
/// ARCHITECTURE.md's gate section says what each keeps).
const FILE_WRITING_CRATES: &[&str] = &[
    "rusqlite",
    "sqlite",
    "libsqlite3_sys",
    "sled",
    "redb",
    "rocksdb",
    "heed",
    "lmdb",
    "memmap2",
    "memmap",
    "mmap_rs",
    "tempfile",
    "atomicwrites",
    "atomic_write_file",
    "fs_extra",
    "fs_err",
    "duckdb",
    "parquet",
];

/// The one file allowed to use each crate of `FILE_WRITING_CRATES`.
const FILE_WRITING_WRAPPERS: &[(&str, &str)] = &[
    // SQLite is handed a path only here, once the file is made new
    // through the gate or proven ours, and its -wal/-shm/-journal too.
    ("rusqlite", "store/sqlite/file.rs"),
    ("rusqlite", "store/sqlite/mod.rs"),
];

/// Far-side back ends: files on another machine, changed through a protocol
/// no local gate can guard; each keeps the gate's rules in what it asks of
/// the server, written in ARCHITECTURE.md's gate section and its own doc.
/// SFTP (the push to a Windows host), and the NFS and SMB clients.
const FAR_SIDE: &[&str] = &["remote/push/sftp.rs", "remote/push/windows/mod.rs"];
// NFS and SMB requests change a server's files, not this host's: the
// protocol clients keep the gate's rules in what they ask (creates that are
// GUARDED or EXCLUSIVE, FILE_CREATE, a rename that never replaces, LOOKUPs
// that never follow a symlink; `proto/nfs/ops.rs`).
const FAR_SIDE_FOLDERS: &[&str] = &["proto/nfs/", "proto/smb/"];

fn write_opens(code: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (n, line) in code.lines().enumerate() {
        // A create-exclusive call may ask for write access: it cannot
        // open what is there.
        if line.contains("create_new") {
            continue;
        }
        for w in WRITE_OPENS {
            for (i, _) in line.match_indices(w) {
                let after = line[i + w.len()..].chars().next();
                if !after.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                    found.push(format!("line {}: {w}", n + 1));
                }
            }
        }
    }
    found
}

/// Paths of a crate in use: `use NAME::`, `NAME::x` in an expression,
/// `extern crate NAME`.
fn crate_uses(code: &str, name: &str) -> Vec<String> {
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    let mut found = Vec::new();
    for (n, line) in code.lines().enumerate() {
        for (i, _) in line.match_indices(name) {
            let before = line[..i].chars().next_back();
            let rest = &line[i + name.len()..];
            let pathy = rest.starts_with("::") || line[..i].trim_end().ends_with("extern crate");
            if pathy && !word(before) && before != Some(':') {
                found.push(format!("line {}: {name}", n + 1));
            }
        }
    }
    found
}

/// The code with every `#[cfg(test)]` item blanked (a `mod tests { }`, a
/// test-only function or `use`), and the names of test-only module files
/// it declares (`#[cfg(test)] mod snapshot;`).
fn without_test_items(code: &str) -> (String, Vec<String>) {
    let mut out = code.to_string();
    let mut test_mods = Vec::new();
    let mut from = 0;
    while let Some(at) = out[from..].find("#[cfg(test)]").map(|p| p + from) {
        let b = out.as_bytes();
        let mut i = at + "#[cfg(test)]".len();
        let mut depth = 0usize;
        let mut end = b.len();
        while i < b.len() {
            match b[i] {
                b'{' => depth += 1,
                b'}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        end = i + 1;
                        break;
                    }
                }
                b';' if depth == 0 => {
                    let item = out[at + "#[cfg(test)]".len()..i].trim();
                    if let Some(name) = item
                        .strip_prefix("pub(crate) ")
                        .unwrap_or(item)
                        .strip_prefix("mod ")
                    {
                        test_mods.push(ident(name));
                    }
                    end = i + 1;
                    break;
                }
                _ => {}
            }
            i += 1;
        }
        let blank: String = out[at..end]
            .chars()
            .map(|c| if c == '\n' { '\n' } else { ' ' })
            .collect();
        out.replace_range(at..end, &blank);
        from = end;
    }
    (out, test_mods)
}

fn gated_calls(code: &str) -> Vec<String> {
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    let mut found = Vec::new();
    for (n, line) in code.lines().enumerate() {
        for g in GATED.iter().chain(GATED_PATHS) {
            for (i, _) in line.match_indices(g) {
                let before = line[..i].chars().next_back();
                let after = line[i + g.len()..].chars().next();
                // A name must stand alone (`xfs::write`, `rename_all` are
                // others); the gate's own functions are the way to do it.
                let through_gate = line[..i].ends_with("gate::");
                if !word(after) && !word(before) && !through_gate {
                    found.push(format!("line {}: {g}", n + 1));
                }
            }
        }
    }
    found
}

#[test]
fn only_the_gate_changes_the_file_system() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let gate = src().join("io/gate");
    // The Windows implementations of these calls (what rustix is on Linux):
    // only the gate calls them, through `io::sys`.
    let windows_sys = src().join("io/sys/windows");
    let mut test_files = BTreeSet::new();
    let mut found = Vec::new();
    let mut scanned = Vec::new();
    for f in &files {
        let code = code_only(&fs::read_to_string(f).unwrap_or_default());
        let (code, test_mods) = without_test_items(&code);
        let dir = if f
            .file_name()
            .is_some_and(|n| n == "mod.rs" || n == "lib.rs")
        {
            f.parent().map(Path::to_path_buf)
        } else {
            f.parent()
                .map(|p| p.join(f.file_stem().unwrap_or_default()))
        };
        if let Some(dir) = dir {
            for m in test_mods {
                test_files.insert(dir.join(format!("{m}.rs")));
                test_files.insert(dir.join(&m).join("mod.rs"));
            }
        }
        scanned.push((f.clone(), code));
    }
    for (f, code) in scanned {
        let rel = f
            .strip_prefix(src())
            .unwrap_or(&f)
            .to_string_lossy()
            .replace('\\', "/");
        // SFTP requests change a Windows host's files, not ours: no local
        // gate can guard them, so the push keeps the gate's rules in what
        // it asks (`remote/push/windows/`: no link followed, create-new, a
        // rename that never replaces).
        let far_side =
            FAR_SIDE.contains(&rel.as_str()) || FAR_SIDE_FOLDERS.iter().any(|d| rel.starts_with(d));
        let test_code =
            test_files.contains(&f) || rel.ends_with("tests.rs") || rel.contains("tests/");
        if test_code {
            continue;
        }
        for c in FILE_WRITING_CRATES {
            let wrapper = FILE_WRITING_WRAPPERS
                .iter()
                .any(|(k, file)| k == c && *file == rel);
            if !wrapper {
                for hit in crate_uses(&code, c) {
                    found.push(format!(
                        "src/{rel} {hit} (a crate that writes files itself: only its named gate wrapper may use it)"
                    ));
                }
            }
        }
        if f.starts_with(&gate) || f.starts_with(&windows_sys) || far_side {
            continue;
        }
        for hit in gated_calls(&code) {
            found.push(format!("src/{rel} {hit}"));
        }
        for hit in write_opens(&code) {
            found.push(format!(
                "src/{rel} {hit} (a write-open of an existing file)"
            ));
        }
    }
    assert!(
        found.is_empty(),
        "these change the file system outside src/io/gate/ (call the gate instead):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_gate_check_sees_write_opens_and_file_writing_crates() {
    let code = code_only(
        "fn f() { let fd = openat(d, n, OFlags::RDWR | OFlags::NOFOLLOW, m); }\n\
         fn g() { gate::create_new_at(d, n, OFlags::WRONLY, 0o644); }\n\
         fn h() { std::fs::File::options().write(true).open(p); let x = OFlags::RDWR_ISH; }\n\
         fn i() { let a = libc::O_APPEND; } // OFlags::WRONLY in a comment",
    );
    assert_eq!(
        write_opens(&code),
        vec![
            "line 1: OFlags::RDWR".to_string(),
            "line 3: .write(true)".to_string(),
            "line 4: O_APPEND".to_string()
        ]
    );
    let code = code_only(
        "use rusqlite::Connection;\nfn f() { let m = memmap2::MmapMut::map_mut(&f); }\n\
         fn g() { let s = \"rusqlite::x\"; my_rusqlite::y(); a::rusqlite::z(); }",
    );
    assert_eq!(
        crate_uses(&code, "rusqlite"),
        vec!["line 1: rusqlite".to_string()]
    );
    assert_eq!(
        crate_uses(&code, "memmap2"),
        vec!["line 2: memmap2".to_string()]
    );
}

#[test]
fn the_gate_check_sees_calls_and_spares_tests() {
    let code = code_only(
        "fn f() { rustix::fs::unlinkat(d, n, AtFlags::empty()); let o = OFlags::CREATE; }\n\
         fn g() { gate::unlink_at(d, n); let s = \"unlinkat\"; } // fs::write\n\
         #[cfg(test)]\nmod tests { fn t() { std::fs::write(p, b).unwrap(); } }\n\
         #[cfg(test)]\nmod snapshot;\nfn h() { std::fs::remove_dir_all(p); }",
    );
    let (code, mods) = without_test_items(&code);
    assert_eq!(mods, vec!["snapshot".to_string()]);
    assert_eq!(
        gated_calls(&code),
        vec![
            "line 1: unlinkat".to_string(),
            "line 1: OFlags::CREATE".to_string(),
            "line 7: remove_dir_all".to_string()
        ]
    );
}

/// Files whose engine names are another tool's vocabulary, not volbench's
/// engines: fio's `ioengine=` values happen to share the spelling, and so
/// does the kernel's file system type of an NFS mount (`nfs` in
/// /proc/self/mountinfo), which the counters, the capture and the report's
/// fixtures read.
const FOREIGN_ENGINE_NAMES: &[&str] = &[
    "input/import/fio/job.rs",
    "input/import/fio/parse.rs",
    "input/import/fio/workload.rs",
    "io/capture/mod.rs",
    "io/counters/mod.rs",
    "io/counters/nfs.rs",
    "report/fixtures.rs",
];

/// The code with every `#[cfg(test)]` module blanked out: tests may name
/// engines as a user types them.
fn without_test_modules(code: &str) -> String {
    let mut out = code.to_string();
    let mut from = 0;
    while let Some(at) = out[from..].find("#[cfg(test)]").map(|p| p + from) {
        let Some(open) = out[at..].find('{').map(|p| p + at) else {
            break;
        };
        let header = &out[at..open];
        // `#[cfg(test)] mod tests;` is a file of its own, skipped by name.
        if !header.contains("mod ") || header.contains(';') {
            from = open;
            continue;
        }
        let mut depth = 0usize;
        let mut end = out.len();
        for (i, c) in out[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + i + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        // Byte for byte, so the offsets after it stay where they were.
        let blank: String = out[at..end]
            .chars()
            .flat_map(|c| {
                let fill = if c == '\n' { '\n' } else { ' ' };
                std::iter::repeat_n(fill, c.len_utf8())
            })
            .collect();
        out.replace_range(at..end, &blank);
        from = end;
    }
    out
}

/// Every source file of `src` but the test files, by its path under
/// `src`, with comments and test modules blanked and string literals kept.
fn product_code() -> Vec<(String, String)> {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    files
        .iter()
        .filter_map(|f| {
            let rel = f.strip_prefix(src()).ok()?.to_string_lossy().into_owned();
            if rel.ends_with("/tests.rs") || rel.contains("/tests/") {
                return None;
            }
            let text = fs::read_to_string(f).ok()?;
            Some((rel, without_test_modules(&blank_out(&text, false))))
        })
        .collect()
}

/// Every engine is named in its row of `spec::ENGINES` alone: the rest of
/// the program asks the table, so a new engine is its file plus a row, and
/// no name can silently fall through to another engine.
#[test]
fn no_engine_is_named_outside_the_engine_table() {
    let mut found = Vec::new();
    for (rel, code) in product_code() {
        if rel == "spec/engine.rs" || FOREIGN_ENGINE_NAMES.contains(&rel.as_str()) {
            continue;
        }
        for row in volbench::spec::ENGINES {
            let quoted = format!("\"{}\"", row.name);
            for (at, _) in code.match_indices(&quoted) {
                let line = code[..at].matches('\n').count() + 1;
                found.push(format!("src/{rel}:{line}: {quoted}"));
            }
        }
    }
    assert!(
        found.is_empty(),
        "engine names outside spec/engine.rs (ask the table: EngineKind::name, caps):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_engine_name_scanner_sees_literals_not_comments_or_tests() {
    let text = r##"
// "psync" in a comment
/// "io_uring" in a doc
let a = "null";
let b = r#"psync"#;
#[cfg(test)]
mod tests {
    fn f() { let c = "psync"; let é = 'é'; }
}
let d = "psync";
"##;
    let code = without_test_modules(&blank_out(text, false));
    let hits: Vec<usize> = ["\"null\"", "\"psync\"", "\"io_uring\""]
        .iter()
        .map(|q| code.matches(q).count())
        .collect();
    assert_eq!(hits, [1, 2, 0], "{code}");
}

/// What writes to stdout or stderr besides `src/console.rs`: the std
/// macros panic when the write fails (`> /dev/full`, a dead terminal) and
/// the process dies with its results; a handle of its own would bypass the
/// one record of a failed or closed stdout.
const CONSOLE_ONLY: &[&str] = &[
    "println!",
    "print!",
    "eprintln!",
    "eprint!",
    "dbg!",
    "io::stdout(",
    "io::stderr(",
];

fn console_writes(code: &str) -> Vec<String> {
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    let mut found = Vec::new();
    for (n, line) in code.lines().enumerate() {
        for w in CONSOLE_ONLY {
            for (i, _) in line.match_indices(w) {
                if !word(line[..i].chars().next_back()) {
                    found.push(format!("line {}: {w}", n + 1));
                }
            }
        }
    }
    found
}

/// Every byte the product prints goes through `console` (`outln!`,
/// `errln!`, `console::Stdout`), which never panics on a failed write and
/// records a closed or failed stdout (test code aside, and `main.rs`, which
/// calls the console by its functions).
#[test]
fn only_the_console_writes_to_stdout_and_stderr() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut found = Vec::new();
    for f in &files {
        let rel = f
            .strip_prefix(src())
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let test_file = rel.ends_with("tests.rs") || rel.contains("tests/");
        if rel == "console.rs" || test_file {
            continue;
        }
        let code = code_only(&fs::read_to_string(f).unwrap());
        let (code, _) = without_test_items(&code);
        for hit in console_writes(&code) {
            found.push(format!("src/{rel} {hit}"));
        }
    }
    assert!(
        found.is_empty(),
        "these write to stdout or stderr outside src/console.rs (use console::outln!, \
         errln!, or console::Stdout):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_console_check_sees_macros_and_handles_not_their_names() {
    let code = code_only(
        "fn f() { println!(\"x\"); console::outln!(\"y\"); }\n\
         fn g() { let o = std::io::stdout(); eprint!(\"z\"); } // println!\n\
         fn h() { let s = \"eprintln!\"; writeln!(w, \"ok\"); my_print!(); }",
    );
    assert_eq!(
        console_writes(&code),
        ["line 1: println!", "line 2: eprint!", "line 2: io::stdout("]
    );
}

/// Where a caller tells errors apart in `src` (test modules aside): a match
/// guard on an `Err` that reads the error's words, or a test of a
/// `VbError`'s message against a word (`code` has its comments blanked,
/// its strings kept).
fn branches_on_words(code: &str) -> Vec<usize> {
    let mut found = Vec::new();
    let line_of = |at: usize| code[..at].matches('\n').count() + 1;
    for (at, _) in code.match_indices("Err(") {
        let rest = &code[at..];
        let Some(close) = rest.find(')') else {
            continue;
        };
        let after = rest[close + 1..].trim_start();
        if !after.starts_with("if ") {
            continue;
        }
        let guard = &after[..after.find("=>").unwrap_or(after.len())];
        if [".contains(", ".starts_with(", ".ends_with(", "find("]
            .iter()
            .any(|w| guard.contains(w))
        {
            found.push(line_of(at));
        }
    }
    // Against a word of its own (a literal): whether a message already
    // names a path or a key it is given, to say it once, is wording.
    for w in [
        ".message.contains(\"",
        ".message.starts_with(\"",
        ".message.ends_with(\"",
    ] {
        found.extend(code.match_indices(w).map(|(at, _)| line_of(at)));
    }
    found
}

/// A caller that must tell one failure from another gets it typed (a
/// status, a kind, an `Option` for "taken"), never by reading the words,
/// which change with any rewording: NFS's "the name is taken" and "NOENT"
/// were read that way until this test.
#[test]
fn no_caller_branches_on_an_error_s_words() {
    let mut found = Vec::new();
    for (rel, code) in product_code() {
        for line in branches_on_words(&code) {
            found.push(format!("src/{rel}:{line}"));
        }
    }
    assert!(
        found.is_empty(),
        "errors told apart by their words (type them: a status, a kind):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_error_word_scanner_sees_guards_and_message_tests() {
    let code = "match r {\n    Err(e) if e.contains(\"NOENT\") => {}\n    Err(e) if e.is(2) => {}\n}\nif e.message.contains(\"x\") {}\nif e.message.contains(&shown) {}\n";
    assert_eq!(branches_on_words(code), [2, 5]);
    assert!(branches_on_words("Err(e) if e.kind() == K => {}").is_empty());
}
