//! Which hosts take part and what each one runs against: `--hosts`,
//! `--hosts-file` (with per-host overrides) and target templates
//! (`{host}`, `{index}`, `{1..6}`, `{a,b}`).
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

pub(crate) mod counts;
pub(crate) mod from_args;
pub(crate) mod from_command;
pub(crate) mod launcher;
pub mod slurm;
pub(crate) mod spec;
pub(crate) mod trees;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::error::{Result, VbError, clip};
use crate::units::bounds::{self, MAX_HOSTS};
use crate::units::parse_count_in;

/// A host as the user named it, with its own overrides.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HostSpec {
    /// Anything `ssh` accepts: a name, an address, a `~/.ssh/config` alias, user@host.
    pub name: String,
    pub(crate) target: Option<String>,
    pub threads: Option<u32>,
    /// `vm_size=NAME`: this host's machine size, recorded with it.
    pub(crate) vm_size: Option<String>,
    /// `os=` and `volbench=`: how this host's agent is started.
    pub(crate) agent: AgentSide,
}

/// The system a host runs, from its `os=` setting: it decides the shell
/// the remote command is written for (Windows' OpenSSH hands it to
/// cmd.exe) and the binary `--push-binary` sends. Said, not probed: a
/// probe would need a command both shells read alike, and a fleet's
/// systems are known to whoever lists it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum HostOs {
    #[default]
    Linux,
    Windows,
}

/// How one host's agent is started.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct AgentSide {
    pub(crate) os: HostOs,
    /// `volbench=PATH`: this host's installed volbench, in place of
    /// `--remote-volbench` (a mixed fleet keeps it in different places).
    pub(crate) volbench: Option<String>,
    /// `push_dir=DIR`: where `--push-binary` puts this host's copy, in
    /// place of `--push-dir` (`D:\volbench` on a Windows host).
    pub(crate) push_dir: Option<String>,
}

/// One host with its position and expanded target paths.
#[derive(Debug, Clone)]
pub(crate) struct Assignment {
    pub(crate) host: HostSpec,
    pub(crate) index: u32,
    pub(crate) targets: Vec<PathBuf>,
}

/// At most this many targets per host after brace expansion.
pub const MAX_TARGETS_PER_HOST: usize = bounds::MAX_TARGETS;
/// Longest expanded target path, in bytes (Linux's PATH_MAX).
pub const MAX_PATH_BYTES: usize = 4096;

/// A host name goes on ssh's command line: refuse anything ssh could read
/// as an option (`-oProxyCommand=...`) or that is not one word.
pub fn check_host_name(name: &str) -> Result<()> {
    if name.is_empty() {
        return Err(VbError::input("an empty host name"));
    }
    // First, so that no refusal below quotes kilobytes of input.
    if name.len() > bounds::MAX_HOST_NAME_BYTES {
        return Err(VbError::input(format!(
            "a host name of {} bytes ('{}...'): at most {} bytes",
            name.len(),
            name.chars().take(40).collect::<String>().escape_debug(),
            bounds::MAX_HOST_NAME_BYTES
        )));
    }
    if name.starts_with('-') {
        return Err(VbError::input(format!(
            "host name '{name}' starts with '-', which ssh would read as an option"
        )));
    }
    // Printable ASCII only: invisible characters (a BOM, zero-width
    // spaces) would make a name that looks right and reaches no host.
    if let Some(c) = name.chars().find(|c| !c.is_ascii_graphic()) {
        return Err(VbError::input(format!(
            "host name '{}' contains {:?}; a host is one word of printable ASCII as ssh takes it",
            name.escape_debug(),
            c
        )));
    }
    // A launcher template may hand {host} to a shell (`sh -c 'ssh {host}'`),
    // and ssh itself hands it to one in a ProxyCommand (%h): no character a
    // shell reads specially, as OpenSSH refuses them too. No DNS name, IP
    // address or user@host needs one.
    if let Some(c) = name.chars().find(|c| SHELL_SPECIAL.contains(*c)) {
        return Err(VbError::input(format!(
            "host name '{name}' contains {c:?}, which a shell would interpret; a host name \
             is letters, digits and . - _ : @ % + , = [ ]"
        )));
    }
    // A target template puts the name in a path (`/mnt/vol/{host}`): a
    // `/` or a name of dots would take the host's files out of its folder.
    if name.contains('/') || name.chars().all(|c| c == '.') {
        return Err(VbError::input(format!(
            "host name '{name}' is not a host name: no '/', and not '.' or '..' \
             ({{host}} in a target path would leave its directory)"
        )));
    }
    Ok(())
}

