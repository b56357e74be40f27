//! The vocabulary the NFS client shares across versions: file handles,
//! attributes, operations, requests and replies. Fixed-size values, so a
//! completion carries them without allocating.

/// The longest file handle (NFSv4's NFS4_FHSIZE; NFSv3's is 64).
pub(crate) const FH_MAX: usize = 128;
/// The longest name a request carries (one path component).
pub(crate) const NAME_MAX: usize = 255;

/// A file handle.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Fh {
    len: u8,
    bytes: [u8; FH_MAX],
}

impl Fh {
    pub(crate) fn new(b: &[u8]) -> Option<Fh> {
        if b.len() > FH_MAX {
            return None;
        }
        let mut fh = Fh {
            len: b.len() as u8,
            bytes: [0; FH_MAX],
        };
        fh.bytes[..b.len()].copy_from_slice(b);
        Some(fh)
    }

    pub(crate) fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }
}

impl std::fmt::Debug for Fh {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Fh(")?;
        for b in self.as_bytes() {
            write!(f, "{b:02x}")?;
        }
        f.write_str(")")
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileType {
    Regular,
    Directory,
    Block,
    Char,
    Symlink,
    Socket,
    Fifo,
    /// NFSv4's named-attribute kinds, or a number no version defines.
    Other(u32),
}

impl FileType {
    /// NFSv3's ftype3 and NFSv4's nfs_ftype4 share these numbers.
    pub(crate) fn from_wire(v: u32) -> FileType {
        match v {
            1 => FileType::Regular,
            2 => FileType::Directory,
            3 => FileType::Block,
            4 => FileType::Char,
            5 => FileType::Symlink,
            6 => FileType::Socket,
            7 => FileType::Fifo,
            n => FileType::Other(n),
        }
    }
}

/// A time as the server keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Time {
    pub(crate) secs: i64,
    pub(crate) nsecs: u32,
}

/// A file's attributes: what the ownership proof and the figures need.
/// NFSv4 servers may leave some out (`None`); NFSv3 servers give all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Attr {
    pub kind: FileType,
    pub(crate) mode: u32,
    pub nlink: u32,
    /// The owner's and group's numbers: NFSv3's, or NFSv4's owner strings
    /// when they are numbers or names this host knows.
    pub uid: Option<u32>,
    pub gid: Option<u32>,
    pub(crate) size: u64,
    pub(crate) used: u64,
    pub(crate) fsid: (u64, u64),
    pub fileid: u64,
    pub(crate) atime: Time,
    pub(crate) mtime: Time,
    pub(crate) ctime: Time,
    /// NFSv4's change attribute (NFSv3: ctime folded into one number).
    pub(crate) change: u64,
}

impl Attr {
    /// The file's length in bytes (for a caller outside the crate: the
    /// bench's loop over the client, `examples/nfs_loop.rs`).
    pub fn size(&self) -> u64 {
        self.size
    }
}

impl Default for Attr {
    fn default() -> Self {
        Attr {
            kind: FileType::Other(0),
            mode: 0,
            nlink: 0,
            uid: None,
            gid: None,
            size: 0,
            used: 0,
            fsid: (0, 0),
            fileid: 0,
            atime: Time::default(),
            mtime: Time::default(),
            ctime: Time::default(),
            change: 0,
        }
    }
}

/// How a WRITE asks the server to keep its data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stable {
    Unstable,
    DataSync,
    FileSync,
}

impl Stable {
    pub(crate) fn wire(self) -> u32 {
        self as u32
    }

    pub(crate) fn from_wire(v: u32) -> Option<Stable> {
        match v {
            0 => Some(Stable::Unstable),
            1 => Some(Stable::DataSync),
            2 => Some(Stable::FileSync),
            _ => None,
        }
    }
}

