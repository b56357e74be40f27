//! Windows' counters as the Linux samples: the structures Perfmon's own
//! counters come from (per-processor times, `DISK_PERFORMANCE`, the
//! interface table's octets) turned into `CpuTimes`, `DiskStat` and
//! `NetStat`, so the rates and the diagnosis are the same code on both.
//! Pure, so the conversions are tested on Linux; `windows.rs` reads them.

use super::block::DiskStat;
use super::cpu::{CpuSample, CpuTimes};
use super::net::NetStat;

/// One processor's times since boot, in 100 ns units, as
/// `SystemProcessorPerformanceInformation` gives them: kernel time
/// includes the idle, DPC and interrupt time.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct ProcessorTimes {
    pub(crate) idle: u64,
    pub(crate) kernel: u64,
    pub(crate) user: u64,
    pub(crate) dpc: u64,
    pub(crate) interrupt: u64,
}

impl ProcessorTimes {
    /// Perfmon's split: % User Time, % Privileged Time (kernel less idle,
    /// DPCs and interrupts), % DPC + % Interrupt Time (Linux's irq and
    /// softirq), % Idle Time. Windows has no iowait or steal.
    fn times(&self) -> CpuTimes {
        let irq = self.dpc + self.interrupt;
        CpuTimes {
            user: self.user,
            system: self.kernel.saturating_sub(self.idle).saturating_sub(irq),
            idle: self.idle,
            irq,
            ..CpuTimes::default()
        }
    }
}

/// The host's sample from its processors' times; None with no processor.
pub(crate) fn cpu_sample(each: &[ProcessorTimes]) -> Option<CpuSample> {
    if each.is_empty() {
        return None;
    }
    let each: Vec<CpuTimes> = each.iter().map(ProcessorTimes::times).collect();
    let all = each.iter().fold(CpuTimes::default(), |a, t| CpuTimes {
        user: a.user + t.user,
        system: a.system + t.system,
        idle: a.idle + t.idle,
        irq: a.irq + t.irq,
        ..CpuTimes::default()
    });
    Some(CpuSample { all, each })
}

/// A physical disk's `DISK_PERFORMANCE` (times in 100 ns units;
/// `query_time` is when it was read).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct DiskPerformance {
    pub(crate) bytes_read: u64,
    pub(crate) bytes_written: u64,
    pub(crate) read_time: u64,
    pub(crate) write_time: u64,
    pub(crate) idle_time: u64,
    pub(crate) read_count: u64,
    pub(crate) write_count: u64,
    pub(crate) query_time: u64,
}

/// As /proc/diskstats would count it: 512-byte sectors, and milliseconds.
/// Busy time is the time not idle (Perfmon's % Idle Time, turned round);
/// the time requests spent, reads' and writes' together, is the
/// queue-time integral whose rate is Avg. Disk Queue Length, as Linux's
/// weighted time is.
pub(crate) fn disk_stat(p: &DiskPerformance) -> DiskStat {
    let ms = |t: u64| t / 10_000;
    DiskStat {
        reads: p.read_count,
        read_sectors: p.bytes_read / 512,
        writes: p.write_count,
        write_sectors: p.bytes_written / 512,
        io_ticks_ms: ms(p.query_time.saturating_sub(p.idle_time)),
        queue_ms: ms(p.read_time + p.write_time),
        read_ms: ms(p.read_time),
        write_ms: ms(p.write_time),
        discards: 0,
        flushes: 0,
    }
}

/// One row of the interface table (`MIB_IF_ROW2`): octets and packets,
/// unicast and not.
pub(crate) fn net_stat(
    in_octets: u64,
    in_pkts: [u64; 2],
    out_octets: u64,
    out_pkts: [u64; 2],
) -> NetStat {
    NetStat {
        rx_bytes: in_octets,
        rx_packets: in_pkts[0] + in_pkts[1],
        tx_bytes: out_octets,
        tx_packets: out_pkts[0] + out_pkts[1],
    }
}

/// The link speed in Mbit/s from the table's bits per second; None where
/// the driver reports none (0) or "unknown" (all ones).
pub(crate) fn speed_mbit(bits_per_s: u64) -> Option<f64> {
    (bits_per_s != 0 && bits_per_s != u64::MAX).then(|| bits_per_s as f64 / 1e6)
}

#[cfg(test)]
mod tests {
    use super::super::{block, cpu, net};
    use super::*;

    #[test]
    fn processor_times_give_perfmons_split_and_the_busiest_core() {
        // One second (10^7 units) on each of two cores: core 0 all user
        // time (a pinned thread), core 1 idle but for 10% DPC + interrupt.
        let a = [ProcessorTimes::default(); 2];
        let b = [
            ProcessorTimes {
                user: 10_000_000,
                ..ProcessorTimes::default()
            },
            ProcessorTimes {
                idle: 9_000_000,
                kernel: 10_000_000,
                dpc: 600_000,
                interrupt: 400_000,
                ..ProcessorTimes::default()
            },
        ];
        let r = cpu::rates(&cpu_sample(&a).unwrap(), &cpu_sample(&b).unwrap()).unwrap();
        assert_eq!(r.user_pct, 50.0);
        assert_eq!(r.system_pct, 5.0);
        assert_eq!(r.idle_pct, 45.0);
        assert_eq!((r.iowait_pct, r.steal_pct), (0.0, 0.0));
        assert_eq!(r.busiest_cpu_pct, 100.0);
        assert!(cpu_sample(&[]).is_none());
    }

    #[test]
    fn disk_performance_gives_iops_throughput_queue_and_busy() {
        // Two seconds apart: 2000 reads of 4 KiB and 1000 writes of 64 KiB;
        // requests spent 8 s in all (queue 4); idle 0.5 s of the 2 (75% busy).
        let a = DiskPerformance {
            query_time: 1_000_000_000,
            idle_time: 300_000_000,
            ..DiskPerformance::default()
        };
        let b = DiskPerformance {
            bytes_read: 2000 * 4096,
            bytes_written: 1000 * 65536,
            read_time: 50_000_000,
            write_time: 30_000_000,
            idle_time: 305_000_000,
            read_count: 2000,
            write_count: 1000,
            query_time: 1_020_000_000,
        };
        let r = block::rates("PhysicalDrive0", &disk_stat(&a), &disk_stat(&b), 2.0);
        assert_eq!((r.read_iops, r.write_iops), (1000.0, 500.0));
        assert_eq!(r.read_mib_s, 2000.0 * 4096.0 / 1048576.0 / 2.0);
        assert_eq!(r.write_mib_s, 1000.0 * 65536.0 / 1048576.0 / 2.0);
        assert_eq!(r.avg_queue, 4.0);
        assert_eq!(r.busy_pct, 75.0);
    }

    #[test]
    fn interface_rows_give_bytes_and_packets_and_unknown_speed_is_none() {
        let a = net_stat(0, [0, 0], 0, [0, 0]);
        let b = net_stat(10 << 20, [900, 100], 5 << 20, [400, 100]);
        let r = net::rates("Ethernet", &a, &b, 1.0);
        assert_eq!((r.rx_mib_s, r.tx_mib_s), (10.0, 5.0));
        assert_eq!((r.rx_packets_s, r.tx_packets_s), (1000.0, 500.0));
        assert_eq!(speed_mbit(10_000_000_000), Some(10_000.0));
        assert_eq!(speed_mbit(0), None);
        assert_eq!(speed_mbit(u64::MAX), None);
    }
}
