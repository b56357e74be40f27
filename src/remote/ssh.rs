//! Starting commands on a host through the system `ssh` client (so the
//! user's keys, `~/.ssh/config`, jump hosts and agents all work), quoting
//! remote command lines, and `--push-binary`.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::error::{Result, VbError};

/// Environment variable that replaces the ssh program, like `--ssh-command`.
pub const SSH_ENV: &str = "VOLBENCH_SSH_COMMAND";

/// Options added when the program is ssh itself: never prompt (stdin is the
/// protocol), no terminal, and keep-alives so a dead link is noticed by ssh
/// too. They come after the user's own words, so `-o` options the user
/// gives win (ssh keeps the first value it sees).
const SSH_DEFAULTS: [&str; 9] = [
    "-T",
    "-o",
    "BatchMode=yes",
    "-o",
    "ServerAliveInterval=5",
    "-o",
    "ServerAliveCountMax=3",
    "-o",
    "ConnectTimeout=10",
];

#[derive(Debug, Clone)]
pub struct Ssh {
    words: Vec<String>,
    is_ssh: bool,
}

impl Ssh {
    /// From `--ssh-command` (or `VOLBENCH_SSH_COMMAND`), default `ssh`.
    pub fn new(command: Option<&str>) -> Result<Self> {
        let words = match command {
            Some(c) => {
                split_words(c).map_err(|e| VbError::input(format!("--ssh-command '{c}': {e}")))?
            }
            None => vec!["ssh".to_string()],
        };
        if words.is_empty() {
            return Err(VbError::input("--ssh-command is empty"));
        }
        let is_ssh = Path::new(&words[0]).file_name().is_some_and(|n| n == "ssh");
        Ok(Self { words, is_ssh })
    }

    pub fn describe(&self) -> String {
        self.words.join(" ")
    }

    /// `ssh [user words] [defaults] HOST REMOTE-COMMAND`, with pipes for
    /// stdin/stdout/stderr, in its own process group so a terminal's Ctrl-C
    /// reaches only the coordinator, which then stops the agents cleanly.
    pub fn command(&self, host: &str, remote: &str) -> Command {
        let mut c = Command::new(&self.words[0]);
        c.args(&self.words[1..]);
        if self.is_ssh {
            c.args(SSH_DEFAULTS);
        }
        c.arg(host).arg(remote);
        c.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        std::os::unix::process::CommandExt::process_group(&mut c, 0);
        c
    }

    /// Runs a short remote shell command with `input` on its stdin; returns
    /// stdout, or an error with ssh's exit status and stderr.
    pub fn run(&self, host: &str, remote: &str, input: &[u8], timeout: Duration) -> Result<String> {
        let mut child = self.command(host, remote).spawn().map_err(|e| {
            VbError::target(format!(
                "host {host}: cannot start '{}': {e}",
                self.words[0]
            ))
        })?;
        let mut stdin = child.stdin.take();
        let mut stdout = child.stdout.take();
        let mut stderr = child.stderr.take();
        let input = input.to_vec();
        let writer = std::thread::spawn(move || {
            if let Some(w) = stdin.as_mut() {
                let _ = w.write_all(&input);
            }
            drop(stdin);
        });
        let out = std::thread::spawn(move || {
            let mut s = Vec::new();
            if let Some(r) = stdout.as_mut() {
                let _ = r.take(1 << 20).read_to_end(&mut s);
            }
            s
        });
        let err = std::thread::spawn(move || {
            let mut s = Vec::new();
            if let Some(r) = stderr.as_mut() {
                let _ = r.take(1 << 16).read_to_end(&mut s);
            }
            s
        });
        let deadline = Instant::now() + timeout;
        let status = loop {
            match child.try_wait() {
                Ok(Some(st)) => break Some(st),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20))
                }
                _ => {
                    let _ = child.kill();
                    let _ = child.wait();
                    break None;
                }
            }
        };
        let _ = writer.join();
        let out = out.join().unwrap_or_default();
        let err = err.join().unwrap_or_default();
        let err = super::protocol::sanitize(String::from_utf8_lossy(&err).trim(), 2000);
        match status {
            Some(st) if st.success() => Ok(String::from_utf8_lossy(&out).into_owned()),
            Some(st) => Err(VbError::target(format!(
                "host {host}: remote command failed ({st}){}",
                if err.is_empty() {
                    String::new()
                } else {
                    format!(": {err}")
                }
            ))),
            None => Err(VbError::target(format!(
                "host {host}: no answer within {}s{}",
                timeout.as_secs(),
                if err.is_empty() {
                    String::new()
                } else {
                    format!(": {err}")
                }
            ))),
        }
    }
}

