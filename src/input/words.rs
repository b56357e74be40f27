//! Splitting a command line into words like a POSIX shell (quotes and
//! backslashes), for the commands a user gives as one string
//! (`--launcher`, `--hosts-from`) that are run without a shell.

/// Splits a command line into words like a POSIX shell does (quotes and
/// backslashes), without expanding anything.
pub(crate) fn split_words(text: &str) -> std::result::Result<Vec<String>, String> {
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
    fn command_lines_split_like_a_shell() {
        assert_eq!(
            split_words(r#"ssh -F "/tmp/my cfg" -o 'ProxyJump=a b' x\ y"#).unwrap(),
            ["ssh", "-F", "/tmp/my cfg", "-o", "ProxyJump=a b", "x y"]
        );
        assert!(split_words("ssh 'oops").is_err());
        assert_eq!(split_words("  ").unwrap(), Vec::<String>::new());
    }
}
