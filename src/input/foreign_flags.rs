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
    f("fio", &["status-interval", "log_avg_msec"], "--interval"),
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

/// The hint for an option volbench does not know, from what clap reports
/// as the unexpected argument (`--numjobs`, `--numjobs=4`, `-o`) and its
/// value when clap split one off. None when no other tool has that name.
pub fn hint(arg: &str, value: Option<&str>) -> Option<String> {
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
    TABLE.iter().find_map(|e| {
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
        (named && valued).then(|| format!("{} {typed} is volbench's {}", e.tool, e.volbench))
    })
}

#[cfg(test)]
mod tests {
    use super::hint;

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
    fn unknown_names_get_no_hint() {
        assert_eq!(hint("--frobnicate", None), None);
        assert_eq!(hint("--direct", None), None);
        assert_eq!(hint("numjobs", None), None);
        assert_eq!(hint("--o", None), None);
        assert_eq!(hint("-", None), None);
    }
}
