//! Writing output files without destroying what is not ours.
//!
//! An output path is written only when nothing is there or a regular file
//! is: a symlink, device node, FIFO or socket at the path is refused, never
//! followed or replaced (as root, `-o /dev/null` once replaced the machine's
//! /dev/null). The final path component is reached relative to a directory
//! descriptor with `O_NOFOLLOW`, the data goes to a fresh temporary file
//! created with `O_EXCL` beside it, and a rename puts it in place, so a
//! reader never sees half a file.

use crate::io::sys::fd::{AsFd, BorrowedFd, OwnedFd};
use std::ffi::OsStr;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::io::sys::fs::{AtFlags, FileType, Mode, OFlags};
use crate::io::sys::io::Errno;

use crate::error::{Result, VbError};
use crate::io::gate;

/// What sits at a name in a directory, without following a symlink there.
fn kind_at(dir: BorrowedFd, name: &OsStr) -> std::result::Result<Option<FileType>, Errno> {
    match crate::io::sys::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => Ok(Some(FileType::from_raw_mode(st.st_mode))),
        Err(Errno::NOENT) => Ok(None),
        Err(e) => Err(e),
    }
}

fn describe(t: FileType) -> &'static str {
    match t {
        FileType::RegularFile => "a regular file",
        FileType::Directory => "a directory",
        FileType::Symlink => "a symbolic link",
        FileType::Fifo => "a FIFO",
        FileType::Socket => "a socket",
        FileType::CharacterDevice => "a character device",
        FileType::BlockDevice => "a block device",
        FileType::Unknown => "not a regular file",
    }
}

/// Refuses (exit 3) anything at `shown` but nothing or a regular file.
fn check_writable_name(dir: BorrowedFd, name: &OsStr, shown: &Path) -> Result<()> {
    match kind_at(dir, name) {
        Ok(None) | Ok(Some(FileType::RegularFile)) => Ok(()),
        Ok(Some(t)) => Err(VbError::refused(format!(
            "{} is {}; volbench writes only regular files it can replace \
             (remove it or choose another path; -o - writes to stdout)",
            shown.display(),
            describe(t)
        ))),
        Err(e) => Err(VbError::target(format!(
            "cannot check {}: {e}",
            shown.display()
        ))),
    }
}

fn open_dir(path: &Path, nofollow: bool) -> std::result::Result<OwnedFd, Errno> {
    let mut flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    if nofollow {
        flags |= OFlags::NOFOLLOW;
    }
    crate::io::sys::fs::open(path, flags, Mode::empty())
}

static TEMP_SEQ: AtomicU64 = AtomicU64::new(0);

/// A temporary name no other writer uses: our pid and a sequence number.
fn temp_name(name: &OsStr) -> PathBuf {
    let seq = TEMP_SEQ.fetch_add(1, Ordering::Relaxed);
    let mut n = std::ffi::OsString::from(".");
    n.push(name);
    n.push(format!(".{}.{seq}.tmp", std::process::id()));
    PathBuf::from(n)
}

/// Writes `bytes` as `name` in the directory `dir` (shown to the user as
/// `shown`): refused unless the name is free or a regular file.
fn write_at(dir: BorrowedFd, name: &OsStr, shown: &Path, bytes: &[u8]) -> Result<()> {
    check_writable_name(dir, name, shown)?;
    let tmp = temp_name(name);
    let fail = |e: &dyn std::fmt::Display| {
        VbError::target(format!("cannot write {}: {e}", shown.display()))
    };
    let fd = gate::create_new_at(dir, &tmp, OFlags::WRONLY, 0o644).map_err(|e| fail(&e))?;
    let mut file = std::fs::File::from(fd);
    let written = file
        .write_all(bytes)
        .and_then(|_| file.sync_data())
        .map_err(|e| fail(&e))
        // Checked again just before the rename: the window for something
        // else to appear at the path is as small as it can be made.
        .and_then(|_| check_writable_name(dir, name, shown))
        .and_then(|_| gate::replace_own_temp_at(dir, &tmp, name).map_err(|e| fail(&e)));
    if written.is_err() {
        let _ = gate::unlink_at(dir, &tmp);
    }
    written
}

pub(crate) use crate::spec::output::is_stdout;

