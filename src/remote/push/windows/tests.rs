use super::*;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime};

/// The push with a minute for every reply, its path only.
fn push(l: &Launcher, host: &str, dir: &WinDir, bytes: &[u8]) -> Result<String> {
    super::push(l, host, dir, bytes, Duration::from_secs(60)).map(|(p, _)| p)
}

#[test]
fn a_push_directory_is_a_drive_path_or_one_under_the_home() {
    let d = WinDir::parse(r"d:\volbench\bin").unwrap();
    assert_eq!(
        d.cmd_path("v.exe").as_deref(),
        Some(r"D:\volbench\bin\v.exe")
    );
    assert_eq!(
        d.sftp(Style::SlashDrive, 2, Some("v.exe")),
        "/D:/volbench/bin/v.exe"
    );
    assert_eq!(d.sftp(Style::BareDrive, 1, None), "D:/volbench");
    let root = WinDir::parse("E:").unwrap();
    assert_eq!(root.cmd_path("v.exe").as_deref(), Some(r"E:\v.exe"));
    assert_eq!(root.sftp(Style::SlashDrive, 0, Some("v.exe")), "/E:/v.exe");
    for home in [
        "~/.cache/volbench",
        r"~\.cache\volbench",
        ".cache/./volbench",
    ] {
        let h = WinDir::parse(home).unwrap();
        assert_eq!(h.cmd_path("v.exe"), None, "{home}: known only on the host");
        assert_eq!(h.sftp(Style::SlashDrive, 2, Some("v")), ".cache/volbench/v");
        assert_eq!(h.sftp(Style::SlashDrive, 0, None), ".", "{home}");
    }
    for (bad, why) in [
        ("/opt/volbench", "no directory a Windows host"),
        (r"\\server\share\vb", "no directory a Windows host"),
        ("C:relative", "no directory a Windows host"),
        ("~/../elsewhere", "'..'"),
        (r"D:\vb\NUL", "reserved device name"),
        (r"D:\vb.\x", "ends in a dot"),
        ("D:/a|b", "'|'"),
        (r"D:\50%\vb", "cmd.exe"),
    ] {
        let e = WinDir::parse(bad).unwrap_err();
        assert!(e.contains(why), "{bad}: {e}");
    }
}

#[test]
fn a_servers_absolute_name_becomes_the_path_cmd_exe_runs() {
    assert_eq!(
        windows_of("/C:/Users/Ann Lee/.cache/volbench").as_deref(),
        Some(r"C:\Users\Ann Lee\.cache\volbench")
    );
    assert_eq!(windows_of("c:/Users/a").as_deref(), Some(r"C:\Users\a"));
    assert_eq!(windows_of(r"D:\vb").as_deref(), Some(r"D:\vb"));
    assert_eq!(windows_of("/D:").as_deref(), Some(r"D:\"));
    assert_eq!(windows_of("/home/ann"), None);
    assert_eq!(windows_of("/cygdrive/c/Users"), None);
}

/// OpenSSH's SFTP server, as Debian installs it with openssh-server.
fn sftp_server(test: &str) -> Option<PathBuf> {
    let found = [
        "/usr/lib/openssh/sftp-server",
        "/usr/lib/sftp-server",
        "/usr/libexec/openssh/sftp-server",
    ]
    .iter()
    .map(PathBuf::from)
    .find(|p| p.is_file());
    if found.is_none() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "{test}: no sftp-server (openssh-sftp-server) on CI"
        );
        crate::console::errln!("SKIP {test}: no sftp-server (install openssh-sftp-server)");
    }
    found
}

/// A "Windows host" whose SFTP server runs here, started in `home` (in a
/// new temporary directory), where `Z:` is a link to `/`: Wine's drive Z,
/// so `Z:/tmp/x` is `/tmp/x`.
fn wine_like_host(test: &str) -> Option<(tempfile::TempDir, PathBuf, Launcher)> {
    wine_like_host_with(test, "")
}

/// The same, `before` run by its shell first (a limit on the server).
fn wine_like_host_with(test: &str, before: &str) -> Option<(tempfile::TempDir, PathBuf, Launcher)> {
    let server = sftp_server(test)?;
    let t = tempfile::tempdir().unwrap();
    let home = t.path().join("home");
    std::fs::create_dir(&home).unwrap();
    std::os::unix::fs::symlink("/", home.join("Z:")).unwrap();
    let l = Launcher::new(
        Some(&format!(
            "sh -c '{before} cd \"$0\" && exec {}' {{host}}",
            server.display()
        )),
        None,
    )
    .unwrap();
    Some((t, home, l))
}

fn z(p: &Path) -> String {
    format!("Z:{}", p.display()).replace('/', "\\")
}

fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn a_push_writes_one_content_named_copy_and_reuses_it() {
    let Some((t, home, l)) =
        wine_like_host("push::windows::a_push_writes_one_content_named_copy_and_reuses_it")
    else {
        return;
    };
    let cache = t.path().join("a").join("cache");
    let dir = WinDir::parse(&z(&cache)).unwrap();
    // Several chunks and a short last one: the window's arithmetic.
    let bytes: Vec<u8> = (0..(5 * 32 * 1024 + 17)).map(|i| (i % 251) as u8).collect();
    let path = push(&l, home.to_str().unwrap(), &dir, &bytes).unwrap();
    let file = cache.join(exe_name(&bytes));
    assert_eq!(path, z(&file));
    assert_eq!(std::fs::read(&file).unwrap(), bytes);
    assert_eq!(listing(&cache), [exe_name(&bytes)], "no temporary left");
    let before = std::fs::metadata(&file).unwrap();
    let again = push(&l, home.to_str().unwrap(), &dir, &bytes).unwrap();
    assert_eq!(again, path);
    let after = std::fs::metadata(&file).unwrap();
    assert_eq!(
        (before.ino(), before.mtime_nsec()),
        (after.ino(), after.mtime_nsec()),
        "the copy there is reused, not written again"
    );
}

#[test]
fn a_push_replaces_nothing_and_follows_no_link() {
    let Some((t, home, l)) =
        wine_like_host("push::windows::a_push_replaces_nothing_and_follows_no_link")
    else {
        return;
    };
    let h = home.to_str().unwrap();
    let bytes = b"MZ this is volbench.exe".to_vec();

    // Something else at the content name: kept, the push refused.
    let cache = t.path().join("cache");
    std::fs::create_dir(&cache).unwrap();
    let squatter = cache.join(exe_name(&bytes));
    std::fs::write(&squatter, b"someone else's").unwrap();
    let e = push(&l, h, &WinDir::parse(&z(&cache)).unwrap(), &bytes).unwrap_err();
    assert!(e.message.contains("replaces nothing"), "{e}");
    assert!(
        e.message
            .starts_with(&format!("host {h}: pushing volbench.exe")),
        "{e}"
    );
    assert_eq!(std::fs::read(&squatter).unwrap(), b"someone else's");
    assert_eq!(listing(&cache).len(), 1, "no temporary left");

    // A link on the way: nothing is written where it points.
    let elsewhere = t.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, t.path().join("via")).unwrap();
    let via = t.path().join("via").join("cache");
    let e = push(&l, h, &WinDir::parse(&z(&via)).unwrap(), &bytes).unwrap_err();
    assert!(e.message.contains("is a link"), "{e}");
    assert!(listing(&elsewhere).is_empty());

    // A file where a directory must be.
    let e = push(
        &l,
        h,
        &WinDir::parse(&z(&squatter.join("x"))).unwrap(),
        &bytes,
    )
    .unwrap_err();
    assert!(e.message.contains("not a directory"), "{e}");

    // Under the home: this server names it without a drive, so cmd.exe
    // could not be told where the copy is; refused before anything is made.
    let e = push(&l, h, &WinDir::parse("~/.cache/volbench").unwrap(), &bytes).unwrap_err();
    assert!(e.message.contains("no drive"), "{e}");
    assert!(!home.join(".cache").exists());
}

#[test]
fn a_far_side_that_is_no_sftp_server_is_one_line_with_its_words() {
    let t = tempfile::tempdir().unwrap();
    let dir = WinDir::parse(&z(t.path())).unwrap();
    // ssh failing to connect: its message, not a hang.
    let l = Launcher::new(
        Some("sh -c 'echo \"ssh: connect to host $0 port 22: Connection refused\" >&2; exit 255' {host}"),
        None,
    )
    .unwrap();
    let e = push(&l, "win9", &dir, b"MZ").unwrap_err();
    assert!(e.message.contains("Connection refused"), "{e}");
    assert!(!e.message.contains('\n'), "{e}");
    // A login banner where the protocol should start.
    let l = Launcher::new(
        Some("sh -c 'echo Welcome to win9; cat >/dev/null' {host}"),
        None,
    )
    .unwrap();
    let e = push(&l, "win9", &dir, b"MZ").unwrap_err();
    assert!(e.message.contains("not an SFTP server"), "{e}");
    assert!(listing(t.path()).is_empty());
}

