//! The marker of a file set (`.volbench-fileset.json`): what volbench made
//! (file count, size, each file's inode, the data format), the set's
//! identity (a random id drawn at every fill, which a journal names), and
//! whether a write without --verify's stamps happened since the fill (the
//! set then cannot be checked sector by sector).

use serde::{Deserialize, Serialize};

use crate::error::{Result, VbError};
use crate::io::backend::{Attr, Dir};
use crate::units::format_size;

pub const MARKER_NAME: &str = ".volbench-fileset.json";
pub const FILE_PREFIX: &str = "volbench.";
/// Most files one set may have (the --files bound): also what a marker may claim.
pub const MAX_FILES: u32 = crate::units::bounds::MAX_FILES as u32;
/// A marker lists one inode per file; a real one stays far below this.
const MARKER_CAP: usize = 4 << 20;
/// Largest set a marker may describe (1 EiB): beyond any real volume.
const MAX_SET_BYTES: u64 = 1 << 60;
/// A set id is 32 hex digits; a note a few hundred bytes. Anything longer
/// in a marker was not written by volbench.
const MAX_TEXT: usize = 512;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct Marker {
    pub(crate) created_by: String,
    pub(crate) files: u32,
    pub(crate) file_size: u64,
    pub(crate) filled: bool,
    /// The inode of each file, in order: what makes a file volbench's own.
    /// A marker copied or forged into another directory lists inodes that
    /// are not the files found there.
    #[serde(default)]
    pub(crate) inodes: Vec<u64>,
    /// The data format it was filled with (`DataSpec::fill_tag`); absent
    /// in sets made before formats were recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) data: Option<String>,
    /// Drawn anew at every fill: a journal records the id of the fill it
    /// follows, so a journal of another set (or of an earlier fill of this
    /// one) is told apart even when the shapes agree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) set_id: Option<String>,
    /// The first write since the fill that carried no sector headers (a run
    /// without --verify writes a light stamp), said as when it happened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) unstamped: Option<String>,
}

pub use crate::io::gate::owner::SetIdentity;

/// A fresh set id: 128 random bits as hex (fastrand seeds itself per
/// process from the clock and the thread; the pid and time make two
/// processes' draws differ even so).
pub(super) fn new_set_id() -> String {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let mix = fastrand::u128(..) ^ t.rotate_left(64) ^ u128::from(std::process::id());
    format!("{mix:032x}")
}

/// What the marker says of an unstamped write: when it happened.
pub(super) fn unstamped_note() -> String {
    format!(
        "a run without --verify at {}",
        humantime::format_rfc3339_seconds(std::time::SystemTime::now())
    )
}

/// Checks a marker's claims against the bounds any marker volbench writes
/// keeps, so a damaged or forged one cannot drive the prepare.
pub(super) fn parse_marker(bytes: &[u8]) -> std::result::Result<Marker, String> {
    let m: Marker = serde_json::from_slice(bytes).map_err(|e| format!("it is not valid: {e}"))?;
    if m.files == 0 || m.files > MAX_FILES {
        return Err(format!(
            "it claims {} files, outside 1..={MAX_FILES}",
            m.files
        ));
    }
    if m.file_size == 0 || m.file_size % 4096 != 0 {
        return Err(format!(
            "it claims files of {} bytes, not a positive multiple of 4096",
            m.file_size
        ));
    }
    if (m.files as u64)
        .checked_mul(m.file_size)
        .is_none_or(|t| t > MAX_SET_BYTES)
    {
        return Err(format!(
            "it claims {} files of {} bytes, more than the {} bound",
            m.files,
            m.file_size,
            format_size(MAX_SET_BYTES)
        ));
    }
    if m.inodes.len() != m.files as usize {
        return Err(format!(
            "it records {} file identities for {} files (an older volbench wrote it?)",
            m.inodes.len(),
            m.files
        ));
    }
    let texts = [&m.data, &m.set_id, &m.unstamped];
    if texts
        .iter()
        .any(|t| t.as_ref().is_some_and(|t| t.len() > MAX_TEXT))
    {
        return Err(format!(
            "its data, set_id or unstamped entry is longer than the {MAX_TEXT} bytes volbench \
             writes"
        ));
    }
    if m.set_id
        .as_ref()
        .is_some_and(|id| id.is_empty() || !id.bytes().all(|b| b.is_ascii_hexdigit()))
    {
        return Err("its set_id is not the hex id volbench draws".into());
    }
    Ok(m)
}

