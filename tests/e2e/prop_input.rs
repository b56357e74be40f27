//! Property tests for every parser of user input: units, sweeps and ranges,
//! target templates, hosts files, suite TOML, plan and the spec checks.
//! Thousands of generated inputs each, mixing plausible text with hostile
//! values; the properties: no panic, an error is one clear non-empty
//! message, and whatever is accepted lies within the stated bounds.

use std::time::Duration;

use proptest::prelude::*;
use volbench::input::args::PlanArgs;
use volbench::input::hosts;
use volbench::input::suite;
use volbench::input::sweep::{self, Axes};
use volbench::spec::{BlockSize, EngineChoice, JobSpec, Pattern, RunSpec, TargetSpec};
use volbench::units;
use volbench::units::bounds::{self, *};

const BOM: char = '\u{feff}';

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 2000,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Numbers as users and attackers type them.
fn number_text() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("0".to_string()),
        Just("-1".to_string()),
        Just("1e30".to_string()),
        Just("1e-300".to_string()),
        Just("1e308".to_string()),
        Just("NaN".to_string()),
        Just("inf".to_string()),
        Just("-0".to_string()),
        Just("18446744073709551616".to_string()),
        Just("4294967297".to_string()),
        any::<u64>().prop_map(|v| v.to_string()),
        any::<i64>().prop_map(|v| v.to_string()),
        any::<f64>().prop_map(|v| v.to_string()),
        (0u32..100_000).prop_map(|v| v.to_string()),
        (0.0f64..1e6).prop_map(|v| format!("{v}")),
    ]
}

fn unit_text() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        "[kKmMgGtTpPbBiIsSuhdyn]{1,3}",
        Just("ms".to_string()),
        Just("us".to_string()),
        Just("KiB".to_string()),
        ".{0,3}",
    ]
}

/// A number with an optional unit, or arbitrary text.
fn quantity() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => (number_text(), unit_text()).prop_map(|(n, u)| format!("{n}{u}")),
        1 => ".{0,24}",
        1 => "[0-9_ ]{0,30}[a-zA-Z]{0,4}",
    ]
}

/// Sweeps: lists and ranges with steps and factors, at every magnitude.
fn sweep_text() -> impl Strategy<Value = String> {
    let part = prop_oneof![
        number_text(),
        (number_text(), number_text()).prop_map(|(a, b)| format!("{a}:{b}")),
        (number_text(), number_text(), number_text()).prop_map(|(a, b, c)| format!("{a}:{b}:{c}")),
        (number_text(), number_text(), number_text()).prop_map(|(a, b, c)| format!("{a}:{b}:*{c}")),
        (1u32..100, 1u32..1_000_000_000, 1.0000001f64..4.0)
            .prop_map(|(a, b, f)| format!("{a}:{b}:*{f}")),
        "[0-9:*,.e-]{0,20}",
    ];
    prop::collection::vec(part, 1..4).prop_map(|v| v.join(","))
}

