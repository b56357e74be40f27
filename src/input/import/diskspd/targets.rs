//! diskspd's targets on this machine: paths resolved (a `--map`, or a
//! relative path against the current directory, as diskspd resolves it
//! against its own), then one file set, one existing target or a target
//! list, with diskspd's `-B`/`-f` window applied to the files volbench
//! creates.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::super::{How, Notes, PathMap, kernel_set_dir, parent_dir, target_list, url_map};
use super::state::State;
use crate::error::Result;
use crate::units::format_size;

/// Where the suite's I/O goes.
pub(crate) struct Placed {
    pub(crate) target: String,
    /// The file set's total size (None: existing targets, used whole).
    pub(crate) size: Option<u64>,
    pub(crate) files: u64,
    /// The list's threads are the total over it (`-F` over existing files).
    pub(crate) threads_total: bool,
}

/// A target path as this machine names it. A plain relative path (no
/// drive, no backslash, no `#N`) is taken against the current directory.
fn resolve(map: &PathMap, raw: &str) -> std::result::Result<(String, Option<How>), String> {
    match map.resolve(raw) {
        Ok((p, true)) if crate::io::backend::is_url(std::path::Path::new(&p)) => {
            let url = std::path::Path::new(&p);
            let how = match crate::io::backend::url_storage(url) {
                Some(crate::spec::Storage::Smb) => format!(
                    "{} (--map): reached by volbench's own SMB client, no mount (the password \
                     from VOLBENCH_SMB_PASSWORD or the URL's credentials= file, never the \
                     command line)",
                    crate::io::backend::shown(url).display()
                ),
                _ => format!(
                    "{} (--map): reached by volbench's own NFS client, no mount",
                    crate::io::backend::shown(url).display()
                ),
            };
            Ok((p, Some(How::Note(how))))
        }
        Ok((p, true)) => Ok((p.clone(), Some(How::Exact(format!("{p} (--map)"))))),
        Ok((p, false)) => Ok((p, None)),
        Err(e) => {
            let windows =
                raw.starts_with('#') || raw.contains('\\') || raw.as_bytes().get(1) == Some(&b':');
            if windows || raw.starts_with('/') || raw.is_empty() {
                return Err(e);
            }
            // `...` in a paper's line stands for targets left out.
            if raw.chars().all(|c| c == '.') {
                return Err(format!(
                    "'{raw}' is no file name (a line's elision?); name every target"
                ));
            }
            let full = crate::io::target::normalise(std::path::Path::new(raw));
            let full = full.to_string_lossy().into_owned();
            let how = format!(
                "{full}: a relative path, taken against the current directory (diskspd takes it against its own)"
            );
            Ok((full, Some(How::Exact(how))))
        }
    }
}

/// The targets' paths here, each mapped or refused by name.
pub(crate) fn paths(s: &mut State, map: &PathMap, notes: &mut Notes) -> Vec<String> {
    let mut out = Vec::new();
    for (at, t) in s.targets.clone() {
        match resolve(map, &t) {
            Ok((p, how)) => {
                if let Some(how) = how {
                    s.push(&at, &t, how);
                }
                out.push(p);
            }
            Err(e) => notes.refuse(&at, &t, e),
        }
    }
    out
}

/// diskspd's `-B` and `-f` bound each target's I/O to a window. On the
/// files volbench creates that is files of the window's length (the bytes
/// outside it diskspd never touches); on an existing file or device
/// volbench has no window, so they are refused there.
pub(crate) fn window(s: &mut State, notes: &mut Notes) {
    if s.base.is_none() && s.max_offset.is_none() {
        return;
    }
    let Some(c) = s.create.clone() else {
        for (at, text) in [
            s.base.as_ref().map(|b| (b.at.clone(), b.text.clone())),
            s.max_offset
                .as_ref()
                .map(|f| (f.at.clone(), f.text.clone())),
        ]
        .into_iter()
        .flatten()
        {
            notes.unsupported(
                &at,
                &text,
                "an offset window on an existing file or device: volbench uses it whole; \
                 with -c<size> volbench creates its own files, each the window's length",
            );
        }
        return;
    };
    let (b, len) = s.base.as_ref().map_or((0, None), |g| g.value);
    let mut end = c.value;
    if let Some(l) = len {
        end = end.min(b.saturating_add(l));
    }
    if let Some(f) = &s.max_offset {
        end = end.min(f.value);
    }
    let (at, text) = match (&s.base, &s.max_offset) {
        (Some(g), _) => (g.at.clone(), g.text.clone()),
        (None, Some(g)) => (g.at.clone(), g.text.clone()),
        (None, None) => return,
    };
    if end <= b || end - b < s.bs {
        notes.refuse(
            &at,
            &text,
            format!(
                "the window {}..{} of each {} file holds less than one {} block",
                format_size(b),
                format_size(end),
                format_size(c.value),
                format_size(s.bs)
            ),
        );
        return;
    }
    if b == 0 && end == c.value {
        s.push(&at, &text, How::Exact("the whole file".into()));
        return;
    }
    let span = end - b;
    s.push(
        &at,
        &text,
        How::Note(format!(
            "volbench's own files are {} each: the bytes {}..{} that diskspd's I/O reaches in its {} \
             files, starting at offset 0 (the rest diskspd never touches)",
            format_size(span),
            format_size(b),
            format_size(end),
            format_size(c.value)
        )),
    );
    s.create = Some(super::state::Given { value: span, ..c });
}

