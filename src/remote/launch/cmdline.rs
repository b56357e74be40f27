//! Command lines for a Windows host's cmd.exe: Windows' OpenSSH hands the
//! remote command to `cmd.exe /c`, which reads it once (`^` escapes, `%VAR%`
//! expansion, `& | < > ( )`), and the program then splits what is left into
//! its arguments with the C runtime's rules (`CommandLineToArgvW`). Each
//! argument is quoted for the second reader, then every character the
//! first one treats specially is escaped with `^`, quotes included, so cmd
//! never sees a quoted region and one rule holds for the whole line.

/// What cmd.exe acts on outside quotes (`!` only under delayed expansion,
/// escaped anyway).
const CMD_SPECIAL: &str = "()%!^\"<>&|";

/// One argument as `CommandLineToArgvW` reads it back: bare when it has no
/// space, tab or quote; else in quotes, with the backslashes before a quote
/// (or before the closing one) doubled.
pub(crate) fn quote_arg(arg: &str) -> String {
    if !arg.is_empty() && !arg.contains([' ', '\t', '\n', '\x0b', '"']) {
        return arg.to_string();
    }
    let mut out = String::from("\"");
    let mut slashes = 0usize;
    for c in arg.chars() {
        match c {
            '\\' => slashes += 1,
            '"' => {
                out.push_str(&"\\".repeat(2 * slashes + 1));
                out.push('"');
                slashes = 0;
            }
            _ => {
                out.push_str(&"\\".repeat(slashes));
                out.push(c);
                slashes = 0;
            }
        }
    }
    out.push_str(&"\\".repeat(2 * slashes));
    out.push('"');
    out
}

/// `text` with every cmd.exe special character escaped by `^`.
fn caret(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 2);
    for c in text.chars() {
        if CMD_SPECIAL.contains(c) {
            out.push('^');
        }
        out.push(c);
    }
    out
}

/// Why `program` cannot be run by a cmd.exe line: cmd finds the program by
/// its first word, where a `^` escape is not undone before the lookup, so
/// the program is plainly quoted and must hold nothing cmd would act on
/// inside quotes (`%` expands there) or that ends the quotes.
pub(crate) fn bad_program(program: &str) -> Option<String> {
    let shown = crate::units::bounds::one_line(program);
    if program.is_empty() {
        return Some("the volbench path for a Windows host is empty".into());
    }
    if program.starts_with('~') {
        return Some(format!(
            "'{shown}' starts with '~', which cmd.exe on a Windows host does not expand: name \
             the path to volbench.exe (or volbench on its PATH)"
        ));
    }
    if let Some(c) = program
        .chars()
        .find(|c| c.is_control() || matches!(c, '"' | '%' | '!'))
    {
        return Some(format!(
            "'{shown}' holds {c:?}, which cmd.exe on a Windows host would act on inside a \
             quoted program path: name volbench.exe by a path without it"
        ));
    }
    None
}

