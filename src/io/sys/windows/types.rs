//! The flag sets and records of `fs` with rustix's names and Linux's bit
//! values, so code written against rustix reads the same on Windows; what
//! each flag means in a Windows open is `file.rs`'s business.

/// A set of flags: the subset of `bitflags` the callers use.
macro_rules! flag_set {
    ($name:ident: $t:ty { $($flag:ident = $v:expr),* $(,)? }) => {
        #[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
        pub(crate) struct $name($t);
        #[allow(dead_code)] // the full set of names, as rustix has them
        impl $name {
            $(pub(crate) const $flag: $name = $name($v);)*
            pub(crate) const fn empty() -> $name {
                $name(0)
            }
            pub(crate) const fn bits(self) -> $t {
                self.0
            }
            pub(crate) const fn from_bits_retain(b: $t) -> $name {
                $name(b)
            }
            pub(crate) const fn contains(self, o: $name) -> bool {
                self.0 & o.0 == o.0
            }
            pub(crate) const fn intersects(self, o: $name) -> bool {
                self.0 & o.0 != 0
            }
            pub(crate) const fn is_empty(self) -> bool {
                self.0 == 0
            }
        }
        impl std::ops::BitOr for $name {
            type Output = $name;
            fn bitor(self, o: $name) -> $name {
                $name(self.0 | o.0)
            }
        }
        impl std::ops::BitOrAssign for $name {
            fn bitor_assign(&mut self, o: $name) {
                self.0 |= o.0;
            }
        }
        impl std::ops::BitAnd for $name {
            type Output = $name;
            fn bitand(self, o: $name) -> $name {
                $name(self.0 & o.0)
            }
        }
        impl std::ops::Sub for $name {
            type Output = $name;
            fn sub(self, o: $name) -> $name {
                $name(self.0 & !o.0)
            }
        }
    };
}

flag_set!(OFlags: u32 {
    RDONLY = 0,
    WRONLY = 0o1,
    RDWR = 0o2,
    ACCMODE = 0o3,
    CREATE = 0o100,
    EXCL = 0o200,
    NOCTTY = 0o400,
    TRUNC = 0o1000,
    APPEND = 0o2000,
    NONBLOCK = 0o4000,
    DSYNC = 0o10000,
    DIRECT = 0o40000,
    DIRECTORY = 0o200000,
    NOFOLLOW = 0o400000,
    CLOEXEC = 0o2000000,
    SYNC = 0o4010000,
    // Windows only: a handle for overlapped I/O (no FILE_SYNCHRONOUS_IO_*,
    // FILE_FLAG_OVERLAPPED), which the overlapped engine needs and the
    // synchronous calls in io.rs must never be given. A bit Linux leaves unused.
    OVERLAPPED = 0o10000000000,
});

flag_set!(AtFlags: u32 {
    SYMLINK_NOFOLLOW = 0x100,
    REMOVEDIR = 0x200,
    EMPTY_PATH = 0x1000,
});

flag_set!(RenameFlags: u32 {
    NOREPLACE = 1,
});

flag_set!(ResolveFlags: u64 {
    NO_XDEV = 0x01,
    NO_MAGICLINKS = 0x02,
    NO_SYMLINKS = 0x04,
    BENEATH = 0x08,
});

flag_set!(FallocateFlags: u32 {
    KEEP_SIZE = 0x01,
    PUNCH_HOLE = 0x02,
});

flag_set!(StatxFlags: u32 {
    TYPE = 0x1,
    MODE = 0x2,
    NLINK = 0x4,
    UID = 0x8,
    INO = 0x100,
    SIZE = 0x200,
    BASIC_STATS = 0x7ff,
    BTIME = 0x800,
    DIOALIGN = 0x2000,
});

flag_set!(StatVfsMountFlags: u64 {
    RDONLY = 1,
});

/// Permission bits: Windows keeps ACLs instead, so a mode given to a create
/// is not applied (the new file inherits its directory's ACL).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Mode(u32);

