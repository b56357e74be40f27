use super::*;

/// A scratch directory of this test's own, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let p = std::env::temp_dir().join(format!("xtask-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&p);
        fs::create_dir_all(&p).unwrap();
        Scratch(p)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

const HELP: &str = "Storage benchmark\n\nUsage: volbench <COMMAND>\n\nCommands:\n  \
run          Run one workload\n  plan         Little's law: the concurrency an IOPS\n               \
target needs\n  man          Print the man page\n  help         Print this message\n\n\
Options:\n  -h, --help  Print help\n";

/// A stand-in for the built binary: answers what `assemble` asks, like
/// volbench does. `man_usage` is its `volbench man --help`.
fn fake_volbench(dir: &Path, version: &str, man_usage: &str) -> PathBuf {
    let bin = dir.join("volbench-fake");
    let script = format!(
        r##"#!/bin/sh
case "$1 $2" in
  "--version ") echo "volbench {version}" ;;
  "--help ") cat <<'END'
{HELP}END
  ;;
  "man --help") echo "Print the man pages"; echo; echo "{man_usage}" ;;
  "man --dir") printf '.TH volbench 1\n' > "$3/volbench.1"; printf '.TH volbench-run 1\n' > "$3/volbench-run.1" ;;
  "man ") printf '.TH volbench 1\n.SH NAME\n' ;;
  "man "*) printf '.TH volbench-%s 1\n' "$2" ;;
  "completions bash"|"completions zsh"|"completions fish") echo "# $2 completion for volbench" ;;
  *) echo "fake: unexpected $*" >&2; exit 2 ;;
esac
"##
    );
    fs::write(&bin, script).unwrap();
    set_mode(&bin, 0o755).unwrap();
    bin
}

/// What ships beside the binary, made up: a README linking a docs page,
/// the licences, the notices.
fn shipped(dir: &Path) -> Shipped {
    let put = |name: &str, text: &str| {
        let p = dir.join("src").join(name);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(&p, text).unwrap();
    };
    put("README.md", "# volbench\n[run](docs/guide/run.md)\n");
    put("docs/guide/run.md", "# run\n[back](../../README.md)\n");
    put("LICENSE-MIT", "MIT\n");
    put("LICENSE-APACHE", "Apache\n");
    let src = dir.join("src");
    Shipped {
        files: ["README.md", "LICENSE-MIT", "LICENSE-APACHE", "docs"]
            .iter()
            .map(|f| (f.to_string(), src.join(f)))
            .collect(),
        texts: vec![(
            "THIRD-PARTY-NOTICES.txt".into(),
            "crate  version  licence\n".into(),
        )],
    }
}

fn listing(tarball: &Path) -> Vec<String> {
    let out = Command::new("tar")
        .arg("-tzf")
        .arg(tarball)
        .output()
        .unwrap();
    assert!(out.status.success());
    let mut v: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    v.sort();
    v
}

#[test]
fn the_tarball_holds_the_binary_a_page_per_subcommand_and_three_completions() {
    let s = Scratch::new("layout");
    let bin = fake_volbench(
        &s.0,
        "1.2.3 (commit abc, static)",
        "Usage: volbench man [PAGE]",
    );
    let shipped = shipped(&s.0);
    let dist = s.0.join("dist");
    let a = assemble(&bin, &shipped, &dist, "x86_64", 1_700_000_000).unwrap();
    assert_eq!(a.tarball, dist.join("volbench-1.2.3-x86_64-linux.tar.gz"));
    assert_eq!(
        a.man_pages,
        [
            "volbench-man.1",
            "volbench-plan.1",
            "volbench-run.1",
            "volbench.1"
        ]
    );
    let top = "volbench-1.2.3-x86_64-linux/";
    let want: Vec<String> = [
        "",
        "LICENSE-APACHE",
        "LICENSE-MIT",
        "README.md",
        "THIRD-PARTY-NOTICES.txt",
        "completions/",
        "completions/_volbench",
        "completions/volbench.bash",
        "completions/volbench.fish",
        "docs/",
        "docs/guide/",
        "docs/guide/run.md",
        "man/",
        "man/man1/",
        "man/man1/volbench-man.1",
        "man/man1/volbench-plan.1",
        "man/man1/volbench-run.1",
        "man/man1/volbench.1",
        "volbench",
    ]
    .iter()
    .map(|p| format!("{top}{p}"))
    .collect();
    assert_eq!(listing(&a.tarball), want);
    // The binary shipped is the one built, byte for byte, and executable.
    assert_eq!(
        fs::read(a.dir.join("volbench")).unwrap(),
        fs::read(&bin).unwrap()
    );
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        fs::metadata(a.dir.join("volbench"))
            .unwrap()
            .permissions()
            .mode()
            & 0o777,
        0o755
    );
    assert!(fs::read_to_string(a.dir.join("completions/_volbench"))
        .unwrap()
        .contains("zsh"));
    // Owned by root, readable by all, whatever the packer's umask.
    let out = Command::new("tar")
        .arg("-tvzf")
        .arg(&a.tarball)
        .output()
        .unwrap();
    let long = String::from_utf8(out.stdout).unwrap();
    let line = |name: &str| {
        long.lines()
            .find(|l| l.ends_with(&format!("{top}{name}")))
            .unwrap_or_else(|| panic!("no {name} in {long}"))
            .to_string()
    };
    assert!(line("volbench").starts_with("-rwxr-xr-x 0/0"), "{long}");
    assert!(line("README.md").starts_with("-rw-r--r-- 0/0"), "{long}");
}

