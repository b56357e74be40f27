//! The numbers of the SMB2/3 protocol ([MS-SMB2] section 2.2): commands,
//! status codes, flags, capabilities, dialects, cipher and signing ids.

/// The commands this client sends, by their wire code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u16)]
pub enum Command {
    Negotiate = 0,
    SessionSetup = 1,
    Logoff = 2,
    TreeConnect = 3,
    TreeDisconnect = 4,
    Create = 5,
    Close = 6,
    Flush = 7,
    Read = 8,
    Write = 9,
    Lock = 10,
    Ioctl = 11,
    Cancel = 12,
    Echo = 13,
    QueryDirectory = 14,
    ChangeNotify = 15,
    QueryInfo = 16,
    SetInfo = 17,
    OplockBreak = 18,
}

/// How many commands there are (per-command tables are this long).
pub(crate) const COMMANDS: usize = 19;

impl Command {
    /// Every command, in wire-code order (index = code).
    // Read by the smb:// back end (Unix only for now).
    #[cfg_attr(not(unix), allow(dead_code))]
    pub(crate) const ALL: [Command; COMMANDS] = [
        Command::Negotiate,
        Command::SessionSetup,
        Command::Logoff,
        Command::TreeConnect,
        Command::TreeDisconnect,
        Command::Create,
        Command::Close,
        Command::Flush,
        Command::Read,
        Command::Write,
        Command::Lock,
        Command::Ioctl,
        Command::Cancel,
        Command::Echo,
        Command::QueryDirectory,
        Command::ChangeNotify,
        Command::QueryInfo,
        Command::SetInfo,
        Command::OplockBreak,
    ];

    /// The name as [MS-SMB2] spells it ("READ", "QUERY_INFO"), as the
    /// per-operation figures of every protocol client name their calls.
    #[cfg_attr(not(unix), allow(dead_code))]
    pub(crate) fn wire_name(self) -> &'static str {
        match self {
            Command::Negotiate => "NEGOTIATE",
            Command::SessionSetup => "SESSION_SETUP",
            Command::Logoff => "LOGOFF",
            Command::TreeConnect => "TREE_CONNECT",
            Command::TreeDisconnect => "TREE_DISCONNECT",
            Command::Create => "CREATE",
            Command::Close => "CLOSE",
            Command::Flush => "FLUSH",
            Command::Read => "READ",
            Command::Write => "WRITE",
            Command::Lock => "LOCK",
            Command::Ioctl => "IOCTL",
            Command::Cancel => "CANCEL",
            Command::Echo => "ECHO",
            Command::QueryDirectory => "QUERY_DIRECTORY",
            Command::ChangeNotify => "CHANGE_NOTIFY",
            Command::QueryInfo => "QUERY_INFO",
            Command::SetInfo => "SET_INFO",
            Command::OplockBreak => "OPLOCK_BREAK",
        }
    }

    /// The name Windows' counters and Wireshark use.
    pub fn name(self) -> &'static str {
        match self {
            Command::Negotiate => "negotiate",
            Command::SessionSetup => "session_setup",
            Command::Logoff => "logoff",
            Command::TreeConnect => "tree_connect",
            Command::TreeDisconnect => "tree_disconnect",
            Command::Create => "create",
            Command::Close => "close",
            Command::Flush => "flush",
            Command::Read => "read",
            Command::Write => "write",
            Command::Lock => "lock",
            Command::Ioctl => "ioctl",
            Command::Cancel => "cancel",
            Command::Echo => "echo",
            Command::QueryDirectory => "query_directory",
            Command::ChangeNotify => "change_notify",
            Command::QueryInfo => "query_info",
            Command::SetInfo => "set_info",
            Command::OplockBreak => "oplock_break",
        }
    }
}

