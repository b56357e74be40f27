//! Descriptors are handles: `OwnedFd` closes its handle on drop, and `AsFd`
//! lends one, as std's `AsHandle` does (every `AsHandle` is an `AsFd`).

pub(crate) use std::os::windows::io::{
    AsHandle, AsRawHandle, BorrowedHandle as BorrowedFd, OwnedHandle as OwnedFd, RawHandle as RawFd,
};

/// `std::os::fd::AsFd` under Windows' name for a descriptor: implemented
/// for the handle types the file layer holds, and through references.
pub(crate) trait AsFd {
    fn as_fd(&self) -> BorrowedFd<'_>;
}

impl AsFd for OwnedFd {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.as_handle()
    }
}

impl AsFd for BorrowedFd<'_> {
    fn as_fd(&self) -> BorrowedFd<'_> {
        *self
    }
}

impl AsFd for std::fs::File {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.as_handle()
    }
}

impl<T: AsFd + ?Sized> AsFd for &T {
    fn as_fd(&self) -> BorrowedFd<'_> {
        (**self).as_fd()
    }
}

impl<T: AsFd + ?Sized> AsFd for &mut T {
    fn as_fd(&self) -> BorrowedFd<'_> {
        (**self).as_fd()
    }
}

/// `AsRawFd` for the few places that keep raw descriptors beside their owners.
pub(crate) trait AsRawFd {
    fn as_raw_fd(&self) -> RawFd;
}

impl<T: AsRawHandle + ?Sized> AsRawFd for T {
    fn as_raw_fd(&self) -> RawFd {
        self.as_raw_handle()
    }
}
