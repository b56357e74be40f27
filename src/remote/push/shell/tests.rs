use super::*;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::time::SystemTime;

/// A "host" that is a home directory here: the script runs under
/// `sh` with HOME set to it (the host name).
fn home_host() -> (tempfile::TempDir, PathBuf, Launcher) {
    let t = tempfile::tempdir().unwrap();
    let home = t.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let l = Launcher::new(Some("env HOME={host}"), None).unwrap();
    (t, home, l)
}

fn push(l: &Launcher, home: &Path, dir: &str, bytes: &[u8]) -> Result<Pushed> {
    let dir = PosixDir::parse(dir).unwrap();
    push_binary(
        l,
        home.to_str().unwrap(),
        &dir,
        Path::new("vb"),
        bytes,
        Duration::from_secs(60),
    )
}

fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn age(path: &Path, secs: u64) {
    let f = std::fs::File::options().write(true).open(path).unwrap();
    f.set_modified(SystemTime::now() - Duration::from_secs(secs))
        .unwrap();
}

fn bytes() -> Vec<u8> {
    (0..(300 * 1024 + 7)).map(|i| (i % 251) as u8).collect()
}

#[test]
fn a_push_writes_one_content_named_copy_and_reuses_it() {
    let (_t, home, l) = home_host();
    let b = bytes();
    let p = push(&l, &home, "~/.cache/vb", &b).unwrap();
    let name = super::super::copy_name(&b, "");
    assert_eq!(p.word, format!("\"$HOME\"/.cache/vb/{name}"));
    let cache = home.join(".cache/vb");
    assert_eq!(listing(&cache), [name.as_str()], "no temporary left");
    let file = cache.join(&name);
    assert_eq!(std::fs::read(&file).unwrap(), b);
    let m = std::fs::metadata(&file).unwrap();
    assert_eq!((m.mode() & 0o777, m.nlink()), (0o700, 1));
    assert_eq!(std::fs::metadata(&cache).unwrap().mode() & 0o777, 0o700);
    push(&l, &home, "~/.cache/vb", &b).unwrap();
    let again = std::fs::metadata(&file).unwrap();
    assert_eq!(
        (m.ino(), m.mtime_nsec()),
        (again.ino(), again.mtime_nsec()),
        "the copy there is reused, not written again"
    );
}

#[test]
fn a_push_replaces_nothing_and_follows_no_link() {
    let (t, home, l) = home_host();
    let b = bytes();
    let name = super::super::copy_name(&b, "");
    let cache = home.join("cache");
    std::fs::create_dir(&cache).unwrap();
    // Something else at the content name: kept, the push refused.
    std::fs::write(cache.join(&name), b"someone else's").unwrap();
    let e = push(&l, &home, "~/cache", &b).unwrap_err();
    assert!(e.message.contains("replaces nothing"), "{e}");
    assert!(
        e.message
            .starts_with(&format!("host {}: pushing volbench: ", home.display())),
        "{e}"
    );
    assert_eq!(std::fs::read(cache.join(&name)).unwrap(), b"someone else's");
    assert_eq!(listing(&cache), [name.as_str()], "no temporary left");
    // A link at the content name, even to a copy of this very binary.
    let elsewhere = t.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    std::fs::write(elsewhere.join("vb"), &b).unwrap();
    std::fs::remove_file(cache.join(&name)).unwrap();
    std::os::unix::fs::symlink(elsewhere.join("vb"), cache.join(&name)).unwrap();
    let e = push(&l, &home, "~/cache", &b).unwrap_err();
    assert!(e.message.contains("replaces nothing"), "{e}");
    // A link on the way: nothing is made or written where it points.
    std::os::unix::fs::symlink(&elsewhere, home.join("via")).unwrap();
    let e = push(&l, &home, "~/via/cache", &b).unwrap_err();
    assert!(e.message.contains("via is a link"), "{e}");
    assert_eq!(listing(&elsewhere), ["vb"]);
    // The last component a link; an absolute path's too.
    let e = push(&l, &home, "~/via", &b).unwrap_err();
    assert!(e.message.contains("is a link"), "{e}");
    let abs = format!("{}/via/x", home.display());
    let e = push(&l, &home, &abs, &b).unwrap_err();
    assert!(e.message.contains("is a link"), "{e}");
    assert_eq!(listing(&elsewhere), ["vb"]);
    // A file where a directory must be.
    std::fs::write(home.join("file"), b"x").unwrap();
    let e = push(&l, &home, "~/file/cache", &b).unwrap_err();
    assert!(e.message.contains("not a directory"), "{e}");
}

#[test]
fn a_copy_cut_short_never_takes_the_content_name() {
    // The launcher's stdin ends after 100 kB (a dropped connection):
    // `cat` sees an early end of file, not an error.
    let (_t, home, _) = home_host();
    let cut = Launcher::new(
        Some("sh -c 'head -c 100000 | env HOME=\"$0\" \"$@\"' {host}"),
        None,
    )
    .unwrap();
    let b = bytes();
    let e = push(&cut, &home, "~/cache", &b).unwrap_err();
    assert!(
        e.message.contains("cut short") && e.message.contains("100000 of"),
        "{e}"
    );
    assert!(
        listing(&home.join("cache")).is_empty(),
        "the temporary went too"
    );
}

#[test]
fn stale_temporaries_are_swept_and_the_others_named() {
    let (t, home, l) = home_host();
    let cache = home.join("cache");
    std::fs::create_dir_all(&cache).unwrap();
    let stale = ".volbench-aaaa.0000000000000001.part";
    let fresh = ".volbench-aaaa.0000000000000002.part";
    let linked = ".volbench-aaaa.0000000000000003.part";
    let planted = ".volbench-aaaa.0000000000000004.part";
    for n in [stale, fresh] {
        std::fs::write(cache.join(n), b"half a copy").unwrap();
    }
    // Stale but not provably a push's: a second link to a file
    // elsewhere, and a symbolic link.
    let outside = t.path().join("outside");
    std::fs::write(&outside, b"keep").unwrap();
    std::fs::hard_link(&outside, cache.join(linked)).unwrap();
    std::os::unix::fs::symlink(&outside, cache.join(planted)).unwrap();
    let old = STALE.as_secs() + 120;
    age(&cache.join(stale), old);
    age(&outside, old);
    let b = bytes();
    let p = push(&l, &home, "~/cache", &b).unwrap();
    assert_eq!(p.swept.removed, [stale]);
    let mut kept = p.swept.kept.clone();
    kept.sort();
    assert_eq!(kept, [fresh, linked, planted]);
    assert_eq!(std::fs::read(&outside).unwrap(), b"keep");
    assert_eq!(listing(&cache).len(), 4);
}

#[test]
fn push_directories_are_read_without_surprises() {
    for (text, word) in [
        ("~/.cache/volbench", "\"$HOME\"/.cache/volbench/v"),
        ("~", "\"$HOME\"/v"),
        ("/opt//vb/./x", "/opt/vb/x/v"),
        ("cache dir/vb", "'cache dir/vb/v'"),
    ] {
        assert_eq!(
            PosixDir::parse(text).unwrap().shell_word(Some("v")),
            word,
            "{text}"
        );
    }
    for (bad, why) in [("~/a/../b", "'..'"), ("/a\nb", "control"), ("", "empty")] {
        let e = PosixDir::parse(bad).unwrap_err();
        assert!(e.contains(why), "{bad:?}: {e}");
    }
}