#[test]
fn sha256sums_checks_out_with_sha256sum_and_the_tarball_is_reproducible() {
    let s = Scratch::new("sums");
    let bin = fake_volbench(
        &s.0,
        "1.2.3 (commit abc, static)",
        "Usage: volbench man [PAGE]",
    );
    let shipped = shipped(&s.0);
    let dist = s.0.join("dist");
    let a = assemble(&bin, &shipped, &dist, "x86_64", 1_700_000_000).unwrap();
    let sums = write_sums(&dist, &[&a]).unwrap();
    let text = fs::read_to_string(&sums).unwrap();
    assert_eq!(
        text,
        format!("{}  volbench-1.2.3-x86_64-linux.tar.gz\n", a.sha256)
    );
    assert_eq!(a.sha256, sha256::hex(&fs::read(&a.tarball).unwrap()));
    if Command::new("sha256sum").arg("--version").output().is_ok() {
        let ok = Command::new("sha256sum")
            .args(["-c", "--quiet", "SHA256SUMS"])
            .current_dir(&dist)
            .status()
            .unwrap();
        assert!(ok.success(), "sha256sum -c disagrees with SHA256SUMS");
    }
    // Built again from the same inputs: the same bytes, the same checksum.
    let again = assemble(&bin, &shipped, &dist, "x86_64", 1_700_000_000).unwrap();
    assert_eq!(again.sha256, a.sha256);
}

#[test]
fn pages_come_all_at_once_when_volbench_man_takes_a_directory() {
    let s = Scratch::new("mandir");
    let bin = fake_volbench(
        &s.0,
        "1.2.3 (commit abc, static)",
        "Usage: volbench man [OPTIONS]\n  --dir <DIR>  where",
    );
    let pages = man_pages(&bin, &s.0.join("man1")).unwrap();
    assert_eq!(pages, ["volbench-run.1", "volbench.1"]);
}

#[test]
fn a_dynamic_binary_is_refused_before_anything_is_written() {
    let s = Scratch::new("dynamic");
    let bin = fake_volbench(&s.0, "1.2.3 (commit abc)", "Usage: volbench man");
    let dist = s.0.join("dist");
    let e = assemble(&bin, &shipped(&s.0), &dist, "x86_64", 0).unwrap_err();
    assert!(e.contains("not statically linked"), "{e}");
    assert!(!dist.exists());
}

#[test]
fn version_lines_and_help_are_read_as_volbench_prints_them() {
    assert_eq!(
        static_version("volbench 0.1.0 (commit 1a2b3c4d5e6f, static)\n").unwrap(),
        "0.1.0"
    );
    assert_eq!(
        static_version("volbench 0.1.0 (commit 1a2b-dirty, static)").unwrap(),
        "0.1.0"
    );
    assert!(static_version("fio-3.33").is_err());
    assert!(static_version("volbench ../x (commit a, static)").is_err());
    assert_eq!(subcommands(HELP), ["run", "plan", "man"]);
    assert!(subcommands("Usage: volbench\n").is_empty());
}

/// Every relative link of `text` (a Markdown file at `at`), without its
/// anchor, that names no path under `root`.
fn broken_links(root: &Path, at: &Path, text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for part in text.split("](").skip(1) {
        let Some(end) = part.find(')') else { continue };
        let link = &part[..end];
        if link.contains("://") || link.starts_with('#') || link.starts_with("mailto:") {
            continue;
        }
        let path = link.split('#').next().unwrap_or(link);
        let dir = at.parent().unwrap_or(root);
        if !dir.join(path).exists() {
            out.push(format!(
                "{}: {link}",
                at.strip_prefix(root).unwrap_or(at).display()
            ));
        }
    }
    out
}

fn markdown_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            markdown_under(&p, out);
        } else if p.extension().is_some_and(|x| x == "md") {
            out.push(p);
        }
    }
}

