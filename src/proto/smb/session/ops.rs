//! The client's synchronous file operations on its first channel: open
//! (creating only new files), close, attributes, the owner, set-info
//! (size, times, a rename that never replaces, delete on close), flush, a
//! read or write, a bounded directory listing, ECHO. Each waits for its own reply and turns
//! a refusal into one error naming the path. Set-up, metadata and tests
//! use these; the I/O path queues on the channels instead.

use super::super::conn::channel::CALL_TAG;
use super::super::conn::{Completion, Outcome};
use super::super::consts::{Command, access, create_options, share, status};
use super::super::error::{SmbError, SmbResult};
use super::super::msg::FileId;
use super::super::msg::dir::{self, DirEntry};
use super::super::msg::file::{CreateRequest, CreateResponse, Disposition, FileTimes};
use super::super::msg::info::{self, FileInfo, SetInfo};
use super::super::msg::security::{self, Sid};
use super::client::Client;
use super::setup::{Call, roundtrip};

/// Why a file is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Open {
    /// A new file, for reading and writing; fails if the name exists.
    CreateFile,
    /// A new directory; fails if the name exists.
    CreateDir,
    /// An existing file or directory, to read its data and attributes.
    Read,
    /// An existing file to write into: only for a file already proven the
    /// caller's own (the caller checks, this layer cannot know).
    WriteExisting,
    /// An existing directory, to list.
    ListDir,
    /// An existing file or directory, to rename or delete.
    Change,
    /// An existing file whose times are set (and nothing else written).
    SetTimes,
}

impl Open {
    fn request(self, path: &str) -> CreateRequest<'_> {
        use Open::*;
        let rd = access::READ_DATA | access::READ_ATTRIBUTES | access::SYNCHRONIZE;
        let rw = rd | access::WRITE_DATA | access::APPEND_DATA | access::WRITE_ATTRIBUTES;
        let (access, disposition, options) = match self {
            CreateFile => (
                rw | access::DELETE | access::READ_CONTROL,
                Disposition::Create,
                create_options::NON_DIRECTORY_FILE,
            ),
            CreateDir => (
                rd | access::DELETE,
                Disposition::Create,
                create_options::DIRECTORY_FILE,
            ),
            Read => (rd, Disposition::Open, 0),
            // READ_CONTROL: the owner is read on the handle a change goes
            // through (`owner`), so the file proven is the file changed.
            WriteExisting => (
                rw | access::READ_CONTROL,
                Disposition::Open,
                create_options::NON_DIRECTORY_FILE,
            ),
            ListDir => (rd, Disposition::Open, create_options::DIRECTORY_FILE),
            Change => (
                access::READ_ATTRIBUTES
                    | access::DELETE
                    | access::READ_CONTROL
                    | access::SYNCHRONIZE,
                Disposition::Open,
                0,
            ),
            SetTimes => (
                access::READ_ATTRIBUTES
                    | access::WRITE_ATTRIBUTES
                    | access::READ_CONTROL
                    | access::SYNCHRONIZE,
                Disposition::Open,
                create_options::NON_DIRECTORY_FILE,
            ),
        };
        CreateRequest {
            path,
            access,
            attributes: 0,
            share: share::ALL,
            disposition,
            // Never through a symbolic link: the link itself is opened.
            options: options | create_options::OPEN_REPARSE_POINT,
        }
    }
}

/// Paths are given with '/' and sent with '\' (relative to the share).
pub(crate) fn wire_path(path: &str) -> String {
    path.trim_start_matches('/').replace('/', "\\")
}

impl Client {
    /// The channel the synchronous calls go on: none is left after a
    /// reconnect that failed, which is an error, never a panic.
    fn first(&mut self) -> SmbResult<&mut super::super::conn::channel::Channel> {
        self.channels.first_mut().ok_or_else(|| {
            SmbError::Protocol("no connection to the server is left (a reconnect failed)".into())
        })
    }

    fn sync(
        &mut self,
        what: &str,
        queue: impl FnOnce(&mut super::super::conn::channel::Channel, u32),
    ) -> SmbResult<Completion> {
        let tree = self.tree_id;
        let ch = self.first()?;
        queue(ch, tree);
        let c = ch.wait_for(CALL_TAG)?;
        if status::is_error(c.status) {
            return Err(SmbError::status(c.command, c.status, what.to_string()));
        }
        Ok(c)
    }