/// Characters a POSIX shell treats specially outside quotes.
const SHELL_SPECIAL: &str = "'`\"$\\;&<>|(){}*?!~#^";

/// `--hosts vm1,vm2,vm3`.
pub fn parse_list(text: &str) -> Result<Vec<HostSpec>> {
    let mut hosts = Vec::new();
    // Slurm's node[01-24] expands (bounded by MAX_HOSTS) before the check.
    let names = crate::input::hosts::slurm::expand(text)
        .map_err(|e| VbError::input(format!("--hosts {e}")))?;
    for name in &names {
        check_host_name(name).map_err(|e| VbError::input(format!("--hosts: {}", e.message)))?;
        hosts.push(HostSpec {
            name: name.to_string(),
            target: None,
            threads: None,
            vm_size: None,
            agent: AgentSide::default(),
        });
    }
    if hosts.is_empty() {
        return Err(VbError::input("--hosts names no host"));
    }
    if hosts.len() > MAX_HOSTS {
        return Err(VbError::input(format!(
            "--hosts names {} hosts; at most {MAX_HOSTS}",
            hosts.len()
        )));
    }
    Ok(hosts)
}

/// Reads and parses `--hosts-file` (a regular file or a pipe, at most
/// `MAX_INPUT_FILE` bytes).
pub(crate) fn read_file(path: &Path) -> Result<Vec<HostSpec>> {
    let text = crate::input::file::read_text(path, "--hosts-file", bounds::MAX_INPUT_FILE)?;
    parse_file(&text, &path.display().to_string())
}

/// A hosts file: one host a line, `#` at the start of a word starts a
/// comment, and optional
/// `key=value` overrides after the name: `target=PATH-TEMPLATE`, `threads=N`,
/// `os=windows` (a Windows host: its agent is started through cmd.exe),
/// `volbench=PATH` (its installed volbench), `push_dir=DIR` (where
/// `--push-binary` puts its copy).
///
/// ```text
/// # client VMs
/// vm1
/// vm2  threads=16
/// vm3  target=/mnt/other/{host}
/// win1 os=windows volbench=C:\\Tools\\volbench.exe target=D:\\bench
/// win2 os=windows push_dir=D:\\volbench target=D:\\bench
/// ```
pub fn parse_file(text: &str, origin: &str) -> Result<Vec<HostSpec>> {
    let mut hosts = Vec::new();
    for (n, raw) in crate::input::file::strip_bom(text).lines().enumerate() {
        let line = strip_comment(raw).trim();
        if line.is_empty() {
            continue;
        }
        let at = |msg: String| VbError::input(format!("{origin} line {}: {msg}", n + 1));
        let mut words = line.split_whitespace();
        let name = words.next().unwrap_or_default();
        check_host_name(name).map_err(|e| at(e.message))?;
        let mut host = HostSpec {
            name: name.to_string(),
            target: None,
            threads: None,
            vm_size: None,
            agent: AgentSide::default(),
        };
        let mut seen: Vec<&str> = Vec::new();
        for w in words {
            // The word is not shown: a file that is no hosts file at all
            // must not have its content printed.
            let (k, v) = w.split_once('=').ok_or_else(|| {
                at("a word after the host name is not key=value (target=..., threads=N)".into())
            })?;
            // Last-wins would drop the first value without a word.
            if seen.contains(&k) {
                return Err(at(format!("'{k}' is given twice")));
            }
            seen.push(k);
            match k {
                "target" if !v.is_empty() => {
                    check_host_target(v, name).map_err(at)?;
                    host.target = Some(v.to_string());
                }
                "threads" => {
                    let t = parse_count_in("threads", v, 1, bounds::MAX_THREADS)
                        .map_err(|e| at(e.message))?;
                    host.threads = u32::try_from(t).ok();
                }
                "vm_size" => {
                    let n = crate::input::args::reading::vm_size(v)
                        .map_err(|e| at(format!("vm_size: {e}")))?;
                    host.vm_size = Some(n);
                }
                "os" => {
                    host.agent.os = match v {
                        "linux" => HostOs::Linux,
                        "windows" => HostOs::Windows,
                        _ => return Err(at("os: linux or windows".into())),
                    }
                }
                "volbench" => {
                    if v.is_empty() || v.len() > MAX_PATH_BYTES {
                        return Err(at(format!(
                            "volbench: a path of 1 to {MAX_PATH_BYTES} bytes"
                        )));
                    }
                    host.agent.volbench = Some(v.to_string());
                }
                "push_dir" => {
                    if v.is_empty() || v.len() > MAX_PATH_BYTES {
                        return Err(at(format!(
                            "push_dir: a path of 1 to {MAX_PATH_BYTES} bytes"
                        )));
                    }
                    host.agent.push_dir = Some(v.to_string());
                }
                _ => {
                    return Err(at(format!(
                        "unknown setting '{k}' (a host line takes target=..., threads=N, \
                         vm_size=NAME, os=linux|windows, volbench=PATH and push_dir=DIR)"
                    )));
                }
            }
        }
        if hosts.len() == MAX_HOSTS {
            return Err(at(format!("more than {MAX_HOSTS} hosts")));
        }
        hosts.push(host);
    }
    if hosts.is_empty() {
        return Err(VbError::input(format!("{origin} names no host")));
    }
    Ok(hosts)
}

