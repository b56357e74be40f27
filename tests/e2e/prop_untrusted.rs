//! Property tests for the untrusted inputs of the output side: result.json
//! (read by `report` and `compare`) and the agent protocol's messages.
//! Thousands of generated and mutated inputs each; none may panic, every
//! refusal is one line, and whatever is accepted renders every view
//! without a panic and without a control character reaching the text.

use std::sync::OnceLock;

use proptest::prelude::*;
use serde_json::Value;

use volbench::remote::protocol::{self, FromAgent, TargetResult};
use volbench::report::{self, Source, fixtures};
use volbench::result::check::parse_result;
use volbench::result::merge;

/// Paths to every leaf (number, string, bool, null) of a JSON value.
fn leaves(v: &Value, at: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
    match v {
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                at.push(Step::Index(i));
                leaves(x, at, out);
                at.pop();
            }
        }
        Value::Object(o) => {
            for (k, x) in o {
                at.push(Step::Key(k.clone()));
                leaves(x, at, out);
                at.pop();
            }
        }
        _ => out.push(at.clone()),
    }
}

#[derive(Clone, Debug)]
enum Step {
    Key(String),
    Index(usize),
}

fn at_mut<'a>(v: &'a mut Value, path: &[Step]) -> Option<&'a mut Value> {
    path.iter().try_fold(v, |v, s| match s {
        Step::Key(k) => v.get_mut(k.as_str()),
        Step::Index(i) => v.get_mut(*i),
    })
}

struct Base {
    docs: Vec<(Value, Vec<Vec<Step>>)>,
}

fn base() -> &'static Base {
    static B: OnceLock<Base> = OnceLock::new();
    B.get_or_init(|| {
        // Small fixtures keep each case fast: a few runs each.
        let mut thread = fixtures::thread_curve();
        thread.runs.truncate(3);
        let mut six = fixtures::six_patterns();
        six.runs.truncate(3);
        // A filled set and a reused one, so mutations reach `fill[]` too.
        six.fill = vec![filled(), reused()];
        let docs = [six, thread, fixtures::latency_curve()]
            .into_iter()
            .map(|d| {
                let v = serde_json::to_value(d).expect("encode");
                let mut paths = Vec::new();
                leaves(&v, &mut Vec::new(), &mut paths);
                (v, paths)
            })
            .collect();
        Base { docs }
    })
}

/// Values a careless or hostile file puts where a number or string was.
fn hostile_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::from(0)),
        Just(Value::from(-1)),
        Just(Value::from(1e308)),
        Just(Value::from(-1e308)),
        Just(Value::from(1e-300)),
        Just(Value::from(u64::MAX)),
        Just(Value::from(i64::MIN)),
        Just(Value::from(u32::MAX)),
        Just(Value::from(255)),
        Just(Value::from(64)),
        Just(Value::from(0.5)),
        Just(Value::Null),
        Just(Value::Bool(true)),
        Just(Value::Array(Vec::new())),
        Just(Value::from("")),
        any::<f64>().prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::from)),
        any::<u64>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        proptest::collection::vec(any::<char>(), 0..20)
            .prop_map(|c| Value::from(c.into_iter().collect::<String>())),
        Just(Value::from("\u{1b}]0;owned\u{7}\u{1b}[2J\r\n|x|")),
    ]
}

/// One edit of one leaf: mostly a hostile value of the leaf's own type
/// (so it gets past the parser to the checks and the views), sometimes a
/// value of another type, sometimes the old value scaled a little.
#[derive(Clone, Debug)]
struct Edit {
    at: prop::sample::Index,
    kind: u8,
    new: Value,
    float: f64,
    int: u64,
    text: String,
    by: f64,
}

