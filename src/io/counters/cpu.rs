//! Host CPU time from /proc/stat: the `cpu` line for the whole host and
//! the `cpuN` lines to see one core pinned while the others idle.

use crate::result::counters::HostCpu;

/// Jiffies spent in each state since boot (guest time is already in user).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct CpuTimes {
    pub(crate) user: u64,
    pub(crate) nice: u64,
    pub(crate) system: u64,
    pub(crate) idle: u64,
    pub(crate) iowait: u64,
    pub(crate) irq: u64,
    pub(crate) softirq: u64,
    pub(crate) steal: u64,
}

impl CpuTimes {
    fn total(&self) -> u64 {
        self.user
            + self.nice
            + self.system
            + self.idle
            + self.iowait
            + self.irq
            + self.softirq
            + self.steal
    }
    fn busy(&self) -> u64 {
        self.user + self.nice + self.system + self.irq + self.softirq + self.steal
    }
    fn since(&self, a: &CpuTimes) -> CpuTimes {
        CpuTimes {
            user: self.user.saturating_sub(a.user),
            nice: self.nice.saturating_sub(a.nice),
            system: self.system.saturating_sub(a.system),
            idle: self.idle.saturating_sub(a.idle),
            iowait: self.iowait.saturating_sub(a.iowait),
            irq: self.irq.saturating_sub(a.irq),
            softirq: self.softirq.saturating_sub(a.softirq),
            steal: self.steal.saturating_sub(a.steal),
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct CpuSample {
    pub(crate) all: CpuTimes,
    pub(crate) each: Vec<CpuTimes>,
}

/// The `cpu` and `cpuN` lines of /proc/stat; None when there is no `cpu` line.
pub(crate) fn parse(text: &str) -> Option<CpuSample> {
    let mut all = None;
    let mut each = Vec::new();
    for line in text.lines() {
        let mut f = line.split_whitespace();
        let Some(name) = f.next() else { continue };
        if !name.starts_with("cpu") {
            continue;
        }
        let v: Vec<u64> = f.map(|x| x.parse().unwrap_or(0)).collect();
        let at = |i: usize| v.get(i).copied().unwrap_or(0);
        let t = CpuTimes {
            user: at(0),
            nice: at(1),
            system: at(2),
            idle: at(3),
            iowait: at(4),
            irq: at(5),
            softirq: at(6),
            steal: at(7),
        };
        if name == "cpu" {
            all = Some(t);
        } else {
            each.push(t);
        }
    }
    Some(CpuSample { all: all?, each })
}

/// Percentages of the host's CPUs between two samples; None when no time
/// passed (two reads within one jiffy).
pub(crate) fn rates(a: &CpuSample, b: &CpuSample) -> Option<HostCpu> {
    let d = b.all.since(&a.all);
    let total = d.total();
    if total == 0 {
        return None;
    }
    let pct = |v: u64| v as f64 / total as f64 * 100.0;
    let busiest = b
        .each
        .iter()
        .zip(&a.each)
        .map(|(y, x)| {
            let d = y.since(x);
            match d.total() {
                0 => 0.0,
                t => d.busy() as f64 / t as f64 * 100.0,
            }
        })
        .fold(0.0, f64::max);
    Some(HostCpu {
        user_pct: pct(d.user + d.nice),
        system_pct: pct(d.system + d.irq + d.softirq),
        iowait_pct: pct(d.iowait),
        steal_pct: pct(d.steal),
        idle_pct: pct(d.idle),
        busiest_cpu_pct: busiest,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: &str = "cpu  1000 10 500 8000 100 5 5 0 0 0
cpu0 500 5 250 4000 50 3 2 0 0 0
cpu1 500 5 250 4000 50 2 3 0 0 0
intr 123456 0 0
ctxt 987654
btime 1700000000
";
    // 100 jiffies later on each CPU: cpu0 fully busy in user (one pinned
    // thread), cpu1 half idle, half iowait; 4 jiffies of steal on cpu1.
    const T1: &str = "cpu  1100 10 500 8046 150 5 5 4 0 0
cpu0 600 5 250 4000 50 3 2 0 0 0
cpu1 500 5 250 4046 100 2 3 4 0 0
intr 123999 0 0
";

    #[test]
    fn host_and_busiest_cpu_from_two_samples() {
        let (a, b) = (parse(T0).unwrap(), parse(T1).unwrap());
        assert_eq!(a.each.len(), 2);
        assert_eq!(a.all.steal, 0);
        let r = rates(&a, &b).unwrap();
        assert_eq!(r.user_pct, 50.0);
        assert_eq!(r.system_pct, 0.0);
        assert_eq!(r.iowait_pct, 25.0);
        assert_eq!(r.idle_pct, 23.0);
        assert_eq!(r.steal_pct, 2.0);
        assert_eq!(r.busiest_cpu_pct, 100.0);
        assert_eq!(r.busy_pct(), 52.0);
    }

    #[test]
    fn old_kernels_without_steal_and_no_time_passed() {
        // Linux 2.6.10 and older print four to seven columns.
        let a = parse("cpu 10 0 10 80\ncpu0 10 0 10 80\n").unwrap();
        assert_eq!(a.all.idle, 80);
        assert!(rates(&a, &a).is_none());
        assert!(parse("intr 1 2 3\n").is_none());
    }
}
