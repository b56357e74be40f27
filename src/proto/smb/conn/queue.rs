//! The typed requests a channel queues: READ and WRITE (their data in the
//! caller's buffer, bodies built in fixed arrays), FLUSH, CREATE, CLOSE,
//! QUERY_INFO, SET_INFO, ECHO. Each only stages: nothing blocks.

use super::super::consts::Command;
use super::super::msg::FileId;
use super::super::msg::file::{self, CreateRequest};
use super::super::msg::info::{self, SetInfo};
use super::super::msg::session;
use super::channel::Channel;
use super::slots::Sink;

impl Channel {
    /// Queues a READ of `len` bytes at `offset` into `buf`. Never blocks.
    ///
    /// # Safety
    /// `buf` must point to `len` writable bytes that nobody else touches
    /// until this tag's completion is returned (or the channel is dropped
    /// after failing).
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn queue_read(
        &mut self,
        tag: u64,
        tree: u32,
        file: FileId,
        offset: u64,
        len: u32,
        buf: *mut u8,
    ) {
        let charge = self.charge_for(len as usize);
        let mut body = [0u8; file::READ_LEN];
        file::encode_read(file, offset, len, &mut body);
        let sink = Sink::Buffer {
            ptr: buf,
            cap: len as usize,
        };
        self.stage(Command::Read, tag, tree, sink, charge, len, |v| {
            v.extend_from_slice(&body)
        });
    }

    /// Queues a WRITE of `len` bytes from `buf` at `offset`. Never blocks.
    ///
    /// # Safety
    /// `buf` must point to `len` readable bytes that stay alive and
    /// unchanged until this tag's completion is returned.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn queue_write(
        &mut self,
        tag: u64,
        tree: u32,
        file: FileId,
        offset: u64,
        len: u32,
        buf: *const u8,
        write_through: bool,
    ) {
        let charge = self.charge_for(len as usize);
        let mut body = [0u8; file::WRITE_LEN];
        let fl = if write_through {
            file::WRITE_THROUGH
        } else {
            0
        };
        file::encode_write(file, offset, len, fl, &mut body);
        let s = self.stage(Command::Write, tag, tree, Sink::None, charge, len, |v| {
            v.extend_from_slice(&body)
        });
        s.ext = buf;
        s.ext_len = len as usize;
    }

    pub(crate) fn queue_flush(&mut self, tag: u64, tree: u32, file: FileId) {
        self.stage(Command::Flush, tag, tree, Sink::None, 1, 0, |v| {
            file::encode_flush(file, v)
        });
    }

    pub(crate) fn queue_create(&mut self, tag: u64, tree: u32, req: &CreateRequest<'_>) {
        self.stage(Command::Create, tag, tree, Sink::None, 1, 0, |v| {
            file::encode_create(req, v)
        });
    }

    pub(crate) fn queue_close(&mut self, tag: u64, tree: u32, file: FileId) {
        self.stage(Command::Close, tag, tree, Sink::None, 1, 0, |v| {
            file::encode_close(file, v)
        });
    }

    /// Queues a QUERY_INFO of FileAllInformation (Outcome::Info) or, with
    /// `volume`, FileFsFullSizeInformation (Outcome::FsSize).
    pub(crate) fn queue_query_info(&mut self, tag: u64, tree: u32, file: FileId, volume: bool) {
        let (kind, class) = if volume {
            (info::INFO_FILESYSTEM, info::FS_FULL_SIZE_INFORMATION)
        } else {
            (info::INFO_FILE, info::FILE_ALL_INFORMATION)
        };
        let s = self.stage(Command::QueryInfo, tag, tree, Sink::None, 1, 0, |v| {
            info::encode_query_info(kind, class, 4096, 0, file, v)
        });
        s.class = class;
    }

    pub(crate) fn queue_set_info(&mut self, tag: u64, tree: u32, file: FileId, what: SetInfo<'_>) {
        self.stage(Command::SetInfo, tag, tree, Sink::None, 1, 0, |v| {
            info::encode_set_info(what, file, v)
        });
    }

    pub(crate) fn queue_echo(&mut self, tag: u64) {
        self.stage(
            Command::Echo,
            tag,
            0,
            Sink::None,
            1,
            0,
            session::encode_empty,
        );
    }
}
