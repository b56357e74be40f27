//! `--push-binary` to a Linux host through any launcher: the binary streams
//! over the launcher's stdin into a POSIX shell script on the far side (no
//! scp, no SFTP server needed: a container or a Slurm node has a shell).
//!
//! The script keeps the push rules (`push/mod.rs`) with what every POSIX
//! shell and its tools have, so it runs under dash, bash and BusyBox alike:
//! - the push directory is entered one component at a time with `cd -P`,
//!   each refused when it is a link and checked afterwards with `pwd -P`
//!   (so a link swapped in between is caught too), and made with a plain
//!   `mkdir` (never `-p`) when missing; once there, every name is relative
//!   to that directory, which renames elsewhere cannot change;
//! - the temporary is created by `set -C` (noclobber: `>` opens it
//!   O_CREAT|O_EXCL) under a name with 64 random bits nobody can guess in
//!   advance, and removed by an EXIT trap if anything after fails (a
//!   signal included);
//! - its size is checked before it is named: a launcher whose stdin ends
//!   early (a dropped connection) gives `cat` an early end of file, not an
//!   error, and a short copy must never take the content name;
//! - the name is given with `ln` (link(2) fails on an existing name and
//!   never follows a link there), then the temporary is removed: `mv`
//!   would replace;
//! - `find -prune` with `-type`, `-links`, `-size Nc`, `-perm` and `-mmin`
//!   says what a file is without following a link.
//!
//! Not SFTP, although the Windows push uses it: through an exec launcher
//! (`kubectl exec`, `ip netns exec`) a Linux host's `sftp-server` is rarely
//! on the PATH, and a container seldom has one at all; a shell is there.

use std::path::Path;
use std::time::Duration;

use super::super::launch::quote::{quote, quote_remote_path};
use super::super::launch::{Launcher, RemoteCmd};
use super::{STALE, Swept, TEMP_PREFIX, TEMP_SUFFIX};
use crate::error::{Result, VbError};
use crate::units::bounds::one_line;

/// What the script's own refusals start with on its stderr, to tell them
/// from the launcher's messages.
const SAYS: &str = "volbench-push: ";
/// What is kept of the script's output and its stderr.
const OUT_CAP: u64 = 1 << 20;
const ERR_CAP: u64 = 1 << 16;

/// Where a Linux host's pushed copy goes: under its home directory (`~/...`
/// or a relative path from where the launcher's shell starts), or an
/// absolute path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PosixDir {
    base: Base,
    parts: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Base {
    Home,
    Root,
    /// Where the launcher's shell starts (ssh: the home directory; an exec
    /// template: its own working directory).
    Here,
}

impl PosixDir {
    /// `~/.cache/volbench`, `/opt/volbench` or `cache/volbench`; the reason
    /// when a part of it is no name a walk can take.
    pub(crate) fn parse(text: &str) -> std::result::Result<PosixDir, String> {
        let shown = one_line(text);
        if text.chars().any(char::is_control) {
            return Err(format!("'{shown}' holds a control character"));
        }
        let (base, rest) = if text == "~" {
            (Base::Home, "")
        } else if let Some(r) = text.strip_prefix("~/") {
            (Base::Home, r)
        } else if let Some(r) = text.strip_prefix('/') {
            (Base::Root, r)
        } else if text.is_empty() {
            return Err("an empty push directory".into());
        } else {
            (Base::Here, text)
        };
        let mut parts = Vec::new();
        for p in rest.split('/') {
            match p {
                "" | "." => continue,
                ".." => return Err(format!("'{shown}': '..' has no place in a push directory")),
                _ => parts.push(p.to_string()),
            }
        }
        Ok(PosixDir { base, parts })
    }

    /// The directory as the far side's shell reads it (`"$HOME"/'a b'`).
    fn shell_word(&self, leaf: Option<&str>) -> String {
        let mut words: Vec<&str> = self.parts.iter().map(String::as_str).collect();
        words.extend(leaf);
        let joined = words.join("/");
        match (self.base, joined.is_empty()) {
            (Base::Home, true) => quote_remote_path("~"),
            (Base::Home, false) => quote_remote_path(&format!("~/{joined}")),
            (Base::Root, _) => quote(&format!("/{joined}")),
            (Base::Here, true) => ".".into(),
            (Base::Here, false) => quote(&joined),
        }
    }

    /// The script lines that enter the directory from its base, each
    /// component through `step` (`make`: missing ones are made; `look`:
    /// the walk's `&&` chain is false at the first missing one).
    fn walk(&self, mode: &str) -> String {
        let base = match self.base {
            Base::Home => {
                "[ -n \"$HOME\" ] || die 'HOME is not set on the host'\n\
                 cd -P -- \"$HOME\" || die \"cannot enter the home directory $HOME\"\n"
            }
            Base::Root => "cd -P / || die 'cannot enter /'\n",
            Base::Here => "cd -P . || die 'cannot enter the directory the shell started in'\n",
        };
        let steps: Vec<String> = self
            .parts
            .iter()
            .map(|p| format!("step {} {mode}", quote(p)))
            .collect();
        let chain = if steps.is_empty() {
            "true".to_string()
        } else {
            steps.join(" && ")
        };
        format!("{base}here=$(pwd -P)\nwalked() {{ {chain}; }}\n")
    }
}

