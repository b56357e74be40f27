//! Where an SMB password comes from: the `VOLBENCH_SMB_PASSWORD` variable
//! or a credentials file that only its owner can read (mode 0600, as
//! mount.cifs's `credentials=` file: `username=`, `password=`, `domain=`
//! lines). Never from a command line. The password is kept in a `Secret`,
//! whose Debug and Display print no byte of it, and whose memory is
//! overwritten when it is dropped.

use std::fmt;
use std::io::Read;
use std::path::Path;

pub(crate) const PASSWORD_ENV: &str = "VOLBENCH_SMB_PASSWORD";
/// A credentials file is a few lines; anything larger is not one.
const MAX_FILE: u64 = 64 * 1024;

/// A password. Not Clone: one copy lives as long as the session needs it.
pub struct Secret(String);

impl Secret {
    pub fn new(s: String) -> Self {
        Secret(s)
    }

    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(..)")
    }
}

impl Drop for Secret {
    fn drop(&mut self) {
        // SAFETY: zero bytes are valid UTF-8, so the String stays valid;
        // volatile writes keep the compiler from skipping a dead store.
        unsafe {
            for b in self.0.as_bytes_mut() {
                std::ptr::write_volatile(b, 0);
            }
        }
    }
}

/// A user's credentials.
#[derive(Debug)]
pub struct Credentials {
    pub user: String,
    pub domain: String,
    pub password: Secret,
}

/// Why credentials could not be had; the message names the file or the
/// variable, never the value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CredsError(pub(crate) String);

impl fmt::Display for CredsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for CredsError {}

/// The password from the environment, when set (an empty value is an
/// empty password, which a server may accept).
pub fn from_env(user: &str, domain: &str) -> Option<Credentials> {
    let pw = std::env::var_os(PASSWORD_ENV)?;
    Some(Credentials {
        user: user.to_string(),
        domain: domain.to_string(),
        password: Secret::new(pw.to_string_lossy().into_owned()),
    })
}

/// Reads a credentials file: a regular file, not reached through a
/// symbolic link, mode 0600 or stricter (no group or other bits) on Unix.
/// `user` (from the URL) wins over the file's `username=`.
// Read by smb:// targets (`io::backend::smb`, Unix only for now): unused
// in the Windows build until its back end runs there.
#[cfg_attr(not(unix), allow(dead_code))]
pub(crate) fn from_file(path: &Path, user: Option<&str>) -> Result<Credentials, CredsError> {
    let shown = path.display();
    let file =
        open_nofollow(path).map_err(|e| CredsError(format!("credentials file {shown}: {e}")))?;
    let meta = file
        .metadata()
        .map_err(|e| CredsError(format!("credentials file {shown}: {e}")))?;
    if !meta.is_file() {
        return Err(CredsError(format!(
            "credentials file {shown} is not a regular file"
        )));
    }
    check_mode(&meta, &shown.to_string())?;
    if meta.len() > MAX_FILE {
        return Err(CredsError(format!(
            "credentials file {shown} is larger than {MAX_FILE} bytes: not a credentials file"
        )));
    }
    let mut text = String::new();
    file.take(MAX_FILE)
        .read_to_string(&mut text)
        .map_err(|e| CredsError(format!("credentials file {shown}: {e}")))?;
    let text = Secret::new(text);
    parse_file(text.expose(), user)
        .map_err(|e| CredsError(format!("credentials file {shown}: {e}")))
}

/// Parses `key=value` lines; the message for a bad line names its number
/// only (the line may hold the password).
pub(crate) fn parse_file(text: &str, user: Option<&str>) -> Result<Credentials, String> {
    let (mut file_user, mut domain, mut password) = (None, String::new(), None);
    for (n, line) in text.lines().enumerate() {
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        let Some((k, v)) = line.split_once('=') else {
            return Err(format!("line {}: not key=value", n + 1));
        };
        match k.trim() {
            "username" | "user" => file_user = Some(v.trim().to_string()),
            "password" | "pass" => password = Some(Secret::new(v.to_string())),
            "domain" | "dom" | "workgroup" => domain = v.trim().to_string(),
            other => {
                return Err(format!(
                    "line {}: unknown key '{}' (username, password, domain)",
                    n + 1,
                    other.chars().take(20).collect::<String>()
                ));
            }
        }
    }
    let password = password.ok_or_else(|| "no password= line".to_string())?;
    // A user@domain or DOMAIN\user spelling in username= splits here.
    let mut user = user.map(str::to_string).or(file_user).unwrap_or_default();
    if let Some((d, u)) = user.clone().split_once('\\') {
        domain = d.to_string();
        user = u.to_string();
    }
    if user.is_empty() {
        return Err("no user: give it in the URL (smb://USER@SERVER/...) or as username=".into());
    }
    Ok(Credentials {
        user,
        domain,
        password,
    })
}

#[cfg(unix)]
fn open_nofollow(path: &Path) -> std::io::Result<std::fs::File> {
    use rustix::fs::{Mode, OFlags};
    let fd = rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK,
        Mode::empty(),
    )?;
    Ok(std::fs::File::from(fd))
}

#[cfg(not(unix))]
fn open_nofollow(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::File::open(path)
}

#[cfg(unix)]
fn check_mode(meta: &std::fs::Metadata, shown: &str) -> Result<(), CredsError> {
    use std::os::unix::fs::PermissionsExt;
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(CredsError(format!(
            "credentials file {shown} has mode {mode:04o}: others can read it; chmod 600 it"
        )));
    }
    Ok(())
}

/// Windows has no mode bits: the file's ACL is the user's to set.
#[cfg(not(unix))]
fn check_mode(_meta: &std::fs::Metadata, _shown: &str) -> Result<(), CredsError> {
    Ok(())
}
