//! `Arg`: what a name or path may be given as (`&str`, `&CStr`, `&Path`,
//! ...), turned into the UTF-16 Windows calls take.

use std::ffi::{CStr, CString, OsStr};
use std::os::windows::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::errno::Errno;

pub(crate) trait Arg {
    /// The name in UTF-16, without a terminating NUL; a NUL inside is EINVAL.
    fn to_wide(&self) -> Result<Vec<u16>, Errno>;
}

fn wide(s: &OsStr) -> Result<Vec<u16>, Errno> {
    let w: Vec<u16> = s.encode_wide().collect();
    if w.contains(&0) {
        return Err(Errno::INVAL);
    }
    Ok(w)
}

fn wide_c(s: &CStr) -> Result<Vec<u16>, Errno> {
    // The tree's and the marker's names are ASCII; anything not UTF-8 is no
    // name volbench made.
    s.to_str()
        .map_err(|_| Errno::INVAL)
        .and_then(|s| wide(OsStr::new(s)))
}

impl Arg for str {
    fn to_wide(&self) -> Result<Vec<u16>, Errno> {
        wide(OsStr::new(self))
    }
}
impl Arg for String {
    fn to_wide(&self) -> Result<Vec<u16>, Errno> {
        wide(OsStr::new(self))
    }
}
impl Arg for OsStr {
    fn to_wide(&self) -> Result<Vec<u16>, Errno> {
        wide(self)
    }
}
impl Arg for Path {
    fn to_wide(&self) -> Result<Vec<u16>, Errno> {
        wide(self.as_os_str())
    }
}
impl Arg for PathBuf {
    fn to_wide(&self) -> Result<Vec<u16>, Errno> {
        wide(self.as_os_str())
    }
}
impl Arg for CStr {
    fn to_wide(&self) -> Result<Vec<u16>, Errno> {
        wide_c(self)
    }
}
impl Arg for CString {
    fn to_wide(&self) -> Result<Vec<u16>, Errno> {
        wide_c(self)
    }
}
impl<T: Arg + ?Sized> Arg for &T {
    fn to_wide(&self) -> Result<Vec<u16>, Errno> {
        (**self).to_wide()
    }
}
