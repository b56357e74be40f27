//! Which file system a target lives on, and how it is mounted, from
//! /proc/self/mountinfo. Results carry it so a report can say "NFS v3,
//! nconnect=16, rsize=wsize=64K" beside the numbers it explains.

use std::path::Path;

pub(crate) use crate::result::environment::BlockSizes;
pub(crate) use crate::result::mount::MountInfo;

/// Undoes mountinfo's octal escapes (`\040` for a space).
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let oct = b.get(i + 1..i + 4).and_then(|d| {
            std::str::from_utf8(d)
                .ok()
                .and_then(|t| u8::from_str_radix(t, 8).ok())
        });
        match oct {
            Some(v) if b[i] == b'\\' => {
                out.push(v);
                i += 4;
            }
            _ => {
                out.push(b[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Parses mountinfo text into entries, in file order.
pub(crate) fn parse_mountinfo(text: &str) -> Vec<MountInfo> {
    let mut v = Vec::new();
    for line in text.lines() {
        // Fields: id parent major:minor root mount-point options [optional...] - fstype source super-options
        let Some((left, right)) = line.split_once(" - ") else {
            continue;
        };
        let l: Vec<&str> = left.split(' ').collect();
        let r: Vec<&str> = right.split(' ').collect();
        if l.len() < 6 || r.len() < 2 {
            continue;
        }
        let mut opts: Vec<String> = l[5].split(',').map(str::to_string).collect();
        for o in r.get(2).copied().unwrap_or("").split(',') {
            if !o.is_empty() && !opts.iter().any(|x| x == o) {
                opts.push(o.to_string());
            }
        }
        v.push(MountInfo {
            mount_point: unescape(l[4]),
            fs_type: r[0].to_string(),
            source: unescape(r[1]),
            options: opts.join(","),
        });
    }
    v
}

/// The mount holding `path`: the longest mount point that is a prefix of
/// its canonical form; the last such entry wins, as the kernel stacks them.
pub(crate) fn find(mounts: &[MountInfo], path: &Path) -> Option<MountInfo> {
    let mut best: Option<&MountInfo> = None;
    for m in mounts {
        if path.starts_with(&m.mount_point)
            && best.is_none_or(|b| m.mount_point.len() >= b.mount_point.len())
        {
            best = Some(m);
        }
    }
    best.cloned()
}

/// The mount of a target path on this host; None when it cannot be told.
/// A path that does not exist yet is looked up through its nearest parent.
pub(crate) fn for_path(path: &Path) -> Option<MountInfo> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let mut p = path.to_path_buf();
    let canon = loop {
        if let Ok(c) = p.canonicalize() {
            break c;
        }
        if !p.pop() {
            return None;
        }
    };
    find(&parse_mountinfo(&text), &canon)
}

/// What backs a path, as far as honest figures need to know: storage, the
/// host's memory (figures of RAM, named as such), or a kernel interface
/// where no file set belongs (`/dev`, `/proc`, `/sys`). Read from statfs,
/// so Linux's alone: Windows has no such magic to tell them by.
#[cfg(unix)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Backing {
    Storage,
    /// tmpfs, ramfs, a zram or brd block device, or a file system on one.
    Memory(&'static str),
    /// devtmpfs, proc, sysfs and the other kernel file systems.
    Pseudo(&'static str),
}

/// statfs(2) magics (linux/magic.h). devtmpfs shares tmpfs's, so mountinfo
/// tells the two apart. Linux's alone: Windows has no statfs magic.
#[cfg(unix)]
const TMPFS_MAGIC: u64 = 0x0102_1994;
#[cfg(unix)]
const RAMFS_MAGIC: u64 = 0x8584_58f6;
#[cfg(unix)]
const PSEUDO_MAGICS: [(u64, &str); 10] = [
    (0x9fa0, "proc"),
    (0x6265_6572, "sysfs"),
    (0x1cd1, "devpts"),
    (0x0027_e0eb, "cgroup"),
    (0x6367_7270, "cgroup2"),
    (0x6462_6720, "debugfs"),
    (0x7472_6163, "tracefs"),
    (0x7363_6673, "securityfs"),
    (0x6265_6570, "configfs"),
    (0xcafe_4a11, "bpf"),
];

/// The backing of a file system from its statfs magic and, for what the
/// magic cannot tell, its mount (fs type and source).
#[cfg(unix)]
pub(crate) fn classify(magic: u64, mount: Option<&MountInfo>) -> Backing {
    if let Some((_, name)) = PSEUDO_MAGICS.iter().find(|(m, _)| *m == magic) {
        return Backing::Pseudo(name);
    }
    match (magic, mount) {
        (TMPFS_MAGIC, Some(m)) if m.fs_type == "devtmpfs" => Backing::Pseudo("devtmpfs"),
        (TMPFS_MAGIC, _) => Backing::Memory("tmpfs"),
        (RAMFS_MAGIC, _) => Backing::Memory("ramfs"),
        _ => mount
            .and_then(|m| memory_device(&m.source))
            .map_or(Backing::Storage, Backing::Memory),
    }
}

/// `zram` or `brd` for a block device path whose name says it is memory
/// (`/dev/zram0`, `/dev/ram0`).
#[cfg(unix)]
pub(crate) fn memory_device(path: &str) -> Option<&'static str> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let numbered = |p: &str| {
        name.strip_prefix(p)
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    if numbered("zram") {
        Some("zram")
    } else if numbered("ram") {
        Some("brd")
    } else {
        None
    }
}

/// What backs the file system of `path`, or of its nearest existing
/// parent when it does not exist yet; None when statfs cannot tell.
#[cfg(unix)]
pub(crate) fn backing(path: &Path) -> Option<Backing> {
    let mut p = path.to_path_buf();
    let st = loop {
        match rustix::fs::statfs(&p) {
            Ok(st) => break st,
            Err(_) if p.pop() && !p.as_os_str().is_empty() => {}
            Err(_) => break rustix::fs::statfs(".").ok()?,
        }
    };
    // f_type is signed on some architectures; the magics are 32-bit.
    let magic = (st.f_type as u64) & 0xffff_ffff;
    Some(classify(magic, for_path(path).as_ref()))
}

/// What a target's figures come from when that is the host's memory:
/// `tmpfs`, `ramfs`, `zram` or `brd`; None for storage.
#[cfg(unix)]
pub(crate) fn memory_of(path: &Path, block_device: bool) -> Option<&'static str> {
    if block_device {
        let real = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        return memory_device(&real.to_string_lossy());
    }
    match backing(path)? {
        Backing::Memory(m) => Some(m),
        _ => None,
    }
}

/// Windows has no statfs magic to tell a memory file system by: not known.
#[cfg(windows)]
pub(crate) fn memory_of(_path: &Path, _block_device: bool) -> Option<&'static str> {
    None
}

/// The allocation units under a target: statvfs's block and fragment size
/// for a file system, the sector sizes for a block device (opened read-only
/// to ask, as every check of it is). Empty when they cannot be read.
#[cfg(unix)]
pub(crate) fn block_sizes(path: &Path, kind: crate::spec::TargetKind) -> BlockSizes {
    use rustix::fs::{Mode, OFlags};
    if kind == crate::spec::TargetKind::BlockDevice {
        let Ok(fd) = rustix::fs::open(path, OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty()) else {
            return BlockSizes::default();
        };
        return BlockSizes {
            logical_sector: rustix::fs::ioctl_blksszget(&fd).ok(),
            physical_sector: rustix::fs::ioctl_blkpbszget(&fd).ok(),
            ..BlockSizes::default()
        };
    }
    match rustix::fs::statvfs(path) {
        Ok(s) => BlockSizes {
            fs_block: (s.f_bsize > 0).then_some(s.f_bsize),
            fs_fragment: (s.f_frsize > 0).then_some(s.f_frsize),
            ..BlockSizes::default()
        },
        Err(_) => BlockSizes::default(),
    }
}

/// Windows: the volume's allocation unit (cluster) from its free-space
/// query, for the directory or file target; no raw disk is a target yet.
#[cfg(windows)]
pub(crate) fn block_sizes(path: &Path, kind: crate::spec::TargetKind) -> BlockSizes {
    if kind == crate::spec::TargetKind::BlockDevice {
        return BlockSizes::default();
    }
    match crate::io::sys::fs::statvfs(path) {
        Ok(s) => BlockSizes {
            fs_block: (s.f_bsize > 0).then_some(s.f_bsize),
            fs_fragment: (s.f_frsize > 0).then_some(s.f_frsize),
            ..BlockSizes::default()
        },
        Err(_) => BlockSizes::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "\
27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard
40 27 0:50 / /mnt/anf rw,relatime shared:1 - nfs 10.0.0.4:/vol1 rw,vers=3,rsize=65536,wsize=65536,namlen=255,hard,nconnect=16,proto=tcp
41 27 0:51 / /mnt/with\\040space rw - tmpfs tmpfs rw,size=4k
";

    #[test]
    fn nfs_options_are_found() {
        let m = parse_mountinfo(SAMPLE);
        assert_eq!(m.len(), 3);
        let nfs = find(&m, Path::new("/mnt/anf/dir/file")).unwrap();
        assert_eq!(nfs.fs_type, "nfs");
        assert_eq!(nfs.source, "10.0.0.4:/vol1");
        assert_eq!(
            nfs.key_options(),
            [
                "vers=3",
                "rsize=65536",
                "wsize=65536",
                "nconnect=16",
                "proto=tcp"
            ]
        );
        assert!(nfs.options.starts_with("rw,relatime,vers=3"));
    }

    #[test]
    fn longest_prefix_wins_and_escapes_are_undone() {
        let m = parse_mountinfo(SAMPLE);
        assert_eq!(find(&m, Path::new("/tmp/x")).unwrap().fs_type, "ext4");
        assert_eq!(
            find(&m, Path::new("/mnt/with space/f")).unwrap().fs_type,
            "tmpfs"
        );
        // A sibling whose name merely starts with the mount point is not under it.
        assert_eq!(find(&m, Path::new("/mnt/anfx")).unwrap().fs_type, "ext4");
    }

    #[test]
    fn memory_and_kernel_file_systems_are_told_apart() {
        let mount = |fs: &str, source: &str| MountInfo {
            fs_type: fs.into(),
            source: source.into(),
            ..MountInfo::default()
        };
        let dev = mount("devtmpfs", "devtmpfs");
        assert_eq!(
            classify(TMPFS_MAGIC, Some(&dev)),
            Backing::Pseudo("devtmpfs")
        );
        let shm = mount("tmpfs", "tmpfs");
        assert_eq!(classify(TMPFS_MAGIC, Some(&shm)), Backing::Memory("tmpfs"));
        assert_eq!(classify(RAMFS_MAGIC, None), Backing::Memory("ramfs"));
        assert_eq!(classify(0x9fa0, None), Backing::Pseudo("proc"));
        assert_eq!(classify(0x6265_6572, None), Backing::Pseudo("sysfs"));
        let zram = mount("ext4", "/dev/zram0");
        assert_eq!(classify(0xef53, Some(&zram)), Backing::Memory("zram"));
        let disk = mount("ext4", "/dev/nvme0n1p1");
        assert_eq!(classify(0xef53, Some(&disk)), Backing::Storage);
        assert_eq!(memory_device("/dev/ram0"), Some("brd"));
        assert_eq!(memory_device("/dev/zramfoo"), None);
        assert_eq!(memory_device("/dev/ramdisk"), None);
    }

    #[test]
    fn this_hosts_kernel_file_systems_are_found() {
        assert_eq!(
            backing(Path::new("/proc/self")),
            Some(Backing::Pseudo("proc"))
        );
        assert_eq!(
            backing(Path::new("/sys/kernel")),
            Some(Backing::Pseudo("sysfs"))
        );
        // A path that does not exist is judged by its nearest parent.
        assert_eq!(
            backing(Path::new("/proc/no/such/dir")),
            Some(Backing::Pseudo("proc"))
        );
    }

    #[test]
    fn this_hosts_root_is_found() {
        let m = for_path(Path::new("/no/such/dir/here")).unwrap();
        assert_eq!(m.mount_point, "/");
    }
}