fn edit() -> impl Strategy<Value = Edit> {
    (
        any::<prop::sample::Index>(),
        0u8..8,
        hostile_value(),
        prop_oneof![
            Just(0.0),
            Just(1e308),
            Just(1e-300),
            Just(-1.0),
            Just(f64::MAX),
            Just(1e15),
            any::<f64>().prop_filter("finite", |f| f.is_finite()),
        ],
        prop_oneof![
            Just(0u64),
            Just(1),
            Just(u64::MAX),
            Just(u32::MAX as u64),
            Just(255),
            Just(1 << 40),
            any::<u64>(),
        ],
        proptest::collection::vec(any::<char>(), 0..12).prop_map(|c| {
            let mut t: String = c.into_iter().collect();
            t.push_str("\u{1b}[2J|");
            t
        }),
        0.0f64..4.0,
    )
        .prop_map(|(at, kind, new, float, int, text, by)| Edit {
            at,
            kind,
            new,
            float,
            int,
            text,
            by,
        })
}

fn apply(v: &mut Value, paths: &[Vec<Step>], e: &Edit) {
    let path: &Vec<Step> = e.at.get(paths);
    let Some(slot) = at_mut(v, path) else {
        return;
    };
    let num = |f: f64| serde_json::Number::from_f64(f).map_or(Value::Null, Value::from);
    *slot = match (e.kind, &*slot) {
        (0, _) => e.new.clone(),
        (1 | 2, Value::Number(n)) => match (n.as_u64(), n.as_f64()) {
            (Some(u), _) => Value::from((u as f64 * e.by) as u64),
            (None, Some(f)) => num(f * e.by),
            _ => e.new.clone(),
        },
        (_, Value::Number(n)) if n.is_f64() => num(e.float),
        (_, Value::Number(_)) => Value::from(e.int),
        (_, Value::String(_)) => Value::from(e.text.clone()),
        (_, Value::Bool(b)) => Value::Bool(!b),
        _ => e.new.clone(),
    };
}

/// A valid result with up to four leaves edited.
fn mutated() -> impl Strategy<Value = Vec<u8>> {
    let n = base().docs.len();
    (0..n, proptest::collection::vec(edit(), 1..5)).prop_map(|(which, edits)| {
        let (doc, paths) = &base().docs[which];
        let mut v = doc.clone();
        for e in &edits {
            apply(&mut v, paths, e);
        }
        serde_json::to_vec(&v).expect("encode")
    })
}

fn no_control(what: &str, text: &str) {
    assert!(
        !text.chars().any(|c| c.is_control() && c != '\n'),
        "{what}: a control character"
    );
}

/// Every view `report` and `compare` make of a result.
fn render_all(doc: volbench::result::ResultDoc) {
    let mut sources = vec![
        Source {
            label: "a".into(),
            path: "a".into(),
            doc: doc.clone(),
        },
        Source {
            label: "b".into(),
            path: "b".into(),
            doc,
        },
    ];
    report::label_sources(&mut sources);
    let md = report::export::markdown(&sources);
    no_control("markdown", &md);
    let _ = report::export::csv(&sources);
    let _ = report::export::json(&sources);
    let _ = report::html::report_html(&sources[..1]);
    let all = report::items(&sources);
    let c = report::compare::match_runs(&sources, &all);
    let table = report::compare::table(&c, &sources, &all);
    no_control("compare", &table.to_terminal());
    no_control("compare markdown", &table.to_markdown());
    for line in report::compare::headlines(&c, &all) {
        no_control("headline", &line);
    }
    let _ = report::html::render(&report::compare::page(&sources));
    no_control("summary", &volbench::output::summary(&sources[0].doc));
}

fn one_line(e: &str) {
    assert!(!e.is_empty() && !e.contains('\n'), "one line: {e:?}");
}

// ---- the checks on known cases ----

fn json(doc: &volbench::result::ResultDoc) -> Vec<u8> {
    serde_json::to_vec(doc).expect("encode")
}

#[test]
fn fixtures_pass() {
    for d in [
        fixtures::six_patterns(),
        fixtures::mix_sweep(),
        fixtures::thread_curve(),
        fixtures::latency_curve(),
    ] {
        parse_result(&json(&d)).expect("a sound result");
    }
}

fn filled() -> volbench::result::fill::FillResult {
    volbench::result::fill::FillResult {
        host: String::new(),
        path: "/t/files-4".into(),
        files: 4,
        bytes: 4 << 20,
        bs: 1 << 20,
        threads: 4,
        seconds: 0.25,
        mib_s: 16.0,
        skipped_reused: false,
    }
}

