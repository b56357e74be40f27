//! engine FILE SECONDS [DEPTH]: what `bare` does, through volbench's overlapped engine
//! (src/io/engine/overlapped.rs, compiled here unchanged beside copies of the two
//! types it uses), so the IOPS per CPU-second of the two differ by the engine's cost.
//! Also checks the engine: every read returns its 4 KiB, and the first block's bytes
//! match what std reads (`check` mode, SECONDS=0).
use std::os::windows::ffi::OsStrExt;
use std::os::windows::io::{FromRawHandle, OwnedHandle};
use std::time::{Duration, Instant};
use std::{env, ptr};

use windows_sys::Win32::Foundation::{GENERIC_READ, INVALID_HANDLE_VALUE};
use windows_sys::Win32::Storage::FileSystem::{
    CreateFileW, GetFileSizeEx, FILE_FLAG_NO_BUFFERING, FILE_FLAG_OVERLAPPED, FILE_SHARE_READ,
    FILE_SHARE_WRITE, OPEN_EXISTING,
};

mod io {
    pub mod workload {
        /// As `volbench::io::workload::IoOp`.
        #[derive(Debug, Clone, Copy)]
        pub struct IoOp {
            pub write: bool,
            pub file: u32,
            pub offset: u64,
            pub len: u32,
        }
    }
}

/// As `volbench::io::engine::Completion`.
#[derive(Debug, Clone, Copy)]
pub struct Completion {
    pub slot: u32,
    pub result: i64,
}

/// As `volbench::io::engine::Engine`.
pub trait Engine {
    /// # Safety
    /// As volbench's: `buf` holds op.len bytes used by no one else until the
    /// slot's completion.
    unsafe fn queue(&mut self, slot: u32, op: crate::io::workload::IoOp, buf: *mut u8);
    fn submit_and_wait(&mut self, min: usize, out: &mut Vec<Completion>) -> std::io::Result<()>;
    fn submit_and_wait_for(
        &mut self,
        min: usize,
        timeout: std::time::Duration,
        out: &mut Vec<Completion>,
    ) -> std::io::Result<()> {
        let _ = timeout;
        self.submit_and_wait(min, out)
    }
}

#[path = "../../../src/io/engine/overlapped.rs"]
mod overlapped;

use io::workload::IoOp;

const BS: usize = 4096;

fn main() -> std::io::Result<()> {
    let args: Vec<String> = env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: engine FILE SECONDS [DEPTH]");
        std::process::exit(2);
    }
    let secs: u64 = args[2].parse().map_err(|_| std::io::Error::other("SECONDS"))?;
    let depth: usize =
        args.get(3).map_or(Ok(8), |d| d.parse()).map_err(|_| std::io::Error::other("DEPTH"))?;
    let wide: Vec<u16> = std::ffi::OsStr::new(&args[1]).encode_wide().chain([0]).collect();
    let (file, size) = unsafe {
        let h = CreateFileW(wide.as_ptr(), GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE,
            ptr::null(), OPEN_EXISTING, FILE_FLAG_NO_BUFFERING | FILE_FLAG_OVERLAPPED, ptr::null_mut());
        if h == INVALID_HANDLE_VALUE {
            return Err(std::io::Error::last_os_error());
        }
        let mut size = 0i64;
        GetFileSizeEx(h, &mut size);
        (OwnedHandle::from_raw_handle(h), size as u64)
    };
    let blocks = (size / BS as u64).max(1);
    let mut e = overlapped::OverlappedEngine::new(vec![file], depth as u32)?;
    let layout = std::alloc::Layout::from_size_align(BS * depth, BS).map_err(std::io::Error::other)?;
    let bufs = unsafe { std::alloc::alloc_zeroed(layout) };
    let mut rng = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        (rng % blocks) * BS as u64
    };
    let op = |offset| IoOp { write: false, file: 0, offset, len: BS as u32 };
    if secs == 0 {
        return check(&mut e, bufs, &args[1], size, op);
    }
    let start = Instant::now();
    let end = start + Duration::from_secs(secs);
    for i in 0..depth {
        unsafe { e.queue(i as u32, op(next()), bufs.add(i * BS)) };
    }
    let mut done: Vec<Completion> = Vec::with_capacity(depth);
    let (mut ios, mut in_flight) = (0u64, depth);
    while in_flight > 0 {
        done.clear();
        e.submit_and_wait(1, &mut done)?;
        let now = Instant::now();
        for c in &done {
            if c.result != BS as i64 {
                return Err(std::io::Error::other(format!("read returned {}", c.result)));
            }
            ios += 1;
            if now < end {
                unsafe { e.queue(c.slot, op(next()), bufs.add(c.slot as usize * BS)) };
            } else {
                in_flight -= 1;
            }
        }
    }
    println!("ios={ios} seconds={:.3}", start.elapsed().as_secs_f64());
    Ok(())
}

/// The engine's answers checked against std's: data, a read past the end (0
/// bytes), and a timed wait with nothing in flight returning at once.
fn check(
    e: &mut overlapped::OverlappedEngine,
    bufs: *mut u8,
    path: &str,
    size: u64,
    op: impl Fn(u64) -> IoOp,
) -> std::io::Result<()> {
    let want = std::fs::read(path)?;
    let mut done = Vec::new();
    let last = (size / BS as u64 - 1) * BS as u64;
    unsafe {
        e.queue(0, op(0), bufs);
        e.queue(1, op(last), bufs.add(BS));
        e.queue(2, op(size.div_ceil(BS as u64) * BS as u64 + (1 << 20)), bufs.add(2 * BS));
    }
    while done.len() < 3 {
        e.submit_and_wait(3 - done.len(), &mut done)?;
    }
    done.sort_by_key(|c: &Completion| c.slot);
    let got: Vec<i64> = done.iter().map(|c| c.result).collect();
    let first = unsafe { std::slice::from_raw_parts(bufs, BS) };
    let tail = unsafe { std::slice::from_raw_parts(bufs.add(BS), BS) };
    let ok = got == [BS as i64, BS as i64, 0]
        && first == &want[..BS]
        && tail == &want[last as usize..last as usize + BS];
    let mut empty = Vec::new();
    e.submit_and_wait_for(1, Duration::from_millis(5), &mut empty)?;
    println!("results={got:?} data={} idle_wait={}", ok, empty.len());
    if !ok || !empty.is_empty() {
        std::process::exit(1);
    }
    Ok(())
}