/// How a regular file is created. Both refuse a name already taken by a
/// file this client did not just make: nothing is truncated or reused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CreateHow {
    /// Fails with EXIST when the name is taken.
    Guarded,
    /// Fails with EXIST when the name is taken, unless by the file this
    /// verifier made: a create sent again after a lost connection succeeds.
    Exclusive([u8; 8]),
}

/// The protocol version a client speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    V3,
    V41,
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Version::V3 => "3",
            Version::V41 => "4.1",
        })
    }
}

/// The operation types the client counts, one per request kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum OpKind {
    Null = 0,
    Getattr,
    Setattr,
    Lookup,
    Access,
    Read,
    Write,
    Create,
    Mkdir,
    Remove,
    Rmdir,
    Rename,
    Link,
    Readdir,
    Readdirplus,
    Fsinfo,
    Commit,
    Open,
    Close,
    /// NFSv4.1 session set-up and upkeep: EXCHANGE_ID, CREATE_SESSION,
    /// RECLAIM_COMPLETE, a SEQUENCE alone (lease renewal), DESTROY_*.
    Session,
    Mount,
    /// The file system's space: NFSv3 FSSTAT, NFSv4 GETATTR of
    /// space_avail and space_total.
    Fsstat,
}

/// Every kind, by its number.
pub(crate) const OP_KINDS: [OpKind; 22] = [
    OpKind::Null,
    OpKind::Getattr,
    OpKind::Setattr,
    OpKind::Lookup,
    OpKind::Access,
    OpKind::Read,
    OpKind::Write,
    OpKind::Create,
    OpKind::Mkdir,
    OpKind::Remove,
    OpKind::Rmdir,
    OpKind::Rename,
    OpKind::Link,
    OpKind::Readdir,
    OpKind::Readdirplus,
    OpKind::Fsinfo,
    OpKind::Commit,
    OpKind::Open,
    OpKind::Close,
    OpKind::Session,
    OpKind::Mount,
    OpKind::Fsstat,
];

impl OpKind {
    pub(crate) fn name(self) -> &'static str {
        match self {
            OpKind::Null => "NULL",
            OpKind::Getattr => "GETATTR",
            OpKind::Setattr => "SETATTR",
            OpKind::Lookup => "LOOKUP",
            OpKind::Access => "ACCESS",
            OpKind::Read => "READ",
            OpKind::Write => "WRITE",
            OpKind::Create => "CREATE",
            OpKind::Mkdir => "MKDIR",
            OpKind::Remove => "REMOVE",
            OpKind::Rmdir => "RMDIR",
            OpKind::Rename => "RENAME",
            OpKind::Link => "LINK",
            OpKind::Readdir => "READDIR",
            OpKind::Readdirplus => "READDIRPLUS",
            OpKind::Fsinfo => "FSINFO",
            OpKind::Commit => "COMMIT",
            OpKind::Open => "OPEN",
            OpKind::Close => "CLOSE",
            OpKind::Session => "SESSION",
            OpKind::Mount => "MOUNT",
            OpKind::Fsstat => "FSSTAT",
        }
    }

    pub(crate) fn from_index(i: u8) -> Option<OpKind> {
        OP_KINDS.get(i as usize).copied()
    }

    /// Doing it twice does no more harm than once: sent again after a
    /// lost connection. The rest fail as "outcome unknown" instead.
    pub(crate) fn idempotent(self) -> bool {
        !matches!(
            self,
            OpKind::Setattr
                | OpKind::Mkdir
                | OpKind::Remove
                | OpKind::Rmdir
                | OpKind::Rename
                | OpKind::Link
                | OpKind::Session
        )
    }
}

/// What the server reports of its file system (NFSv3 FSINFO; NFSv4
/// attributes and the session's limits).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FsInfo {
    pub(crate) rtmax: u32,
    pub(crate) rtpref: u32,
    pub(crate) wtmax: u32,
    pub(crate) wtpref: u32,
    pub(crate) dtpref: u32,
    pub(crate) maxfilesize: u64,
    /// NFSv4.1: the lease, in seconds (state is renewed well within it).
    pub(crate) lease: u32,
    /// NFSv4 space_avail and space_total (FSSTAT's in NFSv3).
    pub(crate) avail: u64,
    pub(crate) total: u64,
}

