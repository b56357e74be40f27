//! The diagnosis finders on synthetic results with known answers: each
//! fires on the shape it names and none fires on a healthy run.

use volbench::report::fixtures::{self, RunFixture};
use volbench::result::ResultDoc;
use volbench::result::diagnosis::{Confidence, Finding, Kind, diagnose};
use volbench::result::expect::Expectation;
use volbench::spec::Pattern;

/// The disk-check suite's three runs (80/20 random, 4 threads x iodepth 4)
/// at the given total IOPS each, with latencies Little's law agrees with.
fn disk_check(iops: [f64; 3]) -> ResultDoc {
    let runs: Vec<RunFixture> = [4u64, 8, 64]
        .iter()
        .zip(iops)
        .map(|(&k, v)| {
            RunFixture::new(&format!("80r-{k}k"), Pattern::Randrw, 80, k << 10)
                .conc(4, 4)
                .perf(v, 16.0 * 1e6 / v)
        })
        .collect();
    fixtures::doc("client-1", &runs)
}

fn kinds(f: &[Finding]) -> Vec<Kind> {
    f.iter().map(|f| f.kind).collect()
}

fn expect(iops: Option<f64>, mib_s: Option<f64>) -> Option<Expectation> {
    Some(Expectation {
        given: "test".into(),
        iops,
        mib_s,
        ..Expectation::default()
    })
}

#[test]
fn no_finding_on_healthy_runs() {
    for (name, doc) in [
        ("six_patterns", fixtures::six_patterns()),
        ("thread_curve", fixtures::thread_curve()),
        ("latency_curve", fixtures::latency_curve()),
    ] {
        let f = diagnose(&doc);
        assert!(f.is_empty(), "{name}: {f:#?}");
    }
    // The mix fixture keeps 500 µs whatever its IOPS, which Little's law
    // says cannot be a closed loop of 32: only that is reported, no limit.
    let f = diagnose(&fixtures::mix_sweep());
    assert!(f.iter().all(|f| f.kind == Kind::LittlesLawGap), "{f:#?}");
}

#[test]
fn flat_iops_across_block_sizes_is_an_iops_cap_and_the_expectation_is_met() {
    let mut doc = disk_check([503.0, 498.0, 500.0]);
    let f = diagnose(&doc);
    assert_eq!(kinds(&f), vec![Kind::InferredIopsCap], "{f:#?}");
    assert!((f[0].figures["cap_iops"] - 500.3).abs() < 0.1);
    assert_eq!(f[0].confidence, Confidence::Medium);
    assert!(
        f[0].message.contains("an IOPS cap near 500 IOPS"),
        "{}",
        f[0].message
    );
    assert_eq!(f[0].runs, vec!["80r-4k", "80r-8k", "80r-64k"]);

    doc.expect = expect(Some(500.0), Some(60.0));
    let f = diagnose(&doc);
    assert_eq!(
        kinds(&f),
        vec![Kind::AtExpectedLimit, Kind::InferredIopsCap],
        "{f:#?}"
    );
    let at = &f[0];
    assert_eq!(at.confidence, Confidence::High);
    assert_eq!(at.figures["limit_iops"], 500.0);
    assert!((at.figures["percent"] - 100.0).abs() < 0.1, "{at:#?}");
    assert_eq!(at.figures["runs_at_limit"], 3.0);
    assert!(
        at.message
            .starts_with("at or near a provisioned limit: 500 IOPS = 100% of the 500-IOPS limit"),
        "{}",
        at.message
    );
}

#[test]
fn flat_mib_s_across_block_sizes_is_a_bandwidth_cap() {
    // 8 MiB/s at 4, 8 and 64 KiB: 2,048, 1,024 and 128 IOPS.
    let doc = disk_check([2048.0, 1024.0 * 1.02, 128.0 * 0.98]);
    let f = diagnose(&doc);
    assert_eq!(kinds(&f), vec![Kind::InferredBandwidthCap], "{f:#?}");
    assert!((f[0].figures["cap_mib_s"] - 8.0).abs() < 0.1);
}