fn reused() -> volbench::result::fill::FillResult {
    volbench::result::fill::FillResult {
        path: "/t/files-1".into(),
        files: 1,
        threads: 1,
        seconds: 0.0,
        mib_s: 0.0,
        skipped_reused: true,
        ..filled()
    }
}

#[test]
fn a_tampered_fill_is_refused_naming_the_fill_and_field() {
    let mut d = fixtures::six_patterns();
    d.fill = vec![filled(), reused()];
    parse_result(&json(&d)).expect("as volbench writes them");
    d.fill[0].mib_s = 1600.0;
    let e = parse_result(&json(&d)).expect_err("refused");
    assert!(
        e.starts_with(
            "fill 1 (/t/files-4): mib_s is 1600, but 4194304 bytes in 0.25 s is 16 MiB/s"
        ),
        "{e}"
    );
    one_line(&e);
    d.fill[0] = filled();
    d.fill[1].seconds = 3.0;
    let e = parse_result(&json(&d)).expect_err("refused");
    assert!(e.starts_with("fill 2 (/t/files-1): seconds 3"), "{e}");
}

#[test]
fn latency_min_above_max_is_refused() {
    let mut d = fixtures::six_patterns();
    d.runs[0].totals.read.lat_us.min = 1e6;
    let e = parse_result(&json(&d)).expect_err("refused");
    assert!(e.contains("min") && e.contains("above max"), "{e}");
}

#[test]
fn a_huge_histogram_configuration_is_refused_before_allocating() {
    let mut d = fixtures::six_patterns();
    d.runs[0].histograms.read.grouping_power = 30;
    d.runs[0].histograms.read.max_value_power = 64;
    let e = parse_result(&json(&d)).expect_err("refused");
    assert!(e.contains("another configuration"), "{e}");
}

#[test]
fn a_rate_that_disagrees_with_its_ops_is_refused() {
    let mut d = fixtures::six_patterns();
    d.runs[0].totals.read.iops = 1e308;
    assert!(parse_result(&json(&d)).expect_err("bound").contains("IOPS"));
    let mut d = fixtures::six_patterns();
    d.runs[0].totals.read.iops *= 2.0;
    assert!(
        parse_result(&json(&d))
            .expect_err("disagrees")
            .contains("does not agree")
    );
}

#[test]
fn control_characters_are_cleaned_from_every_string() {
    let mut d = fixtures::six_patterns();
    d.runs[0].name = "evil\x1b]0;owned\x07\n| x |".into();
    d.notes.push("\x1b[2J".into());
    let back = parse_result(&json(&d)).expect("cleaned, not refused");
    assert_eq!(back.runs[0].name, "evil?]0;owned??| x |");
    assert_eq!(back.notes.last().map(String::as_str), Some("?[2J"));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn mutated_results_are_refused_in_one_line_or_checked_sound(bytes in mutated()) {
        match parse_result(&bytes) {
            Err(e) => one_line(&e),
            Ok(doc) => {
                for r in &doc.runs {
                    let t = &r.totals.read;
                    prop_assert!(t.iops.is_finite() && t.lat_us.min <= t.lat_us.max || t.ops == 0);
                }
                for f in &doc.fill {
                    prop_assert!(f.files >= 1 && f.bytes >= 1 && f.mib_s.is_finite() && f.seconds.is_finite());
                    prop_assert!(f.skipped_reused || f.seconds > 0.0);
                }
            }
        }
    }

    #[test]
    fn arbitrary_bytes_are_never_a_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        if let Err(e) = parse_result(&bytes) {
            one_line(&e);
        }
        let mut r = std::io::BufReader::new(&bytes[..]);
        let mut buf = Vec::new();
        while let Ok(Some(())) = protocol::read_line(&mut r, &mut buf) {
            let _ = protocol::decode::<FromAgent>(&buf);
        }
    }
}

