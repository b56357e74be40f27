//! Windows: the launchers of a many-host run live in one job object of the
//! coordinator's. `KILL_ON_JOB_CLOSE` ends every launcher (and the agents
//! it started locally) when the coordinator's last handle to the job
//! closes, which happens however the coordinator ends, killed included;
//! on Unix the process group and a closed stdin do that. The job's
//! accounting also gives the launchers' CPU, which Unix reads from
//! `getrusage(RUSAGE_CHILDREN)`.

use std::os::windows::io::AsRawHandle;
use std::sync::OnceLock;

use windows_sys::Win32::Foundation::HANDLE;
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
    JOBOBJECT_BASIC_ACCOUNTING_INFORMATION, JOBOBJECT_EXTENDED_LIMIT_INFORMATION,
    JobObjectBasicAccountingInformation, JobObjectExtendedLimitInformation,
    QueryInformationJobObject, SetInformationJobObject,
};

/// The job, as an integer so the static is Send and Sync; never closed
/// (closing it is what kills the launchers, at the process's end).
static JOB: OnceLock<Option<usize>> = OnceLock::new();

fn job() -> Option<HANDLE> {
    let h = *JOB.get_or_init(|| {
        // SAFETY: an anonymous job with default security; the limit struct
        // is zeroed and then given the one flag, with its own size.
        unsafe {
            let h = CreateJobObjectW(std::ptr::null(), std::ptr::null());
            if h.is_null() {
                return None;
            }
            let mut info: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = std::mem::zeroed();
            info.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
            SetInformationJobObject(
                h,
                JobObjectExtendedLimitInformation,
                &info as *const _ as *const core::ffi::c_void,
                std::mem::size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32,
            );
            Some(h as usize)
        }
    });
    h.map(|h| h as HANDLE)
}

/// Puts a launcher just started into the job. Failing (a launcher already
/// in a job that forbids nesting, before Windows 8) leaves it as on Unix:
/// it stops when its stdin closes.
pub(crate) fn adopt(child: &std::process::Child) {
    if let Some(job) = job() {
        // SAFETY: both handles are live: the job is never closed and the
        // child's handle is owned by `child`.
        unsafe {
            AssignProcessToJobObject(job, child.as_raw_handle() as HANDLE);
        }
    }
}

/// User and system CPU seconds of every process that has been in the job
/// (FILETIME units of 100 ns).
pub(crate) fn children_cpu() -> (f64, f64) {
    let Some(job) = job() else {
        return (0.0, 0.0);
    };
    // SAFETY: the struct is zeroed, then filled by the call with its own size.
    unsafe {
        let mut info: JOBOBJECT_BASIC_ACCOUNTING_INFORMATION = std::mem::zeroed();
        let ok = QueryInformationJobObject(
            job,
            JobObjectBasicAccountingInformation,
            &mut info as *mut _ as *mut core::ffi::c_void,
            std::mem::size_of::<JOBOBJECT_BASIC_ACCOUNTING_INFORMATION>() as u32,
            std::ptr::null_mut(),
        );
        if ok == 0 {
            return (0.0, 0.0);
        }
        (
            info.TotalUserTime as f64 / 1e7,
            info.TotalKernelTime as f64 / 1e7,
        )
    }
}