/// A request, borrowed for as long as `queue` takes to encode it; only a
/// READ's and a WRITE's buffers are kept, by pointer, until completion.
#[derive(Debug, Clone, Copy)]
pub enum Request<'a> {
    Null,
    Getattr(&'a Fh),
    Lookup {
        dir: &'a Fh,
        name: &'a [u8],
    },
    Access {
        fh: &'a Fh,
        mask: u32,
    },
    /// A regular file. With `open`, NFSv4.1 keeps it open (its stateid in
    /// the client's file table) and the reply names the file's number.
    Create {
        dir: &'a Fh,
        name: &'a [u8],
        mode: u32,
        how: CreateHow,
        open: bool,
    },
    Mkdir {
        dir: &'a Fh,
        name: &'a [u8],
        mode: u32,
    },
    Remove {
        dir: &'a Fh,
        name: &'a [u8],
    },
    Rmdir {
        dir: &'a Fh,
        name: &'a [u8],
    },
    /// NFS's RENAME, which replaces an existing target: see
    /// `Client::rename_noreplace` for the one that never does.
    Rename {
        from: &'a Fh,
        from_name: &'a [u8],
        to: &'a Fh,
        to_name: &'a [u8],
    },
    Link {
        fh: &'a Fh,
        dir: &'a Fh,
        name: &'a [u8],
    },
    /// SETATTR of the size and the mode, when given, and with `times` the
    /// access and modify times set to the server's clock (a `touch`).
    Setattr {
        fh: &'a Fh,
        size: Option<u64>,
        mode: Option<u32>,
        times: bool,
    },
    /// One page of a directory, into the client's page (`Client::dir_page`).
    Readdir {
        dir: &'a Fh,
        cookie: u64,
        verf: [u8; 8],
        plus: bool,
    },
    Fsinfo(&'a Fh),
    Fsstat(&'a Fh),
    /// `file` is a number from the client's file table (`Client::open`).
    Read {
        file: u32,
        offset: u64,
        len: u32,
        buf: *mut u8,
    },
    Write {
        file: u32,
        offset: u64,
        len: u32,
        buf: *const u8,
        stable: Stable,
    },
    Commit {
        file: u32,
        offset: u64,
        len: u32,
    },
}

impl Request<'_> {
    pub(crate) fn kind(&self) -> OpKind {
        match self {
            Request::Null => OpKind::Null,
            Request::Getattr(_) => OpKind::Getattr,
            Request::Lookup { .. } => OpKind::Lookup,
            Request::Access { .. } => OpKind::Access,
            Request::Create { .. } => OpKind::Create,
            Request::Mkdir { .. } => OpKind::Mkdir,
            Request::Remove { .. } => OpKind::Remove,
            Request::Rmdir { .. } => OpKind::Rmdir,
            Request::Rename { .. } => OpKind::Rename,
            Request::Link { .. } => OpKind::Link,
            Request::Setattr { .. } => OpKind::Setattr,
            Request::Readdir { plus: false, .. } => OpKind::Readdir,
            Request::Readdir { plus: true, .. } => OpKind::Readdirplus,
            Request::Fsinfo(_) => OpKind::Fsinfo,
            Request::Fsstat(_) => OpKind::Fsstat,
            Request::Read { .. } => OpKind::Read,
            Request::Write { .. } => OpKind::Write,
            Request::Commit { .. } => OpKind::Commit,
        }
    }

    /// Names are one component: no '/', no NUL, not "." or "..", at most
    /// NAME_MAX bytes.
    pub(crate) fn check_names(&self) -> Result<(), &'static str> {
        let names: [&[u8]; 2] = match self {
            Request::Lookup { name, .. }
            | Request::Create { name, .. }
            | Request::Mkdir { name, .. }
            | Request::Remove { name, .. }
            | Request::Rmdir { name, .. }
            | Request::Link { name, .. } => [name, b"x"],
            Request::Rename {
                from_name, to_name, ..
            } => [from_name, to_name],
            _ => return Ok(()),
        };
        for n in names {
            check_name(n)?;
        }
        Ok(())
    }
}

