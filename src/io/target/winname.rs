//! Windows' rules for names, checked on a target's path before anything is
//! looked up or made: a reserved device name (`CON`, `NUL`, `COM1`, ...,
//! with or without an extension) opens the device, not a file; a name
//! ending in a dot or a space is silently trimmed by Win32, so it would
//! name another file; two targets differing only in case are one
//! directory on a case-insensitive file system. Pure text rules, so they
//! are tested on every platform; they apply on Windows (`inspect`).

// On Linux only the tests use it: the names are Windows' rules.
#![cfg_attr(not(windows), allow(dead_code))]

use std::path::{Component, Path};

const RESERVED: [&str; 4] = ["CON", "PRN", "AUX", "NUL"];

/// Why one path component cannot be a Windows file or directory name.
pub(crate) fn bad_component(name: &str) -> Option<String> {
    if name.ends_with('.') || name.ends_with(' ') {
        return Some(format!(
            "\"{name}\" ends in a dot or a space, which Windows drops from a name, so it would \
             name another file"
        ));
    }
    // The device names are reserved whatever follows a dot ("nul.txt"),
    // and before a colon ("CON:") or trailing spaces ("NUL .txt").
    let stem = name.split(['.', ':']).next().unwrap_or(name).trim_end();
    let upper = stem.to_ascii_uppercase();
    let numbered = |p: &str| {
        upper.len() == 4
            && upper.starts_with(p)
            && upper.as_bytes()[3].is_ascii_digit()
            && upper.as_bytes()[3] != b'0'
    };
    if RESERVED.contains(&upper.as_str()) || numbered("COM") || numbered("LPT") {
        return Some(format!(
            "\"{name}\" is a reserved device name on Windows ({stem} opens the device, not a file)"
        ));
    }
    None
}

/// The first rule `path` breaks, named with the path, or None. The prefix
/// (`C:`, `\\server\share`) and the root are not names.
pub(crate) fn check_path(path: &Path) -> Option<String> {
    path.components().find_map(|c| match c {
        Component::Normal(n) => bad_component(&n.to_string_lossy()).map(|why| {
            format!(
                "target {}: {why}; choose another name",
                crate::units::bounds::one_line(&path.display().to_string())
            )
        }),
        _ => None,
    })
}

/// A path in Windows' device namespace (`\\.\PhysicalDrive0`,
/// `\\?\GLOBALROOT\...`, `\\.\C:`): a raw disk or volume (`rawdisk.rs` tells
/// which and decides what may be written). A long path to a file (`\\?\C:\dir`) is not one.
pub(crate) fn raw_device(path: &str) -> bool {
    let p = path.replace('/', "\\");
    if let Some(rest) = p.strip_prefix("\\\\.\\") {
        return !rest.is_empty();
    }
    match p.strip_prefix("\\\\?\\") {
        Some(rest) => {
            let b = rest.as_bytes();
            // `\\?\C:\...` is a path; `\\?\C:` alone is the volume.
            let drive_path = b.len() > 2 && b[1] == b':' && b[2] == b'\\';
            let unc = rest.to_ascii_uppercase().starts_with("UNC\\");
            !drive_path && !unc
        }
        None => false,
    }
}

/// Two paths that name the same place on Windows while differing in their
/// text: the first such pair, in order. Windows' names are case-insensitive
/// and Win32 drops a name's trailing dots and spaces, and `/` is `\` there,
/// so `D:\Bench.\a` and `d:/bench/A` are one file: two targets of one
/// run that are one file would run twice over it, each under the other.
pub(crate) fn same_but_case<'a>(paths: &[&'a Path]) -> Option<(&'a Path, &'a Path)> {
    let keys: Vec<String> = paths
        .iter()
        .map(|p| windows_key(&p.to_string_lossy()))
        .collect();
    for (i, a) in paths.iter().enumerate() {
        for (j, b) in paths.iter().enumerate().skip(i + 1) {
            if a != b && keys[i] == keys[j] {
                return Some((a, b));
            }
        }
    }
    None
}

/// A path as Windows compares it: one separator, no trailing dots or
/// spaces on a name, lower case (Unicode's, close to NTFS's upcase table).
fn windows_key(path: &str) -> String {
    let p = path.replace('/', "\\");
    // A UNC path's leading `\\` is kept; doubled separators elsewhere are one.
    let (lead, rest) = match p.strip_prefix("\\\\") {
        Some(rest) => ("\\\\", rest),
        None => ("", p.as_str()),
    };
    let mut key = String::from(lead);
    for (i, part) in rest.split('\\').enumerate() {
        if part.is_empty() && i > 0 {
            continue;
        }
        if i > 0 {
            key.push('\\');
        }
        let name = if part == "." || part == ".." {
            part
        } else {
            part.trim_end_matches(['.', ' '])
        };
        key.push_str(&name.to_lowercase());
    }
    key
}