fn one_clear_line(e: &volbench::error::VbError) {
    assert!(!e.message.trim().is_empty(), "an empty error");
    let line = bounds::one_line(&e.to_string());
    assert!(!line.contains('\n') && !line.contains('\u{1b}'), "{line:?}");
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn sizes(text in quantity()) {
        match units::parse_size(&text) {
            Ok(_) => {}
            Err(e) => one_clear_line(&e),
        }
        match units::parse_size_in("--size", &text, 1, MAX_SIZE) {
            Ok(n) => prop_assert!((1..=MAX_SIZE).contains(&n)),
            Err(e) => {
                one_clear_line(&e);
                prop_assert!(e.message.contains("--size"), "{}", e.message);
            }
        }
    }

    #[test]
    fn durations(text in quantity()) {
        let _ = units::parse_duration(&text).map_err(|e| one_clear_line(&e));
        for (flag, lo, hi) in [
            ("--duration", MIN_DURATION, MAX_DURATION),
            ("--warmup", Duration::ZERO, MAX_WARMUP),
            ("--interval", MIN_INTERVAL, MAX_INTERVAL),
            ("--host-timeout", MIN_HOST_TIMEOUT, MAX_HOST_TIMEOUT),
        ] {
            match units::parse_duration_in(flag, &text, lo, hi) {
                Ok(d) => prop_assert!(d >= lo && d <= hi),
                Err(e) => {
                    one_clear_line(&e);
                    prop_assert!(e.message.contains(flag), "{}", e.message);
                }
            }
        }
    }

    #[test]
    fn counts(text in quantity(), lo in 0u64..3, hi in prop_oneof![Just(100u64), Just(4096), Just(u64::MAX)]) {
        match units::parse_count_in("--files", &text, lo, hi) {
            Ok(v) => prop_assert!(v >= lo && v <= hi),
            Err(e) => one_clear_line(&e),
        }
    }

    #[test]
    fn block_size_lists(parts in prop::collection::vec((quantity(), prop::option::of(number_text())), 1..6)) {
        let text = parts
            .iter()
            .map(|(s, w)| match w {
                Some(w) => format!("{s}:{w}"),
                None => s.clone(),
            })
            .collect::<Vec<_>>()
            .join(",");
        match units::parse_bs_list(&text) {
            Ok(v) => {
                prop_assert!(!v.is_empty() && v.len() <= MAX_BS_MIX);
                for (bs, w) in v {
                    prop_assert!((1..=MAX_BS).contains(&bs));
                    prop_assert!(w >= 1 && u64::from(w) <= MAX_BS_WEIGHT);
                }
            }
            Err(e) => one_clear_line(&e),
        }
        match sweep::parse_bs_points(&text) {
            Ok(points) => {
                prop_assert!(points.len() <= MAX_SWEEP_POINTS);
                for p in points {
                    prop_assert!(p.iter().all(|b| (1..=MAX_BS).contains(&b.bytes)));
                }
            }
            Err(e) => one_clear_line(&e),
        }
    }

    #[test]
    fn sweeps(text in sweep_text()) {
        match sweep::parse_numbers("--rate", &text) {
            Ok(v) => {
                prop_assert!(!v.is_empty() && v.len() <= MAX_SWEEP_POINTS);
                prop_assert!(v.iter().all(|x| x.is_finite()));
            }
            Err(e) => one_clear_line(&e),
        }
        match sweep::parse_counts("--threads", &text, 1, MAX_THREADS) {
            Ok(v) => prop_assert!(v.iter().all(|&t| (1..=MAX_THREADS).contains(&t))),
            Err(e) => one_clear_line(&e),
        }
    }

    #[test]
    fn crossed_sweeps_never_exceed_the_run_bound(
        lens in prop::collection::vec(prop_oneof![Just(0usize), 1usize..4, 1usize..200], 7)
    ) {
        let axis = |n: usize| (n > 0).then(|| (1..=n as u64).collect::<Vec<_>>());
        let axes = Axes {
            threads: axis(lens[0]),
            iodepth: axis(lens[1]),
            bs: (lens[2] > 0).then(|| {
                (1..=lens[2] as u64)
                    .map(|i| vec![BlockSize { bytes: i * 512, weight: 1 }])
                    .collect()
            }),
            read_pct: axis(lens[3]),
            rate: (lens[4] > 0).then(|| (1..=lens[4]).map(|i| i as f64).collect()),
            files: axis(lens[5]),
            size: axis(lens[6]).map(|v| v.iter().map(|x| x << 20).collect()),
        };
        match sweep::expand(&RunSpec::default(), &axes, |r| r.auto_name()) {
            Ok(runs) => prop_assert!(runs.len() <= MAX_RUNS && runs.len() == axes.points()),
            Err(e) => {
                one_clear_line(&e);
                prop_assert!(axes.points() > MAX_RUNS);
            }
        }
    }

    #[test]
    fn target_templates(template in "[a-z/{}.,0-9_-]{0,40}", host in "[a-z0-9.@-]{1,12}", index in any::<u32>()) {
        match hosts::expand_target(&template, &host, index) {
            Ok(paths) => {
                prop_assert!(!paths.is_empty() && paths.len() <= hosts::MAX_TARGETS_PER_HOST);
                prop_assert!(paths.iter().all(|p| p.len() <= hosts::MAX_PATH_BYTES));
            }
            Err(e) => one_clear_line(&e),
        }
    }

    #[test]
    fn target_templates_with_ranges(a in number_text(), b in number_text(), width in 0usize..6) {
        let template = format!("/mnt/{}{a}..{b}}}/{{host}}", "{".to_string() + &"0".repeat(width));
        match hosts::expand_target(&template, "vm1", 0) {
            Ok(paths) => prop_assert!(paths.len() <= hosts::MAX_TARGETS_PER_HOST),
            Err(e) => one_clear_line(&e),
        }
    }

    #[test]
    fn hosts_files(
        lines in prop::collection::vec(
            prop_oneof![
                "[a-z0-9.@-]{1,10}",
                "[a-z0-9]{1,6} threads=[0-9a-z-]{0,12}",
                "[a-z0-9]{1,6} target=[a-z/{}.,0-9]{0,20}",
                "[a-z0-9]{1,6} [a-z]{1,6}=[a-z0-9]{0,4}",
                Just("# comment".to_string()),
                Just(String::new()),
                ".{0,20}",
            ],
            0..20,
        ),
        bom in any::<bool>(),
    ) {
        let text = format!("{}{}", if bom { "\u{feff}" } else { "" }, lines.join("\n"));
        match hosts::parse_file(&text, "hosts.txt") {
            Ok(hs) => {
                prop_assert!(!hs.is_empty() && hs.len() <= MAX_HOSTS);
                for h in &hs {
                    prop_assert!(hosts::check_host_name(&h.name).is_ok());
                    prop_assert!(!h.name.starts_with(BOM), "{:?}", h.name);
                    if let Some(t) = h.threads {
                        prop_assert!((1..=MAX_THREADS).contains(&u64::from(t)));
                    }
                }
            }
            Err(e) => one_clear_line(&e),
        }
        let _ = hosts::parse_list(&lines.join(",")).map_err(|e| one_clear_line(&e));
    }

    #[test]
    fn plan_questions(
        latency in prop::option::of(quantity()),
        iops in prop::option::of(number_text()),
        concurrency in prop::option::of(number_text()),
        hosts in number_text(),
    ) {
        let a = PlanArgs { latency, iops, concurrency, hosts };
        match volbench::cmd::littles_law::answer(&a) {
            Ok(text) => prop_assert!(!text.is_empty() && !text.contains("NaN") && !text.contains("inf")),
            Err(e) => one_clear_line(&e),
        }
    }
}

