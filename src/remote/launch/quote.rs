//! Quoting for the remote shell: the one leaf both the launcher (its
//! command lines) and the push (`push/shell/`) use.

/// Quotes one word for a POSIX shell: `it's` -> `'it'\''s'`.
pub(crate) fn quote(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+=:,@%".contains(c))
    {
        return word.to_string();
    }
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// Words as one line a POSIX shell splits back into them.
pub(crate) fn line(words: &[String]) -> String {
    words.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" ")
}

/// Quotes a remote path, letting a leading `~/` mean the remote home.
pub(crate) fn quote_remote_path(path: &str) -> String {
    match path.strip_prefix("~/") {
        Some(rest) => format!("\"$HOME\"/{}", quote(rest)),
        None if path == "~" => "\"$HOME\"".to_string(),
        None => quote(path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_survives_a_shell() {
        for w in ["plain", "with space", "it's", "$HOME", "a;rm -rf /", ""] {
            let q = quote(w);
            let out = std::process::Command::new("sh")
                .arg("-c")
                .arg(format!("printf %s {q}"))
                .output()
                .unwrap();
            assert_eq!(String::from_utf8_lossy(&out.stdout), w, "{q}");
        }
        assert_eq!(quote_remote_path("~/.cache/v b"), "\"$HOME\"/'.cache/v b'");
    }
}
