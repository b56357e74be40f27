//! overlapped-loop FILE SECONDS [DEPTH]: 4 KiB random reads of FILE at DEPTH (8) in
//! flight through one I/O completion port, FILE_FLAG_NO_BUFFERING, for SECONDS;
//! prints "ios=N seconds=S". Nothing else per I/O: the floor volbench's engine is
//! measured against.
use std::os::windows::ffi::OsStrExt;
use std::time::{Duration, Instant};
use std::{env, io, ptr};

use windows_sys::Win32::Foundation::{GENERIC_READ, GetLastError, INVALID_HANDLE_VALUE, ERROR_IO_PENDING};
use windows_sys::Win32::Storage::FileSystem::{
    CreateFileW, GetFileSizeEx, ReadFile, FILE_FLAG_NO_BUFFERING, FILE_FLAG_OVERLAPPED,
    FILE_SHARE_READ, FILE_SHARE_WRITE, OPEN_EXISTING,
};
use windows_sys::Win32::System::IO::{
    CreateIoCompletionPort, GetQueuedCompletionStatusEx, OVERLAPPED, OVERLAPPED_ENTRY,
};

const BS: usize = 4096;

fn main() -> io::Result<()> {
    let args: Vec<String> = env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: overlapped-loop FILE SECONDS [DEPTH]");
        std::process::exit(2);
    }
    let secs: u64 = args[2].parse().map_err(|_| io::Error::other("SECONDS"))?;
    let depth: usize = args.get(3).map_or(Ok(8), |d| d.parse()).map_err(|_| io::Error::other("DEPTH"))?;
    let wide: Vec<u16> = std::ffi::OsStr::new(&args[1]).encode_wide().chain([0]).collect();
    unsafe {
        let h = CreateFileW(wide.as_ptr(), GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE,
            ptr::null(), OPEN_EXISTING, FILE_FLAG_NO_BUFFERING | FILE_FLAG_OVERLAPPED, ptr::null_mut());
        if h == INVALID_HANDLE_VALUE {
            return Err(io::Error::last_os_error());
        }
        let mut size = 0i64;
        GetFileSizeEx(h, &mut size);
        let blocks = (size as u64 / BS as u64).max(1);
        let port = CreateIoCompletionPort(h, ptr::null_mut(), 0, 1);
        if port.is_null() {
            return Err(io::Error::last_os_error());
        }
        // One aligned buffer per slot.
        let layout = std::alloc::Layout::from_size_align(BS * depth, BS).map_err(io::Error::other)?;
        let bufs = std::alloc::alloc(layout);
        let mut ovs: Vec<OVERLAPPED> = (0..depth).map(|_| std::mem::zeroed()).collect();
        let mut entries: Vec<OVERLAPPED_ENTRY> = (0..depth).map(|_| std::mem::zeroed()).collect();
        let mut rng = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; (rng % blocks) * BS as u64 };
        let start = Instant::now();
        let end = start + Duration::from_secs(secs);
        let mut ios = 0u64;
        let issue = |i: usize, ovs: &mut [OVERLAPPED], off: u64| {
            ovs[i] = std::mem::zeroed();
            ovs[i].Anonymous.Anonymous.Offset = off as u32;
            ovs[i].Anonymous.Anonymous.OffsetHigh = (off >> 32) as u32;
            let ok = ReadFile(h, bufs.add(i * BS), BS as u32, ptr::null_mut(), &mut ovs[i]);
            if ok == 0 && GetLastError() != ERROR_IO_PENDING {
                panic!("ReadFile: {}", io::Error::last_os_error());
            }
        };
        for i in 0..depth {
            issue(i, &mut ovs, next());
        }
        let mut in_flight = depth;
        while in_flight > 0 {
            let mut n = 0u32;
            if GetQueuedCompletionStatusEx(port, entries.as_mut_ptr(), depth as u32, &mut n, u32::MAX, 0) == 0 {
                return Err(io::Error::last_os_error());
            }
            let now = Instant::now();
            for e in &entries[..n as usize] {
                let i = (e.lpOverlapped as usize - ovs.as_ptr() as usize) / size_of::<OVERLAPPED>();
                ios += 1;
                if now < end {
                    issue(i, &mut ovs, next());
                } else {
                    in_flight -= 1;
                }
            }
        }
        println!("ios={ios} seconds={:.3}", start.elapsed().as_secs_f64());
    }
    Ok(())
}
