//! Splitting a command line into words, for the commands a user gives as
//! one string (`--launcher`, `--hosts-from`) that are run without a shell:
//! as a POSIX shell does on Linux, as Windows programs read their command
//! line on Windows, where `\` is a path's separator and not an escape.

/// Splits a command line into words the way this system's users write
/// them, without expanding anything.
pub(crate) fn split_words(text: &str) -> std::result::Result<Vec<String>, String> {
    if cfg!(windows) {
        split_windows(text)
    } else {
        split_posix(text)
    }
}

/// Words as `CommandLineToArgvW` and the C runtime read them: `"` groups,
/// backslashes are literal except before a `"` (2n of them and a quote: n
/// backslashes, the quote groups; 2n+1: n and a literal quote). A quote
/// left open is refused rather than run to the end, as a POSIX one is.
///
/// By hand: the rule is a dozen lines, and the tests of `remote/launch/cmdline.rs`
/// read the lines volbench writes for a Windows host back with it.
pub(crate) fn split_windows(text: &str) -> std::result::Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut started = false;
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let mut n = 1;
                while chars.next_if_eq(&'\\').is_some() {
                    n += 1;
                }
                if chars.peek() == Some(&'"') {
                    cur.push_str(&"\\".repeat(n / 2));
                    if n % 2 == 1 {
                        cur.push('"');
                        chars.next();
                    }
                } else {
                    cur.push_str(&"\\".repeat(n));
                }
                started = true;
            }
            '"' => {
                quoted = !quoted;
                started = true;
            }
            ' ' | '\t' if !quoted => {
                if started {
                    words.push(std::mem::take(&mut cur));
                    started = false;
                }
            }
            c => {
                cur.push(c);
                started = true;
            }
        }
    }
    if quoted {
        return Err("a \" without its closing \"".into());
    }
    if started {
        words.push(cur);
    }
    Ok(words)
}

/// Words as a POSIX shell splits them (quotes and backslashes).
pub(crate) fn split_posix(text: &str) -> std::result::Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => cur.push(c),
                        None => return Err("a ' without its closing '".into()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\' | '$' | '`')) => cur.push(c),
                            Some(c) => {
                                cur.push('\\');
                                cur.push(c);
                            }
                            None => return Err("a \" without its closing \"".into()),
                        },
                        Some(c) => cur.push(c),
                        None => return Err("a \" without its closing \"".into()),
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.next() {
                    Some(c) => cur.push(c),
                    None => return Err("a \\ at the end".into()),
                }
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_command_lines_keep_their_backslashes() {
        assert_eq!(
            split_windows(r#"cmd /c C:\vb\launch.bat {host} "C:\Program Files\x" a\\\"b c\\"#)
                .unwrap(),
            [
                "cmd",
                "/c",
                r"C:\vb\launch.bat",
                "{host}",
                r"C:\Program Files\x",
                r#"a\"b"#,
                r"c\\"
            ]
        );
        assert_eq!(
            split_windows(r#"ssh -F "C:\Users\me\.ssh\config" {host}"#).unwrap(),
            ["ssh", "-F", r"C:\Users\me\.ssh\config", "{host}"]
        );
        assert_eq!(
            split_windows(r#""" x"#).unwrap(),
            ["", "x"],
            "an empty word"
        );
        assert!(split_windows(r#"ssh "oops"#).is_err());
        assert_eq!(split_windows(" \t ").unwrap(), Vec::<String>::new());
    }

    #[test]
    fn command_lines_split_like_a_shell() {
        assert_eq!(
            split_posix(r#"ssh -F "/tmp/my cfg" -o 'ProxyJump=a b' x\ y"#).unwrap(),
            ["ssh", "-F", "/tmp/my cfg", "-o", "ProxyJump=a b", "x y"]
        );
        assert!(split_posix("ssh 'oops").is_err());
        assert_eq!(split_posix("  ").unwrap(), Vec::<String>::new());
    }
}