/// A line without its comment: `#` starts one at the start of the line or
/// of a word, as in a shell; inside a word it is the word's
/// (`target=/mnt/a#1/{host}` was cut to `/mnt/a` without a word).
fn strip_comment(line: &str) -> &str {
    let mut after_space = true;
    for (i, c) in line.char_indices() {
        if c == '#' && after_space {
            return line.get(..i).unwrap_or_default();
        }
        after_space = c.is_whitespace();
    }
    line
}

/// A host's own target names where it is: each path it expands to is
/// absolute (`/...`, or `D:\...` and `\\server\...` for a Windows host).
/// A relative one (`../../../etc/{host}`) would be taken from whatever
/// directory the host's launcher leaves its agent in (ssh: the home
/// directory), not from where the user wrote it.
fn check_host_target(template: &str, host: &str) -> std::result::Result<(), String> {
    let windows_drive = |p: &str| {
        let b = p.as_bytes();
        b.len() >= 3
            && b.first().is_some_and(u8::is_ascii_alphabetic)
            && b.get(1) == Some(&b':')
            && matches!(b.get(2), Some(b'\\' | b'/'))
    };
    for p in expand_target(template, host, 0).map_err(|e| e.message)? {
        if !(p.starts_with('/') || p.starts_with("\\\\") || windows_drive(&p)) {
            return Err(
                "target= is a relative path; a host's target is absolute (its agent \
                 does not start in this directory)"
                    .into(),
            );
        }
    }
    Ok(())
}

/// Expands a target template for one host: `{host}` and `{index}` (the
/// host's position, from 0) are substituted, then each brace list (`{a,b}`,
/// `{1..6}`, `{01..12}` zero-padded) multiplies the paths, left to right.
pub fn expand_target(template: &str, host: &str, index: u32) -> Result<Vec<String>> {
    let bad = |msg: String| VbError::input(format!("--target '{}': {msg}", clip(template)));
    // Split into literal text and {groups}.
    let mut parts: Vec<Vec<String>> = Vec::new();
    let mut rest = template;
    while let Some((before, after)) = rest.split_once('{') {
        let (inner, tail) = after
            .split_once('}')
            .ok_or_else(|| bad("a '{' without its '}'".into()))?;
        if inner.contains('{') {
            return Err(bad("nested braces are not supported".into()));
        }
        if before.contains('}') {
            return Err(bad("a '}' without its '{'".into()));
        }
        parts.push(vec![before.to_string()]);
        parts.push(expand_group(inner, host, index).map_err(bad)?);
        rest = tail;
    }
    if rest.contains('}') {
        return Err(bad("a '}' without its '{'".into()));
    }
    parts.push(vec![rest.to_string()]);
    let mut out = vec![String::new()];
    for alternatives in parts {
        let count = out.len().saturating_mul(alternatives.len());
        if count > MAX_TARGETS_PER_HOST {
            return Err(bad(format!(
                "expands to more than {MAX_TARGETS_PER_HOST} targets per host"
            )));
        }
        let mut next = Vec::with_capacity(count);
        for prefix in &out {
            for alt in &alternatives {
                if prefix.len().saturating_add(alt.len()) > MAX_PATH_BYTES {
                    return Err(bad(format!(
                        "expands to a path longer than {MAX_PATH_BYTES} bytes"
                    )));
                }
                next.push(format!("{prefix}{alt}"));
            }
        }
        out = next;
    }
    Ok(out)
}

