//! Other tools' option names (fio, vdbench, diskspd) and what volbench
//! calls them: the hint after "unexpected argument", so the first command a
//! fio user types teaches the mapping instead of only failing.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

/// One foreign option: the tool, its names as typed after the dashes (for
/// diskspd the one-letter switch), the value it must have to mean this
/// (`direct=0` and `direct=1` differ), and what volbench calls it.
struct Foreign {
    tool: &'static str,
    names: &'static [&'static str],
    value: Option<&'static str>,
    volbench: &'static str,
}

const fn f(tool: &'static str, names: &'static [&'static str], volbench: &'static str) -> Foreign {
    Foreign {
        tool,
        names,
        value: None,
        volbench,
    }
}

/// The one table; `volbench import` maps whole job files.
const TABLE: &[Foreign] = &[
    f("fio", &["numjobs"], "--threads"),
    f("fio", &["rwmixread"], "--read-pct"),
    f(
        "fio",
        &["rwmixwrite"],
        "--read-pct (100 minus the write share)",
    ),
    f("fio", &["blocksize", "bs"], "--bs (a `volbench run` flag)"),
    f(
        "fio",
        &["ioengine"],
        "--engine (auto, psync, io_uring, null)",
    ),
    f("fio", &["runtime"], "--duration"),
    f("fio", &["ramp_time"], "--warmup"),
    f("fio", &["filesize", "size"], "--size"),
    f("fio", &["filename", "directory"], "--target"),
    f("fio", &["nrfiles"], "--files"),
    f("fio", &["readwrite", "rw"], "--rw (a `volbench run` flag)"),
    Foreign {
        tool: "fio",
        names: &["direct"],
        value: Some("0"),
        volbench: "--buffered",
    },
    Foreign {
        tool: "fio",
        names: &["direct"],
        value: Some("1"),
        volbench: "nothing: O_DIRECT is the default (--direct, no value)",
    },
    f(
        "fio",
        &["rate_iops"],
        "--rate-iops R,W (reads, writes per second), or --rate N across both",
    ),
    f(
        "fio",
        &["latency_target", "latency_percentile"],
        "--latency-target p99=2ms (the highest rate keeping it)",
    ),
    f("fio", &["randseed", "randrepeat"], "--seed"),
    f(
        "fio",
        &["time_based"],
        "nothing: runs are timed (--duration); --io-limit stops on bytes",
    ),
    f(
        "fio",
        &["status-interval"],
        "--progress-interval (a progress line every N s), or --live FILE (every interval as JSON)",
    ),
    f("fio", &["log_avg_msec"], "--interval"),
    f(
        "fio",
        &["group_reporting"],
        "nothing: totals are always over all threads",
    ),
    f(
        "fio",
        &["output-format"],
        "--json, or `volbench report --format fio-json DIR`",
    ),
    f("fio", &["fsync"], "--fsync-every"),
    f("fio", &["sync", "dsync"], "--write-sync"),
    f("fio", &["random_distribution"], "--distribution"),
    f("fio", &["percentage_random"], "--seek-pct"),
    f("fio", &["thinktime"], "--think-time"),
    f("fio", &["ramp-time"], "--warmup"),
    f("vdbench", &["xfersize"], "--bs (a `volbench run` flag)"),
    f("vdbench", &["rdpct"], "--read-pct"),
    f("vdbench", &["seekpct"], "--seek-pct"),
    f("vdbench", &["elapsed"], "--duration"),
    f(
        "vdbench",
        &["forthreads"],
        "--threads (a list sweeps: 1,2,4)",
    ),
    f("vdbench", &["forxfersize"], "--bs (a list sweeps: 4k,64k)"),
    f(
        "vdbench",
        &["forrdpct"],
        "--read-pct (a list sweeps: 100,50,0)",
    ),
    f("vdbench", &["iorate"], "--rate"),
    f("vdbench", &["lun"], "--target"),
    f("diskspd", &["b"], "--bs (a `volbench run` flag)"),
    f("diskspd", &["t", "F"], "--threads"),
    f("diskspd", &["o"], "--iodepth"),
    f("diskspd", &["d"], "--duration"),
    f("diskspd", &["W"], "--warmup"),
    f("diskspd", &["w"], "--read-pct (100 minus diskspd's -w)"),
    f("diskspd", &["c"], "--size"),
    f("diskspd", &["r"], "--rw randread, randwrite or randrw"),
    f("diskspd", &["g"], "--rate"),
];

/// vdbench's own command-line switches, for `volbench vdbench` and
/// `volbench import vdbench` (where diskspd's one-letter switches would
/// misfire: vdbench's -o is its output directory).
const VDBENCH_SWITCHES: &[(&str, &str)] = &[
    ("o", "--output DIR"),
    ("e", "--duration (the elapsed= of the run definitions)"),
    ("i", "--interval"),
    ("w", "--warmup"),
];

/// The foreign tool a command line speaks when it is one of volbench's
/// front ends for it: `volbench fio|vdbench|diskspd ...`, `volbench import
/// fio|vdbench|diskspd ...` (`args` without the program's name).
pub fn front_end(args: &[String]) -> Option<&'static str> {
    let mut words = args
        .iter()
        .map(String::as_str)
        .filter(|a| !a.starts_with('-'));
    let first = words.next()?;
    let tool = if first == "import" {
        words.next()?
    } else {
        first
    };
    ["fio", "vdbench", "diskspd"]
        .into_iter()
        .find(|t| *t == tool)
}

