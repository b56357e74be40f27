//! The text rules the `nfs://` and `smb://` parsers share: percent
//! escapes both ways and the `HOST[:PORT]` authority. Written here rather
//! than with the `url` crate because these URLs are stricter than a
//! generic URL (one name per path component, no zone ids, no user where
//! NFS has none) and each parser must say which rule a URL broke in words
//! a user can act on.

/// A part of a URL with what the parsers would read as syntax (and what
/// a one-line message could not show: control characters, white space
/// other than a plain space, which stays readable) escaped, so what is
/// shown parses back to the same name.
pub(crate) struct Escaped<'a>(pub(crate) &'a str);

impl std::fmt::Display for Escaped<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for ch in self.0.chars() {
            if "%#?/@:&[]\\".contains(ch) || ch.is_control() || (ch.is_whitespace() && ch != ' ') {
                let mut utf8 = [0u8; 4];
                for b in ch.encode_utf8(&mut utf8).bytes() {
                    write!(f, "%{b:02X}")?;
                }
            } else {
                write!(f, "{ch}")?;
            }
        }
        Ok(())
    }
}

/// `s` with its percent escapes decoded; the result must be UTF-8.
pub(crate) fn decode(s: &str) -> Result<String, String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| "a bad percent escape".to_string())?;
            out.push(hex);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| "a part that is not UTF-8 once decoded".to_string())
}

/// Splits `HOST[:PORT]` (a user already split off) into the host and the
/// port's text. An IPv6 address goes in brackets and holds only hex
/// digits, ':' and '.'; a name holds no syntax, space or control
/// character.
pub(crate) fn host_port(auth: &str) -> Result<(String, Option<&str>), String> {
    let (host, port) = if let Some(v6) = auth.strip_prefix('[') {
        let (h, tail) = v6
            .split_once(']')
            .ok_or("an IPv6 address without its closing ']'")?;
        if !h.contains(':') || !h.chars().all(|c| c.is_ascii_hexdigit() || ".:".contains(c)) {
            return Err(format!(
                "'[{}]' is not an IPv6 address",
                crate::error::clip(h)
            ));
        }
        let port = match tail {
            "" => None,
            t => Some(
                t.strip_prefix(':')
                    .ok_or_else(|| format!("'{}' after the address", crate::error::clip(t)))?,
            ),
        };
        (h, port)
    } else {
        match auth.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (auth, None),
        }
    };
    if host.is_empty() {
        return Err("no server named".into());
    }
    if host
        .chars()
        .any(|c| c.is_control() || c.is_whitespace() || "/\\%[]@?#&".contains(c))
        || (!auth.starts_with('[') && host.contains(':'))
    {
        return Err(format!(
            "'{}' is not a server name (an IPv6 address goes in brackets)",
            crate::error::clip(host)
        ));
    }
    Ok((host.to_string(), port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaped_names_decode_back() {
        for name in ["a b", "50%", "x?y#z", "é/ü", "tab\there", "[::1]", "a&b"] {
            let shown = Escaped(name).to_string();
            assert!(!shown.contains(['?', '#', '/', '\t', '&']), "{shown}");
            assert_eq!(decode(&shown).unwrap(), name);
        }
    }

    #[test]
    fn hosts_are_names_or_bracketed_ipv6() {
        assert_eq!(host_port("srv:2049").unwrap(), ("srv".into(), Some("2049")));
        assert_eq!(host_port("[::1]").unwrap(), ("::1".into(), None));
        assert_eq!(
            host_port("[fe80::1]:445").unwrap(),
            ("fe80::1".into(), Some("445"))
        );
        for bad in [
            "",
            "[::1",
            "[x[:1]]:2049",
            "[::1]x",
            "a:b:c",
            "a b",
            "h%41",
            "[srv]",
        ] {
            assert!(host_port(bad).is_err(), "{bad}");
        }
    }
}
