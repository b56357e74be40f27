//! `--push-binary`'s one rule set held against real hosts: network
//! namespaces with their own sshd (`common::hosts`), the copy going over
//! ssh into the far side's shell as it does in production. Each host shares
//! this machine's file system, so the test sees what the push left: a
//! squatter at the content name kept, a link in the push directory's path
//! followed nowhere, and a copy whose far side dies midway leaving no copy
//! and a temporary that later pushes name, then sweep once stale.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, SystemTime};

use volbench::error::exit;

use crate::common::hosts::{TestHosts, wait_until};
use crate::common::{stderr, vb};

/// A run of 300 ms on every host with `--push-binary` into `cache`.
fn pushing(h: &TestHosts, ssh: &str, cache: &Path, tmp: &Path) -> crate::common::Vb {
    vb([
        "run",
        "--hosts",
        &h.list(),
        "--ssh-command",
        ssh,
        "--push-binary",
    ])
    .arg("--push-dir")
    .arg(cache)
    .arg("--target")
    .arg(tmp.join("{host}"))
    .args(["--size", "1m", "--engine", "null", "--buffered"])
    .args([
        "--duration",
        "300ms",
        "--warmup",
        "0s",
        "--host-timeout",
        "60s",
    ])
}

fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn is_temp(name: &str) -> bool {
    name.starts_with(".volbench-") && name.ends_with(".part")
}

#[test]
fn a_squatter_at_the_content_name_is_kept_and_the_push_refused() {
    let Some(h) = TestHosts::up("push::a_squatter_at_the_content_name_is_kept", 1) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    pushing(&h, &h.ssh_command(), &cache, tmp.path()).expect(exit::OK);
    let names = listing(&cache);
    assert_eq!(names.len(), 1, "{names:?}");
    // Someone else's file under the very name this build's copy takes.
    let copy = cache.join(&names[0]);
    std::fs::remove_file(&copy).unwrap();
    std::fs::write(&copy, b"#!/bin/sh\necho someone else's\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o700)).unwrap();
    let o = pushing(&h, &h.ssh_command(), &cache, tmp.path()).expect(exit::TARGET);
    let err = stderr(&o);
    assert!(
        err.contains("h1: pushing volbench") && err.contains("replaces nothing"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(&copy).unwrap(),
        b"#!/bin/sh\necho someone else's\n",
        "kept, and never run"
    );
    assert_eq!(listing(&cache), names, "no temporary left");
}

#[test]
fn a_link_in_the_push_directory_path_is_refused_and_followed_nowhere() {
    let Some(h) = TestHosts::up("push::a_link_in_the_push_directory_path_is_refused", 1) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let elsewhere = tmp.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, tmp.path().join("via")).unwrap();
    let cache = tmp.path().join("via").join("cache");
    let o = pushing(&h, &h.ssh_command(), &cache, tmp.path()).expect(exit::TARGET);
    let err = stderr(&o);
    assert!(
        err.contains(&format!("{}/via is a link", tmp.path().display())),
        "{err}"
    );
    assert!(
        listing(&elsewhere).is_empty(),
        "nothing made where it points"
    );
}

/// An ssh that passes the first MiB of a copy, then holds the rest until
/// `gate` is opened (everything else it passes straight through).
fn gated_ssh(h: &TestHosts, dir: &Path) -> (String, PathBuf) {
    let gate = dir.join("gate");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&gate)
            .status()
            .unwrap()
            .success()
    );
    let script = dir.join("gated-ssh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\ncase \"$*\" in\n*'cat > '*)\n  {{ head -c 1048576; read _ < '{gate}'; cat; }} | exec ssh -F '{cfg}' \
             \"$@\" ;;\n*) exec ssh -F '{cfg}' \"$@\" ;;\nesac\n",
            gate = gate.display(),
            cfg = h.ssh_config().display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    (script.display().to_string(), gate)
}