impl Mode {
    pub(crate) const fn empty() -> Mode {
        Mode(0)
    }
    pub(crate) const fn from_raw_mode(m: u32) -> Mode {
        Mode(m)
    }
}

const S_IFMT: u32 = 0o170000;
pub(crate) const S_IFDIR: u32 = 0o040000;
pub(crate) const S_IFREG: u32 = 0o100000;
pub(crate) const S_IFLNK: u32 = 0o120000;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum FileType {
    RegularFile,
    Directory,
    Symlink,
    Fifo,
    Socket,
    CharacterDevice,
    BlockDevice,
    Unknown,
}

impl FileType {
    pub(crate) const fn from_raw_mode(m: u32) -> FileType {
        match m & S_IFMT {
            S_IFREG => FileType::RegularFile,
            S_IFDIR => FileType::Directory,
            S_IFLNK => FileType::Symlink,
            0o010000 => FileType::Fifo,
            0o140000 => FileType::Socket,
            0o020000 => FileType::CharacterDevice,
            0o060000 => FileType::BlockDevice,
            _ => FileType::Unknown,
        }
    }
    pub(crate) fn is_block_device(self) -> bool {
        self == FileType::BlockDevice
    }
}

/// What `fstat` reports, with Linux's field names: `st_dev` is the volume's
/// serial number, `st_ino` the 64-bit file index, `st_mode` the type (a
/// reparse point of any kind reads as a symbolic link, so it is refused as
/// one) with 0o644 (0o444 if read-only), `st_uid` a digest of the owner SID.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Stat {
    pub(crate) st_dev: u64,
    pub(crate) st_ino: u64,
    pub(crate) st_mode: u32,
    pub(crate) st_nlink: u64,
    pub(crate) st_uid: u32,
    pub(crate) st_rdev: u64,
    pub(crate) st_size: i64,
    pub(crate) st_blocks: i64,
}

#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct StatxTimestamp {
    pub(crate) tv_sec: i64,
    pub(crate) tv_nsec: u32,
}

/// `statx` on Windows: `Stat`'s facts plus the birth (CreationTime) and
/// change times, and the alignment unbuffered I/O needs (the sector size).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Statx {
    pub(crate) stx_mask: u32,
    pub(crate) stx_mode: u16,
    pub(crate) stx_nlink: u32,
    pub(crate) stx_uid: u32,
    pub(crate) stx_ino: u64,
    pub(crate) stx_btime: StatxTimestamp,
    pub(crate) stx_ctime: StatxTimestamp,
    pub(crate) stx_dev_major: u32,
    pub(crate) stx_dev_minor: u32,
    pub(crate) stx_dio_offset_align: u32,
}

/// Free space, from the volume the handle is on.
#[derive(Clone, Copy, Debug)]
pub(crate) struct StatVfs {
    pub(crate) f_bsize: u64,
    pub(crate) f_frsize: u64,
    pub(crate) f_bavail: u64,
    pub(crate) f_flag: StatVfsMountFlags,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum FlockOperation {
    /// The only lock volbench takes: it never waits for one, and the lock
    /// goes with the handle.
    NonBlockingLockExclusive,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Advice {
    /// The only advice the shared code gives (dropping a file's cached
    /// pages); the read-ahead advice is Linux's (a flag of the open here).
    DontNeed,
}

pub(crate) use std::io::SeekFrom;

#[derive(Clone, Copy, Debug)]
pub(crate) struct Timespec {
    pub(crate) tv_sec: i64,
    pub(crate) tv_nsec: i64,
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Timestamps {
    pub(crate) last_access: Timespec,
    pub(crate) last_modification: Timespec,
}

/// `utimensat`'s "now", as Linux spells it.
pub(crate) const UTIME_NOW: i64 = (1 << 30) - 1;

pub(crate) const fn makedev(major: u32, minor: u32) -> u64 {
    ((major as u64) << 32) | minor as u64
}