/// The set's marker, if there is a valid one. An invalid one is refused,
/// unless --allow-overwrite lets volbench make a new set over whatever is
/// there (every file then counts as not volbench's).
pub(super) fn read_marker(dir: &dyn Dir, allow_overwrite: bool) -> Result<Option<Marker>> {
    let Some(bytes) = dir.read_capped(MARKER_NAME, MARKER_CAP)? else {
        return Ok(None);
    };
    match parse_marker(&bytes) {
        Ok(m) => Ok(Some(m)),
        Err(_) if allow_overwrite => Ok(None),
        Err(why) => Err(VbError::refused(format!(
            "refusing to trust {}: {why}; remove it (and the {FILE_PREFIX}N.dat files beside \
             it if they are volbench's), or pass --allow-overwrite to make a new set over them",
            dir.path_of(MARKER_NAME).display()
        ))),
    }
}

/// Whether `a` was born after the set's marker, so cannot be the file the
/// marker lists whatever id it has (a file system reuses a removed file's
/// inode number at once, so a user's file put in the place of one of the
/// set's may carry the number the marker records). Every file of a set is
/// made before the marker is written, and each run writes the marker anew
/// (`Dir::replace`: a new file renamed over the old), so the set's files
/// are all born before it. False where either birth is unknown.
pub(super) fn born_after_marker(a: &Attr, marker: Option<&Attr>) -> bool {
    match (a.birth, marker.and_then(|m| m.birth)) {
        (Some(file), Some(marker)) => file > marker,
        _ => false,
    }
}

/// The marker's attributes, for `born_after_marker`.
pub(super) fn marker_attr(dir: &dyn Dir) -> Option<Attr> {
    match dir.entry(MARKER_NAME) {
        Ok(crate::io::backend::Entry::Regular(a)) => Some(a),
        _ => None,
    }
}

pub(super) fn write_marker(dir: &dyn Dir, m: &Marker) -> Result<u64> {
    let text = serde_json::to_string_pretty(m).map_err(|e| VbError::run(e.to_string()))?;
    dir.replace(MARKER_NAME, text.as_bytes())
}

/// What an existing set's marker records, for reading the set back
/// (`volbench verify`) and for checking a journal against it.
pub(crate) struct SetShape {
    pub(crate) files: u32,
    pub(crate) file_size: u64,
    pub(crate) inodes: Vec<u64>,
    pub(crate) format: Option<String>,
    pub(crate) identity: SetIdentity,
    pub(crate) unstamped: Option<String>,
}

/// The identity of the set in `dir` (whose inode is `ino`, device `dev`).
/// A set made before ids were recorded has none: "" matches no journal.
pub(super) fn identity_of(m: &Marker, dev: u64, ino: u64) -> SetIdentity {
    SetIdentity {
        id: m.set_id.clone().unwrap_or_default(),
        ino,
        dev,
    }
}

pub(super) fn existing_set(dir: &dyn Dir) -> Result<Option<SetShape>> {
    let at = dir.attr()?;
    Ok(read_marker(dir, false)?
        .filter(|m| m.filled)
        .map(|m| SetShape {
            identity: identity_of(&m, at.dev, at.id),
            files: m.files,
            file_size: m.file_size,
            inodes: m.inodes,
            format: m.data,
            unstamped: m.unstamped,
        }))
}

/// The identity of the filled set in `dir`, read without creating,
/// locking or changing anything (a plan's check of a journal); None when
/// there is no valid filled set there (the prepare says why, if it matters).
pub fn set_identity(dir: &std::path::Path) -> Option<SetIdentity> {
    // A URL's set is read through its back end (a few reads, no change).
    let storage = crate::io::backend::url_storage(dir).unwrap_or(crate::spec::Storage::Local);
    let d = crate::io::backend::open_dir(storage, dir, false).ok()?;
    existing_set(&*d).ok().flatten().map(|s| s.identity)
}