/// Checks, before any work is done, that `path` can be written as an
/// output file: its directory exists and nothing but a regular file is at
/// the path. stdout (`is_stdout`) always can.
pub(crate) fn check_file(path: &Path) -> Result<()> {
    if is_stdout(path) {
        return Ok(());
    }
    let (dir, name) = split(path)?;
    let fd = open_dir(&dir, false).map_err(|e| {
        VbError::target(format!(
            "cannot write {}: its directory {}: {e}",
            path.display(),
            dir.display()
        ))
    })?;
    check_writable_name(fd.as_fd(), &name, path)
}

/// Writes one output file (see the module comment); `-` is stdout.
pub(crate) fn write_file(path: &Path, bytes: &[u8]) -> Result<()> {
    if is_stdout(path) {
        return crate::console::out_bytes(bytes)
            .map_err(|e| VbError::run(format!("cannot write to stdout: {e}")));
    }
    let (dir, name) = split(path)?;
    let fd = open_dir(&dir, false).map_err(|e| {
        VbError::target(format!(
            "cannot write {}: its directory {}: {e}",
            path.display(),
            dir.display()
        ))
    })?;
    write_at(fd.as_fd(), &name, path, bytes)
}

/// Writes a new output file that replaces nothing: refused (exit 3) when
/// anything, even a regular file, is at `path` (`capture -o`: a profile
/// is a record of production that cannot be taken again). The data goes
/// to a temporary file first and is renamed without replacing, so a file
/// that appeared meanwhile is kept. `-` is stdout.
pub(crate) fn write_new_file(path: &Path, bytes: &[u8]) -> Result<()> {
    if is_stdout(path) {
        return write_file(path, bytes);
    }
    check_new_file(path)?;
    let (dir, name) = split(path)?;
    let fail = |e: &dyn std::fmt::Display| {
        VbError::target(format!("cannot write {}: {e}", path.display()))
    };
    let fd = open_dir(&dir, false).map_err(|e| fail(&e))?;
    let tmp = temp_name(&name);
    let file =
        gate::create_new_at(fd.as_fd(), &tmp, OFlags::WRONLY, 0o644).map_err(|e| fail(&e))?;
    let mut file = std::fs::File::from(file);
    let written = file
        .write_all(bytes)
        .and_then(|_| file.sync_data())
        .map_err(|e| fail(&e))
        .and_then(|_| {
            match gate::rename_noreplace_at(fd.as_fd(), tmp.as_path(), name.as_os_str()) {
                Err(Errno::EXIST) => Err(exists(path)),
                other => other.map_err(|e| fail(&e)),
            }
        });
    if written.is_err() {
        let _ = gate::unlink_at(fd.as_fd(), &tmp);
    }
    written
}

fn exists(path: &Path) -> VbError {
    VbError::refused(format!(
        "{} exists; volbench never replaces it (choose another -o, or remove it)",
        path.display()
    ))
}

/// Checks, before any work, that nothing at all is at `path` and its
/// directory exists (`write_new_file`'s rule).
pub(crate) fn check_new_file(path: &Path) -> Result<()> {
    if is_stdout(path) {
        return Ok(());
    }
    let (dir, name) = split(path)?;
    let fd = open_dir(&dir, false).map_err(|e| {
        VbError::target(format!(
            "cannot write {}: its directory {}: {e}",
            path.display(),
            dir.display()
        ))
    })?;
    match kind_at(fd.as_fd(), &name) {
        Ok(None) => Ok(()),
        Ok(Some(_)) => Err(exists(path)),
        Err(e) => Err(VbError::target(format!(
            "cannot check {}: {e}",
            path.display()
        ))),
    }
}

/// `out/` names a directory even where `file_name` would take `out`.
fn ends_with_separator(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        path.as_os_str().as_bytes().ends_with(b"/")
    }
    #[cfg(windows)]
    {
        use std::os::windows::ffi::OsStrExt;
        let last = path.as_os_str().encode_wide().last();
        last == Some(u16::from(b'/')) || last == Some(u16::from(b'\\'))
    }
}

