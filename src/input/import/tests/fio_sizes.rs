//! fio's per-direction block sizes (`bs=R,W[,T]`, `bssplit=R,W`) land on
//! volbench's `bs` and `write_bs`, fio's comma rules intact; a rate given
//! in bytes becomes each direction's IOPS of its own size.

use super::fio_rates::rendered_has;
use super::*;

fn job(opts: &str) -> Result<Imported> {
    fio_with(
        &format!("[global]\nsize=256m\ndirectory=/d\ntime_based\nruntime=5\n[j]\n{opts}\n"),
        &[],
        &no_env,
    )
}

/// (bytes, weight) of each size.
type Sizes = Vec<(u64, u32)>;

fn sizes(r: &crate::spec::RunSpec) -> (Sizes, Sizes) {
    let each = |v: &[crate::spec::BlockSize]| v.iter().map(|b| (b.bytes, b.weight)).collect();
    (each(&r.bs), each(&r.write_bs))
}

#[test]
fn fio_bs_per_direction_follows_fio_s_comma_rules() {
    const K: u64 = 1024;
    // (bs=, reads, writes): a value not followed by a comma holds for the
    // directions after it; an empty side is fio's default, 4 KiB; the
    // third value (trims) is never issued.
    for (bs, read, write) in [
        ("8k,128k", 8 * K, Some(128 * K)),
        ("8k,", 8 * K, Some(4 * K)),
        (",64k", 4 * K, Some(64 * K)),
        ("8k,16k,32k", 8 * K, Some(16 * K)),
        ("16k", 16 * K, None),
        ("16k,16k", 16 * K, None),
    ] {
        let imp = job(&format!("rw=randrw\nbs={bs}")).unwrap();
        let r = &job_of(&imp).runs[0];
        let want = (
            vec![(read, 1)],
            write.map(|w| vec![(w, 1)]).unwrap_or_default(),
        );
        assert_eq!(sizes(r), want, "bs={bs}");
        let text = render::suite_toml(&imp, "s.toml", "h.txt").unwrap();
        assert_eq!(
            text.lines().any(|l| l.trim().starts_with("write_bs =")),
            write.is_some(),
            "bs={bs}:\n{text}"
        );
    }
    let e = job("rw=randrw\nbs=4k,8k,16k,32k").unwrap_err().to_string();
    assert!(e.contains("three values at most"), "{e}");
}

#[test]
fn a_one_direction_job_takes_its_own_direction_s_size() {
    let imp = job("rw=randread\nbs=8k,128k").unwrap();
    assert_eq!(sizes(&job_of(&imp).runs[0]), (vec![(8192, 1)], vec![]));
    let imp = job("rw=write\nbs=8k,128k").unwrap();
    assert_eq!(sizes(&job_of(&imp).runs[0]), (vec![(131072, 1)], vec![]));
}

#[test]
fn fio_bssplit_per_direction_is_each_direction_s_mix() {
    let imp = job("rw=randrw\nbssplit=4k/50:8k/50,64k/100").unwrap();
    let (read, write) = sizes(&job_of(&imp).runs[0]);
    assert_eq!(read.iter().map(|b| b.0).collect::<Vec<_>>(), [4096, 8192]);
    assert_eq!(read[0].1, read[1].1, "an even split");
    assert_eq!(write, [(65536, 1)]);
    // A side left empty keeps what bs gave it.
    let imp = job("rw=randrw\nbs=16k,32k\nbssplit=,4k/50:8k/50").unwrap();
    let (read, write) = sizes(&job_of(&imp).runs[0]);
    assert_eq!(read, [(16384, 1)]);
    assert_eq!(write.iter().map(|b| b.0).collect::<Vec<_>>(), [4096, 8192]);
}

#[test]
fn a_rate_in_bytes_is_each_direction_s_iops_of_its_own_size() {
    // fio's setup_rate divides each direction's bytes by that direction's
    // smallest size: 8 MiB/s of 8 KiB reads and 2 MiB/s of 128 KiB writes.
    let imp = job("rw=randrw\nbs=8k,128k\nrate=8m,2m\nnumjobs=2").unwrap();
    assert!(
        rendered_has(&imp, "rate_iops = \"2048,32\""),
        "{}",
        render::suite_toml(&imp, "s.toml", "h.txt").unwrap()
    );
    // And rate_iops is IOPS whatever each direction's size.
    let imp = job("rw=randrw\nbs=8k,128k\nrate_iops=700,100").unwrap();
    assert!(rendered_has(&imp, "rate_iops = \"700,100\""));
}