fn expand_group(inner: &str, host: &str, index: u32) -> std::result::Result<Vec<String>, String> {
    let quoted = clip(inner);
    match inner {
        "host" => return Ok(vec![host.to_string()]),
        "index" => return Ok(vec![index.to_string()]),
        "" => return Err("an empty {}".into()),
        _ => {}
    }
    if let Some((a, b)) = inner.split_once("..") {
        let (x, y) = match (a.parse::<u64>(), b.parse::<u64>()) {
            (Ok(x), Ok(y)) => (x, y),
            _ => {
                return Err(format!(
                    "{{{quoted}}} is not a range of numbers like {{1..6}}"
                ));
            }
        };
        if x > y || y - x >= MAX_TARGETS_PER_HOST as u64 {
            return Err(format!(
                "{{{quoted}}} must go upwards, at most {MAX_TARGETS_PER_HOST} values"
            ));
        }
        // {01..12}: a leading zero asks for fixed-width numbers, as in bash.
        let width = if a.len() > 1 && a.starts_with('0') {
            a.len().min(MAX_PATH_BYTES)
        } else {
            0
        };
        return Ok((x..=y).map(|v| format!("{v:0width$}")).collect());
    }
    if inner.contains(',') {
        let alts: Vec<String> = inner.split(',').map(str::to_string).collect();
        if alts.iter().any(String::is_empty) {
            return Err(format!("{{{quoted}}} has an empty alternative"));
        }
        return Ok(alts);
    }
    Err(format!(
        "unknown placeholder {{{quoted}}} (use {{host}}, {{index}}, {{1..6}} or {{a,b}})"
    ))
}