#[test]
fn a_throttle_wandering_a_few_percent_is_still_a_cap_but_not_a_fifth() {
    // A kernel throttle measured for seconds wanders ~5%: still a cap.
    let f = diagnose(&disk_check([500.0 * 0.93, 500.0 * 1.06, 500.0]));
    assert_eq!(kinds(&f), vec![Kind::InferredIopsCap], "{f:#?}");
    // 20% apart is a device that is merely slow at all three sizes.
    let f = diagnose(&disk_check([500.0 * 0.8, 500.0 * 1.05, 500.0 * 1.15]));
    assert!(f.is_empty(), "{f:#?}");
}

#[test]
fn iops_falling_with_block_size_is_no_cap() {
    // A healthy device: fewer IOPS for larger transfers, MiB/s rising.
    let f = diagnose(&disk_check([20_000.0, 15_000.0, 3_000.0]));
    assert!(f.is_empty(), "{f:#?}");
    // Flat between 4 and 8 KiB only is what a latency-bound device does.
    let runs: Vec<RunFixture> = [4u64, 8]
        .iter()
        .map(|&k| {
            RunFixture::new(&format!("r{k}"), Pattern::Randread, 100, k << 10)
                .conc(1, 1)
                .perf(2000.0, 500.0)
        })
        .collect();
    let f = diagnose(&fixtures::doc("h", &runs));
    assert!(f.is_empty(), "{f:#?}");
}

#[test]
fn far_above_or_below_the_expectation_is_said() {
    let mut doc = disk_check([20_000.0, 15_000.0, 3_000.0]);
    doc.expect = expect(Some(500.0), None);
    let f = diagnose(&doc);
    assert_eq!(kinds(&f), vec![Kind::AboveExpectedLimit], "{f:#?}");
    assert_eq!(f[0].figures["percent"], 4000.0);

    doc.expect = expect(Some(200_000.0), None);
    let f = diagnose(&doc);
    assert_eq!(kinds(&f), vec![Kind::BelowExpectedLimit], "{f:#?}");
    assert_eq!(f[0].figures["percent"], 10.0);
}

#[test]
fn iops_times_latency_short_of_the_concurrency_is_a_littles_law_gap() {
    // 32 in flight, but 10,000 IOPS x 1 ms = 10.
    let doc = fixtures::doc(
        "h",
        &[RunFixture::new("r", Pattern::Randread, 100, 4096)
            .conc(4, 8)
            .perf(10_000.0, 1000.0)],
    );
    let f = diagnose(&doc);
    assert_eq!(kinds(&f), vec![Kind::LittlesLawGap], "{f:#?}");
    assert_eq!(f[0].figures["concurrency"], 32.0);
    assert!(f[0].figures["percent"] < 35.0);
    assert_eq!(f[0].confidence, Confidence::Medium);
}

#[test]
fn a_first_run_slower_than_its_repeat_is_a_warm_up() {
    let run = |name: &str, iops: f64| {
        RunFixture::new(name, Pattern::Randread, 100, 8192)
            .conc(2, 2)
            .perf(iops, 4.0 * 1e6 / iops)
    };
    let mut doc = fixtures::doc("h", &[run("warmup-run", 3000.0), run("8k", 5000.0)]);
    doc.runs[0].workload.discard = true;
    let f = diagnose(&doc);
    assert_eq!(kinds(&f), vec![Kind::WarmUp], "{f:#?}");
    assert_eq!(f[0].figures["slower_pct"], 40.0);
    assert!(
        f[0].message.contains("It was discarded"),
        "{}",
        f[0].message
    );
    // Within 20% of each other is noise, not a warm-up.
    let doc = fixtures::doc("h", &[run("a", 4500.0), run("b", 5000.0)]);
    assert!(diagnose(&doc).is_empty());
}