pub(crate) fn check_name(n: &[u8]) -> Result<(), &'static str> {
    if n.is_empty() || n == b"." || n == b".." {
        return Err("a name that is empty, '.' or '..'");
    }
    if n.len() > NAME_MAX {
        return Err("a name longer than 255 bytes");
    }
    if n.iter().any(|&b| b == b'/' || b == 0) {
        return Err("a name with '/' or NUL in it");
    }
    Ok(())
}

/// What a request returned.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Reply {
    Done,
    Attr(Attr),
    /// LOOKUP, CREATE, MKDIR: the object's handle and attributes.
    Handle {
        fh: Fh,
        attr: Option<Attr>,
    },
    /// CREATE with `open`: the file's number in the client's file table.
    Opened {
        file: u32,
        fh: Fh,
        attr: Option<Attr>,
    },
    Access {
        granted: u32,
    },
    Read {
        count: u32,
        eof: bool,
    },
    Write {
        count: u32,
        committed: Stable,
        verf: [u8; 8],
    },
    Commit {
        verf: [u8; 8],
    },
    /// A READDIR page: its entries are in `Client::dir_page`.
    Dir {
        entries: u32,
        eof: bool,
        verf: [u8; 8],
    },
    Fsinfo(FsInfo),
    /// The file system's bytes: free to this user, and in all.
    Space {
        avail: u64,
        total: u64,
    },
}

/// One directory entry of a page.
#[derive(Debug, Clone, Copy)]
pub struct Entry {
    // READDIRPLUS returns the id and handle with each name; decoded and
    // kept, though no reader needs them yet (a tree's listing reads the
    // attributes).
    #[allow(dead_code)]
    pub(crate) fileid: u64,
    pub(crate) cookie: u64,
    name_at: u32,
    name_len: u16,
    pub(crate) attr: Option<Attr>,
    #[allow(dead_code)]
    pub(crate) fh: Option<Fh>,
}

/// A page of directory entries, reused page after page.
#[derive(Debug, Default)]
pub struct DirPage {
    names: Vec<u8>,
    pub(crate) entries: Vec<Entry>,
}

impl DirPage {
    pub(crate) fn clear(&mut self) {
        self.names.clear();
        self.entries.clear();
    }

    pub(crate) fn push(
        &mut self,
        fileid: u64,
        cookie: u64,
        name: &[u8],
        attr: Option<Attr>,
        fh: Option<Fh>,
    ) {
        let name_at = self.names.len() as u32;
        self.names.extend_from_slice(name);
        self.entries.push(Entry {
            fileid,
            cookie,
            name_at,
            name_len: name.len() as u16,
            attr,
            fh,
        });
    }

    pub fn name(&self, e: &Entry) -> &[u8] {
        &self.names[e.name_at as usize..e.name_at as usize + e.name_len as usize]
    }
}

/// ACCESS bits (the same numbers in NFSv3 and NFSv4).
// The protocol's whole table, as the spec lists it: a bit or code not
// used yet is still named here, so a reader checks it against the spec.
#[allow(dead_code)]
pub(crate) mod access {
    pub(crate) const READ: u32 = 0x01;
    pub(crate) const LOOKUP: u32 = 0x02;
    pub(crate) const MODIFY: u32 = 0x04;
    pub(crate) const EXTEND: u32 = 0x08;
    pub(crate) const DELETE: u32 = 0x10;
    pub(crate) const EXECUTE: u32 = 0x20;
}