/// The refusal of a check (`volbench verify`, a --verify run) of a set
/// written without stamps since its fill: not corruption, so its own exit.
pub(crate) fn unchecked(dir: &std::path::Path, note: &str) -> VbError {
    VbError::unchecked(format!(
        "{} cannot be checked: written without --verify since its fill ({note}); its blocks \
         carry a light stamp, not the sector headers a check reads. A run with --verify after \
         `volbench clean --target {}` refills it checkable",
        dir.display(),
        dir.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn marker(files: u64, file_size: u64, inodes: usize) -> String {
        format!(
            r#"{{"created_by":"volbench","files":{files},"file_size":{file_size},"filled":true,"inodes":{:?}}}"#,
            vec![7u64; inodes]
        )
    }

    #[test]
    fn a_file_born_after_the_marker_is_not_the_set_s_where_both_births_are_known() {
        use crate::io::gate::owner::Kind;
        let at = |birth: Option<(i64, u32)>| Attr {
            kind: Kind::Regular,
            id: 7,
            dev: 1,
            size: 0,
            allocated: 0,
            links: 1,
            uid: 0,
            mode: 0o644,
            born: (0, 0),
            birth,
        };
        let marker = at(Some((100, 500)));
        assert!(born_after_marker(&at(Some((100, 501))), Some(&marker)));
        assert!(!born_after_marker(&at(Some((100, 500))), Some(&marker)));
        assert!(!born_after_marker(&at(Some((99, 900))), Some(&marker)));
        // Unknown on either side (NFSv3, Windows, no btime, no marker):
        // the inode proof alone, as before.
        assert!(!born_after_marker(&at(None), Some(&marker)));
        assert!(!born_after_marker(&at(Some((200, 0))), Some(&at(None))));
        assert!(!born_after_marker(&at(Some((200, 0))), None));
    }

    #[test]
    fn a_marker_written_by_volbench_parses() {
        let m = parse_marker(marker(2, 8192, 2).as_bytes()).unwrap();
        assert_eq!((m.files, m.file_size, m.inodes.len()), (2, 8192, 2));
        let mut m = m;
        m.set_id = Some(new_set_id());
        m.unstamped = Some(unstamped_note());
        let text = serde_json::to_vec(&m).unwrap();
        assert_eq!(parse_marker(&text).unwrap(), m);
        assert_ne!(new_set_id(), new_set_id());
    }

    #[test]
    fn markers_outside_the_bounds_are_rejected_with_the_bound() {
        let long = "a".repeat(MAX_TEXT + 1);
        for (text, says) in [
            (marker(4294967295, 4096, 0), "outside 1..=65536"),
            (marker(0, 4096, 0), "outside 1..=65536"),
            (marker(1, 0, 1), "multiple of 4096"),
            (marker(1, 4097, 1), "multiple of 4096"),
            (marker(65536, 1 << 50, 0), "bound"),
            (marker(2, 4096, 1), "identities"),
            (
                r#"{"created_by":"volbench","files":1,"file_size":4096,"filled":true}"#.into(),
                "older volbench",
            ),
            ("{".into(), "not valid"),
            (
                r#"{"files":-1,"file_size":4096,"filled":true,"created_by":""}"#.into(),
                "not valid",
            ),
            (
                marker(1, 4096, 1).replace("}", &format!(r#","set_id":"{long}"}}"#)),
                "longer than",
            ),
            (
                marker(1, 4096, 1).replace("}", r#","set_id":"not hex"}"#),
                "hex id",
            ),
        ] {
            let e = parse_marker(text.as_bytes()).unwrap_err();
            assert!(e.contains(says), "{text}: {e}");
        }
    }

    proptest! {
        /// Any bytes: a marker or a refusal, never a panic; and what is
        /// accepted keeps every bound a prepare relies on.
        #[test]
        fn any_bytes_parse_or_are_refused(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
            if let Ok(m) = parse_marker(&bytes) {
                prop_assert!(m.files >= 1 && m.files <= MAX_FILES);
                prop_assert_eq!(m.inodes.len(), m.files as usize);
            }
        }

        /// Markers shaped like volbench's with any numbers and texts.
        #[test]
        fn any_marker_fields_parse_or_are_refused(
            files in any::<u32>(),
            size in any::<u64>(),
            n in 0usize..4,
            id in "[ -~]{0,40}",
            filled in any::<bool>(),
        ) {
            let text = format!(
                r#"{{"created_by":"x","files":{files},"file_size":{size},"filled":{filled},"inodes":{:?},"set_id":{:?}}}"#,
                vec![1u64; n],
                id
            );
            match parse_marker(text.as_bytes()) {
                Ok(m) => {
                    prop_assert!(m.file_size % 4096 == 0 && m.file_size > 0);
                    prop_assert!((m.files as u64).saturating_mul(m.file_size) <= MAX_SET_BYTES);
                    prop_assert!(m.set_id.is_some_and(|i| i.bytes().all(|b| b.is_ascii_hexdigit())));
                }
                Err(why) => prop_assert!(!why.is_empty()),
            }
        }
    }
}