/// The shell's side of the rules, shared by the probe and the copy:
/// `die`, `step` (one component, no link), `copy_of` (a regular file of
/// `$n` bytes, not a link).
const PRELUDE: &str = r#"umask 077
set -C
die() { printf 'volbench-push: %s\n' "$*" >&2; exit 3; }
step() {
  if [ -L "./$1" ]; then
    die "${here%/}/$1 is a link: volbench reaches its push directory without following links; name the directory it points to"
  fi
  if [ ! -e "./$1" ]; then
    [ "$2" = make ] || return 1
    m=$(mkdir -- "./$1" 2>&1)
    if [ -L "./$1" ]; then die "${here%/}/$1 became a link"; fi
    [ -e "./$1" ] || die "cannot make ${here%/}/$1: $m"
  fi
  [ -d "./$1" ] || die "${here%/}/$1 is there and is not a directory"
  cd -P -- "./$1" || die "cannot enter ${here%/}/$1"
  [ "$(pwd -P)" = "${here%/}/$1" ] || die "${here%/}/$1 is not where it was looked at: a link, or moved"
  here=$(pwd -P)
}
sized() { [ -n "$(find "./$1" -prune -type f -size "${n}c" -print 2>/dev/null)" ]; }
copy_of() { [ -n "$(find "./$1" -prune -type f -size "${n}c" -perm -100 -print 2>/dev/null)" ]; }
"#;

/// What a push did on one host.
#[derive(Debug)]
pub(crate) struct Pushed {
    /// The copy, as the far side's shell reads it (`"$HOME"/'.cache/volbench'/volbench-...`).
    pub(crate) word: String,
    pub(crate) swept: Swept,
}

/// Makes sure `host` has this very binary in `dir` (named by its content),
/// copying it when missing, under the push rules; `wait` is
/// `--host-timeout`: how long the far side may go without answering or
/// taking a byte of the copy.
pub(crate) fn push_binary(
    launcher: &Launcher,
    host: &str,
    dir: &PosixDir,
    exe: &Path,
    bytes: &[u8],
    wait: Duration,
) -> Result<Pushed> {
    let fail =
        |why: String| VbError::target(format!("host {}: pushing volbench: {why}", one_line(host)));
    let name = super::copy_name(bytes, "");
    let word = dir.shell_word(Some(&name));
    let probe = probe_script(dir, &name, bytes.len());
    let out = run(launcher, host, &probe, b"", wait, false).map_err(&fail)?;
    let said = Said::read(&out);
    let (my_os, my_arch) = (local_uname_s(), std::env::consts::ARCH);
    if !said.os.eq_ignore_ascii_case(&my_os) || said.arch != my_arch {
        return Err(VbError::target(format!(
            "host {host} is {} {}; this volbench ({}) is built for {my_os} {my_arch} and \
             cannot be pushed there: install a matching volbench on it instead",
            said.os,
            said.arch,
            exe.display()
        )));
    }
    match said.state.as_str() {
        "have" => {}
        "need" => {
            let temp = super::temp_name(&name);
            let copy = copy_script(dir, &name, &temp, bytes.len());
            let out = run(launcher, host, &copy, bytes, wait, true).map_err(&fail)?;
            if Said::read(&out).state != "done" {
                return Err(fail(format!(
                    "the copy did not say it was done: {}",
                    crate::remote::protocol::sanitize(&out, 200)
                )));
            }
        }
        _ => {
            return Err(fail(format!(
                "unexpected answer while checking for volbench: {}",
                crate::remote::protocol::sanitize(&out, 200)
            )));
        }
    }
    Ok(Pushed {
        word,
        swept: said.swept,
    })
}

/// The probe: the host's system, whether the copy is there (`have`), must
/// be made (`need`) or is something else at its name (refused), and the
/// sweep of stale temporaries once the directory is reached. Nothing is
/// made.
fn probe_script(dir: &PosixDir, name: &str, size: usize) -> String {
    let minutes = STALE.as_secs() / 60;
    format!(
        "{PRELUDE}n={size}\nf={f}\necho \"os $(uname -s)\"\necho \"arch $(uname -m)\"\n{walk}\
         if ! walked; then echo 'state need'; exit 0; fi\n\
         for t in ./{TEMP_PREFIX}*{TEMP_SUFFIX}; do\n\
         \x20 [ -e \"$t\" ] || [ -L \"$t\" ] || continue\n\
         \x20 if [ -n \"$(find \"$t\" -prune -type f -links 1 -mmin +{minutes} -print 2>/dev/null)\" ] \
         && rm -f -- \"$t\"; then echo \"swept ${{t#./}}\"; else echo \"kept ${{t#./}}\"; fi\n\
         done\n\
         if [ -L \"./$f\" ] || {{ [ -e \"./$f\" ] && ! copy_of \"$f\"; }}; then\n\
         \x20 die \"${{here%/}}/$f is there already and is not this volbench (a $n-byte executable file): \
         volbench replaces nothing it did not write; move it away\"\n\
         fi\n\
         if [ -e \"./$f\" ]; then echo 'state have'; else echo 'state need'; fi\n",
        f = quote(name),
        walk = dir.walk("look"),
    )
}