#[test]
fn the_fields_are_optional_and_unknown_kinds_still_load() {
    let doc = fixtures::six_patterns();
    let v = serde_json::to_value(&doc).unwrap();
    assert!(v.get("diagnosis").is_none() && v.get("expect").is_none());
    let mut v = v;
    v["diagnosis"] = serde_json::json!([{
        "kind": "cpu_saturated", "message": "m", "figures": {"cpu_pct": 99.0},
        "confidence": "high"
    }]);
    v["expect"] = serde_json::json!({"given": "iops=500", "iops": 500.0});
    let back: ResultDoc = serde_json::from_value(v).unwrap();
    assert_eq!(back.diagnosis[0].kind, Kind::Other);
    assert_eq!(back.expect.unwrap().iops, Some(500.0));
}

/// A service that caps reads and writes apart (500 each): a 70/30 mix at
/// 500 reads and 214 writes is at the read limit, not "143% of a 500-IOPS
/// limit", and the writes are held to their own cap.
#[test]
fn separate_read_and_write_caps_are_each_held_to_their_own() {
    let runs = [RunFixture::new("70r-8k", Pattern::Randrw, 70, 8 << 10)
        .conc(4, 4)
        .perf(714.0, 16.0 * 1e6 / 714.0)];
    let mut doc = fixtures::doc("client-1", &runs);
    doc.expect = Some(Expectation {
        given: "read_iops=500,write_iops=500".into(),
        read_iops: Some(500.0),
        write_iops: Some(500.0),
        ..Expectation::default()
    });
    let f = diagnose(&doc);
    assert_eq!(kinds(&f), vec![Kind::AtExpectedLimit], "{f:#?}");
    assert_eq!(f[0].figures["limit_read_iops"], 500.0);
    assert!(
        (f[0].figures["percent"] - 714.0 * 0.7 / 5.0).abs() < 0.5,
        "{f:#?}"
    );
    assert!(f[0].message.contains("read IOPS"), "{}", f[0].message);
    assert!(
        !f.iter().any(|x| x.kind == Kind::AboveExpectedLimit),
        "{f:#?}"
    );

    // The same run against one 500-IOPS limit for both is above it.
    doc.expect = expect(Some(500.0), None);
    assert_eq!(kinds(&diagnose(&doc)), vec![Kind::AboveExpectedLimit]);
}

/// The report fixtures' runs, each given a protocol client's figures
/// (`runs[].protocol` as result.json holds it); each READ call one of the
/// run's reads.
fn with_protocol(runs: &[RunFixture], each: &[serde_json::Value]) -> ResultDoc {
    let mut v = serde_json::to_value(fixtures::doc("client-1", runs)).unwrap();
    for (r, p) in v["runs"].as_array_mut().unwrap().iter_mut().zip(each) {
        let mut p = p.clone();
        let reads = r["totals"]["read"]["ops"].clone();
        for o in p["ops"].as_array_mut().unwrap() {
            if o["op"] == "READ" {
                o["calls"] = reads.clone();
            }
        }
        r["protocol"] = p;
    }
    serde_json::from_value(v).unwrap()
}

fn lat(mean: f64) -> serde_json::Value {
    serde_json::json!({"mean": mean, "min": mean, "max": mean, "stddev": 0.0, "p50": mean,
        "p90": mean, "p99": mean, "p99_9": mean, "p99_99": mean})
}

/// An NFS client's figures: its READ round trip and execute means, and
/// per connection `(thread, conn, calls, reconnects)`.
fn nfs(
    version: &str,
    conns: u32,
    rtt: f64,
    exec: f64,
    each: &[(u32, u32, u64, u64)],
) -> serde_json::Value {
    serde_json::json!({
        "protocol": "nfs", "version": version, "connections": conns, "reconnects": 0,
        "ops": [{"op": "READ", "calls": 0, "bytes": 0, "rtt_us": lat(rtt), "exec_us": lat(exec),
                 "errors": 0, "retrans": 0, "timeouts": 0}],
        "per_connection": each.iter().map(|&(thread, conn, calls, reconnects)| serde_json::json!({
            "thread": thread, "conn": conn, "calls": calls, "bytes": calls * 4096, "errors": 0,
            "retrans": 0, "timeouts": 0, "reconnects": reconnects})).collect::<Vec<_>>(),
    })
}

