//! An untrusted JSON text with its strings cleaned in the text itself, so
//! it can be deserialized straight into typed structures: going through a
//! `serde_json::Value` first costs up to 80 times the file's size (a
//! one-key object is a whole B-tree node), which let a hostile result.json
//! under the read cap exhaust memory.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

/// `json` with every control character inside a string (raw, or written as
/// an escape such as `\n` or `\u001b`) replaced by `?`, and every string
/// longer than `max` characters cut to `max` followed by `...`: the same
/// cleaning as `check::clean`, keys included. Text that is not valid JSON
/// is copied as it is, for the parser to refuse with its own message.
pub(crate) fn clean_json_strings(json: &[u8], max: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(json.len());
    let mut i = 0;
    while let Some(&b) = json.get(i) {
        out.push(b);
        i += 1;
        if b == b'"' {
            i = string(json, i, max, &mut out);
        }
    }
    out
}

/// One string's content from `i` (just past its opening quote) up to and
/// including its closing quote; returns the index past it.
fn string(json: &[u8], mut i: usize, max: usize, out: &mut Vec<u8>) -> usize {
    let mut chars = 0usize;
    let mut cut = false;
    while let Some(&b) = json.get(i) {
        if b == b'"' {
            if cut {
                out.extend_from_slice(b"...");
            }
            out.push(b);
            return i + 1;
        }
        // The length of this character in the text, and whether it is a
        // control character.
        let (len, control) = if b == b'\\' {
            escape(json, i)
        } else if b == 0x7f {
            (1, true)
        } else if b == 0xc2 && json.get(i + 1).is_some_and(|c| (0x80..=0x9f).contains(c)) {
            (2, true)
        } else {
            (utf8_len(b), false)
        };
        let len = len.min(json.len() - i);
        if chars == max {
            cut = true;
        }
        if !cut {
            chars += 1;
            if control {
                out.push(b'?');
            } else {
                out.extend_from_slice(json.get(i..i + len).unwrap_or_default());
            }
        }
        i += len;
    }
    i
}

/// The length of the escape at `i` and whether it stands for a control
/// character; a malformed one is passed on whole for the parser to refuse.
fn escape(json: &[u8], i: usize) -> (usize, bool) {
    match json.get(i + 1) {
        Some(b'b' | b'f' | b'n' | b'r' | b't') => (2, true),
        Some(b'u') => match hex4(json, i + 2) {
            Some(u) if (0xd800..0xdc00).contains(&u) => {
                // A surrogate pair is one character, never a control one.
                let low = (json.get(i + 6) == Some(&b'\\') && json.get(i + 7) == Some(&b'u'))
                    .then(|| hex4(json, i + 8))
                    .flatten();
                match low {
                    Some(l) if (0xdc00..0xe000).contains(&l) => (12, false),
                    _ => (6, false),
                }
            }
            Some(u) => (6, u < 0x20 || (0x7f..=0x9f).contains(&u)),
            None => (2, false),
        },
        Some(_) => (2, false),
        None => (1, false),
    }
}

fn hex4(json: &[u8], i: usize) -> Option<u32> {
    let digits = std::str::from_utf8(json.get(i..i + 4)?).ok()?;
    if !digits.bytes().all(|d| d.is_ascii_hexdigit()) {
        return None;
    }
    u32::from_str_radix(digits, 16).ok()
}

/// Bytes of the UTF-8 character starting with `b` (1 for a stray byte, so
/// invalid text still advances and reaches the parser's refusal).
fn utf8_len(b: u8) -> usize {
    match b {
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf7 => 4,
        _ => 1,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    fn cleaned(json: &str, max: usize) -> String {
        String::from_utf8(clean_json_strings(json.as_bytes(), max)).unwrap()
    }

    #[test]
    fn control_characters_in_strings_become_question_marks() {
        assert_eq!(
            cleaned(r#"{"a\u001bb":"\u001b[31mred\n","c":"\u0085x\u007f"}"#, 100),
            r#"{"a?b":"?[31mred?","c":"?x?"}"#
        );
        assert_eq!(
            cleaned("[\"\u{9b}2J\u{7f}\"]", 100),
            "[\"?2J?\"]",
            "raw C1 controls and DEL"
        );
        // Escapes that are not controls stay as written.
        let keep = r#"["q\"uo\\te\/", "\u00e9\ud83d\ude00", "é😀"]"#;
        assert_eq!(cleaned(keep, 100), keep);
        let v: Vec<String> =
            serde_json::from_slice(&clean_json_strings(keep.as_bytes(), 100)).unwrap();
        assert_eq!(v, ["q\"uo\\te/", "é😀", "é😀"]);
    }

    #[test]
    fn long_strings_are_cut_at_max_characters() {
        assert_eq!(cleaned(r#"["abcdef","abc"]"#, 3), r#"["abc...","abc"]"#);
        // Characters, not bytes: an escape or a multi-byte letter is one.
        assert_eq!(cleaned(r#"["\u00e9éé\"x"]"#, 3), r#"["\u00e9éé..."]"#);
        assert_eq!(cleaned(r#"["\ud83d\ude00x"]"#, 1), r#"["\ud83d\ude00..."]"#);
    }

    #[test]
    fn text_that_is_not_json_reaches_the_parser_unchanged() {
        for bad in [
            "\"\\",
            "\"abc",
            "[\"\\u12\"]",
            "[\"\\ud800\"]",
            "[\"\\x\"]",
            "{]",
        ] {
            assert_eq!(cleaned(bad, 100), bad);
        }
    }
}
