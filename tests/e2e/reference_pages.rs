//! The reference pages held against the code they describe: the exit-code
//! page against `volbench::error::exit`, the bounds page against
//! `volbench::units::bounds`, the findings page against the diagnosis's
//! `Kind`s. The code's own lists are read from its source (every `pub
//! const` of `exit` and of `bounds`, every variant of `Kind`), so a code,
//! a bound or a finding added without its line on the page fails here.

use volbench::error::exit;
use volbench::units::bounds;
use volbench::units::format_size;

const EXIT_PAGE: &str = include_str!("../../docs/reference/exit-codes.md");
const BOUNDS_PAGE: &str = include_str!("../../docs/reference/bounds.md");
const FINDINGS_PAGE: &str = include_str!("../../docs/reference/findings.md");
const ERROR_RS: &str = include_str!("../../src/error.rs");
const BOUNDS_RS: &str = include_str!("../../src/units/bounds.rs");
const DIAGNOSIS_RS: &str = include_str!("../../src/result/diagnosis/mod.rs");

/// The text of `src` between the line that starts with `open` and the
/// first line after it that is `}` alone.
fn block<'a>(src: &'a str, open: &str) -> Vec<&'a str> {
    src.lines()
        .skip_while(|l| !l.trim_start().starts_with(open))
        .skip(1)
        .take_while(|l| *l != "}")
        .collect()
}

/// `pub const NAME: T = VALUE;` lines: (NAME, VALUE).
fn consts<'a>(lines: impl Iterator<Item = &'a str>) -> Vec<(String, String)> {
    lines
        .filter_map(|l| l.trim().strip_prefix("pub const "))
        .filter_map(|rest| {
            let (name, rest) = rest.split_once(':')?;
            let (_, value) = rest.split_once('=')?;
            Some((
                name.trim().to_string(),
                value.trim().trim_end_matches(';').to_string(),
            ))
        })
        .collect()
}