/// NT status codes this client tells apart ([MS-ERREF] 2.3.1).
pub mod status {
    pub(crate) const SUCCESS: u32 = 0x0000_0000;
    pub(crate) const PENDING: u32 = 0x0000_0103;
    pub(crate) const NO_MORE_FILES: u32 = 0x8000_0006;
    pub(crate) const BUFFER_OVERFLOW: u32 = 0x8000_0005;
    pub(crate) const MORE_PROCESSING_REQUIRED: u32 = 0xC000_0016;
    pub(crate) const INVALID_PARAMETER: u32 = 0xC000_000D;
    pub(crate) const NO_SUCH_FILE: u32 = 0xC000_000F;
    pub(crate) const END_OF_FILE: u32 = 0xC000_0011;
    pub const ACCESS_DENIED: u32 = 0xC000_0022;
    pub(crate) const OBJECT_NAME_INVALID: u32 = 0xC000_0033;
    pub(crate) const OBJECT_NAME_NOT_FOUND: u32 = 0xC000_0034;
    pub const OBJECT_NAME_COLLISION: u32 = 0xC000_0035;
    pub const OBJECT_PATH_NOT_FOUND: u32 = 0xC000_003A;
    pub(crate) const SHARING_VIOLATION: u32 = 0xC000_0043;
    pub(crate) const DELETE_PENDING: u32 = 0xC000_0056;
    pub(crate) const LOGON_FAILURE: u32 = 0xC000_006D;
    pub(crate) const ACCOUNT_RESTRICTION: u32 = 0xC000_006E;
    pub(crate) const DISK_FULL: u32 = 0xC000_007F;
    pub(crate) const INSUFFICIENT_RESOURCES: u32 = 0xC000_009A;
    pub(crate) const FILE_IS_A_DIRECTORY: u32 = 0xC000_00BA;
    pub(crate) const NOT_SUPPORTED: u32 = 0xC000_00BB;
    pub(crate) const NETWORK_NAME_DELETED: u32 = 0xC000_00C9;
    pub(crate) const BAD_NETWORK_NAME: u32 = 0xC000_00CC;
    pub(crate) const REQUEST_NOT_ACCEPTED: u32 = 0xC000_00D0;
    pub(crate) const NOT_A_DIRECTORY: u32 = 0xC000_0103;
    pub(crate) const DIRECTORY_NOT_EMPTY: u32 = 0xC000_0101;
    pub(crate) const CANCELLED: u32 = 0xC000_0120;
    pub(crate) const FILE_CLOSED: u32 = 0xC000_0128;
    pub(crate) const USER_SESSION_DELETED: u32 = 0xC000_0203;
    pub(crate) const NETWORK_SESSION_EXPIRED: u32 = 0xC000_035C;
    pub(crate) const STOPPED_ON_SYMLINK: u32 = 0x8000_002D;
    pub(crate) const ACCESS_DENIED_SIGNING: u32 = 0xC000_A100;
    pub(crate) const INVALID_SIGNATURE: u32 = 0xC000_A000;
    pub(crate) const QUOTA_EXCEEDED: u32 = 0xC000_0044;

