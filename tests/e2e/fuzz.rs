//! The fuzz targets (`volbench::fuzz`) on stable Rust: each over its seeds
//! (`fuzz/corpus/TARGET/`, taken from the real inputs the other tests use)
//! and then over mutations of them (bit flips, cut, repeated and spliced
//! stretches, and the values that break parsers: huge, negative, NaN,
//! control characters, long lines) until its time is up. A seeded random
//! source makes a failure reproducible; the input that failed is written to
//! `target/fuzz-failures/` and named in the panic. `VOLBENCH_FUZZ_SECS` sets
//! each target's time (default 8 s: 56 s for all of them on two test
//! threads, what CI runs); `scripts/fuzz` runs longer, and
//! coverage-guided with `cargo fuzz` where it is installed.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Each target's time when `VOLBENCH_FUZZ_SECS` is not set.
const DEFAULT_SECS: u64 = 8;
/// The largest input tried: every format's interesting structure fits.
const MAX_LEN: usize = 64 << 10;
/// The memory the test process may reach while fuzzing (each parser caps
/// what it holds; a format that did not would blow through this).
const MAX_RSS_KIB: u64 = 2 << 20;

fn corpus_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(name)
}

fn seeds(name: &str) -> Vec<Vec<u8>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus_dir(name))
        .unwrap_or_else(|e| panic!("fuzz/corpus/{name}: {e}"))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    let seeds: Vec<Vec<u8>> = files.iter().map(|p| std::fs::read(p).unwrap()).collect();
    assert!(!seeds.is_empty(), "fuzz/corpus/{name} has no seed");
    seeds
}

/// Values that break parsers, spliced in as text.
const TOKENS: &[&str] = &[
    "0",
    "-1",
    "4294967295",
    "18446744073709551616",
    "9223372036854775807",
    "1e308",
    "-1e308",
    "NaN",
    "inf",
    "0x7fffffff",
    "1:1000000000:*2",
    "{0..99999999}",
    "\u{1b}[31m",
    "\u{0}",
    "\r\n",
    "\n\n\n",
    "\"",
    "\\",
    "[",
    "]",
    "=",
    ",",
    "#",
    "${HOME}",
    "include inc.fio",
    "include=inc.vdb",
    "%",
    "..",
    "/dev/zero",
    "\u{feff}",
    "\u{ffff}",
];

struct Rng(fastrand::Rng);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        if n == 0 { 0 } else { self.0.usize(..n) }
    }
}

/// One mutation of `input` (another seed for a splice).
fn mutate(rng: &mut Rng, input: &mut Vec<u8>, other: &[u8]) {
    let len = input.len();
    match rng.below(9) {
        0 if len > 0 => {
            let i = rng.below(len);
            input[i] ^= 1 << rng.below(8);
        }
        1 if len > 0 => {
            let i = rng.below(len);
            input[i] = rng.0.u8(..);
        }
        2 => {
            let i = rng.below(len + 1);
            let t = TOKENS[rng.below(TOKENS.len())].as_bytes();
            input.splice(i..i, t.iter().copied());
        }
        3 if len > 1 => {
            let a = rng.below(len);
            let b = (a + 1 + rng.below(64)).min(len);
            input.drain(a..b);
        }
        4 if len > 1 => {
            // A stretch repeated: long lines, many sections, deep nesting.
            let a = rng.below(len);
            let b = (a + 1 + rng.below(256)).min(len);
            let piece = input[a..b].to_vec();
            for _ in 0..1 + rng.below(16) {
                input.splice(a..a, piece.iter().copied());
            }
        }
        5 if !other.is_empty() => {
            let a = rng.below(other.len());
            let b = (a + 1 + rng.below(512)).min(other.len());
            let i = rng.below(len + 1);
            input.splice(i..i, other[a..b].iter().copied());
        }
        6 if len > 0 => {
            // A number made large.
            let i = rng.below(len);
            if input[i].is_ascii_digit() {
                let extra = "9".repeat(1 + rng.below(30));
                input.splice(i..i, extra.bytes());
            }
        }
        7 if len > 0 => input.truncate(rng.below(len)),
        _ => {
            let i = rng.below(len + 1);
            input.insert(i, rng.0.u8(..));
        }
    }
    input.truncate(MAX_LEN);
}

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

/// Runs `input` through the target; a panic is written out and re-raised
/// with the path of the input that caused it.
fn one(name: &str, target: volbench::fuzz::Target, input: &[u8]) {
    let caught = std::panic::catch_unwind(|| target(input));
    if let Err(p) = caught {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/fuzz-failures");
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join(format!("{name}-{:016x}", xxhash_rust::xxh3::xxh3_64(input)));
        std::fs::write(&file, input).unwrap();
        let why = p
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        panic!(
            "fuzz target {name} failed on {} (cargo fuzz run {name} {0} reproduces it): {why}",
            file.display()
        );
    }
}

fn fuzz(name: &str) {
    let target = volbench::fuzz::target(name).expect("a target of that name");
    let seeds = seeds(name);
    for s in &seeds {
        one(name, target, s);
    }
    let secs = std::env::var("VOLBENCH_FUZZ_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(DEFAULT_SECS);
    let until = Instant::now() + Duration::from_secs(secs);
    let mut rng = Rng(fastrand::Rng::with_seed(xxhash_rust::xxh3::xxh3_64(
        name.as_bytes(),
    )));
    let mut runs = 0u64;
    while Instant::now() < until {
        let mut input = seeds[rng.below(seeds.len())].clone();
        let other = &seeds[rng.below(seeds.len())];
        for _ in 0..1 + rng.below(8) {
            mutate(&mut rng, &mut input, other);
        }
        one(name, target, &input);
        runs += 1;
        if runs % 256 == 0 {
            let rss = peak_rss_kib();
            assert!(
                rss < MAX_RSS_KIB,
                "fuzz target {name}: the process reached {rss} KiB"
            );
        }
    }
    eprintln!(
        "fuzz {name}: {} seeds, {runs} mutated inputs in {secs}s",
        seeds.len()
    );
}

#[test]
fn every_target_has_seeds_and_a_cargo_fuzz_binary() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (name, _) in volbench::fuzz::TARGETS {
        assert!(!seeds(name).is_empty());
        let bin = root.join("fuzz/fuzz_targets").join(format!("{name}.rs"));
        let text =
            std::fs::read_to_string(&bin).unwrap_or_else(|e| panic!("{}: {e}", bin.display()));
        assert!(
            text.contains(&format!("volbench::fuzz::{name}(")),
            "{}",
            bin.display()
        );
        let manifest = std::fs::read_to_string(root.join("fuzz/Cargo.toml")).unwrap();
        assert!(
            manifest.contains(&format!("name = \"{name}\"")),
            "fuzz/Cargo.toml has no [[bin]] {name}"
        );
    }
}

macro_rules! targets {
    ($($name:ident),*) => {
        $(
            #[test]
            fn $name() {
                fuzz(stringify!($name));
            }
        )*
        #[test]
        fn each_target_runs_here() {
            let here = [$(stringify!($name)),*];
            for (name, _) in volbench::fuzz::TARGETS {
                assert!(here.contains(name), "fuzz target {name} has no test here");
            }
        }
    };
}

targets!(
    fio, vdbench, diskspd, hosts, suite, catalogue, profile, trace, trace_pipe, result, protocol,
    sftp, nfs_reply, smb_reply, smb_url, nfs_url
);