/// The one line for a run whose targets name one file twice on Windows.
pub(crate) fn one_file_twice(paths: &[std::path::PathBuf]) -> Option<String> {
    let refs: Vec<&Path> = paths.iter().map(|p| p.as_path()).collect();
    same_but_case(&refs).map(|(a, b)| {
        let show = |p: &Path| crate::units::bounds::one_line(&p.display().to_string());
        format!(
            "--target names {} and {}, one file on Windows (names differ there only in case or \
             in trailing dots and spaces); name each target once",
            show(a),
            show(b)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_device_names_are_refused_with_or_without_an_extension() {
        for n in [
            "CON", "con", "Nul", "PRN", "aux", "COM1", "com9", "LPT1", "lpt9",
        ] {
            assert!(bad_component(n).is_some(), "{n}");
        }
        for n in ["nul.txt", "CON.dat", "com1.tar.gz", "NUL .txt", "con:"] {
            assert!(bad_component(n).is_some(), "{n}");
        }
        let why = bad_component("nul.txt").unwrap_or_default();
        assert!(why.contains("reserved device name"), "{why}");
    }

    #[test]
    fn names_that_only_look_like_devices_are_fine() {
        for n in [
            "CONSOLE", "nully", "COM0", "COM10", "LPT", "files-1", "vb-0.dat", "con-1",
        ] {
            assert_eq!(bad_component(n), None, "{n}");
        }
    }

    #[test]
    fn a_trailing_dot_or_space_is_refused() {
        assert!(bad_component("data.").is_some());
        assert!(bad_component("data ").is_some());
        assert_eq!(bad_component("data.d"), None);
        assert_eq!(bad_component(".volbench-lock"), None);
    }

    #[test]
    fn a_path_is_refused_at_its_first_bad_component_naming_it() {
        let e = check_path(Path::new("bench/NUL/files")).unwrap_or_default();
        assert!(
            e.contains("bench/NUL/files") && e.contains("\"NUL\""),
            "{e}"
        );
        assert_eq!(check_path(Path::new("/tmp/bench/files-1")), None);
    }

    #[test]
    fn raw_disks_and_volumes_are_told_from_paths() {
        for p in [
            r"\\.\PhysicalDrive0",
            r"\\.\C:",
            r"\\?\GLOBALROOT\Device\Harddisk0",
            "//./PhysicalDrive1",
        ] {
            assert!(raw_device(p), "{p}");
        }
        for p in [
            r"C:\bench",
            r"\\?\C:\bench",
            r"\\?\UNC\server\share\d",
            r"\\server\share\d",
            "/tmp/x",
        ] {
            assert!(!raw_device(p), "{p}");
        }
    }

    #[test]
    fn targets_differing_only_in_case_are_found() {
        let (a, b) = (Path::new("/data/Bench"), Path::new("/data/bench"));
        let c = Path::new("/data/other");
        assert_eq!(same_but_case(&[a, c, b]), Some((a, b)));
        assert_eq!(same_but_case(&[a, c, a]), None);
        assert_eq!(same_but_case(&[a, c]), None);
    }

    #[test]
    fn targets_differing_in_trailing_dots_spaces_or_separators_are_one_file() {
        let same = [
            (r"D:\Bench.\a", r"d:\bench\A"),
            (r"D:\bench \a.dat", "D:/BENCH/a.dat. "),
            (r"\\Server\Share\d", r"\\server\share\D\"),
            (r"D:\b\\c", r"D:\b\c"),
            ("D:\\Über", "d:\\über"),
        ];
        for (a, b) in same {
            let (a, b) = (Path::new(a), Path::new(b));
            assert_eq!(same_but_case(&[a, b]), Some((a, b)), "{a:?} {b:?}");
        }
        let apart = [
            (r"D:\bench\a1", r"D:\bench\a2"),
            (r"D:\a", r"E:\a"),
            (r"\\server\share", r"\server\share"),
            (r"D:\bench\..", r"D:\bench\."),
        ];
        for (a, b) in apart {
            let (a, b) = (Path::new(a), Path::new(b));
            assert_eq!(same_but_case(&[a, b]), None, "{a:?} {b:?}");
        }
        let paths = [r"D:\x".into(), r"D:\y".into(), r"d:\X".into()];
        let e = one_file_twice(&paths).unwrap_or_default();
        assert!(
            e.contains(r"D:\x and d:\X") && e.contains("one file"),
            "{e}"
        );
        assert_eq!(one_file_twice(&paths[..2]), None);
    }
}