/// A 4 KiB random-read run of `iops` at `lat_us`, `conc` in flight.
fn reads(name: &str, iops: f64, lat_us: f64, conc: u32) -> RunFixture {
    RunFixture::new(name, Pattern::Randread, 100, 4096)
        .conc(1, conc)
        .perf(iops, lat_us)
}

fn of(f: &[Finding], kind: Kind) -> Vec<&Finding> {
    f.iter().filter(|x| x.kind == kind).collect()
}

#[test]
fn calls_waiting_in_volbench_s_client_are_nfs_queueing_split_by_where() {
    // 16 in flight on one v4.1 connection: 2.4 ms each, 0.4 ms of it the
    // round trip, the rest waiting for a slot.
    let d = with_protocol(
        &[reads("qd16", 16.0 / 2.4e-3, 2400.0, 16)],
        &[nfs("4.1", 1, 400.0, 2300.0, &[])],
    );
    let all = diagnose(&d);
    let f = of(&all, Kind::NfsQueueing);
    assert_eq!(f.len(), 1, "{all:#?}");
    assert_eq!(f[0].confidence, Confidence::High);
    assert_eq!(f[0].figures["rtt_us"], 400.0);
    // The fixture's latencies are a distribution about the mean given.
    assert!((f[0].figures["io_us"] - 2400.0).abs() < 50.0, "{f:#?}");
    assert_eq!(f[0].figures["in_flight_per_connection"], 16.0);
    let m = &f[0].message;
    assert!(
        m.contains("1,900 µs it waited in the client for a session slot"),
        "{m}"
    );
    assert!(m.contains("µs for its I/O thread to take it"), "{m}");
    assert!(m.contains("--nfs-connections"), "{m}");
    // The I/O thread late, not the client's queue: said so.
    let d = with_protocol(
        &[reads("late", 1000.0, 1500.0, 2)],
        &[nfs("3", 2, 300.0, 350.0, &[])],
    );
    let all = diagnose(&d);
    let f = of(&all, Kind::NfsQueueing);
    assert!(
        f[0].message.contains("late to take their completions"),
        "{all:#?}"
    );
}

#[test]
fn a_healthy_or_slow_nfs_server_is_no_client_queueing() {
    for (rtt, exec, io) in [
        // Healthy loopback: all of it the round trip.
        (150.0, 170.0, 180.0),
        // A slow server: long, but the round trip is most of it.
        (8000.0, 8300.0, 8400.0),
        // Twice the round trip, but a fast network: under 0.5 ms more.
        (100.0, 150.0, 250.0),
    ] {
        let d = with_protocol(
            &[reads("r", 4.0 / (io * 1e-6), io, 4)],
            &[nfs("3", 1, rtt, exec, &[])],
        );
        let all = diagnose(&d);
        assert!(
            of(&all, Kind::NfsQueueing).is_empty(),
            "{rtt} {exec} {io}: {all:#?}"
        );
    }
    // Too few calls to judge.
    let d = with_protocol(
        &[reads("few", 5.0, 5000.0, 1)],
        &[nfs("3", 1, 400.0, 5000.0, &[])],
    );
    assert!(of(&diagnose(&d), Kind::NfsQueueing).is_empty());
}

/// A client whose CPUs other work held (a loopback server, a busy test
/// machine) makes its I/O threads wait for a CPU: its calls' wait before
/// the send is then no measure of its connections, and "more connections"
/// would be the wrong advice. Seen on a loaded 2-core machine: 516 µs
/// before the send on a 339 µs round trip, 2 calls in flight per
/// connection.
#[test]
fn client_waits_on_a_client_whose_cpus_other_work_held_are_no_queueing() {
    let queued = || {
        with_protocol(
            &[reads("qd8", 8.0 / 863e-6, 863.0, 8)],
            &[nfs("4.1", 4, 339.0, 855.0, &[])],
        )
    };
    let on_host = |user: f64, system: f64| {
        let mut c = crate::counters::healthy();
        c.cpu = crate::counters::host_cpu(user, system);
        let doc = crate::counters::with(queued(), c, None);
        of(&diagnose(&doc), Kind::NfsQueueing).len()
    };
    // Others held 35% of the CPUs: the wait is the client's queueing.
    assert_eq!(on_host(20.0, 15.0), 1);
    // 65%: the threads may have waited for a CPU; not said.
    assert_eq!(on_host(40.0, 25.0), 0);
    // Saturated, whoever's load it was: client_cpu says it, not this.
    assert_eq!(on_host(70.0, 28.0), 0);
}