/// The hint for an option volbench does not know, from what clap reports
/// as the unexpected argument (`--numjobs`, `--numjobs=4`, `-o`) and its
/// value when clap split one off; `within` is the front end's tool
/// (`front_end`), whose names alone then count. None when no other tool
/// has that name.
pub fn hint(arg: &str, value: Option<&str>, within: Option<&str>) -> Option<String> {
    if within == Some("vdbench") {
        return vdbench_hint(arg);
    }
    let (long, bare) = match arg.strip_prefix("--") {
        Some(rest) => (true, rest),
        None => (false, arg.strip_prefix('-')?),
    };
    let (name, inline) = match bare.split_once('=') {
        Some((n, v)) => (n, Some(v)),
        None => (bare, None),
    };
    let value = inline.or(value);
    // A diskspd switch is one letter glued to its value (-o4, -b64k).
    let short: Option<&str> = (!long).then(|| bare.get(..1)).flatten();
    TABLE
        .iter()
        .filter(|e| within.is_none_or(|t| t == e.tool))
        .find_map(|e| {
            let named = if e.tool == "diskspd" {
                short.is_some_and(|s| e.names.contains(&s))
            } else {
                long && e.names.contains(&name)
            };
            let valued = match e.value {
                Some(v) => value == Some(v),
                None => true,
            };
            let dash = if long { "--" } else { "-" };
            let typed = match (e.value, long) {
                (Some(v), _) => format!("--{name}={v}"),
                (None, true) => format!("--{name}"),
                (None, false) => format!("{dash}{}", short.unwrap_or(name)),
            };
            (named && valued).then(|| match e.volbench.strip_prefix("nothing: ") {
                Some(why) => format!("{} {typed} needs no flag in volbench: {why}", e.tool),
                None => format!("{} {typed} is volbench's {}", e.tool, e.volbench),
            })
        })
}