/// The line cmd.exe runs as `program args...`, each argument arriving as
/// given. `program` must have passed `bad_program`.
pub(crate) fn line(program: &str, args: &[String]) -> String {
    // Bare when nothing in it needs quotes, so a line without hostile
    // arguments holds no quote at all (Wine's cmd, which the tests drive,
    // gets its line through argv, where a quote would be escaped).
    let bare = program
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || ":\\/._-".contains(c));
    let mut out = if bare {
        program.to_string()
    } else {
        format!("\"{program}\"")
    };
    for a in args {
        out.push(' ');
        out.push_str(&caret(&quote_arg(a)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// cmd.exe's first reading of a line with no quoted region (`line`
    /// makes none after the program): `^` takes the next character
    /// literally; `%NAME%` of a defined variable would expand, an
    /// unescaped `& | < > ( )` would act. Returns what the program gets,
    /// or None when cmd would act on something.
    fn cmd_reads(line: &str, env: &[(&str, &str)]) -> Option<String> {
        // First, %NAME% of a defined variable expands, quoted or not; the
        // name runs to the next '%', carets and all.
        for (at, _) in line.match_indices('%') {
            if let Some(end) = line[at + 1..].find('%') {
                let name = &line[at + 1..at + 1 + end];
                if env.iter().any(|(k, _)| k.eq_ignore_ascii_case(name)) {
                    return None;
                }
            }
        }
        let mut out = String::new();
        let mut chars = line.chars();
        let mut quoted = false;
        while let Some(c) = chars.next() {
            if c == '"' {
                quoted = !quoted;
                out.push(c);
            } else if quoted {
                out.push(c);
            } else if c == '^' {
                out.push(chars.next()?);
            } else if "&|<>()".contains(c) {
                return None;
            } else {
                out.push(c);
            }
        }
        Some(out)
    }

    /// `CommandLineToArgvW`'s split of the arguments after the program.
    fn argv_of(text: &str) -> Vec<String> {
        crate::input::words::split_windows(text).expect("every quote closed")
    }

    const HOSTILE: [&str; 14] = [
        "plain",
        "with space",
        "",
        "a&calc.exe",
        "x | del C:\\*",
        "%PATH%",
        "%USERPROFILE%\\x",
        "^caret^",
        "say \"hi\"",
        "trailing\\",
        "C:\\dir with space\\",
        "back\\\\\"slash",
        "(paren) <in> >out !bang!",
        "tab\there",
    ];

    #[test]
    fn hostile_arguments_reach_the_program_as_given_through_cmd() {
        let env = [("PATH", "C:\\Windows"), ("USERPROFILE", "C:\\Users\\u")];
        for w in HOSTILE {
            let l = line(r"C:\Program Files (x86)\volbench\volbench.exe", &[w.into()]);
            let read = cmd_reads(&l, &env).unwrap_or_else(|| panic!("cmd acts on {l}"));
            let (prog, rest) = read.split_at(read.find(".exe\"").unwrap() + 5);
            assert_eq!(prog, r#""C:\Program Files (x86)\volbench\volbench.exe""#);
            assert_eq!(argv_of(rest), [w.to_string()], "{l}");
        }
        let all: Vec<String> = HOSTILE.iter().map(|s| s.to_string()).collect();
        let l = line(r"C:\vb\volbench.exe", &all);
        assert!(
            l.starts_with(r"C:\vb\volbench.exe "),
            "a plain path stays bare: {l}"
        );
        let read = cmd_reads(&l, &env).unwrap();
        assert_eq!(argv_of(&read[r"C:\vb\volbench.exe".len()..]), all, "{l}");
    }

    #[test]
    fn quoting_follows_the_c_runtime_rules() {
        assert_eq!(quote_arg("agent"), "agent");
        assert_eq!(quote_arg(""), "\"\"");
        assert_eq!(quote_arg("a b"), "\"a b\"");
        assert_eq!(quote_arg("a\\b"), "a\\b", "no quote: backslashes stay");
        assert_eq!(quote_arg("d\\ x\\"), "\"d\\ x\\\\\"");
        assert_eq!(quote_arg("q\""), "\"q\\\"\"");
        assert_eq!(line("vb", &["a&b".into()]), "vb a^&b");
        assert_eq!(line("C:\\a b\\vb", &[]), "\"C:\\a b\\vb\"");
    }

    #[test]
    fn a_program_path_cmd_would_change_is_refused_naming_it() {
        for p in [
            "%TEMP%\\vb.exe",
            "C:\\a\"b",
            "~/volbench",
            "",
            "C:\\x!y\\vb.exe",
            "a\nb",
        ] {
            let why = bad_program(p).unwrap_or_else(|| panic!("{p:?} accepted"));
            assert!(!why.contains('\n'), "{why}");
        }
        for p in [
            "volbench",
            r"C:\Program Files (x86)\vb & co\volbench.exe",
            r"D:\vb^1\volbench.exe",
        ] {
            assert_eq!(bad_program(p), None, "{p}");
        }
    }
}