#[test]
fn a_ceiling_spent_in_the_round_trip_is_server_time() {
    // Depth 4 -> 16 gave 5% more IOPS; the latency grew in the round trip.
    let runs = [
        reads("qd4", 4000.0, 1000.0, 4),
        reads("qd16", 4200.0, 3800.0, 16),
    ];
    let d = with_protocol(
        &runs,
        &[
            nfs("3", 1, 900.0, 950.0, &[]),
            nfs("3", 1, 3500.0, 3600.0, &[]),
        ],
    );
    let all = diagnose(&d);
    let f = of(&all, Kind::ServerTime);
    assert_eq!(f.len(), 1, "{all:#?}");
    assert_eq!(f[0].runs, vec!["qd16".to_string()]);
    assert!(f[0].figures["rtt_share_pct"] > 90.0);
    assert!(of(&all, Kind::NfsQueueing).is_empty(), "{all:#?}");
    // The same ceiling with the time in the client is not the server's.
    let d = with_protocol(
        &runs,
        &[
            nfs("3", 1, 300.0, 950.0, &[]),
            nfs("3", 1, 400.0, 3600.0, &[]),
        ],
    );
    let all = diagnose(&d);
    assert!(of(&all, Kind::ServerTime).is_empty(), "{all:#?}");
    assert_eq!(of(&all, Kind::NfsQueueing).len(), 1, "{all:#?}");
}

#[test]
fn a_connection_that_idled_beside_a_busy_one_is_named() {
    let even = [
        (0, 0, 5000, 0),
        (0, 1, 5001, 0),
        (1, 0, 4000, 0),
        (1, 1, 4000, 0),
    ];
    let skewed = [
        (0, 0, 9500, 0),
        (0, 1, 500, 3),
        (1, 0, 4000, 0),
        (1, 1, 4000, 0),
    ];
    let run = || [reads("r", 5000.0, 400.0, 2)];
    let d = with_protocol(&run(), &[nfs("3", 4, 200.0, 210.0, &even)]);
    assert!(of(&diagnose(&d), Kind::IdleConnection).is_empty());
    let d = with_protocol(&run(), &[nfs("3", 4, 200.0, 210.0, &skewed)]);
    let all = diagnose(&d);
    let f = of(&all, Kind::IdleConnection);
    assert_eq!(f.len(), 1, "{all:#?}");
    assert_eq!(f[0].figures["idlest_calls"], 500.0);
    assert_eq!(f[0].figures["idlest_reconnects"], 3.0);
    assert!(
        f[0].message.contains("in 1 of 2 threads"),
        "{}",
        f[0].message
    );
    assert!(
        f[0].message.contains("made again 3 time(s)"),
        "{}",
        f[0].message
    );
    // Too few calls to tell.
    let d = with_protocol(
        &run(),
        &[nfs("3", 2, 200.0, 210.0, &[(0, 0, 90, 0), (0, 1, 0, 0)])],
    );
    assert!(of(&diagnose(&d), Kind::IdleConnection).is_empty());
}

/// An SMB client's figures: per channel `(READ requests, credit waits)`,
/// each channel of four sessions, 400 µs a request.
fn smb(channels: &[(u64, u64)]) -> serde_json::Value {
    serde_json::json!({
        "protocol": "smb", "version": "3.1.1", "connections": channels.len(), "reconnects": 0,
        "ops": [],
        "smb": {
            "dialect": "3.1.1", "signing": true, "signing_algorithm": "AES-GMAC",
            "channels_per_session": channels.len(), "max_io": 1048576,
            "channels": channels.iter().enumerate().map(|(k, &(reads, waits))| serde_json::json!({
                "channel": k, "server": format!("10.0.0.{}:445", k + 1), "sessions": 4,
                "credits_granted": reads + 64, "credit_waits": waits,
                "credit_wait_ms": waits as f64 * 0.2, "max_in_flight": 16,
                "commands": [{"command": "read", "requests": reads, "bytes": reads * 4096,
                              "errors": 0, "latency_us": lat(400.0)}],
            })).collect::<Vec<_>>(),
        },
    })
}