proptest! {
    // Rendering is the slow part: fewer cases, still hundreds of shapes.
    #![proptest_config(ProptestConfig { cases: 300, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn accepted_results_render_every_view_without_panic(bytes in mutated()) {
        if let Ok(doc) = parse_result(&bytes) {
            render_all(doc);
        }
    }
}

/// A run_done message as an honest agent sends it, and its run's spec.
fn run_done_base() -> &'static (Value, Vec<Vec<Step>>, volbench::spec::RunSpec) {
    static B: OnceLock<(Value, Vec<Vec<Step>>, volbench::spec::RunSpec)> = OnceLock::new();
    B.get_or_init(|| {
        let mut doc = fixtures::thread_curve();
        let mut run = doc.runs.swap_remove(1);
        // One interval per second of the run, as an agent streams them.
        run.intervals.truncate(run.workload.duration_s as usize);
        let spec = run.workload.clone();
        merge::check_run(&run, &spec).expect("the honest base passes");
        let msg = FromAgent::RunDone {
            index: 0,
            results: vec![TargetResult {
                target: 0,
                result: run,
            }],
            error: None,
        };
        let v: Value = serde_json::from_str(protocol::encode(&msg).trim_end()).expect("json");
        let mut paths = Vec::new();
        leaves(&v, &mut Vec::new(), &mut paths);
        (v, paths, spec)
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, failure_persistence: None, ..ProptestConfig::default() })]

    /// The coordinator's boundary: a message that parses is checked against
    /// its run; what passes the check merges without a panic, and a forged
    /// rate never passes.
    #[test]
    fn mutated_agent_results_are_checked_before_merging(
        edits in proptest::collection::vec(edit(), 1..4)
    ) {
        let (base, paths, spec) = run_done_base();
        let mut v = base.clone();
        for e in &edits {
            apply(&mut v, paths, e);
        }
        let line = v.to_string();
        if let Ok(FromAgent::RunDone { results, .. }) = protocol::decode::<FromAgent>(line.as_bytes()) {
            for r in &results {
                match merge::check_run(&r.result, spec) {
                    Err(e) => one_line(&e),
                    Ok(()) => {
                        let t = &r.result.totals;
                        let secs = r.result.phases.iter().find(|p| p.name == volbench::result::PhaseName::Measure).map_or(0.0, |p| p.duration_s);
                        for op in [&t.read, &t.write] {
                            let expect = if secs > 0.0 { op.ops as f64 / secs } else { 0.0 };
                            prop_assert!((op.iops - expect).abs() <= 1e-6 * expect.max(1.0));
                        }
                        let m = merge::merge_runs(&[&r.result, &r.result]);
                        prop_assert!(m.is_ok());
                    }
                }
            }
        }
    }
}

// ---- memory: what a result.json costs to read is bounded by its size ----

/// Counts the bytes the current thread holds, and the most it held, so a
/// test can bound what one call allocates (other tests' threads are not
/// counted; a per-thread figure needs no lock in the allocator).
struct Counting;

thread_local! {
    static LIVE: std::cell::Cell<isize> = const { std::cell::Cell::new(0) };
    static PEAK: std::cell::Cell<isize> = const { std::cell::Cell::new(0) };
}

fn count(delta: isize) {
    let _ = LIVE.try_with(|l| {
        l.set(l.get() + delta);
        let _ = PEAK.try_with(|p| p.set(p.get().max(l.get())));
    });
}

