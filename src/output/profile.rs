//! A production profile (`volbench capture`) as tables, for the terminal,
//! `report PROFILE` and its Markdown, and the one line per interval that
//! `capture` prints while it watches.

use crate::output::fmt::{mib_s, number, trim};
use crate::output::table::Table;
use crate::result::profile::{DeviceSummary, Figure, Profile, ProfileInterval};

fn ms(v: f64) -> String {
    format!("{} ms", trim(v, if v >= 10.0 { 1 } else { 2 }))
}

fn row(t: &mut Table, what: &str, f: &Figure, show: fn(f64) -> String) {
    t.rows.push(vec![
        what.to_string(),
        show(f.mean),
        show(f.p95),
        show(f.peak),
    ]);
}

fn device_table(p: &Profile, d: &DeviceSummary) -> Table {
    let mut t = Table::new(
        format!(
            "Device {} ({} of {} intervals busy)",
            d.name,
            d.active_intervals,
            p.intervals.len()
        ),
        &["", "mean", "p95", "peak"],
        1,
    );
    row(&mut t, "IOPS", &d.iops, number);
    row(&mut t, "read IOPS", &d.read_iops, number);
    row(&mut t, "write IOPS", &d.write_iops, number);
    row(&mut t, "MiB/s", &d.mib_s, mib_s);
    row(&mut t, "reads %", &d.read_pct, |v| trim(v, 1));
    row(&mut t, "request KiB", &d.request_kib, |v| trim(v, 1));
    row(&mut t, "in flight", &d.in_flight, |v| trim(v, 2));
    row(&mut t, "await", &d.await_ms, ms);
    row(&mut t, "read await", &d.read_await_ms, ms);
    row(&mut t, "write await", &d.write_await_ms, ms);
    t.notes.push(format!(
        "mean over the whole capture; p95 and peak over intervals (mix, size and await: busy ones). \
         Requests: reads {} KiB, writes {} KiB; size spread over intervals {}%; discards {}/s, flushes {}/s.",
        trim(d.read_kib, 1),
        trim(d.write_kib, 1),
        trim(d.request_kib_spread * 100.0, 1),
        number(d.discard_iops),
        number(d.flush_iops)
    ));
    t
}

/// The profile's tables: what it is, then each device, NFS mount, the CPUs
/// and the interfaces.
pub(crate) fn tables(p: &Profile) -> Vec<Table> {
    let mut about = Table::new("Profile", &["", ""], 2);
    about
        .rows
        .push(vec!["host".into(), format!("{} ({} CPUs)", p.host, p.cpus)]);
    about.rows.push(vec![
        "captured".into(),
        format!(
            "{} s in {} intervals of {} s{}",
            trim(p.duration_s, 1),
            p.intervals.len(),
            trim(p.interval_s, 2),
            p.stopped
                .as_ref()
                .map(|s| format!(" ({s})"))
                .unwrap_or_default()
        ),
    ]);
    about
        .rows
        .push(vec!["devices".into(), p.devices.join(", ")]);
    if !p.mounts.is_empty() {
        about
            .rows
            .push(vec!["NFS mounts".into(), p.mounts.join(", ")]);
    }
    let idle: Vec<&str> = p
        .summary
        .iter()
        .filter(|d| d.active_intervals == 0)
        .map(|d| d.name.as_str())
        .collect();
    if !idle.is_empty() {
        about
            .rows
            .push(vec!["idle throughout".into(), idle.join(", ")]);
    }
    let mut out = vec![about];
    out.extend(
        p.summary
            .iter()
            .filter(|d| d.active_intervals > 0)
            .map(|d| device_table(p, d)),
    );
    for m in &p.nfs_summary {
        let mut t = Table::new(
            format!("NFS {}", m.mount),
            &[
                "operation",
                "ops/s mean",
                "p95",
                "peak",
                "RTT",
                "execute",
                "retrans/s",
            ],
            1,
        );
        for o in &m.ops {
            t.rows.push(vec![
                o.op.clone(),
                number(o.ops_s.mean),
                number(o.ops_s.p95),
                number(o.ops_s.peak),
                ms(o.avg_rtt_ms),
                ms(o.avg_exe_ms),
                number(o.retrans_s),
            ]);
        }
        out.push(t);
    }
    if let Some(c) = &p.cpu_summary {
        let mut t = Table::new(
            "Host CPU (percent of all CPUs)",
            &["", "mean", "p95", "peak"],
            1,
        );
        let pct = |v: f64| format!("{}%", trim(v, 1));
        row(&mut t, "busy", &c.busy_pct, pct);
        row(&mut t, "iowait", &c.iowait_pct, pct);
        row(&mut t, "busiest CPU", &c.busiest_cpu_pct, pct);
        out.push(t);
    }
    if !p.net_summary.is_empty() {
        let mut t = Table::new(
            "Network interfaces (MiB/s)",
            &["interface", "rx mean", "rx peak", "tx mean", "tx peak"],
            1,
        );
        for n in &p.net_summary {
            t.rows.push(vec![
                n.name.clone(),
                mib_s(n.rx_mib_s.mean),
                mib_s(n.rx_mib_s.peak),
                mib_s(n.tx_mib_s.mean),
                mib_s(n.tx_mib_s.peak),
            ]);
        }
        out.push(t);
    }
    out
}

/// What `capture` prints after each interval: the time, then each watched
/// device's IOPS, mix, request size and await, and each mount's operations.
pub(crate) fn progress_line(iv: &ProfileInterval, total_s: f64) -> String {
    let mut parts: Vec<String> = iv
        .devices
        .iter()
        .filter(|d| d.iops() > 0.0)
        .map(|d| {
            format!(
                "{} {} IOPS {}% read {} KiB {} MiB/s await {} in flight {}",
                d.name,
                number(d.iops()),
                trim(d.read_pct(), 0),
                trim(d.request_kib(), 1),
                mib_s(d.mib_s()),
                ms(d.await_ms()),
                trim(d.in_flight, 2)
            )
        })
        .collect();
    for m in &iv.nfs {
        let ops: f64 = m.rates.ops.iter().map(|o| o.ops_s).sum();
        parts.push(format!("{} {} NFS ops/s", m.mount, number(ops)));
    }
    if parts.is_empty() {
        parts.push("no I/O".into());
    }
    format!(
        "capture {}/{} s: {}",
        trim(iv.t_s, 1),
        trim(total_s, 0),
        parts.join("; ")
    )
}