/// Suite keys with the values a suite file may hold for them.
fn suite_value() -> impl Strategy<Value = String> {
    prop_oneof![
        number_text().prop_map(|n| match n.parse::<f64>() {
            // TOML has no NaN/inf literals spelt this way: quote them.
            Ok(v)
                if v.is_finite()
                    && !n.contains("e")
                    && !n.contains('.')
                    && n.parse::<i64>().is_ok() =>
                n,
            Ok(v) if v.is_finite() => format!("{v:e}"),
            _ => format!("\"{n}\""),
        }),
        quantity().prop_map(|q| format!("{q:?}")),
        sweep_text().prop_map(|s| format!("{s:?}")),
        prop::collection::vec(0u32..5000, 0..5).prop_map(|v| format!(
            "[{}]",
            v.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
        )),
        Just("true".to_string()),
        Just("[[1, 2], [3]]".to_string()),
    ]
}

const DEFAULT_KEYS: &[&str] = &[
    "size", "files", "threads", "iodepth", "duration", "warmup", "engine", "direct", "interval",
    "seed", "arrivals",
];
const RUN_KEYS: &[&str] = &[
    "rw",
    "read_pct",
    "bs",
    "threads",
    "iodepth",
    "files",
    "rate",
    "duration",
    "warmup",
    "io_limit",
    "arrivals",
    "steady",
    "curve",
    "curve_stop_latency",
    "until_gain_below",
];