// SAFETY: every call is passed on to the system allocator unchanged.
unsafe impl std::alloc::GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: std::alloc::Layout) -> *mut u8 {
        count(l.size() as isize);
        unsafe { std::alloc::System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: std::alloc::Layout) {
        count(-(l.size() as isize));
        unsafe { std::alloc::System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: std::alloc::Layout, new: usize) -> *mut u8 {
        count(new as isize - l.size() as isize);
        unsafe { std::alloc::System.realloc(p, l, new) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// The most this thread held above what it held before, while `f` ran.
fn peak_of<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = LIVE.with(|l| l.get());
    PEAK.with(|p| p.set(base));
    let out = f();
    (out, (PEAK.with(|p| p.get()) - base).max(0) as usize)
}

/// A sound result with `extra` spliced in as its first top-level members.
fn padded(extra: &str) -> Vec<u8> {
    let mut d = fixtures::six_patterns();
    d.runs.truncate(1);
    let text = String::from_utf8(json(&d)).expect("utf-8");
    format!("{{{extra},{}", &text[1..]).into_bytes()
}

/// What a hostile file may put in many times over, each element costing
/// the typed parse or the views far more than its few bytes of text.
fn hostile_list() -> impl Strategy<Value = (String, &'static str)> {
    let item = prop_oneof![
        Just(("\"x\"", "{\"a\":0}")),
        Just(("\"x\"", "[0]")),
        Just(("\"notes\"", "\"\"")),
        Just((
            "\"diagnosis\"",
            "{\"kind\":\"littles_law_gap\",\"message\":\"\",\"confidence\":\"low\"}"
        )),
        Just(("\"expect\"", "")),
    ];
    (item, 1usize..40_000).prop_map(|((key, one), n)| {
        if key == "\"expect\"" {
            let basis = vec!["\"\""; n].join(",");
            (
                format!("{key}:{{\"given\":\"x\",\"iops\":1,\"basis\":[{basis}]}}"),
                "basis",
            )
        } else {
            (format!("{key}:[{}]", vec![one; n].join(",")), "list")
        }
    })
}

#[test]
fn a_result_with_one_key_objects_by_the_million_reads_in_a_few_times_its_size() {
    // 80 bytes of memory per 8 bytes of text through a serde_json::Value:
    // 16 MB of such a file took 1.4 GB before the fix.
    let bytes = padded(&format!(
        "\"x\":[{}]",
        vec!["{\"a\":0}"; 1_000_000].join(",")
    ));
    let (doc, peak) = peak_of(|| parse_result(&bytes));
    doc.expect("unknown members are ignored");
    assert!(
        peak < 4 * bytes.len(),
        "{peak} bytes held reading {} bytes",
        bytes.len()
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]

    /// Whatever a hostile file repeats, reading it holds at most a few
    /// times its size, and what is accepted renders in a bounded multiple.
    #[test]
    fn hostile_lists_cost_a_small_multiple_of_their_text((extra, _) in hostile_list()) {
        let bytes = padded(&extra);
        let (doc, peak) = peak_of(|| parse_result(&bytes));
        // The worst text is a list of empty strings: 3 bytes (`"",`) each
        // become a 24-byte String, and the list's growth by doubling may
        // hold twice that while it is read, 16x, plus the rest of the
        // document: 24x bounds it (it was 80x, then an abort, before).
        prop_assert!(peak < 24 * bytes.len(), "{} bytes held reading {}", peak, bytes.len());
        match doc {
            Err(e) => one_line(&e),
            Ok(doc) => {
                prop_assert!(doc.notes.len() <= 16 + 4 * (doc.runs.len() + doc.spec.runs.len()));
                prop_assert!(doc.expect.as_ref().is_none_or(|e| e.basis.len() <= 16));
                let ((), held) = peak_of(|| render_all(doc));
                prop_assert!(held < 64 * bytes.len(), "{} bytes held rendering {}", held, bytes.len());
            }
        }
    }

    /// Cleaning the strings in the text (so no `Value` is built) is the
    /// same as cleaning each parsed string: control characters become '?'
    /// and a long string is cut, keys included.
    #[test]
    fn strings_are_cleaned_as_they_read(
        text in proptest::collection::vec(
            prop_oneof![any::<char>(), Just('\u{1b}'), Just('\n'), Just('\u{85}'), Just('\u{7f}'), Just('"'), Just('\\')],
            0..40,
        ).prop_map(|c| c.into_iter().collect::<String>()),
        long in 0usize..3,
    ) {
        let text = text.repeat(1 + long * 150);
        let mut d = fixtures::six_patterns();
        d.runs.truncate(1);
        d.notes.push(text.clone());
        let back = parse_result(&json(&d)).expect("a note is any text");
        let want = volbench::result::check::clean(&text, volbench::result::check::MAX_STRING);
        prop_assert_eq!(back.notes.last(), Some(&want));
    }
}