fn split(path: &Path) -> Result<(PathBuf, std::ffi::OsString)> {
    let name = path
        .file_name()
        .filter(|_| !ends_with_separator(path))
        .ok_or_else(|| {
            VbError::input(format!(
                "{} names a directory, not an output file",
                path.display()
            ))
        })?;
    // On Windows `CON`, `NUL`, `COM1.txt`... open a device, not a file:
    // `--live CON` would write to the console (and `NUL` nowhere) while the
    // user believes a file holds it.
    #[cfg(windows)]
    if let Some(why) = crate::io::target::bad_windows_name(&name.to_string_lossy()) {
        return Err(VbError::input(format!(
            "{}: {why}; choose another name (or - for stdout)",
            crate::units::bounds::one_line(&path.display().to_string())
        )));
    }
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    Ok((dir, name.to_os_string()))
}

/// The files a result directory always receives; checked up front.
pub(crate) const RESULT_FILES: [&str; 4] =
    ["result.json", "summary.csv", "tables.md", "report.html"];

/// An output directory, checked and opened before the benchmark starts and
/// written through the same descriptor at the end.
#[derive(Debug)]
pub struct OutputDir {
    path: PathBuf,
    fd: OwnedFd,
}

impl OutputDir {
    /// Creates `path` if needed and proves it usable before any I/O: a
    /// directory (not a symlink to one), writable, with none of the result
    /// files' names taken by anything but a regular file.
    pub fn open(path: &Path) -> Result<Self> {
        match std::fs::symlink_metadata(path) {
            Ok(m) if m.file_type().is_symlink() => {
                return Err(VbError::refused(format!(
                    "--output {} is a symbolic link; volbench does not write through \
                     links (give the directory it points to)",
                    path.display()
                )));
            }
            Ok(m) if !m.is_dir() => {
                return Err(VbError::input(format!(
                    "--output {} exists and is not a directory; --output names a \
                     directory for result.json, summary.csv and report.html",
                    path.display()
                )));
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                gate::create_dir_all(path).map_err(|e| {
                    VbError::target(format!(
                        "cannot create output directory {}: {e}",
                        path.display()
                    ))
                })?;
            }
            Err(e) => {
                return Err(VbError::target(format!(
                    "cannot use output directory {}: {e}",
                    path.display()
                )));
            }
        }
        let fd = open_dir(path, true).map_err(|e| {
            VbError::target(format!(
                "cannot open output directory {}: {e}",
                path.display()
            ))
        })?;
        let dir = Self {
            path: path.to_path_buf(),
            fd,
        };
        for name in RESULT_FILES {
            check_writable_name(dir.fd.as_fd(), OsStr::new(name), &path.join(name))?;
        }
        dir.probe()?;
        Ok(dir)
    }