    /// A short name for a status, as Windows and Samba print them.
    pub(crate) fn name(code: u32) -> &'static str {
        match code {
            SUCCESS => "STATUS_SUCCESS",
            PENDING => "STATUS_PENDING",
            NO_MORE_FILES => "STATUS_NO_MORE_FILES",
            BUFFER_OVERFLOW => "STATUS_BUFFER_OVERFLOW",
            MORE_PROCESSING_REQUIRED => "STATUS_MORE_PROCESSING_REQUIRED",
            INVALID_PARAMETER => "STATUS_INVALID_PARAMETER",
            NO_SUCH_FILE => "STATUS_NO_SUCH_FILE",
            END_OF_FILE => "STATUS_END_OF_FILE",
            ACCESS_DENIED => "STATUS_ACCESS_DENIED",
            OBJECT_NAME_INVALID => "STATUS_OBJECT_NAME_INVALID",
            OBJECT_NAME_NOT_FOUND => "STATUS_OBJECT_NAME_NOT_FOUND",
            OBJECT_NAME_COLLISION => "STATUS_OBJECT_NAME_COLLISION",
            OBJECT_PATH_NOT_FOUND => "STATUS_OBJECT_PATH_NOT_FOUND",
            SHARING_VIOLATION => "STATUS_SHARING_VIOLATION",
            DELETE_PENDING => "STATUS_DELETE_PENDING",
            LOGON_FAILURE => "STATUS_LOGON_FAILURE",
            ACCOUNT_RESTRICTION => "STATUS_ACCOUNT_RESTRICTION",
            DISK_FULL => "STATUS_DISK_FULL",
            INSUFFICIENT_RESOURCES => "STATUS_INSUFFICIENT_RESOURCES",
            FILE_IS_A_DIRECTORY => "STATUS_FILE_IS_A_DIRECTORY",
            NOT_SUPPORTED => "STATUS_NOT_SUPPORTED",
            NETWORK_NAME_DELETED => "STATUS_NETWORK_NAME_DELETED",
            BAD_NETWORK_NAME => "STATUS_BAD_NETWORK_NAME",
            REQUEST_NOT_ACCEPTED => "STATUS_REQUEST_NOT_ACCEPTED",
            NOT_A_DIRECTORY => "STATUS_NOT_A_DIRECTORY",
            DIRECTORY_NOT_EMPTY => "STATUS_DIRECTORY_NOT_EMPTY",
            CANCELLED => "STATUS_CANCELLED",
            FILE_CLOSED => "STATUS_FILE_CLOSED",
            USER_SESSION_DELETED => "STATUS_USER_SESSION_DELETED",
            NETWORK_SESSION_EXPIRED => "STATUS_NETWORK_SESSION_EXPIRED",
            STOPPED_ON_SYMLINK => "STATUS_STOPPED_ON_SYMLINK",
            ACCESS_DENIED_SIGNING => "STATUS_ACCESS_DENIED (signing)",
            INVALID_SIGNATURE => "STATUS_INVALID_SIGNATURE",
            QUOTA_EXCEEDED => "STATUS_QUOTA_EXCEEDED",
            _ => "an NT status",
        }
    }

    /// Errors have the two top bits set; warnings (0x8...) are not failures
    /// for every command (a directory listing's end, a short buffer).
    pub(crate) fn is_error(code: u32) -> bool {
        code >> 30 == 3
    }
}

/// Header flags (2.2.1.2).
// The protocol's whole table, as the spec lists it: a bit or code not
// used yet is still named here, so a reader checks it against the spec.
#[allow(dead_code)]
pub(crate) mod flags {
    pub(crate) const SERVER_TO_REDIR: u32 = 0x0000_0001;
    pub(crate) const ASYNC_COMMAND: u32 = 0x0000_0002;
    pub(crate) const RELATED_OPERATIONS: u32 = 0x0000_0004;
    pub(crate) const SIGNED: u32 = 0x0000_0008;
}

/// Dialect revisions (2.2.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Dialect {
    Smb210,
    Smb300,
    Smb302,
    Smb311,
}

impl Dialect {
    pub(crate) const ALL: [Dialect; 4] = [
        Dialect::Smb210,
        Dialect::Smb300,
        Dialect::Smb302,
        Dialect::Smb311,
    ];

    pub(crate) fn code(self) -> u16 {
        match self {
            Dialect::Smb210 => 0x0210,
            Dialect::Smb300 => 0x0300,
            Dialect::Smb302 => 0x0302,
            Dialect::Smb311 => 0x0311,
        }
    }

    pub(crate) fn from_code(code: u16) -> Option<Dialect> {
        Dialect::ALL.into_iter().find(|d| d.code() == code)
    }