/// Within `volbench vdbench`: its switches, and a parameter file given
/// without the -f vdbench itself needs.
fn vdbench_hint(arg: &str) -> Option<String> {
    match arg.strip_prefix('-') {
        Some(rest) if !rest.starts_with('-') => {
            let switch = rest.get(..1)?;
            VDBENCH_SWITCHES
                .iter()
                .find(|(s, _)| *s == switch)
                .map(|(s, v)| format!("vdbench -{s} is volbench's {v}"))
        }
        Some(long) => TABLE
            .iter()
            .filter(|e| e.tool == "vdbench")
            .find(|e| e.names.contains(&long.trim_start_matches('-')))
            .map(|e| format!("vdbench {arg} is volbench's {}", e.volbench)),
        None => Some(format!(
            "parameter files come after -f, as for vdbench: volbench vdbench -f {arg}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::{front_end, hint as hint3};

    fn hint(arg: &str, value: Option<&str>) -> Option<String> {
        hint3(arg, value, None)
    }

    #[test]
    fn fio_names_hint_volbench_names() {
        let h = |a, v| hint(a, v).unwrap_or_default();
        assert_eq!(
            h("--numjobs", None),
            "fio --numjobs is volbench's --threads"
        );
        assert_eq!(h("-o", None), "diskspd -o is volbench's --iodepth");
        assert!(h("--numjobs=4", None).ends_with("--threads"));
        assert!(h("--rwmixread", Some("70")).ends_with("--read-pct"));
        assert!(h("--ramp_time", None).ends_with("--warmup"));
        assert!(h("--ioengine", None).contains("--engine"));
        assert!(h("--filename", None).ends_with("--target"));
        assert!(h("--rate_iops", None).contains("--rate"));
        assert!(h("--direct", Some("0")).ends_with("--buffered"));
        assert!(h("--direct=0", None).ends_with("--buffered"));
        assert!(h("--direct=1", None).contains("default"));
    }

    #[test]
    fn diskspd_switches_and_vdbench_names() {
        let h = |a| hint(a, None).unwrap_or_default();
        assert!(h("-o").ends_with("--iodepth"));
        assert!(h("-F").ends_with("--threads"));
        assert!(h("-b").contains("--bs"));
        assert!(h("--xfersize").contains("--bs"));
        assert!(h("--rdpct").ends_with("--read-pct"));
    }

    #[test]
    fn hints_read_as_sentences_and_name_the_right_flag() {
        let h = |a| hint(a, None).unwrap_or_default();
        assert_eq!(
            h("--time_based"),
            "fio --time_based needs no flag in volbench: runs are timed (--duration); \
             --io-limit stops on bytes"
        );
        assert!(
            h("--status-interval").contains("--progress-interval"),
            "{}",
            h("--status-interval")
        );
        assert!(h("--log_avg_msec").ends_with("--interval"));
    }

    #[test]
    fn within_a_front_end_its_own_tools_names_count() {
        let argv = |s: &str| s.split_whitespace().map(String::from).collect::<Vec<_>>();
        assert_eq!(front_end(&argv("vdbench -f parm -o out")), Some("vdbench"));
        assert_eq!(front_end(&argv("import vdbench parm")), Some("vdbench"));
        assert_eq!(front_end(&argv("--quiet fio job.fio")), Some("fio"));
        assert_eq!(front_end(&argv("run --target x")), None);
        // vdbench's -o is its output directory, not diskspd's queue depth.
        let v = |a| hint3(a, None, Some("vdbench")).unwrap_or_default();
        assert_eq!(v("-o"), "vdbench -o is volbench's --output DIR");
        assert!(!v("-o").contains("iodepth"));
        assert_eq!(
            v("parm.txt"),
            "parameter files come after -f, as for vdbench: volbench vdbench -f parm.txt"
        );
        assert!(v("--xfersize").contains("--bs"));
        assert_eq!(hint3("--frob", None, Some("vdbench")), None);
        // Within fio, fio's names only.
        assert!(
            hint3("--runtime", None, Some("fio"))
                .unwrap_or_default()
                .ends_with("--duration")
        );
        assert_eq!(hint3("-o", None, Some("fio")), None);
        // Outside a front end, diskspd's -o still answers.
        assert!(
            hint3("-o", None, None)
                .unwrap_or_default()
                .ends_with("--iodepth")
        );
    }

    #[test]
    fn unknown_names_get_no_hint() {
        assert_eq!(hint("--frobnicate", None), None);
        assert_eq!(hint("--direct", None), None);
        assert_eq!(hint("numjobs", None), None);
        assert_eq!(hint("--o", None), None);
        assert_eq!(hint("-", None), None);
    }
}
