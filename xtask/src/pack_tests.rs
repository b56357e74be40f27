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
    let readme = s.0.join("README.md");
    fs::write(&readme, "# volbench\n").unwrap();
    let dist = s.0.join("dist");
    let a = assemble(&bin, &readme, &dist, "x86_64", 1_700_000_000).unwrap();
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
        "README.md",
        "completions/",
        "completions/_volbench",
        "completions/volbench.bash",
        "completions/volbench.fish",
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
    let readme = s.0.join("README.md");
    fs::write(&readme, "# volbench\n").unwrap();
    let dist = s.0.join("dist");
    let a = assemble(&bin, &readme, &dist, "x86_64", 1_700_000_000).unwrap();
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
    let again = assemble(&bin, &readme, &dist, "x86_64", 1_700_000_000).unwrap();
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
    let readme = s.0.join("README.md");
    fs::write(&readme, "").unwrap();
    let dist = s.0.join("dist");
    let e = assemble(&bin, &readme, &dist, "x86_64", 0).unwrap_err();
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