    /// As the user writes it and the result records it: "3.1.1".
    pub fn name(self) -> &'static str {
        match self {
            Dialect::Smb210 => "2.1",
            Dialect::Smb300 => "3.0",
            Dialect::Smb302 => "3.0.2",
            Dialect::Smb311 => "3.1.1",
        }
    }

    pub fn parse(s: &str) -> Option<Dialect> {
        Dialect::ALL.into_iter().find(|d| d.name() == s)
    }

    pub(crate) fn is_smb3(self) -> bool {
        self >= Dialect::Smb300
    }
}

/// Global capabilities (2.2.3).
// The protocol's whole table, as the spec lists it: a bit or code not
// used yet is still named here, so a reader checks it against the spec.
#[allow(dead_code)]
pub(crate) mod caps {
    pub(crate) const DFS: u32 = 0x01;
    pub(crate) const LEASING: u32 = 0x02;
    pub(crate) const LARGE_MTU: u32 = 0x04;
    pub(crate) const MULTI_CHANNEL: u32 = 0x08;
    pub(crate) const PERSISTENT_HANDLES: u32 = 0x10;
    pub(crate) const DIRECTORY_LEASING: u32 = 0x20;
    pub(crate) const ENCRYPTION: u32 = 0x40;
}

/// Security mode bits (2.2.3).
pub(crate) mod security_mode {
    pub(crate) const SIGNING_ENABLED: u16 = 0x0001;
    pub(crate) const SIGNING_REQUIRED: u16 = 0x0002;
}

/// Session flags in a SESSION_SETUP response (2.2.6).
pub(crate) mod session_flags {
    pub(crate) const IS_GUEST: u16 = 0x0001;
    pub(crate) const IS_NULL: u16 = 0x0002;
    pub(crate) const ENCRYPT_DATA: u16 = 0x0004;
}

/// Share flags in a TREE_CONNECT response (2.2.10).
pub(crate) mod share_flags {
    pub(crate) const ENCRYPT_DATA: u32 = 0x0000_8000;
}

/// The ciphers of the transform header (2.2.3.1.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Cipher {
    Aes128Ccm,
    Aes128Gcm,
    Aes256Ccm,
    Aes256Gcm,
}

impl Cipher {
    pub const ALL: [Cipher; 4] = [
        Cipher::Aes128Gcm,
        Cipher::Aes128Ccm,
        Cipher::Aes256Gcm,
        Cipher::Aes256Ccm,
    ];

    pub(crate) fn code(self) -> u16 {
        match self {
            Cipher::Aes128Ccm => 1,
            Cipher::Aes128Gcm => 2,
            Cipher::Aes256Ccm => 3,
            Cipher::Aes256Gcm => 4,
        }
    }

    pub(crate) fn from_code(code: u16) -> Option<Cipher> {
        Cipher::ALL.into_iter().find(|c| c.code() == code)
    }

    pub fn name(self) -> &'static str {
        match self {
            Cipher::Aes128Ccm => "AES-128-CCM",
            Cipher::Aes128Gcm => "AES-128-GCM",
            Cipher::Aes256Ccm => "AES-256-CCM",
            Cipher::Aes256Gcm => "AES-256-GCM",
        }
    }

    pub fn parse(s: &str) -> Option<Cipher> {
        Cipher::ALL
            .into_iter()
            .find(|c| c.name().eq_ignore_ascii_case(s))
    }

    pub(crate) fn key_len(self) -> usize {
        match self {
            Cipher::Aes128Ccm | Cipher::Aes128Gcm => 16,
            Cipher::Aes256Ccm | Cipher::Aes256Gcm => 32,
        }
    }
}

/// The signing algorithms (2.2.3.1.7); HMAC-SHA256 is 2.x's, AES-CMAC
/// 3.0's, AES-GMAC only by a 3.1.1 negotiate context.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SigningAlgo {
    HmacSha256,
    AesCmac,
    AesGmac,
}

