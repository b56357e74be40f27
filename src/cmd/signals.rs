//! Where stops come from: on Unix the signals a user or a closed session
//! sends (SIGINT, SIGTERM, SIGHUP, SIGQUIT); on Windows the console's
//! control events (Ctrl-C, Ctrl-Break, a closed window, logoff, shutdown).
//! Either way `spawn` calls the one callback with the stop's name, on a
//! thread of its own, and `stop.rs` does the rest the same on both.

use crate::error::{Result, VbError};

/// Calls `on_stop` with a name for each stop the process receives.
#[cfg(unix)]
pub(super) fn spawn(on_stop: impl Fn(&'static str) + Send + 'static) -> Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP, SIGQUIT])
        .map_err(|e| VbError::run(format!("cannot install the signal handler: {e}")))?;
    std::thread::Builder::new()
        .name("vb-signals".into())
        .spawn(move || {
            for sig in signals.forever() {
                on_stop(match sig {
                    SIGINT => "interrupted (SIGINT)",
                    SIGTERM => "SIGTERM",
                    SIGHUP => "SIGHUP",
                    SIGQUIT => "SIGQUIT",
                    _ => "signal",
                });
            }
        })
        .map_err(|e| VbError::run(format!("cannot start the signal thread: {e}")))?;
    Ok(())
}

#[cfg(windows)]
type OnStop = Box<dyn Fn(&'static str) + Send + Sync>;

#[cfg(windows)]
static ON_STOP: std::sync::OnceLock<OnStop> = std::sync::OnceLock::new();

/// Calls `on_stop` with a name for each console control event. Windows
/// runs the handler on a thread it makes for the event, so no thread of
/// ours is needed.
#[cfg(windows)]
pub(super) fn spawn(on_stop: impl Fn(&'static str) + Send + Sync + 'static) -> Result<()> {
    use windows_sys::Win32::System::Console::SetConsoleCtrlHandler;
    if ON_STOP.set(Box::new(on_stop)).is_err() {
        return Ok(());
    }
    // SAFETY: registers a plain function for the process's control events;
    // it reads only the OnceLock set above.
    if unsafe { SetConsoleCtrlHandler(Some(on_event), 1) } == 0 {
        let e = std::io::Error::last_os_error();
        return Err(VbError::run(format!(
            "cannot install the console control handler: {e}"
        )));
    }
    Ok(())
}

#[cfg(windows)]
unsafe extern "system" fn on_event(event: u32) -> windows_sys::Win32::Foundation::BOOL {
    use windows_sys::Win32::System::Console::{
        CTRL_BREAK_EVENT, CTRL_C_EVENT, CTRL_CLOSE_EVENT, CTRL_LOGOFF_EVENT, CTRL_SHUTDOWN_EVENT,
    };
    let name = match event {
        CTRL_C_EVENT => "interrupted (Ctrl-C)",
        CTRL_BREAK_EVENT => "Ctrl-Break",
        CTRL_CLOSE_EVENT => "console closed",
        CTRL_LOGOFF_EVENT => "logoff",
        CTRL_SHUTDOWN_EVENT => "shutdown",
        _ => return 0,
    };
    if let Some(f) = ON_STOP.get() {
        f(name);
    }
    // Windows ends the process as soon as the handler of a close, logoff
    // or shutdown returns: wait here instead, so the stop's grace thread
    // writes the result and exits first (within GRACE, inside the few
    // seconds Windows allows).
    if matches!(
        event,
        CTRL_CLOSE_EVENT | CTRL_LOGOFF_EVENT | CTRL_SHUTDOWN_EVENT
    ) {
        loop {
            std::thread::sleep(std::time::Duration::from_secs(60));
        }
    }
    1
}
