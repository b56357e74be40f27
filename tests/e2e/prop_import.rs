//! Property tests for the parsers added after issue 9's first pass: Slurm
//! host lists, access distributions, data shaping (compress, dedup), and
//! the fio, vdbench and diskspd importers (their text through to the suite
//! they render). Generated inputs mix plausible syntax with hostile values;
//! the properties: no panic, an error is one non-empty line, and whatever
//! is accepted lies within the stated bounds.

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use volbench::error::VbError;
use volbench::input::args::data::{DataArgs, data_spec};
use volbench::input::hosts::slurm;
use volbench::input::import::{PathMap, diskspd, fio, render, vdbench};
use volbench::input::suite;
use volbench::spec::shape::Distribution;
use volbench::units::bounds::MAX_HOSTS;

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 2000,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

fn hostile_number() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("0".to_string()),
        Just("-1".to_string()),
        Just("1e30".to_string()),
        Just("1e-300".to_string()),
        Just("NaN".to_string()),
        Just("inf".to_string()),
        Just("18446744073709551616".to_string()),
        Just("999999999".to_string()),
        Just("12Q".to_string()),
        any::<u64>().prop_map(|v| v.to_string()),
        any::<f64>().prop_map(|v| v.to_string()),
        (0u32..5000).prop_map(|v| v.to_string()),
        "[0-9]{0,3}[kKmMgG%/]?",
    ]
}

fn one_line_error(e: &VbError) {
    assert!(!e.message.trim().is_empty(), "an empty error");
}

fn one_line(e: &str) {
    assert!(!e.trim().is_empty(), "an empty error");
}

/// A host list as users type Slurm's: names, brackets, ranges, widths.
fn hostlist_text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        "[a-z]{1,4}",
        (hostile_number(), hostile_number()).prop_map(|(a, b)| format!("[{a}-{b}]")),
        (0u32..20, 0u32..2000).prop_map(|(a, b)| format!("[{a:02}-{b}]")),
        Just("[".to_string()),
        Just("]".to_string()),
        Just("[[1-2]]".to_string()),
        Just(",".to_string()),
        "[\\PC]{0,3}",
    ];
    prop::collection::vec(piece, 0..8).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn host_lists_expand_within_bounds_or_say_why(text in hostlist_text()) {
        match slurm::expand(&text) {
            Ok(names) => prop_assert!(names.len() <= MAX_HOSTS, "{} hosts from {text:?}", names.len()),
            Err(e) => one_line(&e),
        }
    }

    #[test]
    fn distributions_parse_within_bounds_or_say_why(
        kind in prop_oneof![
            Just("zipf:".to_string()),
            Just("pareto:".to_string()),
            Just("hot:".to_string()),
            Just(String::new()),
            Just("uniform".to_string()),
            "[a-z]{0,6}:?",
        ],
        zones in prop::collection::vec((hostile_number(), hostile_number()), 0..80),
        one in hostile_number(),
    ) {
        let body = if kind == "hot:" {
            zones.iter().map(|(a, b)| format!("{a}/{b}")).collect::<Vec<_>>().join(",")
        } else {
            one
        };
        let text = format!("{kind}{body}");
        match Distribution::parse(&text) {
            Ok(d) => {
                if let Err(e) = d.validate() {
                    one_line_error(&e);
                }
            }
            Err(e) => one_line_error(&e),
        }
    }

    #[test]
    fn data_arguments_parse_within_bounds_or_say_why(
        compress in prop::option::of(hostile_number()),
        dedup in prop::option::of(hostile_number()),
        unit in prop::option::of(hostile_number()),
        errors in prop::option::of(hostile_number()),
        verify in any::<bool>(),
    ) {
        let a = DataArgs {
            compress,
            dedup,
            dedup_unit: unit,
            max_data_errors: errors,
            verify,
            ..DataArgs::default()
        };
        if let Err(e) = data_spec(&a) {
            one_line_error(&e);
        }
    }
}

/// fio job text: sections, options with hostile values, includes and
/// variables, in any order.
fn fio_text() -> impl Strategy<Value = String> {
    let key = prop_oneof![
        Just("rw"),
        Just("bs"),
        Just("bssplit"),
        Just("size"),
        Just("numjobs"),
        Just("nrfiles"),
        Just("iodepth"),
        Just("runtime"),
        Just("rate_iops"),
        Just("rwmixread"),
        Just("filename"),
        Just("directory"),
        Just("random_distribution"),
        Just("fsync"),
        Just("thinktime"),
        Just("buffer_compress_percentage"),
        Just("dedupe_percentage"),
        Just("time_based"),
        Just("stonewall"),
        Just("ramp_time"),
    ];
    let line = prop_oneof![
        (key, hostile_number()).prop_map(|(k, v)| format!("{k}={v}")),
        Just("rw=randrw".to_string()),
        Just("directory=/tmp/vb-prop".to_string()),
        "\\[[a-z\\]]{0,4}\\]?",
        Just("include inc.fio".to_string()),
        Just("filename=${HOME}".to_string()),
        Just("filename=${NOPE".to_string()),
        Just("bssplit=4k/10:8k/90".to_string()),
        "[\\PC]{0,12}",
    ];
    prop::collection::vec(line, 0..20).prop_map(|v| format!("[j]\n{}\n", v.join("\n")))
}