impl SigningAlgo {
    pub(crate) fn code(self) -> u16 {
        match self {
            SigningAlgo::HmacSha256 => 0,
            SigningAlgo::AesCmac => 1,
            SigningAlgo::AesGmac => 2,
        }
    }

    pub(crate) fn from_code(code: u16) -> Option<SigningAlgo> {
        [
            SigningAlgo::HmacSha256,
            SigningAlgo::AesCmac,
            SigningAlgo::AesGmac,
        ]
        .into_iter()
        .find(|a| a.code() == code)
    }

    pub fn name(self) -> &'static str {
        match self {
            SigningAlgo::HmacSha256 => "HMAC-SHA256",
            SigningAlgo::AesCmac => "AES-CMAC",
            SigningAlgo::AesGmac => "AES-GMAC",
        }
    }
}

/// Access mask bits (2.2.13.1).
// The protocol's whole table, as the spec lists it: a bit or code not
// used yet is still named here, so a reader checks it against the spec.
#[allow(dead_code)]
pub(crate) mod access {
    pub(crate) const READ_DATA: u32 = 0x0000_0001;
    pub(crate) const WRITE_DATA: u32 = 0x0000_0002;
    pub(crate) const APPEND_DATA: u32 = 0x0000_0004;
    pub(crate) const READ_EA: u32 = 0x0000_0008;
    pub(crate) const WRITE_EA: u32 = 0x0000_0010;
    pub(crate) const LIST_DIRECTORY: u32 = 0x0000_0001;
    pub(crate) const ADD_FILE: u32 = 0x0000_0002;
    pub(crate) const ADD_SUBDIRECTORY: u32 = 0x0000_0004;
    pub(crate) const READ_ATTRIBUTES: u32 = 0x0000_0080;
    pub(crate) const WRITE_ATTRIBUTES: u32 = 0x0000_0100;
    pub(crate) const DELETE: u32 = 0x0001_0000;
    pub(crate) const READ_CONTROL: u32 = 0x0002_0000;
    pub(crate) const SYNCHRONIZE: u32 = 0x0010_0000;
}

/// Share access (2.2.13).
pub(crate) mod share {
    pub(crate) const READ: u32 = 1;
    pub(crate) const WRITE: u32 = 2;
    pub(crate) const DELETE: u32 = 4;
    pub(crate) const ALL: u32 = READ | WRITE | DELETE;
}

/// Create options (2.2.13).
// The protocol's whole table, as the spec lists it: a bit or code not
// used yet is still named here, so a reader checks it against the spec.
#[allow(dead_code)]
pub(crate) mod create_options {
    pub(crate) const DIRECTORY_FILE: u32 = 0x0000_0001;
    pub(crate) const WRITE_THROUGH: u32 = 0x0000_0002;
    pub(crate) const SEQUENTIAL_ONLY: u32 = 0x0000_0004;
    pub(crate) const NO_INTERMEDIATE_BUFFERING: u32 = 0x0000_0008;
    pub(crate) const NON_DIRECTORY_FILE: u32 = 0x0000_0040;
    pub(crate) const RANDOM_ACCESS: u32 = 0x0000_0800;
    /// Opens a reparse point (a symbolic link) itself instead of following it.
    pub(crate) const OPEN_REPARSE_POINT: u32 = 0x0020_0000;
}

/// File attributes (MS-FSCC 2.6).
// The protocol's whole table, as the spec lists it: a bit or code not
// used yet is still named here, so a reader checks it against the spec.
#[allow(dead_code)]
pub(crate) mod attrs {
    pub(crate) const READONLY: u32 = 0x0001;
    pub(crate) const HIDDEN: u32 = 0x0002;
    pub(crate) const DIRECTORY: u32 = 0x0010;
    pub(crate) const ARCHIVE: u32 = 0x0020;
    pub(crate) const NORMAL: u32 = 0x0080;
    pub(crate) const REPARSE_POINT: u32 = 0x0400;
}
