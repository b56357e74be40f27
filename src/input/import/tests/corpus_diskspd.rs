//! diskspd lines in the style of its own usage text and of VM Fleet's
//! profiles: sizes in blocks, zoned random I/O, an alignment given before
//! the block size, and switches refused for what they are.

use super::*;
use crate::spec::shape::{Distribution, HotZone};

fn ds(line: &str) -> Result<Imported> {
    diskspd::import_args(&args(line), &PathMap::default())
}

#[test]
fn diskspd_size_in_blocks_uses_the_block_size_given_so_far() {
    // 512 blocks of 8 KiB: 4 MiB, not 512 bytes.
    let j = job_of(&ds("-b8K -d5 -r -c512b /mnt/v/f.dat").unwrap());
    assert_eq!(j.target.size, 4 << 20);
    // Before any -b, a block is diskspd's default 64 KiB.
    let j = job_of(&ds("-c16b -b4K -d5 /mnt/v/f.dat").unwrap());
    assert_eq!(j.target.size, 1 << 20);
}

#[test]
fn diskspd_rdpct_zones_become_hot_zones() {
    let j = job_of(&ds("-b4K -d5 -r -w10 -rdpct70/10:0/20:20/30 -c1G /mnt/v/f.dat").unwrap());
    assert_eq!(
        j.runs[0].shape.distribution,
        Distribution::Hot {
            zones: vec![
                HotZone {
                    io_pct: 70.0,
                    space_pct: 10.0
                },
                HotZone {
                    io_pct: 0.0,
                    space_pct: 20.0
                },
                HotZone {
                    io_pct: 20.0,
                    space_pct: 30.0
                },
            ]
        }
    );
    // Zones over more than the whole target are refused by name.
    let e = ds("-b4K -d5 -r -rdpct50/60:50/60 -c1G /mnt/v/f.dat")
        .unwrap_err()
        .to_string();
    assert!(e.contains("argument 4: -rdpct50/60:50/60"), "{e}");
}

#[test]
fn diskspd_alignment_is_checked_against_the_final_block_size() {
    let j = job_of(&ds("-r8k -b8k -d5 -c1G /mnt/v/f.dat").unwrap());
    assert_eq!(j.runs[0].rw, Pattern::Randread);
    let e = ds("-r4k -b8k -d5 -c1G /mnt/v/f.dat")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("argument 1: -r4k") && e.contains("aligned"),
        "{e}"
    );
}

#[test]
fn diskspd_switches_volbench_lacks_are_refused_for_what_they_do() {
    for (line, arg, why) in [
        (
            "-b4K -d5 -f8g /mnt/v/f.dat",
            "argument 3: -f8g",
            "offset window on an existing file",
        ),
        (
            "-b4K -d5 -rdabs90/1G -c2G /mnt/v/f.dat",
            "argument 3: -rdabs90/1G",
            "absolute sizes",
        ),
        (
            "-b64K -d5 -p -o4 -c1G /mnt/v/f.dat",
            "argument 3: -p",
            "shared offset",
        ),
        (
            "-b4K -d5 -F4 -j10 -c1G /mnt/v/f.dat",
            "argument 4: -j10",
            "think time",
        ),
    ] {
        let e = ds(line).unwrap_err().to_string();
        assert!(e.contains(arg) && e.contains(why), "{line}: {e}");
    }
}
