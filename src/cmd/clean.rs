//! `volbench clean --target DIR`: removes the tree a metadata run left
//! (after Ctrl-C, say), and nothing that is not volbench's.

use crate::error::{Result, exit};
use crate::input::args::CleanArgs;

pub(crate) fn cmd_clean(a: &CleanArgs) -> Result<i32> {
    // A file set on a server (nfs://): its own files, proven, nothing else.
    if crate::io::backend::is_url(&a.target) {
        crate::io::backend::check_url(&a.target)?;
        let files = crate::io::target::clean_set(&a.target)?;
        crate::console::outln!(
            "removed {files} files from {} (anything else there is left)",
            a.target.display()
        );
        return Ok(exit::OK);
    }
    // A tree many hosts shared: its parts (hostN), each a tree of its own.
    let done = match crate::io::meta::shared::clean_parts(&a.target)? {
        Some(done) => done,
        None => crate::io::meta::clean(&a.target)?,
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