    /// Opens `path` (relative to the share root, '/'-separated).
    pub fn open(&mut self, path: &str, how: Open) -> SmbResult<CreateResponse> {
        let p = wire_path(path);
        let req = how.request(&p);
        let c = self.sync(&format!("opening {path}"), |ch, tree| {
            ch.queue_create(CALL_TAG, tree, &req)
        })?;
        match c.outcome {
            Outcome::Created(r) => Ok(r),
            _ => Err(SmbError::Protocol(
                "a CREATE reply without its fields".into(),
            )),
        }
    }

    pub fn close(&mut self, file: FileId) -> SmbResult<FileTimes> {
        let c = self.sync("closing a file", |ch, tree| {
            ch.queue_close(CALL_TAG, tree, file)
        })?;
        match c.outcome {
            Outcome::Closed(t) => Ok(t),
            _ => Err(SmbError::Protocol(
                "a CLOSE reply without its fields".into(),
            )),
        }
    }

    /// A file's id, times, attributes, size and link count.
    pub fn file_info(&mut self, file: FileId) -> SmbResult<FileInfo> {
        let c = self.sync("reading a file's attributes", |ch, tree| {
            ch.queue_query_info(CALL_TAG, tree, file, false)
        })?;
        match c.outcome {
            Outcome::Info(i) => Ok(i),
            _ => Err(SmbError::Protocol(
                "a QUERY_INFO reply without its fields".into(),
            )),
        }
    }

    /// Changes a file; a rename's new path is '/'-separated from the share
    /// root, and never replaces what is there.
    pub fn set_info(&mut self, file: FileId, what: SetInfo<'_>) -> SmbResult<()> {
        let renamed;
        let what = if let SetInfo::Rename(p) = what {
            renamed = wire_path(p);
            SetInfo::Rename(&renamed)
        } else {
            what
        };
        self.sync("changing a file", |ch, tree| {
            ch.queue_set_info(CALL_TAG, tree, file, what)
        })?;
        Ok(())
    }

    pub fn flush(&mut self, file: FileId) -> SmbResult<()> {
        self.sync("flushing a file", |ch, tree| {
            ch.queue_flush(CALL_TAG, tree, file)
        })?;
        Ok(())
    }

    /// Reads into `buf` at `offset` (one request: `buf` at most max_io);
    /// returns the bytes read, 0 at the end of the file.
    pub fn read_at(&mut self, file: FileId, offset: u64, buf: &mut [u8]) -> SmbResult<usize> {
        let len = buf.len().min(self.negotiated().max_io as usize) as u32;
        let ptr = buf.as_mut_ptr();
        // SAFETY: `buf` outlives the wait below, which returns only after
        // this request's completion (or with the channel failed).
        let c = self.sync("reading", |ch, tree| unsafe {
            ch.queue_read(CALL_TAG, tree, file, offset, len, ptr)
        });
        match c {
            Err(e) if e.nt_status() == Some(status::END_OF_FILE) => Ok(0),
            Err(e) => Err(e),
            Ok(Completion {
                outcome: Outcome::Bytes(n),
                ..
            }) => Ok(n as usize),
            Ok(_) => Err(SmbError::Protocol("a READ reply without data".into())),
        }
    }

    /// Writes `buf` at `offset` (one request); returns the bytes written.
    pub fn write_at(&mut self, file: FileId, offset: u64, buf: &[u8]) -> SmbResult<usize> {
        let len = buf.len().min(self.negotiated().max_io as usize) as u32;
        let ptr = buf.as_ptr();
        // SAFETY: as in read_at: `buf` outlives the completion.
        let c = self.sync("writing", |ch, tree| unsafe {
            ch.queue_write(CALL_TAG, tree, file, offset, len, ptr, false)
        })?;
        match c.outcome {
            Outcome::Bytes(n) => Ok(n as usize),
            _ => Err(SmbError::Protocol("a WRITE reply without a count".into())),
        }
    }

    /// The volume's size and what the caller may still use, as the share
    /// holding the open `file` reports it.
    pub fn fs_size(&mut self, file: FileId) -> SmbResult<super::super::msg::info::FsSize> {
        let c = self.sync("reading the volume's size", |ch, tree| {
            ch.queue_query_info(CALL_TAG, tree, file, true)
        })?;
        match c.outcome {
            Outcome::FsSize(f) => Ok(f),
            _ => Err(SmbError::Protocol(
                "a QUERY_INFO reply without the volume's size".into(),
            )),
        }
    }

