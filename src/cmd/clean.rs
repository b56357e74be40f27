//! `volbench clean --target DIR`: removes the tree a metadata run left
//! (after Ctrl-C, say), and nothing that is not volbench's.

use crate::error::{Result, exit};
use crate::input::args::CleanArgs;

pub(crate) fn cmd_clean(a: &CleanArgs) -> Result<i32> {
    // On a server (nfs://): a tree by the local tree's rules, else a file
    // set's own files, proven, nothing else.
    let on_server = crate::io::backend::is_url(&a.target);
    if on_server {
        crate::io::backend::check_url(&a.target)?;
    }
    let tree = if on_server {
        crate::io::meta::far::clean_url(&a.target)?
    } else {
        None
    };
    if on_server && tree.is_none() {
        let files = crate::io::target::clean_set(&a.target)?;
        crate::console::outln!(
            "removed {files} files from {} (anything else there is left)",
            a.target.display()
        );
        return Ok(exit::OK);
    }
    // A tree many hosts shared: its parts (hostN), each a tree of its own.
    let done = match tree {
        Some(done) => done,
        None => match crate::io::meta::shared::clean_parts(&a.target)? {
            Some(done) => done,
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