/// vdbench parameter text.
fn vdbench_text() -> impl Strategy<Value = String> {
    let key = prop_oneof![
        Just("xfersize"),
        Just("rdpct"),
        Just("seekpct"),
        Just("threads"),
        Just("elapsed"),
        Just("interval"),
        Just("iorate"),
        Just("size"),
        Just("width"),
        Just("depth"),
        Just("files"),
        Just("forthreads"),
        Just("forxfersize"),
        Just("skew"),
    ];
    let param = (key, hostile_number())
        .prop_map(|(k, v)| format!("{k}={v}"))
        .boxed();
    let line = prop_oneof![
        prop::collection::vec(param.clone(), 0..4)
            .prop_map(|p| format!("sd=sd1,lun=/tmp/vb-prop/d,{}", p.join(","))),
        prop::collection::vec(param.clone(), 0..4)
            .prop_map(|p| format!("wd=wd1,sd=sd1,{}", p.join(","))),
        prop::collection::vec(param.clone(), 0..4)
            .prop_map(|p| format!("fsd=f1,anchor=/tmp/vb-prop/a,{}", p.join(","))),
        prop::collection::vec(param, 0..4).prop_map(|p| format!("rd=rd1,wd=wd1,{}", p.join(","))),
        Just("include=inc.vdb".to_string()),
        "[\\PC]{0,12}",
        Just(",xfersize=(4k,8k".to_string()),
    ];
    prop::collection::vec(line, 0..10).prop_map(|v| v.join("\n"))
}

fn diskspd_args() -> impl Strategy<Value = Vec<String>> {
    let switch = prop_oneof![
        Just("-c"),
        Just("-d"),
        Just("-b"),
        Just("-o"),
        Just("-t"),
        Just("-w"),
        Just("-r"),
        Just("-W"),
        Just("-C"),
        Just("-g"),
        Just("-Z"),
        Just("-s"),
        Just("-F"),
        Just("-B"),
        Just("-T"),
        Just("-x"),
        Just("-Sh"),
        Just("-L"),
        Just("-"),
    ];
    let arg = prop_oneof![
        (switch, hostile_number()).prop_map(|(s, v)| format!("{s}{v}")),
        Just("/tmp/vb-prop/x.dat".to_string()),
        Just("#1".to_string()),
        "[\\PC]{0,8}",
    ];
    prop::collection::vec(arg, 0..12)
}

/// Whatever an importer accepts renders to a suite that loads, or is
/// refused with a message.
fn render_and_load(imp: volbench::input::import::Imported) {
    let text = render::suite_toml(&imp, "s.toml", "s.toml.hosts").unwrap();
    if let Err(e) = suite::parse("s.toml", &text) {
        one_line_error(&e);
    }
}

fn read_fixed(path: &Path) -> volbench::error::Result<String> {
    // Every include is the same small file; a self-include is the worst case.
    Ok(match path.file_name().and_then(|n| n.to_str()) {
        Some("inc.fio") => "[k]\ninclude inc.fio\n".into(),
        Some("inc.vdb") => "include=inc.vdb\n".into(),
        _ => String::new(),
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..config() })]

    #[test]
    fn fio_job_text_imports_or_says_why(text in fio_text()) {
        let env = |n: &str| (n == "HOME").then(|| "/tmp/vb-prop".to_string());
        let src = fio::Sources { env: &env, read: &read_fixed, cwd: PathBuf::from("/tmp") };
        match fio::import_text("job.fio", &text, Path::new("/tmp/job.fio"), &PathMap::default(), &src) {
            Ok(imp) => render_and_load(imp),
            Err(e) => one_line_error(&e),
        }
    }

    #[test]
    fn vdbench_text_imports_or_says_why(text in vdbench_text()) {
        let src = vdbench::Sources { read: &read_fixed };
        match vdbench::import_text("p.vdb", &text, &PathMap::default(), &src) {
            Ok(imp) => render_and_load(imp),
            Err(e) => one_line_error(&e),
        }
    }

    #[test]
    fn diskspd_command_lines_import_or_say_why(args in diskspd_args()) {
        match diskspd::import_args(&args, &PathMap::default()) {
            Ok(imp) => render_and_load(imp),
            Err(e) => one_line_error(&e),
        }
    }
}
