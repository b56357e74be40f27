//! Slurm's compressed host lists, as `$SLURM_JOB_NODELIST`, `sinfo` and
//! `squeue` print them: `node[01-24]`, `n[1-3,7],m5`, `rack[1-2]-n[1-4]`.
//! Expanded here so a list copied from Slurm works in `--hosts` with any
//! launcher (a bracket is never part of a host name ssh or Kubernetes takes).
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use crate::error::clip;
use crate::units::bounds::MAX_HOSTS;

/// Splits a comma list at the commas outside brackets and expands each
/// item; at most `MAX_HOSTS` names (checked before anything big is built).
pub fn expand(text: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for item in split_top(text)? {
        let item = item.trim();
        if item.is_empty() {
            continue;
        }
        for name in expand_item(item, MAX_HOSTS.saturating_sub(out.len()))? {
            out.push(name);
        }
    }
    Ok(out)
}

fn split_top(text: &str) -> Result<Vec<&str>, String> {
    let mut items = Vec::new();
    let (mut depth, mut start) = (0u32, 0usize);
    for (i, c) in text.char_indices() {
        match c {
            '[' if depth == 0 => depth = 1,
            '[' => return Err(format!("'{}': nested brackets", clip(text))),
            ']' if depth == 1 => depth = 0,
            ']' => return Err(format!("'{}': a ']' without its '['", clip(text))),
            ',' if depth == 0 => {
                items.push(text.get(start..i).unwrap_or(""));
                start = i + 1;
            }
            _ => {}
        }
    }
    if depth != 0 {
        return Err(format!("'{}': a '[' without its ']'", clip(text)));
    }
    items.push(text.get(start..).unwrap_or(""));
    Ok(items)
}

/// `rack[1-2]-n[01-03]` -> rack1-n01 ... rack2-n03: each bracket group
/// multiplies the names, left to right, at most `room` of them.
fn expand_item(item: &str, room: usize) -> Result<Vec<String>, String> {
    let mut names = vec![String::new()];
    let mut rest = item;
    while let Some((before, after)) = rest.split_once('[') {
        let (inner, tail) = after
            .split_once(']')
            .ok_or_else(|| format!("'{}': a '[' without its ']'", clip(item)))?;
        let values = expand_ranges(inner, room).map_err(|e| format!("'{}': {e}", clip(item)))?;
        if names.len().saturating_mul(values.len()) > room {
            return Err(too_many(item));
        }
        names = names
            .iter()
            .flat_map(|p| values.iter().map(move |v| format!("{p}{before}{v}")))
            .collect();
        rest = tail;
    }
    if names.len() > room {
        return Err(too_many(item));
    }
    Ok(names.into_iter().map(|n| format!("{n}{rest}")).collect())
}

fn too_many(item: &str) -> String {
    format!(
        "'{}' expands to more than {MAX_HOSTS} hosts in all; at most {MAX_HOSTS}",
        clip(item)
    )
}

/// `01-03,7` -> 01, 02, 03, 7 (a leading zero fixes the width, as Slurm does).
fn expand_ranges(inner: &str, room: usize) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let whole = clip(inner);
    for part in inner.split(',') {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let num = |s: &str| {
            if s.is_empty() || !s.bytes().all(|c| c.is_ascii_digit()) {
                return Err(format!(
                    "[{whole}]: '{}' is not a number or a range like 1-4",
                    clip(part)
                ));
            }
            s.parse::<u64>()
                .map_err(|_| format!("[{whole}]: '{}' is too large", clip(s)))
        };
        let (x, y) = (num(a)?, num(b)?);
        if x > y {
            return Err(format!(
                "[{whole}]: the range {} goes downwards",
                clip(part)
            ));
        }
        if y - x >= (room.saturating_sub(out.len())) as u64 {
            return Err(format!(
                "[{whole}] names more than {MAX_HOSTS} hosts in all; at most {MAX_HOSTS}"
            ));
        }
        let width = if a.len() > 1 && a.starts_with('0') {
            a.len()
        } else {
            0
        };
        out.extend((x..=y).map(|v| format!("{v:0width$}")));
    }
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[test]
    fn slurm_lists_expand_like_scontrol_show_hostnames() {
        assert_eq!(
            expand("n[1-3,7],m5").unwrap(),
            ["n1", "n2", "n3", "n7", "m5"]
        );
        let nodes = expand("node[01-24]").unwrap();
        assert_eq!(nodes.len(), 24);
        assert_eq!(
            (nodes[0].as_str(), nodes[23].as_str()),
            ("node01", "node24")
        );
        assert_eq!(
            expand("r[1-2]-n[08-09].x").unwrap(),
            ["r1-n08.x", "r1-n09.x", "r2-n08.x", "r2-n09.x"]
        );
        assert_eq!(expand(" vm1, root@vm2 ,").unwrap(), ["vm1", "root@vm2"]);
    }

    #[test]
    fn bad_or_huge_lists_say_why() {
        for (t, want) in [
            ("n[1-3", "without its ']'"),
            ("n1-3]", "without its '['"),
            ("n[[1]]", "nested"),
            ("n[3-1]", "downwards"),
            ("n[a-b]", "not a number"),
            ("n[]", "not a number"),
            ("n[0-99999999999]", "at most 1024"),
            ("n[1-600],m[1-600]", "at most 1024"),
            ("a[1-40]b[1-40]", "at most 1024"),
            ("n[1-99999999999999999999999]", "too large"),
        ] {
            let e = expand(t).unwrap_err();
            assert!(e.contains(want), "{t}: {e}");
        }
        assert_eq!(expand("n[1-1024]").unwrap().len(), MAX_HOSTS);
    }
}
