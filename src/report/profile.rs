//! `volbench report PROFILE`: a production profile (`volbench capture`) as
//! a self-contained HTML page: the profile's tables and, per device, its
//! IOPS and await over time, on the same page model and renderer as a
//! result's report.

use super::charts::Figure;
use super::page::{Page, Section};
use super::svg::{self, Axis, Fmt, READ, Series, WRITE, line_chart};
use crate::error::Result;
use crate::output::fmt::{number, trim};
use crate::result::profile::Profile;

fn chart(p: &Profile, dev: &str, iops: bool) -> Option<Figure> {
    let mut series = Vec::new();
    for (name, colour) in [("read", READ), ("write", WRITE)] {
        let mut s = Series::new(name, colour);
        s.marks = p.intervals.len() <= 120;
        for iv in &p.intervals {
            let Some(d) = iv.devices.iter().find(|d| d.name == dev) else {
                continue;
            };
            let (n, await_ms) = match name {
                "read" => (d.read_iops, d.read_await_ms),
                _ => (d.write_iops, d.write_await_ms),
            };
            if iops {
                s.push(
                    iv.t_s,
                    n,
                    format!("{}s: {name} {} IOPS", trim(iv.t_s, 1), number(n)),
                );
            } else if n > 0.0 {
                // Await is drawn in µs so the axis reads "850 µs", "1.5 ms".
                s.push(
                    iv.t_s,
                    await_ms * 1000.0,
                    format!(
                        "{}s: {name} await {} ms",
                        trim(iv.t_s, 1),
                        trim(await_ms, 2)
                    ),
                );
            }
        }
        if !s.points.is_empty() {
            series.push(s);
        }
    }
    if series.is_empty() {
        return None;
    }
    let x = Axis::linear("time since the capture started, s", Fmt::Seconds);
    let (kind, title, y) = if iops {
        (
            "profile-iops",
            format!("{dev}: IOPS per interval"),
            Axis::linear("IOPS", Fmt::Number),
        )
    } else {
        (
            "profile-await",
            format!("{dev}: await per interval"),
            Axis::auto(
                "await",
                Fmt::Micros,
                series.iter().flat_map(|s| s.points.iter().map(|p| p.1)),
            ),
        )
    };
    Some(Figure {
        kind,
        svg: line_chart(kind, &title, &x, &y, &series, &[], svg::SMALL),
        caption: String::new(),
        title,
    })
}

/// The page of a profile.
pub(crate) fn profile_html(p: &Profile) -> Result<String> {
    let mut tables = crate::output::profile::tables(p).into_iter();
    let mut head = Section::new(
        "profile",
        "Production profile",
        "What `volbench capture` saw while production ran; volbench did no I/O.",
    );
    head.tables.extend(tables.next());
    let mut sections = vec![head];
    for (i, t) in tables.enumerate() {
        let dev = p
            .summary
            .iter()
            .find(|d| t.title.starts_with(&format!("Device {} (", d.name)))
            .map(|d| d.name.clone());
        let mut s = Section::new(&format!("part-{i}"), &t.title, "");
        if let Some(dev) = dev {
            s = s.figures(
                [chart(p, &dev, true), chart(p, &dev, false)]
                    .into_iter()
                    .flatten()
                    .collect(),
            );
        }
        s.tables.push(t);
        sections.push(s);
    }
    let page = Page {
        title: format!("volbench profile of {}", p.host),
        subtitle: vec![format!(
            "{} s, {} intervals",
            trim(p.duration_s, 1),
            p.intervals.len()
        )],
        version: p.volbench.clone(),
        warnings: p
            .stopped
            .iter()
            .map(|s| format!("The capture was cut short: {s}."))
            .collect(),
        sections,
        envs: Vec::new(),
    };
    super::html::render(&page)
}
