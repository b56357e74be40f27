//! Steady-state detection, after SNIA's performance test specification: a
//! measurement window is steady when every value lies within a band around
//! the window's mean and the best-fit line drifts little across the window.

/// Intervals in a steady-state window.
pub(crate) const WINDOW: usize = 5;
/// Allowed excursion of each value from the window mean (fraction of the mean).
pub(crate) const BAND: f64 = 0.10;
/// Allowed drift of the least-squares line across the window (fraction of the mean).
pub(crate) const SLOPE: f64 = 0.10;

/// True when the last `WINDOW` values are steady.
pub(crate) fn is_steady(values: &[f64]) -> bool {
    if values.len() < WINDOW {
        return false;
    }
    let w = &values[values.len() - WINDOW..];
    let n = w.len() as f64;
    let Some((mean, spread)) = crate::stats::mean_spread(w) else {
        return false;
    };
    if spread > BAND {
        return false;
    }
    // Least-squares slope over x = 0..n-1; its drift over the window is
    // slope x (n - 1).
    let xm = (n - 1.0) / 2.0;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (i, v) in w.iter().enumerate() {
        let dx = i as f64 - xm;
        sxy += dx * (v - mean);
        sxx += dx * dx;
    }
    let drift = (sxy / sxx * (n - 1.0)).abs();
    drift <= SLOPE * mean
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flat_noisy_series_is_steady() {
        assert!(is_steady(&[
            100.0, 50.0, 1000.0, 98.0, 103.0, 99.0, 101.0, 97.0
        ]));
    }

    #[test]
    fn too_few_intervals_are_not_steady() {
        assert!(!is_steady(&[100.0, 100.0, 100.0, 100.0]));
    }

    #[test]
    fn an_outlier_breaks_the_band() {
        assert!(!is_steady(&[100.0, 100.0, 115.0, 100.0, 100.0]));
    }

    #[test]
    fn a_ramp_inside_the_band_still_fails_the_slope() {
        // Every value within 10% of the mean (100), but rising 16% across the window.
        let ramp = [92.0, 96.0, 100.0, 104.0, 108.0];
        assert!(ramp.iter().all(|v| (v - 100.0f64).abs() <= 10.0));
        assert!(!is_steady(&ramp));
    }

    #[test]
    fn a_gentle_drift_is_steady() {
        assert!(is_steady(&[98.0, 99.0, 100.0, 101.0, 102.0]));
    }

    #[test]
    fn zero_throughput_is_never_steady() {
        assert!(!is_steady(&[0.0; 8]));
    }
}
