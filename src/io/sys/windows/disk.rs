//! Raw disks (`\\.\PhysicalDriveN`): what `fstat` cannot ask a disk handle
//! (its length, number and sector size come from IOCTLs), and the volumes
//! Windows knows with the disks they lie on and their mount points. Thin
//! calls only: what may be written is decided in `io/target/rawdisk.rs`.

use windows_sys::Win32::Foundation::{
    CloseHandle, ERROR_MORE_DATA, GetLastError, INVALID_HANDLE_VALUE,
};
use windows_sys::Win32::Storage::FileSystem as F;
use windows_sys::Win32::System::IO::DeviceIoControl;
use windows_sys::Win32::System::Ioctl as I;

use super::errno::{Errno, Result};
use super::fd::{AsFd, AsRawFd, BorrowedFd};
use super::types::Stat;

/// Linux's S_IFBLK: a disk handle reads as a block device.
const S_IFBLK: u32 = 0o060000;
/// More extents than a volume has (a spanned dynamic volume has a few).
const MAX_EXTENTS: usize = 128;

/// A device path (`\\.\...`): opened as a device, not a file, so there is no
/// reparse point or directory to check on the handle.
pub(crate) fn is_device_path(w: &[u16]) -> bool {
    let p: Vec<u16> = r"\\.\".encode_utf16().collect();
    w.len() > p.len() && w.starts_with(&p)
}

fn ioctl<T>(fd: BorrowedFd<'_>, code: u32) -> Result<T> {
    // SAFETY: every T this is called with is a plain-data record.
    let mut out: T = unsafe { std::mem::zeroed() };
    let mut got = 0u32;
    // SAFETY: an output record we own with its size in bytes; no input.
    let ok = unsafe {
        DeviceIoControl(
            fd.as_raw_fd(),
            code,
            std::ptr::null(),
            0,
            (&mut out as *mut T).cast(),
            std::mem::size_of::<T>() as u32,
            &mut got,
            std::ptr::null_mut(),
        )
    };
    if ok == 0 {
        return Err(Errno::last());
    }
    Ok(out)
}

/// `fstat` of a disk handle: a block device whose `st_rdev` is the disk
/// number (what names it, as a device number does on Linux) and whose size
/// is `IOCTL_DISK_GET_LENGTH_INFO`'s.
pub(crate) fn stat(fd: impl AsFd) -> Result<Stat> {
    let fd = fd.as_fd();
    let len: I::GET_LENGTH_INFORMATION = ioctl(fd, I::IOCTL_DISK_GET_LENGTH_INFO)?;
    let num: I::STORAGE_DEVICE_NUMBER = ioctl(fd, I::IOCTL_STORAGE_GET_DEVICE_NUMBER)?;
    Ok(Stat {
        st_dev: 0,
        st_ino: u64::from(num.DeviceNumber),
        st_mode: S_IFBLK | 0o600,
        st_nlink: 1,
        st_uid: 0,
        st_rdev: u64::from(num.DeviceNumber),
        st_size: len.Length.max(0),
        st_blocks: len.Length.max(0) / 512,
    })
}

/// The disk's logical sector size: direct I/O's alignment on it.
pub(crate) fn sector_size(fd: impl AsFd) -> Result<u32> {
    let g: I::DISK_GEOMETRY = ioctl(fd.as_fd(), I::IOCTL_DISK_GET_DRIVE_GEOMETRY)?;
    Ok(g.BytesPerSector)
}

fn until_nul(b: &[u16]) -> String {
    String::from_utf16_lossy(&b[..b.iter().position(|&c| c == 0).unwrap_or(b.len())])
}

/// Every volume Windows knows: its `\\?\Volume{GUID}\` name, the disk
/// numbers of its extents, and its mount points. A volume whose extents
/// cannot be read (a CD drive with no disc) lies on no disk.
pub(crate) fn volumes() -> Result<Vec<(String, Vec<u32>, Vec<String>)>> {
    let mut name = [0u16; 64];
    // SAFETY: a buffer with its length in characters.
    let find = unsafe { F::FindFirstVolumeW(name.as_mut_ptr(), name.len() as u32) };
    if find == INVALID_HANDLE_VALUE {
        return Err(Errno::last());
    }
    let mut all = Vec::new();
    loop {
        let v = until_nul(&name);
        all.push((v.clone(), extents(&v), mounts(&name)));
        // SAFETY: the handle FindFirstVolumeW gave; a buffer with its length.
        if unsafe { F::FindNextVolumeW(find, name.as_mut_ptr(), name.len() as u32) } == 0 {
            break;
        }
    }
    // SAFETY: the search handle, closed once.
    unsafe { F::FindVolumeClose(find) };
    Ok(all)
}

fn extents(volume: &str) -> Vec<u32> {
    // The volume itself is opened without its trailing backslash (with it,
    // the root directory would open).
    let w: Vec<u16> = volume
        .trim_end_matches('\\')
        .encode_utf16()
        .chain([0])
        .collect();
    // SAFETY: a NUL-terminated name; no access asked, only queries.
    let h = unsafe {
        F::CreateFileW(
            w.as_ptr(),
            0,
            F::FILE_SHARE_READ | F::FILE_SHARE_WRITE,
            std::ptr::null(),
            F::OPEN_EXISTING,
            0,
            std::ptr::null_mut(),
        )
    };
    if h == INVALID_HANDLE_VALUE {
        return Vec::new();
    }
    // A count and then the extents, 24 bytes each, 8-aligned.
    let mut buf = [0u64; 1 + 3 * MAX_EXTENTS];
    let mut got = 0u32;
    // SAFETY: an output buffer we own with its size in bytes; no input.
    let ok = unsafe {
        DeviceIoControl(
            h,
            F::IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS,
            std::ptr::null(),
            0,
            buf.as_mut_ptr().cast(),
            std::mem::size_of_val(&buf) as u32,
            &mut got,
            std::ptr::null_mut(),
        )
    };
    // SAFETY: the handle opened above, closed once.
    unsafe { CloseHandle(h) };
    if ok == 0 {
        return Vec::new();
    }
    let n = (buf[0] as u32 as usize).min(MAX_EXTENTS);
    let mut disks: Vec<u32> = (0..n).map(|i| buf[1 + 3 * i] as u32).collect();
    disks.sort_unstable();
    disks.dedup();
    disks
}

fn mounts(volume: &[u16]) -> Vec<String> {
    let mut buf = vec![0u16; 1024];
    loop {
        let mut need = 0u32;
        // SAFETY: a NUL-terminated volume name; a buffer with its length.
        let ok = unsafe {
            F::GetVolumePathNamesForVolumeNameW(
                volume.as_ptr(),
                buf.as_mut_ptr(),
                buf.len() as u32,
                &mut need,
            )
        };
        if ok != 0 {
            break;
        }
        // SAFETY: reads the calling thread's error slot only.
        let e = unsafe { GetLastError() };
        if e != ERROR_MORE_DATA || need as usize <= buf.len() {
            return Vec::new();
        }
        buf = vec![0u16; need as usize];
    }
    // A list of NUL-terminated names ending with an empty one.
    buf.split(|&c| c == 0)
        .take_while(|s| !s.is_empty())
        .map(String::from_utf16_lossy)
        .collect()
}