proptest! {
    #![proptest_config(config())]

    #[test]
    fn suite_files(
        defaults in prop::collection::vec((prop::sample::select(DEFAULT_KEYS), suite_value()), 0..4),
        runs in prop::collection::vec(
            prop::collection::vec((prop::sample::select(RUN_KEYS), suite_value()), 0..4),
            0..3,
        ),
        warmup_run in any::<bool>(),
    ) {
        let mut text = format!("name = \"s\"\ntable = \"patterns\"\nwarmup_run = {warmup_run}\n[defaults]\n");
        let mut seen = std::collections::HashSet::new();
        for (k, v) in &defaults {
            if seen.insert(*k) {
                text.push_str(&format!("{k} = {v}\n"));
            }
        }
        for (i, keys) in runs.iter().enumerate() {
            text.push_str(&format!("[[run]]\nname = \"r{i}\"\n"));
            let mut seen = std::collections::HashSet::new();
            for (k, v) in keys {
                if seen.insert(*k) {
                    text.push_str(&format!("{k} = {v}\n"));
                }
            }
        }
        let o = suite::Overrides::new("/tmp/x".into());
        match suite::parse("s.toml", &text).and_then(|s| suite::to_job("s.toml", &text, &s, &o)) {
            Ok(job) => {
                prop_assert!(job.validate().is_ok());
                prop_assert!(job.runs.len() <= MAX_RUNS + 1);
            }
            Err(e) => {
                one_clear_line(&e);
                prop_assert!(e.message.starts_with("s.toml"), "{}", e.message);
            }
        }
    }

    #[test]
    fn suite_text_of_any_shape(text in ".{0,200}") {
        let o = suite::Overrides::new("/tmp/x".into());
        if let Err(e) = suite::parse("s.toml", &text).and_then(|s| suite::to_job("s.toml", &text, &s, &o)) {
            one_clear_line(&e);
        }
    }

    /// A spec may arrive from a file or another host: validate never
    /// panics, and a spec it accepts has every number within bounds.
    #[test]
    fn spec_validation(
        threads in any::<u32>(),
        iodepth in any::<u32>(),
        bs in any::<u64>(),
        size in any::<u64>(),
        files in any::<u32>(),
        duration in any::<f64>(),
        warmup in any::<f64>(),
        interval in any::<f64>(),
        rate in prop::option::of(any::<f64>()),
        small in any::<bool>(),
    ) {
        let pick = |big: u64, sane: u64| if small { sane } else { big };
        let job = JobSpec {
            target: TargetSpec {
                write_sync: Default::default(),
                data: Default::default(),
                fill: Default::default(),
                path: "/tmp/x".into(),
                size: pick(size, 1 << 30),
                files: pick(files.into(), 4) as u32,
                direct: false,
                allow_overwrite: false,
                open_files: None,
            },
            engine: EngineChoice::Auto,
            interval_s: if small { 1.0 } else { interval },
            seed: 1,
            suite: None,
            targets: None,
            reading: Default::default(),
            runs: vec![RunSpec {
                name: "r".into(),
                rw: Pattern::Randread,
                bs: vec![BlockSize { bytes: pick(bs, 4096), weight: 1 }],
                threads: pick(threads.into(), 4) as u32,
                iodepth: pick(iodepth.into(), 8) as u32,
                duration_s: duration,
                warmup_s: warmup,
                rate_iops: rate,
                ..RunSpec::default()
            }],
        };
        match job.validate() {
            Ok(()) => {
                let r = &job.runs[0];
                prop_assert!(r.duration_s >= MIN_DURATION.as_secs_f64() && r.duration_s <= MAX_DURATION.as_secs_f64());
                prop_assert!(r.warmup_s >= 0.0 && r.warmup_s <= MAX_WARMUP.as_secs_f64());
                prop_assert!(u64::from(r.threads) * u64::from(r.iodepth) <= MAX_IN_FLIGHT);
                prop_assert!(u64::from(r.threads) * u64::from(r.iodepth) * r.max_bs() <= MAX_BUFFER_BYTES);
                if let Some(rate) = r.rate_iops {
                    prop_assert!((MIN_RATE..=MAX_RATE).contains(&rate));
                }
                // What the executor does with them must not panic either.
                let _ = Duration::from_secs_f64(r.duration_s + r.warmup_s);
                let _ = Duration::from_secs_f64(job.interval_s);
                if let Some(rate) = r.rate_iops {
                    let _ = Duration::from_secs_f64(f64::from(r.threads * r.iodepth) / rate);
                }
            }
            Err(e) => one_clear_line(&e),
        }
    }
}