    /// A file created and removed: the only sure test of writability (root
    /// passes permission checks, a read-only mount or a full disk does not).
    fn probe(&self) -> Result<()> {
        let tmp = temp_name(OsStr::new("probe"));
        let fd =
            gate::create_new_at(self.fd.as_fd(), &tmp, OFlags::WRONLY, 0o600).map_err(|e| {
                VbError::target(format!(
                    "cannot write into output directory {}: {e}",
                    self.path.display()
                ))
            })?;
        drop(fd);
        let _ = gate::unlink_at(self.fd.as_fd(), &tmp);
        Ok(())
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    pub(crate) fn write(&self, name: &str, text: &str) -> Result<()> {
        write_at(
            self.fd.as_fd(),
            OsStr::new(name),
            &self.path.join(name),
            text.as_bytes(),
        )
    }

    /// A new private directory for results that could not be written where
    /// asked: under $TMPDIR, never an existing one.
    pub(crate) fn fallback() -> Result<Self> {
        let base = std::env::temp_dir();
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        for attempt in 0..100u32 {
            let path = base.join(format!(
                "volbench-results-{}-{stamp}-{attempt}",
                std::process::id()
            ));
            match gate::mkdir(&path, 0o700) {
                Ok(()) => {
                    let fd = open_dir(&path, true).map_err(|e| {
                        VbError::target(format!("cannot open {}: {e}", path.display()))
                    })?;
                    return Ok(Self { path, fd });
                }
                Err(Errno::EXIST) => continue,
                Err(e) => {
                    return Err(VbError::target(format!(
                        "cannot create {}: {e}",
                        path.display()
                    )));
                }
            }
        }
        Err(VbError::target(format!(
            "cannot create a directory for the results under {}",
            base.display()
        )))
    }
}

/// A file written while the run goes (`--live`, `--live-csv`): created new
/// through the gate (O_EXCL, no link followed), so an existing path of any
/// kind is refused before any I/O, as `--output` refuses what is not ours;
/// `-` is stdout.
pub(crate) fn create_stream(path: &Path, flag: &str) -> Result<Box<dyn Write + Send>> {
    if is_stdout(path) {
        return Ok(Box::new(crate::console::Stdout));
    }
    let (dir, name) = split(path)?;
    let fd = open_dir(&dir, false).map_err(|e| {
        VbError::target(format!(
            "{flag} {}: its directory {}: {e}",
            path.display(),
            dir.display()
        ))
    })?;
    match gate::create_new_at(fd.as_fd(), name.as_os_str(), OFlags::WRONLY, 0o644) {
        Ok(f) => Ok(Box::new(std::fs::File::from(f))),
        Err(Errno::EXIST) => Err(VbError::refused(format!(
            "{flag} {}: something is already there; volbench never replaces what is at an output path \
             (choose a new name, or - for stdout)",
            path.display()
        ))),
        Err(e) => Err(VbError::target(format!(
            "{flag} {}: cannot create it: {e}",
            path.display()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn a_symlink_at_the_path_is_refused_and_left_alone() {
        let d = tempfile::tempdir().expect("temp dir");
        let victim = d.path().join("victim");
        std::fs::write(&victim, "keep").expect("write");
        let link = d.path().join("out.html");
        symlink(&victim, &link).expect("symlink");
        let e = write_file(&link, b"report").expect_err("refused");
        assert_eq!(e.exit_code(), crate::error::exit::REFUSED);
        assert!(e.message.contains("symbolic link"), "{}", e.message);
        assert_eq!(std::fs::read_to_string(&victim).expect("read"), "keep");
        assert!(
            std::fs::symlink_metadata(&link)
                .expect("lstat")
                .file_type()
                .is_symlink()
        );
        // Nothing left behind: no temporary files.
        assert_eq!(std::fs::read_dir(d.path()).expect("ls").count(), 2);
    }

    #[test]
    fn a_regular_file_is_replaced_whole_and_a_missing_one_created() {
        let d = tempfile::tempdir().expect("temp dir");
        let p = d.path().join("r.md");
        write_file(&p, b"one").expect("create");
        write_file(&p, b"two").expect("replace");
        assert_eq!(std::fs::read_to_string(&p).expect("read"), "two");
        assert_eq!(std::fs::read_dir(d.path()).expect("ls").count(), 1);
    }

    #[test]
    fn a_fifo_is_neither_opened_nor_replaced() {
        let d = tempfile::tempdir().expect("temp dir");
        let p = d.path().join("fifo");
        crate::io::sys::fs::mkfifoat(crate::io::sys::fs::CWD, &p, Mode::from_raw_mode(0o600))
            .expect("mkfifo");
        assert_eq!(
            write_file(&p, b"x").expect_err("refused").exit_code(),
            crate::error::exit::REFUSED
        );
        assert!(check_file(&p).is_err());
        assert!(
            std::fs::symlink_metadata(&p)
                .expect("lstat")
                .file_type()
                .is_fifo_like()
        );
    }

    trait FifoLike {
        fn is_fifo_like(&self) -> bool;
    }
    impl FifoLike for std::fs::FileType {
        fn is_fifo_like(&self) -> bool {
            use std::os::unix::fs::FileTypeExt;
            self.is_fifo()
        }
    }

    #[test]
    fn an_output_dir_is_checked_before_use() {
        let d = tempfile::tempdir().expect("temp dir");
        let file = d.path().join("file");
        std::fs::write(&file, "x").expect("write");
        assert_eq!(
            OutputDir::open(&file).expect_err("a file").exit_code(),
            crate::error::exit::BAD_INPUT
        );
        let link = d.path().join("link");
        symlink(d.path(), &link).expect("symlink");
        assert_eq!(
            OutputDir::open(&link).expect_err("a link").exit_code(),
            crate::error::exit::REFUSED
        );
        let out = d.path().join("a/b");
        let od = OutputDir::open(&out).expect("created");
        symlink(&file, out.join("result.json")).expect("symlink");
        assert!(od.write("result.json", "{}").is_err());
        assert!(
            OutputDir::open(&out).is_err(),
            "a planted link is found up front"
        );
        assert_eq!(std::fs::read_to_string(&file).expect("read"), "x");
    }
}