/// Kills everything host `i` runs but its sshd listener (the one process
/// there whose parent is not there too): the far side of every session
/// (sshd's session process, the shell, `cat`) dies at once. All are
/// stopped first, then killed: killed one by one, a shell whose `cat` died
/// first could run its EXIT trap (and remove the temporary) before its own
/// SIGKILL came, which a busy machine's scheduling allows.
fn kill_far_side(h: &TestHosts, i: usize) {
    let pids = h.pids_in(i);
    let parent = |pid: u32| -> Option<u32> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        stat.rsplit_once(") ")?.1.split(' ').nth(1)?.parse().ok()
    };
    let far: Vec<u32> = pids
        .iter()
        .copied()
        .filter(|&pid| parent(pid).is_some_and(|p| pids.contains(&p)))
        .collect();
    for signal in [rustix::process::Signal::STOP, rustix::process::Signal::KILL] {
        for &pid in &far {
            let _ = rustix::process::kill_process(
                rustix::process::Pid::from_raw(pid as i32).unwrap(),
                signal,
            );
        }
    }
}

fn wait_exit(child: &mut Child) -> std::process::ExitStatus {
    let mut status = None;
    let ended = wait_until(Duration::from_secs(180), || {
        status = child.try_wait().unwrap();
        status.is_some()
    });
    assert!(ended, "volbench did not end");
    status.unwrap()
}

#[test]
fn a_copy_whose_far_side_dies_midway_leaves_no_copy_and_is_swept_once_stale() {
    let Some(h) = TestHosts::up("push::a_copy_whose_far_side_dies_midway", 1) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let (ssh, gate) = gated_ssh(&h, tmp.path());
    let mut run = pushing(&h, &ssh, &cache, tmp.path()).into_command();
    let mut child = run
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The far side has written the first MiB into its temporary, and waits.
    let temp = || {
        std::fs::read_dir(&cache)
            .ok()?
            .flatten()
            .find(|e| is_temp(&e.file_name().to_string_lossy()))
    };
    let midway = wait_until(Duration::from_secs(120), || {
        temp().is_some_and(|e| e.metadata().is_ok_and(|m| m.len() == 1 << 20))
    });
    assert!(
        midway,
        "the copy never reached 1 MiB: {:?}",
        listing(&cache)
    );
    kill_far_side(&h, 1);
    // Let the wrapper go on, into a connection that is gone.
    if let Ok(mut g) = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&gate)
    {
        let _ = g.write_all(b"\n");
    }
    let status = wait_exit(&mut child);
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(exit::TARGET), "{err}");
    assert!(err.contains("h1: pushing volbench"), "{err}");
    let left = listing(&cache);
    assert!(
        left.len() == 1 && is_temp(&left[0]),
        "no copy under the content name, the far side's temporary left: {left:?}"
    );

    // The next push copies, and names the temporary: it is recent, maybe
    // another push's under way.
    let o = pushing(&h, &h.ssh_command(), &cache, tmp.path()).expect(exit::OK);
    assert!(
        stderr(&o).contains(&format!("left 1 ({})", left[0])),
        "{}",
        stderr(&o)
    );
    let now = listing(&cache);
    assert_eq!(now.len(), 2, "{now:?}");
    // Untouched past the bound (volbench's STALE: 65 min), it is swept.
    let f = std::fs::File::options()
        .write(true)
        .open(cache.join(&left[0]))
        .unwrap();
    f.set_modified(SystemTime::now() - Duration::from_secs(2 * 3600))
        .unwrap();
    let o = pushing(&h, &h.ssh_command(), &cache, tmp.path()).expect(exit::OK);
    assert!(
        stderr(&o).contains("removed 1 stale temporary"),
        "{}",
        stderr(&o)
    );
    let copies: Vec<String> = now.into_iter().filter(|n| !is_temp(n)).collect();
    assert_eq!(listing(&cache), copies);
}