/// The rows of a page's tables: each a line's cells.
fn rows(page: &str) -> Vec<Vec<String>> {
    page.lines()
        .filter(|l| l.starts_with('|') && !l.starts_with("|---"))
        .map(|l| {
            l.trim_matches('|')
                .split(" | ")
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect()
}

#[test]
fn the_exit_code_page_has_a_row_for_every_code_and_no_other() {
    let code: Vec<i32> = consts(block(ERROR_RS, "pub mod exit {").into_iter())
        .iter()
        .map(|(name, v)| {
            v.parse()
                .unwrap_or_else(|_| panic!("exit::{name} = {v} is no plain number"))
        })
        .collect();
    assert!(code.contains(&exit::OK) && code.contains(&exit::INTERRUPTED));
    let page: Vec<i32> = rows(EXIT_PAGE)
        .iter()
        .filter_map(|r| r.first()?.parse().ok())
        .collect();
    let (mut code, mut page) = (code, page);
    code.sort();
    page.sort();
    assert_eq!(
        page, code,
        "docs/reference/exit-codes.md's codes differ from src/error.rs's exit::"
    );
}

#[test]
fn the_findings_page_has_a_row_for_every_kind_and_no_other() {
    let snake = |camel: &str| {
        let mut out = String::new();
        for (i, c) in camel.chars().enumerate() {
            if c.is_ascii_uppercase() && i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        }
        out
    };
    let mut kinds: Vec<String> = block(DIAGNOSIS_RS, "pub enum Kind {")
        .iter()
        .map(|l| l.trim())
        .filter(|l| !l.starts_with("//") && !l.starts_with('#') && l.ends_with(','))
        .map(|l| snake(l.trim_end_matches(',')))
        .filter(|k| k != "other")
        .collect();
    assert!(kinds.len() > 10, "{kinds:?}");
    let mut page: Vec<String> = rows(FINDINGS_PAGE)
        .iter()
        .filter_map(|r| {
            r.first()?
                .strip_prefix('`')?
                .strip_suffix('`')
                .map(String::from)
        })
        .collect();
    kinds.sort();
    page.sort();
    assert_eq!(
        page, kinds,
        "docs/reference/findings.md's kinds differ from the diagnosis's Kind"
    );
    // Each row's kind is one a result names: it reads back as itself.
    for k in &page {
        let parsed: volbench::result::diagnosis::Kind =
            serde_json::from_str(&format!("\"{k}\"")).unwrap();
        assert_ne!(parsed, volbench::result::diagnosis::Kind::Other, "{k}");
    }
}

/// A number as the bounds page writes it.
fn n(v: impl std::fmt::Display) -> String {
    v.to_string()
}

#[test]
fn the_bounds_page_states_every_bound() {
    use bounds::*;
    // Each bound, the row of the page that states it (a text of its first
    // cell), and the text that row must hold: the bound as the page writes
    // it, worked out from the constant, so a bound changed in the code and
    // not on the page fails here.
    let span = |lo: String, hi: String| format!("{lo}..{hi}");
    let stated: Vec<(&str, &str, String)> = vec![
        (
            "MIN_DURATION",
            "`--duration`",
            span(human(MIN_DURATION), human(MAX_DURATION)),
        ),
        (
            "MAX_DURATION",
            "`--duration`",
            span(human(MIN_DURATION), human(MAX_DURATION)),
        ),
        ("MAX_WARMUP", "`--warmup`", span(n(0), human(MAX_WARMUP))),
        (
            "MIN_INTERVAL",
            "`--interval`",
            span(human(MIN_INTERVAL), human(MAX_INTERVAL)),
        ),
        (
            "MAX_INTERVAL",
            "`--interval`",
            span(human(MIN_INTERVAL), human(MAX_INTERVAL)),
        ),
        (
            "MAX_PROGRESS_INTERVAL",
            "`--progress-interval`",
            span(n(0), human(MAX_PROGRESS_INTERVAL)),
        ),
        (
            "METRICS_MAX_CONNECTIONS",
            "`--metrics-listen`",
            format!("at most {METRICS_MAX_CONNECTIONS} connections served at once"),
        ),
        (
            "METRICS_REQUEST_DEADLINE",
            "`--metrics-listen`",
            format!(
                "a request's line and headers within {}",
                human(METRICS_REQUEST_DEADLINE)
            ),
        ),
        (
            "METRICS_RESPONSE_DEADLINE",
            "`--metrics-listen`",
            format!(
                "the answer read within {}",
                human(METRICS_RESPONSE_DEADLINE)
            ),
        ),
        (
            "METRICS_MAX_HEAD_BYTES",
            "`--metrics-listen`",
            format!("at most {} and", format_size(METRICS_MAX_HEAD_BYTES as u64)),
        ),
        (
            "METRICS_MAX_HEADERS",
            "`--metrics-listen`",
            format!("{METRICS_MAX_HEADERS} header lines"),
        ),
        (
            "METRICS_LINGER",
            "`--metrics-listen`",
            format!("{} without one", human(METRICS_LINGER)),
        ),
        (
            "METRICS_MAX_LINGER",
            "`--metrics-listen`",
            format!("never over {}", human(METRICS_MAX_LINGER)),
        ),
        (
            "MIN_METRICS_PORT",
            "`--metrics-listen`",
            format!("{MIN_METRICS_PORT}..65535"),
        ),
        (
            "MIN_HOST_TIMEOUT",
            "`--host-timeout`",
            span(human(MIN_HOST_TIMEOUT), human(MAX_HOST_TIMEOUT)),
        ),
        (
            "MAX_HOST_TIMEOUT",
            "`--host-timeout`",
            span(human(MIN_HOST_TIMEOUT), human(MAX_HOST_TIMEOUT)),
        ),
        (
            "MIN_LATENCY",
            "`plan --latency`",
            span(human(MIN_LATENCY), human(MAX_LATENCY)),
        ),
        (
            "MAX_LATENCY",
            "`plan --latency`",
            span(human(MIN_LATENCY), human(MAX_LATENCY)),
        ),
        (
            "MAX_SIZE",
            "`--size`",
            format!("1 byte..{}", format_size(MAX_SIZE)),
        ),
        (
            "MAX_BS",
            "`--bs`",
            format!("1 byte..{} each", format_size(MAX_BS)),
        ),
        (
            "MAX_BS_MIX",
            "`--bs`",
            format!("at most {MAX_BS_MIX} sizes"),
        ),
        (
            "MAX_BS_WEIGHT",
            "`--bs`",
            format!("weights 1..{MAX_BS_WEIGHT}"),
        ),
        ("MAX_THREADS", "`--threads`", format!("1..{MAX_THREADS}")),
        (
            "MAX_NFS_CONNECTIONS",
            "`--nfs-connections`",
            format!("1..{MAX_NFS_CONNECTIONS}"),
        ),
        (
            "MAX_NFS_RECONNECT_SECS",
            "an `nfs://` URL's `reconnect=`",
            format!("1..{MAX_NFS_RECONNECT_SECS} seconds"),
        ),
        (
            "DEFAULT_NFS_RECONNECT_SECS",
            "an `nfs://` URL's `reconnect=`",
            format!("(default {DEFAULT_NFS_RECONNECT_SECS})"),
        ),
        (
            "MAX_PROTOCOL_CONNS_LISTED",
            "`runs[].protocol.per_connection`",
            format!("at most {MAX_PROTOCOL_CONNS_LISTED} connections"),
        ),
        (
            "MAX_SMB_CHANNELS",
            "`--smb-channels`",
            format!("1..{MAX_SMB_CHANNELS}"),
        ),
        (
            "MAX_SMB_RECONNECT_SECS",
            "an `smb://` URL's `reconnect=`",
            format!("1..{MAX_SMB_RECONNECT_SECS} seconds"),
        ),
        (
            "DEFAULT_SMB_RECONNECT_SECS",
            "an `smb://` URL's `reconnect=`",
            format!("(default {DEFAULT_SMB_RECONNECT_SECS})"),
        ),
        ("MAX_IODEPTH", "`--iodepth`", format!("1..{MAX_IODEPTH}")),
        (
            "MAX_IN_FLIGHT",
            "threads x iodepth",
            format!("at most {MAX_IN_FLIGHT} I/Os"),
        ),
        (
            "MAX_IO_THREADS",
            "I/O threads",
            format!("at most {MAX_IO_THREADS} per host"),
        ),
        (
            "MAX_KEPT_THREADS",
            "per-thread rows",
            format!("at most {MAX_KEPT_THREADS} threads per run"),
        ),
        (
            "MAX_BUFFER_BYTES",
            "I/O buffers",
            format!("at most {}", format_size(MAX_BUFFER_BYTES)),
        ),
        (
            "MAX_VM_SIZE_LEN",
            "`--vm-size`",
            format!("at most {MAX_VM_SIZE_LEN} characters"),
        ),
        ("MAX_FILES", "`--files`", format!("1..{MAX_FILES}")),
        (
            "MAX_TREE_DEPTH",
            "`--depth`",
            format!("0..{MAX_TREE_DEPTH}"),
        ),
        (
            "MAX_TREE_WIDTH",
            "`--width`",
            format!("1..{MAX_TREE_WIDTH}"),
        ),
        (
            "MAX_TREE_FILES",
            "`--files-per-dir`",
            format!("at most {MAX_TREE_FILES} files"),
        ),
        (
            "MAX_TREE_FILE_SIZE",
            "`--file-size`",
            format!("0..{} each", format_size(MAX_TREE_FILE_SIZE)),
        ),
        (
            "MIN_RATE",
            "`--rate`",
            format!("{MIN_RATE}..{MAX_RATE} IOPS"),
        ),
        (
            "MAX_RATE",
            "`--rate`",
            format!("{MIN_RATE}..{MAX_RATE} IOPS"),
        ),
        (
            "MIN_RATE_PCT",
            "suite `curve`",
            format!("{MIN_RATE_PCT}..{MAX_RATE_PCT}"),
        ),
        (
            "MAX_RATE_PCT",
            "suite `curve`",
            format!("{MIN_RATE_PCT}..{MAX_RATE_PCT}"),
        ),
        (
            "MAX_PERCENTILE",
            "`--latency-target`",
            format!("(0, {MAX_PERCENTILE}]"),
        ),
        (
            "MAX_LATENCY_LIMITS",
            "`--latency-target`",
            format!("at most {MAX_LATENCY_LIMITS} limits"),
        ),
        (
            "MIN_SEARCH_STEPS",
            "`--search-steps`",
            format!("{MIN_SEARCH_STEPS}..{MAX_SEARCH_STEPS}"),
        ),
        (
            "MAX_SEARCH_STEPS",
            "`--search-steps`",
            format!("{MIN_SEARCH_STEPS}..{MAX_SEARCH_STEPS}"),
        ),
        (
            "MIN_SEARCH_PRECISION_PCT",
            "`--search-precision`",
            format!("{MIN_SEARCH_PRECISION_PCT}..{MAX_SEARCH_PRECISION_PCT}"),
        ),
        (
            "MAX_SEARCH_PRECISION_PCT",
            "`--search-precision`",
            format!("{MIN_SEARCH_PRECISION_PCT}..{MAX_SEARCH_PRECISION_PCT}"),
        ),
        (
            "MIN_GAIN_PCT",
            "`until_gain_below`",
            format!("{MIN_GAIN_PCT}..{MAX_GAIN_PCT}"),
        ),
        (
            "MAX_GAIN_PCT",
            "`until_gain_below`",
            format!("{MIN_GAIN_PCT}..{MAX_GAIN_PCT}"),
        ),
        (
            "MAX_SWEEP_POINTS",
            "sweeps",
            format!("at most {MAX_SWEEP_POINTS} points"),
        ),
        ("MAX_RUNS", "sweeps", format!("{MAX_RUNS} runs")),
        (
            "MAX_TARGETS",
            "target templates",
            format!("at most {MAX_TARGETS} targets"),
        ),
        ("MAX_HOSTS", "`--hosts`", format!("1..{MAX_HOSTS} hosts")),
        (
            "MIN_PLAN_IOPS",
            "`plan --iops`",
            format!("{MIN_PLAN_IOPS}..{MAX_PLAN_IOPS:e}"),
        ),
        (
            "MAX_PLAN_IOPS",
            "`plan --iops`",
            format!("{MIN_PLAN_IOPS}..{MAX_PLAN_IOPS:e}"),
        ),
        (
            "MIN_PLAN_CONCURRENCY",
            "`plan --iops`",
            format!("{MIN_PLAN_CONCURRENCY}..{MAX_PLAN_CONCURRENCY:e}"),
        ),
        (
            "MAX_PLAN_CONCURRENCY",
            "`plan --iops`",
            format!("{MIN_PLAN_CONCURRENCY}..{MAX_PLAN_CONCURRENCY:e}"),
        ),
        (
            "MAX_HOST_NAME_BYTES",
            "host names",
            format!("at most {MAX_HOST_NAME_BYTES} bytes"),
        ),
        (
            "MAX_NAME_CHARS",
            "`--name`",
            format!("at most {MAX_NAME_CHARS} characters"),
        ),
        (
            "MAX_INPUT_FILE",
            "suite and hosts files",
            format!("at most {}", format_size(MAX_INPUT_FILE)),
        ),
        (
            "MAX_INCLUDE_DEPTH",
            "a suite's `[[include]]`",
            format!("nested at most {MAX_INCLUDE_DEPTH} files deep"),
        ),
        (
            "MAX_LAUNCH_PARALLEL",
            "`--launch-parallel`",
            format!("1..{MAX_LAUNCH_PARALLEL} launches"),
        ),
        (
            "DEFAULT_LAUNCH_PARALLEL",
            "`--launch-parallel`",
            format!("(default {DEFAULT_LAUNCH_PARALLEL})"),
        ),
        (
            "MAX_K8S_PODS",
            "`--k8s-job`",
            format!("1..{MAX_K8S_PODS} pods"),
        ),
        (
            "K8S_DEADLINE_MARGIN",
            "`--k8s-job`",
            format!("the runs' time + {}", human(K8S_DEADLINE_MARGIN)),
        ),
        (
            "K8S_MIN_START",
            "`--k8s-job`",
            format!("at least {} to start", human(K8S_MIN_START)),
        ),
        (
            "MAX_PATH_TEXT",
            "`--store`",
            format!("at most {MAX_PATH_TEXT} bytes"),
        ),
        (
            "MAX_HISTORY_LIMIT",
            "`history --limit`",
            span(n(1), n(MAX_HISTORY_LIMIT)),
        ),
        (
            "MAX_FIO_JSON",
            "`store import`",
            format!("fio JSON output at most {}", format_size(MAX_FIO_JSON)),
        ),
        (
            "K8S_MIN_API",
            "`--k8s-job`",
            format!(
                "each kubectl call to the API server gets at least {}",
                human(K8S_MIN_API)
            ),
        ),
        (
            "MAX_K8S_RESOURCES",
            "`--k8s-requests`, `--k8s-limits`",
            format!("at most {MAX_K8S_RESOURCES} bytes each"),
        ),
        (
            "MAX_K8S_NAME",
            "`--k8s-namespace`",
            format!("at most {MAX_K8S_NAME} characters"),
        ),
        (
            "MAX_K8S_IMAGE",
            "`--k8s-image`",
            format!("at most {MAX_K8S_IMAGE} bytes"),
        ),
        (
            "MAX_LAUNCHER_BYTES",
            "`--launcher`",
            format!("at most {MAX_LAUNCHER_BYTES} bytes"),
        ),
        (
            "HOSTS_FROM_TIMEOUT",
            "`--hosts-from`",
            format!("within {}", human(HOSTS_FROM_TIMEOUT)),
        ),
        (
            "MIN_COMPRESS",
            "`--compress`",
            format!("{MIN_COMPRESS}..{MAX_COMPRESS}"),
        ),
        (
            "MAX_COMPRESS",
            "`--compress`",
            format!("{MIN_COMPRESS}..{MAX_COMPRESS}"),
        ),
        ("MAX_DEDUP", "`--dedup`", format!("1..{MAX_DEDUP}")),
        (
            "MIN_DEDUP_UNIT",
            "`--dedup`",
            span(format_size(MIN_DEDUP_UNIT), format_size(MAX_DEDUP_UNIT)),
        ),
        (
            "MAX_DEDUP_UNIT",
            "`--dedup`",
            span(format_size(MIN_DEDUP_UNIT), format_size(MAX_DEDUP_UNIT)),
        ),
        (
            "MAX_VERIFY_MAP_BYTES",
            "`--verify` map",
            format!("at most {}", format_size(MAX_VERIFY_MAP_BYTES)),
        ),
        (
            "MAX_DATA_ERRORS",
            "`--max-data-errors`",
            format!("1..{MAX_DATA_ERRORS}"),
        ),
        (
            "MIN_ZIPF_THETA",
            "`--distribution`",
            format!("zipf theta {MIN_ZIPF_THETA}..{MAX_ZIPF_THETA}"),
        ),
        (
            "MAX_ZIPF_THETA",
            "`--distribution`",
            format!("zipf theta {MIN_ZIPF_THETA}..{MAX_ZIPF_THETA}"),
        ),
        (
            "MIN_PARETO_H",
            "`--distribution`",
            format!("pareto h {MIN_PARETO_H}..{MAX_PARETO_H}"),
        ),
        (
            "MAX_PARETO_H",
            "`--distribution`",
            format!("pareto h {MIN_PARETO_H}..{MAX_PARETO_H}"),
        ),
        (
            "MAX_HOT_ZONES",
            "`--distribution`",
            format!("1..{MAX_HOT_ZONES} zones"),
        ),
        (
            "MAX_FSYNC_EVERY",
            "`--fsync-every`",
            format!("1..{MAX_FSYNC_EVERY} writes"),
        ),
        (
            "MAX_THINK_TIME",
            "`--think-time`",
            format!("0..{}", human(MAX_THINK_TIME)),
        ),
        (
            "MAX_COOLDOWN",
            "`--think-time`",
            format!("0..{}", human(MAX_COOLDOWN)),
        ),
        (
            "MIN_RATE_BYTES",
            "`--rate`",
            format!(
                "{}/s..{}/s",
                format_size(MIN_RATE_BYTES as u64),
                format_size(MAX_RATE_BYTES as u64)
            ),
        ),
        (
            "MAX_RATE_BYTES",
            "`--rate`",
            format!(
                "{}/s..{}/s",
                format_size(MIN_RATE_BYTES as u64),
                format_size(MAX_RATE_BYTES as u64)
            ),
        ),
        (
            "MIN_EXPECT_IOPS",
            "`--expect`",
            format!("{MIN_EXPECT_IOPS}..{MAX_EXPECT_IOPS}"),
        ),
        (
            "MAX_EXPECT_IOPS",
            "`--expect`",
            format!("{MIN_EXPECT_IOPS}..{MAX_EXPECT_IOPS}"),
        ),
        (
            "MIN_EXPECT_MIB_S",
            "`--expect`",
            format!("{MIN_EXPECT_MIB_S}..{MAX_EXPECT_MIB_S}"),
        ),
        (
            "MAX_EXPECT_MIB_S",
            "`--expect`",
            format!("{MIN_EXPECT_MIB_S}..{MAX_EXPECT_MIB_S}"),
        ),
        (
            "MIN_FILL_BS",
            "`--fill-bs`",
            span(format_size(MIN_FILL_BS), format_size(MAX_FILL_BS)),
        ),
        (
            "MAX_FILL_BS",
            "`--fill-bs`",
            span(format_size(MIN_FILL_BS), format_size(MAX_FILL_BS)),
        ),
        (
            "MAX_FILL_THREADS",
            "`--fill-threads`",
            format!("1..{MAX_FILL_THREADS} threads"),
        ),
        (
            "MAX_TRACE_BYTES",
            "`--replay` trace",
            format!("at most {}", format_size(MAX_TRACE_BYTES)),
        ),
        (
            "MAX_TRACE_REQUESTS",
            "`--replay` trace",
            format!("{MAX_TRACE_REQUESTS} requests"),
        ),
        (
            "MAX_REPLAY_AUTO_DEPTH",
            "`--replay` trace",
            format!("1..{MAX_REPLAY_AUTO_DEPTH}"),
        ),
        (
            "MAX_TRACE_LINE",
            "`--replay` trace",
            format!("at most {MAX_TRACE_LINE} bytes"),
        ),
        (
            "MAX_TRACE_REQUEST_BYTES",
            "`--replay` trace",
            format!("1 byte..{}", format_size(MAX_TRACE_REQUEST_BYTES)),
        ),
        (
            "MAX_REMOTE_TRACE_BYTES",
            "`--replay` trace",
            format!("at most {} a host", format_size(MAX_REMOTE_TRACE_BYTES)),
        ),
        (
            "MIN_REPLAY_SPEED",
            "`--replay-speed`",
            format!("{MIN_REPLAY_SPEED}..{MAX_REPLAY_SPEED}"),
        ),
        (
            "MAX_REPLAY_SPEED",
            "`--replay-speed`",
            format!("{MIN_REPLAY_SPEED}..{MAX_REPLAY_SPEED}"),
        ),
        (
            "MAX_REPLAY_SCALE",
            "`scale` / `align`",
            format!("1..{MAX_REPLAY_SCALE}"),
        ),
        (
            "MAX_REPLAY_ALIGN",
            "`scale` / `align`",
            format!("1B..{}", format_size(MAX_REPLAY_ALIGN)),
        ),
        (
            "MAX_REPLAY_OFFSET",
            "`--replay-offset`",
            format!("0..{}", human(MAX_REPLAY_OFFSET)),
        ),
        (
            "MIN_FAIL_BELOW",
            "`compare --fail-below`",
            format!("{}..{MAX_FAIL_BELOW}", bounds::short(MIN_FAIL_BELOW)),
        ),
        (
            "MAX_FAIL_BELOW",
            "`compare --fail-below`",
            format!("{}..{MAX_FAIL_BELOW}", bounds::short(MIN_FAIL_BELOW)),
        ),
        (
            "MIN_CAPTURE_DURATION",
            "`capture --duration`",
            span(human(MIN_CAPTURE_DURATION), human(MAX_CAPTURE_DURATION)),
        ),
        (
            "MAX_CAPTURE_DURATION",
            "`capture --duration`",
            span(human(MIN_CAPTURE_DURATION), human(MAX_CAPTURE_DURATION)),
        ),
        (
            "MIN_CAPTURE_INTERVAL",
            "`capture --duration`",
            span(human(MIN_CAPTURE_INTERVAL), human(MAX_INTERVAL)),
        ),
        (
            "MAX_CAPTURE_INTERVALS",
            "`capture --duration`",
            format!("at most {MAX_CAPTURE_INTERVALS} intervals"),
        ),
        (
            "MAX_PROFILE_FILE",
            "`capture --duration`",
            format!("at most {}", format_size(MAX_PROFILE_FILE)),
        ),
        (
            "MAX_TRACE_PENDING",
            "`capture --trace`",
            format!("at most {MAX_TRACE_PENDING} requests"),
        ),
    ];
    let page = rows(BOUNDS_PAGE);
    let mut wrong = Vec::new();
    for (name, key, text) in &stated {
        let holds = page
            .iter()
            .filter(|r| r.first().is_some_and(|c| c.contains(key)))
            .any(|r| r.join(" | ").contains(text.as_str()));
        if !holds {
            wrong.push(format!("{name}: no row {key} saying `{text}`"));
        }
    }
    // Every bound of the code is in the list, so a new one fails until
    // the page states it.
    for (name, _) in consts(BOUNDS_RS.lines()) {
        if !stated.iter().any(|(n, _, _)| *n == name) {
            wrong.push(format!(
                "{name}: a bound in src/units/bounds.rs not held against the page here"
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "docs/reference/bounds.md:\n{}",
        wrong.join("\n")
    );
}