#[test]
fn every_link_of_the_shipped_readme_and_docs_holds_in_the_download() {
    let s = Scratch::new("links");
    Shipped::from_checkout(&crate::root(), "notices".into())
        .copy_into(&s.0)
        .unwrap();
    for f in [
        "README.md",
        "LICENSE-MIT",
        "LICENSE-APACHE",
        "THIRD-PARTY-NOTICES.txt",
    ] {
        assert!(s.0.join(f).is_file(), "{f} is not shipped");
    }
    let mut pages = Vec::new();
    markdown_under(&s.0, &mut pages);
    assert!(pages.len() > 20, "{pages:?}");
    let broken: Vec<String> = pages
        .iter()
        .flat_map(|p| broken_links(&s.0, p, &fs::read_to_string(p).unwrap()))
        .collect();
    assert!(
        broken.is_empty(),
        "links to what the download lacks: {broken:?}"
    );
    // The check itself sees a link to a file left out.
    assert_eq!(
        broken_links(&s.0, &s.0.join("README.md"), "[x](src/main.rs#top)"),
        ["README.md: src/main.rs#top"]
    );
}

/// A made-up x86-64 PE image holding `text` where a build keeps its
/// version.
fn pe(machine: u16, text: &str) -> Vec<u8> {
    let mut b = vec![0u8; 0x80];
    b[..2].copy_from_slice(b"MZ");
    b[0x3c..0x40].copy_from_slice(&0x40u32.to_le_bytes());
    b[0x40..0x44].copy_from_slice(b"PE\0\0");
    b[0x44..0x46].copy_from_slice(&machine.to_le_bytes());
    b.extend_from_slice(text.as_bytes());
    b
}

fn zip_listing(zip: &Path) -> Vec<String> {
    let out = Command::new("unzip").arg("-Z1").arg(zip).output().unwrap();
    assert!(out.status.success());
    let mut v: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    v.sort();
    v
}

#[test]
fn the_windows_zip_holds_the_exe_its_pages_as_text_and_is_reproducible() {
    use crate::windows_zip;
    let s = Scratch::new("winzip");
    let line = "volbench 1.2.3 (commit abc, static)";
    let bin = fake_volbench(
        &s.0,
        "1.2.3 (commit abc, static)",
        "Usage: volbench man [PAGE]",
    );
    let shipped = shipped(&s.0);
    let dist = s.0.join("dist");
    let linux = assemble(&bin, &shipped, &dist, "x86_64", 1_700_000_000).unwrap();
    let exe = s.0.join("volbench.exe");
    fs::write(&exe, pe(0x8664, "volbench 1.2.3 (commit abc)\n")).unwrap();
    let z = windows_zip::assemble(&exe, line, &linux, &shipped, &dist, 1_700_000_000).unwrap();
    assert_eq!(z.tarball, dist.join("volbench-1.2.3-x86_64-windows.zip"));
    let top = "volbench-1.2.3-x86_64-windows/";
    let want: Vec<String> = [
        "LICENSE-APACHE",
        "LICENSE-MIT",
        "README.md",
        "THIRD-PARTY-NOTICES.txt",
        "docs/guide/run.md",
        "man/volbench-man.txt",
        "man/volbench-plan.txt",
        "man/volbench-run.txt",
        "man/volbench.txt",
        "volbench.exe",
    ]
    .iter()
    .map(|p| format!("{top}{p}"))
    .collect();
    assert_eq!(zip_listing(&z.tarball), want);
    // The pages are text a person reads, not roff.
    let page = fs::read_to_string(z.dir.join("man/volbench.txt")).unwrap();
    assert!(!page.contains(".TH") && page.contains("NAME"), "{page}");
    let again = windows_zip::assemble(&exe, line, &linux, &shipped, &dist, 1_700_000_000).unwrap();
    assert_eq!(again.sha256, z.sha256, "the same inputs gave another zip");
    let sums = write_sums(&dist, &[&linux, &z]).unwrap();
    let ok = Command::new("sha256sum")
        .args(["-c", "--quiet"])
        .arg(&sums)
        .current_dir(&dist)
        .status()
        .unwrap();
    assert!(ok.success());
    assert!(fs::read_to_string(&sums)
        .unwrap()
        .contains("x86_64-windows.zip"));
    // Another commit's exe, an arm one, a file that is no exe: refused.
    for (bytes, why) in [
        (
            pe(0x8664, "volbench 1.2.3 (commit def)"),
            "not volbench 1.2.3 (commit abc)",
        ),
        (pe(0xaa64, "volbench 1.2.3 (commit abc)"), "not x86-64"),
        (b"#!/bin/sh\n".to_vec(), "not a Windows executable"),
    ] {
        fs::write(&exe, bytes).unwrap();
        let e = windows_zip::assemble(&exe, line, &linux, &shipped, &dist, 0).unwrap_err();
        assert!(e.contains(why), "{e}");
    }
    assert_eq!(
        windows_zip::build_text("volbench 0.1.0 (commit 1a2b-dirty, static)"),
        "0.1.0 (commit 1a2b"
    );
}
