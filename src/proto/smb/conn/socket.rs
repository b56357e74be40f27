//! The TCP side of a channel: connect within a deadline, non-blocking
//! reads and gathered writes, and one `poll` over every socket a thread
//! drives (poll(2) on Unix, WSAPoll on Windows) with a fixed array, so
//! waiting allocates nothing.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// The most sockets one wait covers: channels driven by one thread.
pub(crate) const MAX_POLLED: usize = 64;

pub(crate) struct Socket {
    stream: TcpStream,
    pub(crate) peer: SocketAddr,
}

impl Socket {
    pub(crate) fn connect(addr: SocketAddr, timeout: Duration) -> io::Result<Socket> {
        let stream = TcpStream::connect_timeout(&addr, timeout)?;
        stream.set_nodelay(true)?;
        stream.set_nonblocking(true)?;
        Ok(Socket { stream, peer: addr })
    }

    /// Reads what is there; Ok(0) is the server closing the connection,
    /// WouldBlock means nothing yet.
    pub(crate) fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            match self.stream.read(buf) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                other => return other,
            }
        }
    }

    pub(crate) fn write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        loop {
            match self.stream.write_vectored(bufs) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                other => return other,
            }
        }
    }

    pub(crate) fn shutdown(&self) {
        let _ = self.stream.shutdown(std::net::Shutdown::Both);
    }

    #[cfg(unix)]
    fn raw(&self) -> i32 {
        use std::os::fd::AsRawFd;
        self.stream.as_raw_fd()
    }

    #[cfg(windows)]
    fn raw(&self) -> usize {
        use std::os::windows::io::AsRawSocket;
        self.stream.as_raw_socket() as usize
    }
}

/// Waits until one of `socks` is readable (or writable, where its flag
/// asks) or `timeout` passes. Returns whether anything is ready.
pub(crate) fn poll(socks: &[(&Socket, bool)], timeout: Duration) -> io::Result<bool> {
    let n = socks.len().min(MAX_POLLED);
    let ms = timeout.as_millis().min(i32::MAX as u128) as i32;
    poll_raw(&socks[..n], ms)
}

#[cfg(unix)]
fn poll_raw(socks: &[(&Socket, bool)], ms: i32) -> io::Result<bool> {
    let mut fds = [libc::pollfd {
        fd: -1,
        events: 0,
        revents: 0,
    }; MAX_POLLED];
    for (p, (s, w)) in fds.iter_mut().zip(socks) {
        p.fd = s.raw();
        p.events = libc::POLLIN | if *w { libc::POLLOUT } else { 0 };
    }
    loop {
        // SAFETY: `fds` holds `socks.len()` initialised entries.
        let r = unsafe { libc::poll(fds.as_mut_ptr(), socks.len() as libc::nfds_t, ms) };
        if r >= 0 {
            return Ok(r > 0);
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

#[cfg(windows)]
fn poll_raw(socks: &[(&Socket, bool)], ms: i32) -> io::Result<bool> {
    use windows_sys::Win32::Networking::WinSock::{POLLRDNORM, POLLWRNORM, WSAPOLLFD, WSAPoll};
    let mut fds = [WSAPOLLFD {
        fd: 0,
        events: 0,
        revents: 0,
    }; MAX_POLLED];
    for (p, (s, w)) in fds.iter_mut().zip(socks) {
        p.fd = s.raw();
        p.events = POLLRDNORM | if *w { POLLWRNORM } else { 0 };
    }
    // SAFETY: `fds` holds `socks.len()` initialised entries.
    let r = unsafe { WSAPoll(fds.as_mut_ptr(), socks.len() as u32, ms) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(r > 0)
}
