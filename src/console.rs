//! The one writer of stdout and stderr: every line the program prints goes
//! through here (`outln!`, `out!`, `errln!`, `err!`, and `Stdout` for the
//! streams that write as they go), never through `println!` and its kin,
//! which panic when the write fails (`> /dev/full`, EIO on a dead
//! terminal) and lose the results with the process.
//!
//! A stdout that fails is a fact to record, not a reason to stop: the first
//! failure is kept and every later write dropped. A closed pipe (EPIPE: the
//! reader went away, `| head`, `less` quit early) is "stdout is gone": not an
//! error, and while a run's I/O goes on it stops the run the way a closed
//! terminal does (`on_stdout_closed`). Any other failure (ENOSPC, EIO) is
//! said at the end of the command and makes its exit code non-zero
//! (`finish`). SIGPIPE stays ignored, as Rust's runtime sets it, so a closed
//! pipe is always this error and never a silent death before the results
//! are written. A failed stderr has nowhere to be reported and is ignored.

use std::fmt;
use std::io::Write;
use std::sync::Mutex;

/// What became of stdout.
#[derive(Clone, Debug, PartialEq, Eq)]
enum State {
    Open,
    /// The reader went away (EPIPE).
    Closed,
    /// Another failure, as the OS said it, and whether a caller was handed
    /// it to report (else `finish` says it).
    Failed(String, bool),
}

static STDOUT: Mutex<State> = Mutex::new(State::Open);
/// Called once when stdout is found closed while a run's I/O goes on.
type Hook = Box<dyn Fn() + Send>;
static ON_CLOSED: Mutex<Option<Hook>> = Mutex::new(None);

fn lock<T>(m: &'static Mutex<T>) -> std::sync::MutexGuard<'static, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Writes `bytes` to stdout whole and flushed, unless stdout already
/// failed; a failure is recorded (and the closed-pipe hook called) and
/// returned, so a caller that must know (an agent's protocol, `-` as an
/// output file) can act on it.
fn stdout_bytes(bytes: &[u8]) -> std::io::Result<()> {
    let mut state = lock(&STDOUT);
    match &*state {
        State::Open => {}
        State::Closed => return Err(std::io::ErrorKind::BrokenPipe.into()),
        State::Failed(e, _) => return Err(std::io::Error::other(e.clone())),
    }
    let mut out = std::io::stdout().lock();
    let res = out.write_all(bytes).and_then(|_| out.flush());
    if let Err(e) = &res {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            *state = State::Closed;
            drop(state);
            let hook = lock(&ON_CLOSED).take();
            if let Some(hook) = hook {
                hook();
            }
        } else {
            *state = State::Failed(e.to_string(), false);
        }
    }
    res
}

/// `print!`, without the panic.
pub(crate) fn write_out(args: fmt::Arguments<'_>) {
    let _ = stdout_bytes(fmt::format(args).as_bytes());
}

/// `println!`, without the panic.
pub(crate) fn write_out_line(args: fmt::Arguments<'_>) {
    let mut s = fmt::format(args);
    s.push('\n');
    let _ = stdout_bytes(s.as_bytes());
}

/// Bytes to stdout (an output file named `-`, a man page): a failure is
/// returned for the caller to report; a closed pipe is not one (the reader
/// chose to stop reading).
pub(crate) fn out_bytes(bytes: &[u8]) -> std::io::Result<()> {
    match stdout_bytes(bytes) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => {
            if let State::Failed(_, reported) = &mut *lock(&STDOUT) {
                *reported = true;
            }
            Err(e)
        }
        Ok(()) => Ok(()),
    }
}

/// `eprint!`, without the panic: a failed stderr is ignored.
pub(crate) fn write_err(args: fmt::Arguments<'_>) {
    let s = fmt::format(args);
    let mut e = std::io::stderr().lock();
    let _ = e.write_all(s.as_bytes()).and_then(|_| e.flush());
}

/// `eprintln!`, without the panic: a failed stderr is ignored.
pub fn write_err_line(args: fmt::Arguments<'_>) {
    let mut s = fmt::format(args);
    s.push('\n');
    let mut e = std::io::stderr().lock();
    let _ = e.write_all(s.as_bytes()).and_then(|_| e.flush());
}

/// Stdout as a `Write` for what streams as it goes (`--live -`, an agent's
/// protocol): each call written through and flushed, failures recorded
/// here and returned to the caller.
pub(crate) struct Stdout;

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        stdout_bytes(buf).map(|_| buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// What to do, once, if stdout is found closed from now on (a run's stop);
/// `None` takes it back (the run is finishing: its own summary into a
/// closed pipe is no reason to stop anything).
pub(crate) fn on_stdout_closed(hook: Option<Hook>) {
    *lock(&ON_CLOSED) = hook;
}

/// Whether stderr is a terminal (the live progress bar draws there).
pub(crate) fn stderr_is_terminal() -> bool {
    use std::io::IsTerminal;
    std::io::stderr().is_terminal()
}

/// The exit code of a command that returned `code`: a stdout that failed
/// (other than a closed pipe) and that no caller reported is said in one
/// line on stderr, and turns a success into `exit::RUN_FAILED`, since what
/// the command printed did not reach its reader; any other code stands (a
/// run's results are in its files whatever became of its table).
pub fn finish(code: i32) -> i32 {
    let unreported = match &*lock(&STDOUT) {
        State::Failed(e, false) => Some(e.clone()),
        _ => None,
    };
    let Some(e) = unreported else {
        return code;
    };
    write_err_line(format_args!("volbench: error: cannot write to stdout: {e}"));
    if code == crate::error::exit::OK {
        crate::error::exit::RUN_FAILED
    } else {
        code
    }
}

/// `println!` for the product: to stdout, never a panic (see `console`).
macro_rules! outln {
    () => {
        $crate::console::write_out_line(format_args!(""))
    };
    ($($arg:tt)*) => {
        $crate::console::write_out_line(format_args!($($arg)*))
    };
}

/// `print!` for the product: to stdout, never a panic (see `console`).
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::console::write_out(format_args!($($arg)*))
    };
}

/// `eprintln!` for the product: to stderr, never a panic (see `console`).
macro_rules! errln {
    () => {
        $crate::console::write_err_line(format_args!(""))
    };
    ($($arg:tt)*) => {
        $crate::console::write_err_line(format_args!($($arg)*))
    };
}

/// `eprint!` for the product: to stderr, never a panic (see `console`).
macro_rules! err {
    ($($arg:tt)*) => {
        $crate::console::write_err(format_args!($($arg)*))
    };
}

pub(crate) use {err, errln, out, outln};