#[test]
fn a_copy_the_host_cannot_hold_leaves_nothing_behind() {
    // A file size limit of 64 KiB on the server (its signal ignored, so a
    // write past it fails with EFBIG): the copy fails in the middle of its
    // window of writes, and what was written goes.
    let Some((t, home, l)) = wine_like_host_with(
        "push::windows::a_copy_the_host_cannot_hold_leaves_nothing_behind",
        "trap \"\" XFSZ; ulimit -f 128;",
    ) else {
        return;
    };
    let cache = t.path().join("cache");
    let bytes = vec![7u8; 4 << 20];
    let e = push(
        &l,
        home.to_str().unwrap(),
        &WinDir::parse(&z(&cache)).unwrap(),
        &bytes,
    )
    .unwrap_err();
    assert!(e.message.contains("writing"), "{e}");
    assert!(listing(&cache).is_empty(), "{:?}", listing(&cache));
    // Within the limit the same host takes a copy: the failure was the size.
    let small = vec![7u8; 16 << 10];
    push(
        &l,
        home.to_str().unwrap(),
        &WinDir::parse(&z(&cache)).unwrap(),
        &small,
    )
    .unwrap();
    assert_eq!(listing(&cache), [exe_name(&small)]);
}

/// Sets a file's modification time `secs` into the past.
fn age(path: &Path, secs: u64) {
    let f = std::fs::File::options().write(true).open(path).unwrap();
    f.set_modified(SystemTime::now() - Duration::from_secs(secs))
        .unwrap();
}

#[test]
fn a_temporary_the_far_side_left_is_named_then_swept_once_stale() {
    // The server's input cut after 300 kB: it dies in the middle of the
    // copy, and the temporary stays (nobody is left there to remove it).
    // dd passes on each byte at once (head's stdio would hold the
    // requests; a larger dd block counts short reads as whole blocks).
    let test = "push::windows::a_temporary_the_far_side_left_is_named_then_swept_once_stale";
    let Some(server) = sftp_server(test) else {
        return;
    };
    let Some((t, home, l)) = wine_like_host(test) else {
        return;
    };
    let h = home.to_str().unwrap();
    let dying = Launcher::new(
        Some(&format!(
            "sh -c 'cd \"$0\" && dd bs=1 count=300000 2>/dev/null | {}' \
             {{host}}",
            server.display()
        )),
        None,
    )
    .unwrap();
    let cache = t.path().join("cache");
    let dir = WinDir::parse(&z(&cache)).unwrap();
    let bytes: Vec<u8> = (0..(1 << 20)).map(|i| (i % 253) as u8).collect();
    let e = push(&dying, h, &dir, &bytes).unwrap_err();
    assert!(
        e.message.contains("went away") || e.message.contains("ended"),
        "{e}"
    );
    assert!(cache.is_dir(), "the copy had begun: {e}");
    let left = listing(&cache);
    assert_eq!(left.len(), 1, "{left:?}");
    assert!(crate::remote::push::is_temp(&left[0]), "{left:?}");
    // Something else named like a temporary: a link, never followed.
    let outside = t.path().join("outside");
    std::fs::write(&outside, b"keep").unwrap();
    age(&outside, 3 * 3600);
    let link_name = ".volbench-planted.0000000000000000.part";
    std::os::unix::fs::symlink(&outside, cache.join(link_name)).unwrap();

    // The next push copies; the temporary is recent, so it is named, not removed.
    let (_, swept) = super::push(&l, h, &dir, &bytes, Duration::from_secs(60)).unwrap();
    assert!(swept.removed.is_empty(), "{swept:?}");
    assert!(swept.kept.contains(&left[0]), "{swept:?}");
    assert!(swept.kept.contains(&link_name.to_string()), "{swept:?}");
    // Past STALE, the next push (which copies nothing) removes it.
    age(&cache.join(&left[0]), STALE.as_secs() + 60);
    let (_, swept) = super::push(&l, h, &dir, &bytes, Duration::from_secs(60)).unwrap();
    assert_eq!(swept.removed, [left[0].clone()]);
    assert_eq!(swept.kept, [link_name.to_string()]);
    let mut want = vec![exe_name(&bytes), link_name.to_string()];
    want.sort();
    assert_eq!(
        listing(&cache),
        want,
        "the clock's own probe file is gone too"
    );
    assert_eq!(std::fs::read(&outside).unwrap(), b"keep");
}

#[test]
fn a_server_that_never_answers_is_given_up_after_the_host_timeout() {
    // It used to be waited for 600 s whatever --host-timeout said.
    let t = tempfile::tempdir().unwrap();
    let dir = WinDir::parse(&z(t.path())).unwrap();
    let mute = Launcher::new(Some("sh -c 'exec sleep 600' {host}"), None).unwrap();
    let start = Instant::now();
    let e = super::push(&mute, "win9", &dir, b"MZ", Duration::from_secs(1)).unwrap_err();
    assert!(
        e.message.contains("no answer for 1s (--host-timeout)"),
        "{e}"
    );
    assert!(
        start.elapsed() < Duration::from_secs(60),
        "{:?}",
        start.elapsed()
    );
}