/// One catalogue key with a value as a careless or hostile file writes it.
fn catalogue_line() -> impl Strategy<Value = String> {
    let key = prop::sample::select(vec![
        "name",
        "title",
        "kind",
        "family",
        "source",
        "url",
        "note",
        "formula",
        "size",
        "quota_min",
        "quota_max",
        "quota_step",
        "iops",
        "iops_base",
        "iops_per_gib",
        "iops_min",
        "iops_max",
        "iops_provisioned_max",
        "iops_per_gib_max",
        "mib_s",
        "mbit_s",
        "mib_s_base",
        "mib_s_per_gib",
        "mib_s_per_tib",
        "mib_s_min",
        "mib_s_max",
        "mib_s_provisioned_max",
        "mib_s_per_iops_max",
        "round_up",
        "speed",
    ]);
    let value = prop_oneof![
        number_text(),
        Just("1e308".to_string()),
        Just("1e-300".to_string()),
        Just("nan".to_string()),
        Just("-inf".to_string()),
        Just("true".to_string()),
        Just("\"4TiB\"".to_string()),
        Just("\"1e30P\"".to_string()),
        Just("\"\\u001b]0;owned\\u0007\\u001b[2J\"".to_string()),
        Just("[1, 2]".to_string()),
        "[ -~]{0,12}".prop_map(|s| format!("\"{}\"", s.replace(['"', '\\'], ""))),
    ];
    (key, value).prop_map(|(k, v)| format!("{k} = {v}"))
}

/// A catalogue file: entries of plausible lines, sometimes raw junk.
fn catalogue_text() -> impl Strategy<Value = String> {
    let entry = proptest::collection::vec(catalogue_line(), 0..12).prop_map(|lines| {
        let base = "name = \"x\"\ntitle = \"t\"\nkind = \"volume\"\nsource = \"s\"\nurl = \"u\"\n";
        format!("[[service]]\n{base}{}\n", lines.join("\n"))
    });
    prop_oneof![
        4 => proptest::collection::vec(entry, 0..4).prop_map(|e| e.concat()),
        1 => any::<String>(),
        1 => "[\\[\\]=\"a-z0-9 .\n\u{1b}]{0,80}",
    ]
}

proptest! {
    #![proptest_config(config())]

    /// The catalogue parser (`--catalogue FILE`, ~/.config/volbench/services.toml):
    /// any text is entries or one clear line, never a panic; what it
    /// accepts works out to finite limits, and what `service show` prints
    /// of it reaches the terminal without an escape sequence.
    #[test]
    fn any_catalogue_text_is_entries_or_one_line(text in catalogue_text()) {
        use volbench::input::catalogue::{self as service, size};
        match service::parse("mine.toml", &text) {
            Err(e) => {
                let m = e.to_string();
                prop_assert!(!e.message.trim().is_empty());
                prop_assert!(!m.chars().any(char::is_control), "{:?}", m);
            }
            Ok(all) => {
                for s in &all {
                    let shown = format!("{}\n{}", size::brief(s), size::show(s));
                    let shown = volbench::output::fmt::terminal(&shown);
                    prop_assert!(!shown.chars().any(|c| c.is_control() && c != '\n' && c != '\t'));
                    for gib in [0.0, 1.0, 1024.0, 1e6] {
                        for v in [s.iops.at(gib), s.mib_s.at(gib)].into_iter().flatten() {
                            prop_assert!(v.is_finite() && v >= 0.0, "{} at {} GiB: {}", s.name, gib, v);
                        }
                    }
                    for q in [None, Some(1u64 << 40)] {
                        if let Ok(e) = size::expectation(&all, &format!("{}{}", s.name, q.map_or(String::new(), |q| format!(":{q}")))) {
                            for v in [e.iops, e.mib_s].into_iter().flatten() {
                                prop_assert!(v.is_finite() && v > 0.0);
                            }
                        }
                    }
                }
            }
        }
    }
}