    /// The owner the server names for the open `file` (its security
    /// descriptor's owner SID); None if it names none. The handle must
    /// have been opened with READ_CONTROL (`WriteExisting`, `Change`,
    /// `SetTimes`).
    #[cfg_attr(not(unix), allow(dead_code))]
    pub(crate) fn owner(&mut self, file: FileId) -> SmbResult<Option<Sid>> {
        let tree = self.tree_id;
        let ch = self.first()?;
        let st = roundtrip(ch, Command::QueryInfo, tree, Call::default(), |v| {
            info::encode_query_info(
                security::INFO_SECURITY,
                0,
                security::OWNER_REPLY_MAX,
                security::OWNER_SECURITY_INFORMATION,
                file,
                v,
            )
        })?;
        if st != status::SUCCESS {
            return Err(SmbError::status(
                Command::QueryInfo,
                st,
                "reading a file's owner",
            ));
        }
        let peer = ch.peer().to_string();
        let (reply, _) = ch.kept();
        let buf = info::decode_query_info(reply).map_err(|m| SmbError::protocol(&peer, m))?;
        security::decode_owner(buf).map_err(|m| SmbError::protocol(&peer, m))
    }

    /// Whether the connection is gone: it failed (reset, closed, a
    /// request unanswered past its timeout, a hostile reply), and every
    /// call on it fails from then on.
    pub fn lost(&self) -> bool {
        self.channels.first().is_none_or(|c| c.is_broken())
    }

    pub fn echo(&mut self) -> SmbResult<()> {
        self.sync("ECHO", |ch, _| ch.queue_echo(CALL_TAG))?;
        Ok(())
    }

    /// Lists directory `path`: at most `max` entries ("." and ".." left
    /// out); the bool says whether more were left unread.
    pub fn list(&mut self, path: &str, max: usize) -> SmbResult<(Vec<DirEntry>, bool)> {
        let d = self.open(path, Open::ListDir)?;
        let r = self.list_open(d.file_id, path, max);
        let _ = self.close(d.file_id);
        r
    }

    fn list_open(
        &mut self,
        dirf: FileId,
        path: &str,
        max: usize,
    ) -> SmbResult<(Vec<DirEntry>, bool)> {
        let mut out = Vec::new();
        let more = self.read_dir(dirf, path, max, |e| out.push(e.owned()))?;
        Ok((out, more))
    }

    /// Reads the open directory `dirf` from its start, each entry ("."
    /// and ".." left out) to `each` as it is decoded, nothing kept: at
    /// most `max` of them; the bool says whether more were left unread.
    /// A server that sends an empty page before NO_MORE_FILES ends it.
    pub(crate) fn read_dir(
        &mut self,
        dirf: FileId,
        path: &str,
        max: usize,
        mut each: impl FnMut(&dir::EntryRef<'_>),
    ) -> SmbResult<bool> {
        let tree = self.tree_id;
        let mut flags = dir::RESTART_SCANS;
        let mut seen = 0usize;
        loop {
            let ch = self.first()?;
            let st = roundtrip(ch, Command::QueryDirectory, tree, Call::default(), |v| {
                dir::encode_query_directory(dirf, flags, "*", 65536, v)
            })?;
            flags = 0;
            if st == status::NO_MORE_FILES {
                return Ok(false);
            }
            if st != status::SUCCESS {
                return Err(SmbError::status(
                    Command::QueryDirectory,
                    st,
                    format!("listing {path}"),
                ));
            }
            let peer = ch.peer().to_string();
            let (reply, _) = ch.kept();
            let buf =
                dir::decode_query_directory(reply).map_err(|m| SmbError::protocol(&peer, m))?;
            let mut full = false;
            let n = dir::each_entry(buf, |e| {
                if e.is_dot() || full {
                    return;
                }
                if seen == max {
                    full = true;
                    return;
                }
                seen += 1;
                each(&e);
            })
            .map_err(|m| SmbError::protocol(&peer, m))?;
            if full {
                return Ok(true);
            }
            if n == 0 {
                return Ok(false);
            }
        }
    }
}