/// Expands every host's targets and checks that no two hosts (or two targets
/// of one host) write the same path, unless `shared` says that is intended.
pub(crate) fn assign(hosts: &[HostSpec], template: &str, shared: bool) -> Result<Vec<Assignment>> {
    if hosts.len() > MAX_HOSTS {
        return Err(VbError::input(format!(
            "{} hosts; at most {MAX_HOSTS}",
            hosts.len()
        )));
    }
    let mut seen_names = std::collections::HashSet::new();
    for h in hosts {
        if !seen_names.insert(h.name.as_str()) {
            return Err(VbError::input(format!("host '{}' is listed twice", h.name)));
        }
    }
    let mut out = Vec::with_capacity(hosts.len());
    let mut owner: HashMap<String, String> = HashMap::new();
    for (i, h) in hosts.iter().enumerate() {
        let index = u32::try_from(i).unwrap_or(u32::MAX);
        let tpl = h.target.as_deref().unwrap_or(template);
        let paths = expand_target(tpl, &h.name, index)?;
        let system = match h.agent.os {
            HostOs::Linux => crate::spec::engine::Platform::Linux,
            HostOs::Windows => crate::spec::engine::Platform::Windows,
        };
        for p in &paths {
            // A drive path is a Windows host's, /dev a Linux host's: each
            // host's targets are read by its own system.
            if let Some(why) = crate::input::flags::foreign_on_host(p, system) {
                return Err(VbError::input(format!(
                    "host {}: {why}",
                    bounds::one_line(&h.name)
                )));
            }
        }
        for p in &paths {
            if let Some(other) = owner.insert(p.clone(), h.name.clone()) {
                if !shared {
                    let who = if other == h.name {
                        format!("host '{}' twice", h.name)
                    } else {
                        format!("hosts '{other}' and '{}'", h.name)
                    };
                    return Err(VbError::refused(format!(
                        "--target gives {who} the same path {}; on a shared file system they \
                     would write the same files. Put {{host}} or {{index}} in the path \
                     (e.g. '{}/{{host}}'), or pass --shared-target if the paths are each \
                     host's own disk or sharing is what you want",
                        clip(p),
                        clip(tpl)
                    )));
                }
            }
        }
        out.push(Assignment {
            host: h.clone(),
            index,
            targets: paths.into_iter().map(PathBuf::from).collect(),
        });
    }
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[test]
    fn each_hosts_targets_are_read_by_its_own_system() {
        let hosts = parse_file(
            "win1 os=windows\nwin2 os=windows target=\\\\nas\\share\\{host}\nvm1 target=/mnt/{host}\n",
            "f",
        )
        .unwrap();
        let a = assign(&hosts, r"D:\bench\{host}", false).unwrap();
        assert_eq!(a[0].targets, [PathBuf::from(r"D:\bench\win1")]);
        assert_eq!(a[1].targets, [PathBuf::from(r"\\nas\share\win2")]);
        // The template's drive path on a Linux host, /dev on a Windows one.
        let lin = parse_file("vm1\n", "f").unwrap();
        let e = assign(&lin, r"D:\bench\{host}", false).unwrap_err();
        assert!(e.message.starts_with("host vm1: target 'D:"), "{e}");
        assert!(e.message.contains("os=windows"), "{e}");
        let win = parse_file("win1 os=windows\n", "f").unwrap();
        let e = assign(&win, "/dev/sdb", false).unwrap_err();
        assert!(
            e.message.contains("host win1") && e.message.contains("Linux device"),
            "{e}"
        );
        // A plain POSIX path reads on both (Wine's drive Z, a mount).
        assert!(assign(&win, "/tmp/{host}", false).is_ok());
    }

    #[test]
    fn templates_expand_like_the_seed_layout() {
        assert_eq!(
            expand_target("/mnt/vdb{1..3}/{host}", "vm7", 6).unwrap(),
            ["/mnt/vdb1/vm7", "/mnt/vdb2/vm7", "/mnt/vdb3/vm7"]
        );
        assert_eq!(
            expand_target("/d/{a,b}/{index}-{08..10}", "h", 2).unwrap(),
            [
                "/d/a/2-08",
                "/d/a/2-09",
                "/d/a/2-10",
                "/d/b/2-08",
                "/d/b/2-09",
                "/d/b/2-10"
            ]
        );
        assert_eq!(expand_target("/plain", "h", 0).unwrap(), ["/plain"]);
    }

    #[test]
    fn bad_templates_say_what_is_wrong() {
        for (t, want) in [
            ("/x/{hst}", "unknown placeholder {hst}"),
            ("/x/{1..", "without its '}'"),
            ("/x/}", "without its '{'"),
            ("/x/{6..1}", "must go upwards"),
            ("/x/{a,,b}", "empty alternative"),
            ("/x/{}", "empty {}"),
            ("/x/{1..100000}", "at most"),
        ] {
            let e = expand_target(t, "h", 0).unwrap_err().to_string();
            assert!(e.contains(want), "{t}: {e}");
        }
    }

    #[test]
    fn hosts_file_takes_comments_and_overrides() {
        let hosts = parse_file(
            "# clients\nvm1\n\n  vm2 threads=16 # faster\nvm3 target=/mnt/o/{host}\n",
            "hosts.txt",
        )
        .unwrap();
        assert_eq!(hosts.len(), 3);
        assert_eq!(hosts[1].threads, Some(16));
        assert_eq!(hosts[2].target.as_deref(), Some("/mnt/o/{host}"));
        let e = parse_file("vm1\nvm2 speed=3\n", "hosts.txt").unwrap_err();
        assert!(e.to_string().contains("hosts.txt line 2"), "{e}");
        assert!(parse_file("# nothing\n", "f").is_err());
    }

    #[test]
    fn a_hash_inside_a_value_is_the_values_and_starts_a_comment_only_as_a_word() {
        // `target=/mnt/a#1/{host}` was cut to `/mnt/a` without a word.
        let hosts = parse_file(
            "vm1 target=/mnt/a#1/{host}   #  the second array\nvm2#x\n",
            "hosts.txt",
        );
        let e = hosts.unwrap_err();
        assert!(e.to_string().starts_with("hosts.txt line 2:"), "{e}");
        let hosts = parse_file("vm1 target=/mnt/a#1/{host}\t# note\n#vm2\n", "f").unwrap();
        assert_eq!(hosts.len(), 1);
        assert_eq!(hosts[0].target.as_deref(), Some("/mnt/a#1/{host}"));
    }

    #[test]
    fn a_hosts_file_target_is_absolute() {
        // ../../../etc/{host} was taken from the agent's home directory.
        for t in [
            "../../../etc/{host}",
            "bench/{host}",
            "{host}",
            "{/mnt/a,b}",
            "D:bench",
        ] {
            let e = parse_file(&format!("vm1 target={t}\n"), "hosts.txt").unwrap_err();
            assert!(
                e.to_string()
                    .starts_with("hosts.txt line 1: target= is a relative path"),
                "{t}: {e}"
            );
        }
        for t in [
            "/mnt/{host}",
            "{/mnt/a,/mnt/b}/x",
            r"D:\bench",
            "C:/b",
            r"\\srv\share\{host}",
        ] {
            let h = parse_file(&format!("vm1 target={t}\n"), "f").unwrap();
            assert_eq!(h[0].target.as_deref(), Some(t));
        }
    }

    #[test]
    fn a_bom_is_not_part_of_the_first_host() {
        // Found in issue 9: the BOM became part of the first host's name.
        let hosts = parse_file("\u{feff}vm1\nvm2\n", "hosts.txt").unwrap();
        assert_eq!(hosts[0].name, "vm1");
        assert!(parse_file("vm1\n\u{feff}vm2\n", "f").is_err());
        assert!(parse_list("vm\u{200b}1").is_err());
    }

    #[test]
    fn host_counts_and_threads_are_bounded() {
        let e = parse_file("vm1 threads=99999999999\n", "f").unwrap_err();
        assert!(
            e.to_string()
                .contains("threads 99999999999 is outside 1..4096"),
            "{e}"
        );
        let many: String = (0..=MAX_HOSTS).map(|i| format!("h{i}\n")).collect();
        assert!(
            parse_file(&many, "f")
                .unwrap_err()
                .to_string()
                .contains("more than 1024")
        );
        let list: Vec<String> = (0..=MAX_HOSTS).map(|i| format!("h{i}")).collect();
        assert!(parse_list(&list.join(",")).is_err());
        let long = format!("/x/{{0{}1..2}}", "0".repeat(5000));
        assert!(expand_target(&long, "h", 0).is_err());
    }

    #[test]
    fn option_like_host_names_are_refused() {
        assert!(parse_list("vm1,-oProxyCommand=sh").is_err());
        assert!(parse_file("vm1\n-F/etc/x\n", "f").is_err());
        assert!(parse_list("a b").is_err());
        assert_eq!(parse_list(" vm1, root@vm2 ,").unwrap().len(), 2);
    }

    #[test]
    fn names_that_would_leave_a_target_directory_are_refused() {
        for bad in ["..", ".", "a/../../etc", "vm1/x", "..."] {
            let e = parse_list(&format!("vm1,{bad}")).unwrap_err().to_string();
            assert!(e.starts_with("--hosts: host name"), "{bad}: {e}");
            assert!(e.contains(bad), "{e}");
            assert!(parse_file(&format!("{bad}\n"), "hosts.txt").is_err());
        }
        // Dots inside a name are a DNS name's.
        assert_eq!(parse_list("vm1.lab,10.0.0.1,..x").unwrap().len(), 3);
    }

    #[test]
    fn a_refusal_quotes_a_long_value_cut_short() {
        let long = "h".repeat(9000);
        for bad in [
            format!("{long}$"),
            format!("{long}[1-"),
            format!("n[{long}]"),
            format!("n[1-3{long}]"),
        ] {
            let e = parse_list(&bad).unwrap_err().to_string();
            assert!(e.len() < 1024, "{} bytes: {}", e.len(), &e[..200]);
            assert!(e.contains("bytes"), "{e}");
        }
        let e = expand_target(&format!("/x/{{{long}}}"), "h", 0).unwrap_err();
        assert!(e.to_string().len() < 1024, "{e}");
    }

    #[test]
    fn two_hosts_never_share_a_path_unless_asked() {
        let hosts = parse_list("vm1,vm2").unwrap();
        let e = assign(&hosts, "/mnt/vol", false).unwrap_err();
        assert_eq!(e.kind, crate::error::Kind::Refused);
        assert!(e.to_string().contains("{host}"), "{e}");
        assert!(assign(&hosts, "/mnt/vol", true).is_ok());
        let a = assign(&hosts, "/mnt/vdb{1,2}/{host}", false).unwrap();
        assert_eq!(a[1].targets[1], PathBuf::from("/mnt/vdb2/vm2"));
        assert!(assign(&parse_list("vm1,vm1").unwrap(), "/x/{host}", false).is_err());
    }
}
