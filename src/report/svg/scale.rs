//! Axes and scales: which range and ticks an axis gets (linear from zero,
//! or whole decades on a log scale), and where a value lands in pixels.

use super::Fmt;

#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum ScaleKind {
    Linear,
    Log,
}

/// An axis: its title (with unit), scale and label format. `zero` makes a
/// linear axis start at 0, as throughput axes should.
#[derive(Clone, Debug)]
pub(crate) struct Axis {
    pub(crate) title: String,
    pub(crate) kind: ScaleKind,
    pub(crate) fmt: Fmt,
    pub(crate) zero: bool,
    /// Fixed range instead of one fitted to the data.
    pub(crate) range: Option<(f64, f64)>,
    /// High values on the left (the papers draw 100% read first).
    pub(crate) reverse: bool,
}

impl Axis {
    pub(crate) fn linear(title: &str, fmt: Fmt) -> Self {
        Self {
            title: title.into(),
            kind: ScaleKind::Linear,
            fmt,
            zero: true,
            range: None,
            reverse: false,
        }
    }

    pub(crate) fn log(title: &str, fmt: Fmt) -> Self {
        Self {
            kind: ScaleKind::Log,
            zero: false,
            ..Self::linear(title, fmt)
        }
    }

    /// Log scale when the positive values span more than a decade (p99 far
    /// above the mean would otherwise flatten the mean line onto the
    /// axis); linear from zero otherwise.
    pub(crate) fn auto(title: &str, fmt: Fmt, values: impl Iterator<Item = f64>) -> Self {
        let (lo, hi) = positive_range(values);
        if lo > 0.0 && hi / lo >= 20.0 {
            let mut a = Self::log(title, fmt);
            a.title = format!("{title}, log scale");
            a
        } else {
            Self::linear(title, fmt)
        }
    }

    pub(crate) fn fixed(mut self, lo: f64, hi: f64) -> Self {
        self.range = Some((lo, hi));
        self
    }
}

pub(super) fn positive_range(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let mut lo = f64::INFINITY;
    let mut hi = 0.0f64;
    for v in values.filter(|v| v.is_finite() && *v > 0.0) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if hi == 0.0 { (0.0, 0.0) } else { (lo, hi) }
}

/// Data range mapped onto pixels.
#[derive(Clone, Debug)]
pub(super) struct Scale {
    kind: ScaleKind,
    lo: f64,
    hi: f64,
    p0: f64,
    p1: f64,
    pub(crate) ticks: Vec<f64>,
}

impl Scale {
    pub(super) fn fit(axis: &Axis, values: &[f64], p0: f64, p1: f64) -> Self {
        let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
        match axis.kind {
            ScaleKind::Linear => {
                let (mut lo, mut hi) = match axis.range {
                    Some(r) => r,
                    None => (
                        finite.iter().copied().fold(f64::INFINITY, f64::min),
                        finite.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                    ),
                };
                if !lo.is_finite() || !hi.is_finite() {
                    (lo, hi) = (0.0, 1.0);
                }
                if axis.zero && axis.range.is_none() {
                    lo = lo.min(0.0);
                }
                if hi <= lo {
                    hi = lo + if lo == 0.0 { 1.0 } else { lo.abs() * 0.1 };
                }
                let step = nice_step((hi - lo) / 5.0);
                if axis.range.is_none() {
                    lo = (lo / step).floor() * step;
                    hi = (hi / step).ceil() * step;
                }
                let mut ticks = Vec::new();
                let mut k = (lo / step).ceil() as i64;
                while (k as f64) * step <= hi + step * 1e-9 {
                    ticks.push(k as f64 * step);
                    k += 1;
                }
                Self {
                    kind: ScaleKind::Linear,
                    lo,
                    hi,
                    p0,
                    p1,
                    ticks,
                }
            }
            ScaleKind::Log => {
                let (mut lo, mut hi) = match axis.range {
                    Some(r) => r,
                    None => positive_range(finite.iter().copied()),
                };
                if lo <= 0.0 || hi <= 0.0 {
                    (lo, hi) = (1.0, 10.0);
                }
                let d0 = lo.log10().floor();
                let mut d1 = hi.log10().ceil();
                if d1 <= d0 {
                    d1 = d0 + 1.0;
                }
                let (lo, hi) = (10f64.powf(d0), 10f64.powf(d1));
                let decades = (d1 - d0) as i64;
                let mut ticks = Vec::new();
                for d in d0 as i64..=d1 as i64 {
                    let base = 10f64.powi(d as i32);
                    ticks.push(base);
                    // Few decades: label 2x and 5x too, so the axis is readable.
                    if decades <= 2 && d < d1 as i64 {
                        ticks.push(2.0 * base);
                        ticks.push(5.0 * base);
                    }
                }
                Self {
                    kind: ScaleKind::Log,
                    lo,
                    hi,
                    p0,
                    p1,
                    ticks,
                }
            }
        }
    }

    /// Pixel position of a value; log scales clamp non-positive values to
    /// the bottom of the axis.
    pub(super) fn px(&self, v: f64) -> f64 {
        let f = match self.kind {
            ScaleKind::Linear => (v - self.lo) / (self.hi - self.lo),
            ScaleKind::Log => {
                let v = v.max(self.lo);
                (v.log10() - self.lo.log10()) / (self.hi.log10() - self.lo.log10())
            }
        };
        self.p0 + f * (self.p1 - self.p0)
    }
}

/// 1, 2 or 5 times a power of ten, at least `raw`.
pub(super) fn nice_step(raw: f64) -> f64 {
    if raw <= 0.0 || !raw.is_finite() {
        return 1.0;
    }
    let p = 10f64.powf(raw.log10().floor());
    for m in [1.0, 2.0, 2.5, 5.0, 10.0] {
        if m * p >= raw {
            return m * p;
        }
    }
    10.0 * p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_ticks_are_round() {
        let s = Scale::fit(&Axis::linear("x", Fmt::Number), &[3.0, 4321.0], 0.0, 100.0);
        assert_eq!(s.ticks, vec![0.0, 1000.0, 2000.0, 3000.0, 4000.0, 5000.0]);
        assert_eq!(s.px(0.0), 0.0);
        assert_eq!(s.px(5000.0), 100.0);
    }

    #[test]
    fn log_scale_covers_whole_decades() {
        let s = Scale::fit(&Axis::log("y", Fmt::Micros), &[35.0, 4200.0], 100.0, 0.0);
        assert_eq!(s.ticks, vec![10.0, 100.0, 1000.0, 10000.0]);
        assert_eq!(s.px(10.0), 100.0);
        assert_eq!(s.px(10000.0), 0.0);
        let a = Axis::auto("lat", Fmt::Micros, [50.0, 20000.0].into_iter());
        assert_eq!(a.kind, ScaleKind::Log);
        let a = Axis::auto("lat", Fmt::Micros, [50.0, 500.0].into_iter());
        assert_eq!(a.kind, ScaleKind::Linear);
    }
}