#[test]
fn requests_waiting_for_credits_are_smb_credit_starvation_on_their_channel() {
    let run = || [reads("r", 5000.0, 400.0, 2)];
    let d = with_protocol(&run(), &[smb(&[(5000, 100), (5000, 1500)])]);
    let all = diagnose(&d);
    let f = of(&all, Kind::CreditStarvation);
    assert_eq!(f.len(), 1, "{all:#?}");
    assert_eq!(f[0].confidence, Confidence::Medium);
    assert_eq!(f[0].figures["channel"], 1.0);
    assert_eq!(f[0].figures["waited_pct"], 30.0);
    assert_eq!(f[0].figures["mean_credit_wait_us"], 200.0);
    assert_eq!(f[0].runs, vec!["r".to_string()]);
    let m = &f[0].message;
    assert!(
        m.contains("on channel 1 (10.0.0.2:445), 1,500 of its 5,000 requests (30%)"),
        "{m}"
    );
    for advice in ["--iodepth", "--smb-channels; it had 2", "smb2 max credits"] {
        assert!(m.contains(advice), "{advice}: {m}");
    }
    // Most of them waiting: the window set the pace.
    let d = with_protocol(&run(), &[smb(&[(5000, 3000)])]);
    let all = diagnose(&d);
    assert_eq!(
        of(&all, Kind::CreditStarvation)[0].confidence,
        Confidence::High
    );
}

#[test]
fn a_healthy_smb_run_or_too_few_requests_is_no_finding() {
    let run = || [reads("r", 5000.0, 400.0, 2)];
    // A few waits while the window opened, an even spread: nothing to say.
    let d = with_protocol(&run(), &[smb(&[(5000, 40), (5001, 0)])]);
    let all = diagnose(&d);
    assert!(all.is_empty(), "{all:#?}");
    // Every request waited, but too few of them to judge.
    let d = with_protocol(&run(), &[smb(&[(500, 500)])]);
    assert!(of(&diagnose(&d), Kind::CreditStarvation).is_empty());
}

#[test]
fn an_smb_channel_that_idled_beside_a_busy_one_is_named() {
    let run = || [reads("r", 5000.0, 400.0, 2)];
    let d = with_protocol(&run(), &[smb(&[(9500, 0), (500, 0)])]);
    let all = diagnose(&d);
    let f = of(&all, Kind::IdleConnection);
    assert_eq!(f.len(), 1, "{all:#?}");
    assert_eq!(f[0].confidence, Confidence::Medium);
    assert_eq!(f[0].figures["idlest_calls"], 500.0);
    assert_eq!(f[0].figures["idlest_channel"], 1.0);
    let m = &f[0].message;
    assert!(
        m.contains("channel 0 (10.0.0.1:445) carried 9,500 READ and WRITE requests (95%)"),
        "{m}"
    );
    assert!(m.contains("channel 1 (10.0.0.2:445) only 500 (5%)"), "{m}");
    // Nothing at all on one channel of three.
    let d = with_protocol(&run(), &[smb(&[(5000, 0), (5000, 0), (0, 0)])]);
    let all = diagnose(&d);
    assert_eq!(
        of(&all, Kind::IdleConnection)[0].confidence,
        Confidence::High
    );
    // Even, or too few requests to tell: quiet.
    let d = with_protocol(&run(), &[smb(&[(3000, 0), (2900, 0)])]);
    assert!(of(&diagnose(&d), Kind::IdleConnection).is_empty());
    let d = with_protocol(&run(), &[smb(&[(90, 0), (0, 0)])]);
    assert!(of(&diagnose(&d), Kind::IdleConnection).is_empty());
}
