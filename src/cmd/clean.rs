//! `volbench clean --target DIR|URL`: removes the file set a run made, or
//! the tree a metadata run left (after Ctrl-C, say), and nothing that is
//! not volbench's.

use crate::error::{Result, VbError, exit};
use crate::input::args::CleanArgs;

pub(crate) fn cmd_clean(a: &CleanArgs) -> Result<i32> {
    let on_server = crate::io::backend::is_url(&a.target);
    if on_server {
        crate::io::backend::check_url(&a.target)?;
    }
    // A tree on a server (nfs://, smb://), by the local tree's rules.
    let tree = if on_server {
        crate::io::meta::far::clean_url(&a.target)?
    } else {
        None
    };
    // A file set (its marker there): its own files, proven, nothing else.
    // A local directory may hold a tree as well (a metadata run on the
    // same target): that is cleaned next.
    let set = match tree {
        Some(_) => None,
        None => crate::io::target::clean_set(&a.target)?,
    };
    if let Some(files) = set {
        crate::console::outln!(
            "removed {files} files of the file set in {} (anything else there is left)",
            a.target.display()
        );
    }
    if on_server && tree.is_none() {
        return match set {
            Some(_) => Ok(exit::OK),
            None => Err(nothing_of_ours(a)),
        };
    }
    // A tree many hosts shared: its parts (hostN), each a tree of its own.
    let done = match tree {
        Some(done) => done,
        None => match crate::io::meta::shared::clean_parts(&a.target)? {
            Some(done) => done,
            None if !crate::io::meta::holds_tree(&a.target)? => {
                return match set {
                    Some(_) => Ok(exit::OK),
                    None => Err(nothing_of_ours(a)),
                };
            }
            None => crate::io::meta::clean(&a.target)?,
        },
    };
    crate::console::outln!(
        "removed {} files and {} directories from {}",
        done.files,
        done.dirs,
        a.target.display()
    );
    if !done.left.is_empty() {
        let shown: Vec<&str> = done.left.iter().take(5).map(String::as_str).collect();
        crate::console::errln!(
            "left {} entries that are not volbench's (and the marker, so clean can run again): {}{}",
            done.left.len(),
            shown.join(", "),
            if done.left.len() > 5 { ", ..." } else { "" }
        );
    }
    Ok(exit::OK)
}

/// Neither a file set nor a tree at the target: nothing was removed.
fn nothing_of_ours(a: &CleanArgs) -> VbError {
    VbError::refused(format!(
        "refusing to clean {}: it holds neither a volbench file set nor a tree (no marker of either)",
        a.target.display()
    ))
}