/// Splits a command line into words like a POSIX shell does (quotes and
/// backslashes), without expanding anything.
pub fn split_words(text: &str) -> std::result::Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => cur.push(c),
                        None => return Err("a ' without its closing '".into()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\' | '$' | '`')) => cur.push(c),
                            Some(c) => {
                                cur.push('\\');
                                cur.push(c);
                            }
                            None => return Err("a \" without its closing \"".into()),
                        },
                        Some(c) => cur.push(c),
                        None => return Err("a \" without its closing \"".into()),
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.next() {
                    Some(c) => cur.push(c),
                    None => return Err("a \\ at the end".into()),
                }
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    Ok(words)
}

/// Quotes one word for a POSIX shell: `it's` -> `'it'\''s'`.
pub fn quote(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+=:,@%".contains(c))
    {
        return word.to_string();
    }
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// Quotes a remote path, letting a leading `~/` mean the remote home.
pub fn quote_remote_path(path: &str) -> String {
    match path.strip_prefix("~/") {
        Some(rest) => format!("\"$HOME\"/{}", quote(rest)),
        None if path == "~" => "\"$HOME\"".to_string(),
        None => quote(path),
    }
}

/// A content hash naming a pushed binary: 128-bit FNV-1a, hex. Not a
/// security boundary (ssh already authenticates the copy); it only tells
/// one build from another so a cached copy is reused exactly when it is
/// this binary.
pub fn content_hash(bytes: &[u8]) -> String {
    const PRIME: u128 = 0x0000000001000000000000000000013B;
    let mut h: u128 = 0x6c62272e07bb014262b821756295c58d;
    for &b in bytes {
        h ^= b as u128;
        h = h.wrapping_mul(PRIME);
    }
    format!("{h:032x}")
}

/// Makes sure `host` has this very binary in `cache_dir` (named by its
/// content hash), copying it when missing; returns the remote command word
/// that runs it. Only that content-named file is ever written.
pub fn push_binary(
    ssh: &Ssh,
    host: &str,
    cache_dir: &str,
    exe: &Path,
    bytes: &[u8],
) -> Result<String> {
    let name = format!("volbench-{}", &content_hash(bytes)[..24]);
    let dir = quote_remote_path(cache_dir);
    let file = format!("{dir}/{name}");
    let probe = format!("if [ -x {file} ]; then echo have; else echo need; fi; uname -s; uname -m");
    let out = ssh.run(host, &probe, b"", Duration::from_secs(30))?;
    let mut lines = out.lines().map(str::trim);
    let state = lines.next().unwrap_or("");
    let os = lines.next().unwrap_or("");
    let arch = lines.next().unwrap_or("");
    let (my_os, my_arch) = (local_uname_s(), std::env::consts::ARCH);
    if !os.eq_ignore_ascii_case(&my_os) || arch != my_arch {
        return Err(VbError::target(format!(
            "host {host} is {os} {arch}; this volbench ({}) is built for {my_os} {my_arch} and \
             cannot be pushed there: install a matching volbench on it instead",
            exe.display()
        )));
    }
    match state {
        "have" => Ok(file),
        "need" => {
            // Write under a temporary name and rename, so a half-copied
            // binary is never run and concurrent pushes cannot collide.
            let script = format!(
                "umask 077 && mkdir -p {dir} && t={dir}/.{name}.$$ && cat > \"$t\" && \
                 chmod 700 \"$t\" && mv -f \"$t\" {file}"
            );
            ssh.run(host, &script, bytes, Duration::from_secs(600))
                .map_err(|e| VbError::target(format!("copying volbench: {e}")))?;
            Ok(file)
        }
        _ => Err(VbError::target(format!(
            "host {host}: unexpected answer while checking for volbench: {}",
            super::protocol::sanitize(&out, 200)
        ))),
    }
}

fn local_uname_s() -> String {
    rustix::system::uname()
        .sysname()
        .to_string_lossy()
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_lines_split_like_a_shell() {
        assert_eq!(
            split_words(r#"ssh -F "/tmp/my cfg" -o 'ProxyJump=a b' x\ y"#).unwrap(),
            ["ssh", "-F", "/tmp/my cfg", "-o", "ProxyJump=a b", "x y"]
        );
        assert!(split_words("ssh 'oops").is_err());
        assert_eq!(split_words("  ").unwrap(), Vec::<String>::new());
    }

    #[test]
    fn quoting_survives_a_shell() {
        for w in ["plain", "with space", "it's", "$HOME", "a;rm -rf /", ""] {
            let q = quote(w);
            let out = std::process::Command::new("sh")
                .arg("-c")
                .arg(format!("printf %s {q}"))
                .output()
                .unwrap();
            assert_eq!(String::from_utf8_lossy(&out.stdout), w, "{q}");
        }
        assert_eq!(quote_remote_path("~/.cache/v b"), "\"$HOME\"/'.cache/v b'");
    }

    #[test]
    fn defaults_only_for_ssh_itself() {
        let s = Ssh::new(Some("/usr/bin/ssh -F cfg")).unwrap();
        let c = s.command("h1", "true");
        let args: Vec<_> = c
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(&args[..2], ["-F", "cfg"]);
        assert!(args.contains(&"BatchMode=yes".to_string()));
        assert_eq!(&args[args.len() - 2..], ["h1", "true"]);
        let w = Ssh::new(Some("my-wrapper --x")).unwrap();
        let args: Vec<_> = w
            .command("h1", "true")
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(args, ["--x", "h1", "true"]);
    }

    #[test]
    fn content_hash_tells_contents_apart() {
        assert_ne!(content_hash(b"a"), content_hash(b"b"));
        assert_eq!(content_hash(b"abc"), content_hash(b"abc"));
        assert_eq!(content_hash(b"").len(), 32);
    }
}