/// The suite's target for `paths`: with `-c` volbench's own files, without
/// it the existing files or devices; several targets without `-F` a list,
/// each with its own `-t` threads.
pub(crate) fn place(
    s: &mut State,
    paths: &[String],
    threads: u64,
    notes: &mut Notes,
) -> Result<Placed> {
    if s.create.is_none() {
        // Without -c diskspd opens what is there; volbench's SMB and NFS
        // clients write only into sets of their own, so the line must ask
        // volbench to create its files.
        for ((at, t), p) in s.targets.iter().zip(paths) {
            if crate::io::backend::is_url(std::path::Path::new(p)) {
                let why = url_map::existing_file(
                    p,
                    "give -cSIZE to have volbench create its own files there",
                );
                notes.refuse(at, t, why);
            }
        }
        notes.check()?;
    }
    let n = paths.len() as u64;
    let listed = n > 1 && s.total_threads.is_none();
    let create = s.create.as_ref().map(|c| c.value);
    if listed {
        let kernel = s.create.as_ref().and_then(|c| {
            let why = paths.iter().find_map(|p| kernel_set_dir(p))?;
            Some((c.at.clone(), c.text.clone(), why))
        });
        if let Some((at, text, why)) = kernel {
            notes.refuse(&at, &text, why);
            notes.check()?;
        }
        let (target, size, files) = target_list::list(paths, create, threads, &mut s.m, notes)?;
        return Ok(Placed {
            target,
            size,
            files,
            threads_total: false,
        });
    }
    if let Some(c) = s.create.clone() {
        let dirs: std::collections::BTreeSet<String> =
            paths.iter().map(|p| parent_dir(p)).collect();
        if dirs.len() > 1 {
            notes.unsupported(
                "targets",
                "files in several directories",
                "one target directory per suite",
            );
            notes.check()?;
        }
        let dir = dirs.into_iter().next().unwrap_or_default();
        if let Some(why) = kernel_set_dir(&dir) {
            notes.refuse(&c.at, &c.text, why);
            notes.check()?;
        }
        s.push(
            "targets",
            &paths.join(" "),
            How::Note(format!(
                "volbench writes only files it creates: its own {n} file(s) volbench.N.dat in {dir}"
            )),
        );
        return Ok(Placed {
            target: dir,
            size: Some(c.value.saturating_mul(n)),
            files: n,
            threads_total: false,
        });
    }
    if let [one] = paths {
        s.push(
            "targets",
            one,
            How::Exact(
                "the existing file or device, whole (writing needs --allow-overwrite)".into(),
            ),
        );
        return Ok(Placed {
            target: one.clone(),
            size: None,
            files: 1,
            threads_total: false,
        });
    }
    // -F without -c: diskspd's threads each reach every existing file;
    // volbench spreads the same threads over them, each file (or device) a
    // target of its own, used whole under the rules of `run --target FILE`.
    let named: Vec<(String, String)> = s
        .targets
        .iter()
        .map(|(at, _)| at.clone())
        .zip(paths.iter().cloned())
        .collect();
    target_list::must_exist(
        &named,
        "without -c diskspd opens existing files; give -cSIZE to have volbench create its own",
        notes,
    );
    notes.check()?;
    let (target, size, files) = target_list::list_with(
        paths,
        None,
        threads,
        target_list::Threads::Total,
        &mut s.m,
        notes,
    )?;
    Ok(Placed {
        target,
        size,
        files,
        threads_total: true,
    })
}