/// The copy: into a temporary of its own made new, its size checked, then
/// linked to the content name (which never replaces) and removed.
fn copy_script(dir: &PosixDir, name: &str, temp: &str, size: usize) -> String {
    format!(
        "{PRELUDE}n={size}\nf={f}\nt={t}\n{walk}walked || die 'the push directory went away'\n\
         if [ -e \"./$t\" ] || [ -L \"./$t\" ]; then die \"${{here%/}}/$t is there already\"; fi\n\
         trap 'rm -f -- \"./$t\"' EXIT\n\
         trap 'exit 129' HUP\ntrap 'exit 130' INT\ntrap 'exit 143' TERM\n\
         cat > \"./$t\" || die \"cannot write ${{here%/}}/$t\"\n\
         sized \"$t\" || die \"the copy was cut short: ${{here%/}}/$t has $(wc -c < \"./$t\") of $n bytes\"\n\
         chmod 700 \"./$t\" || die \"cannot make ${{here%/}}/$t executable\"\n\
         if [ -e \"./$f\" ] || [ -L \"./$f\" ]; then\n\
         \x20 copy_of \"$f\" || die \"${{here%/}}/$f is there already and is not this volbench: \
         volbench replaces nothing it did not write; move it away\"\n\
         elif ! m=$(ln -- \"./$t\" \"./$f\" 2>&1); then\n\
         \x20 copy_of \"$f\" || die \"cannot give ${{here%/}}/$t its name $f: $m\"\n\
         fi\n\
         rm -f -- \"./$t\"\ntrap - EXIT\n\
         copy_of \"$f\" || die \"after the copy, ${{here%/}}/$f is not this volbench\"\n\
         echo 'state done'\n",
        f = quote(name),
        t = quote(temp),
        walk = dir.walk("make"),
    )
}

/// The tagged lines a script prints (`os`, `arch`, `state`, `swept`,
/// `kept`); anything else (a login banner a shell's startup file prints)
/// is not read.
#[derive(Debug, Default)]
struct Said {
    os: String,
    arch: String,
    state: String,
    swept: Swept,
}

impl Said {
    fn read(out: &str) -> Said {
        let mut s = Said::default();
        for line in out.lines() {
            let Some((tag, value)) = line.split_once(' ') else {
                continue;
            };
            let value = one_line(value.trim());
            match tag {
                "os" => s.os = value,
                "arch" => s.arch = value,
                "state" => s.state = value,
                "swept" => s.swept.removed.push(value),
                "kept" => s.swept.kept.push(value),
                _ => {}
            }
        }
        s
    }
}

/// Runs `script` on `host` with `input` on its stdin: its stdout, or why
/// not in one line (the script's own refusal when it made one). `feeding`:
/// `wait` is the silence allowed while the input is taken, not a total.
fn run(
    launcher: &Launcher,
    host: &str,
    script: &str,
    input: &[u8],
    wait: Duration,
    feeding: bool,
) -> std::result::Result<String, String> {
    let child = launcher
        .spawn(host, &RemoteCmd::Script(script.to_string()))
        .map_err(|e| format!("cannot start '{}': {e}", launcher.program()))?;
    let done = if feeding {
        crate::io::child::finish_feeding(child, input, OUT_CAP, ERR_CAP, wait)
    } else {
        crate::io::child::finish(child, input, OUT_CAP, ERR_CAP, wait)
    };
    let err = String::from_utf8_lossy(&done.stderr);
    let refusal = err
        .lines()
        .find_map(|l| l.strip_prefix(SAYS))
        .map(|l| crate::remote::protocol::sanitize(l.trim(), 2000));
    let err = crate::remote::protocol::sanitize(err.trim(), 2000);
    let tail = if err.is_empty() {
        String::new()
    } else {
        format!(": {err}")
    };
    match done.status {
        Some(st) if st.success() => Ok(String::from_utf8_lossy(&done.stdout).into_owned()),
        Some(st) => Err(refusal.unwrap_or_else(|| {
            format!(
                "the remote command failed through '{}' ({st}){tail}",
                launcher.program()
            )
        })),
        None if feeding => Err(format!(
            "the copy took nothing for {}s (--host-timeout){tail}",
            wait.as_secs()
        )),
        None => Err(format!(
            "no answer within {}s (--host-timeout){tail}",
            wait.as_secs()
        )),
    }
}

#[cfg(unix)]
fn local_uname_s() -> String {
    rustix::system::uname()
        .sysname()
        .to_string_lossy()
        .into_owned()
}

/// A Windows coordinator pushes to no Linux host: the probe and the copy
/// are POSIX shell, and `uname -s` never says "Windows", so the push is
/// refused by the check above with its one line.
#[cfg(windows)]
fn local_uname_s() -> String {
    "Windows".to_string()
}

#[cfg(all(test, unix))]
mod tests;
