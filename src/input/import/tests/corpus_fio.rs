//! Shapes found in fio's own example job files that once imported wrong:
//! comments after a value, fio's option aliases, a zoned list whose last
//! zone takes the rest, and one refusal per [global] option, not one per job.

use super::*;
use crate::spec::shape::{Distribution, HotZone};

#[test]
fn fio_comment_after_a_value_ends_the_line_as_in_fio() {
    let j = job_of(&fio_ok(
        "[global]\nsize=256m ; a quarter gig\ndirectory=/d\n[w]\nrw=write\nnumjobs=2\t; two writers\n\
         time_based\nruntime=30  # half a minute\n",
    ));
    let r = &j.runs[0];
    assert_eq!(r.threads, 2);
    assert_eq!(r.duration_s, 30.0);
}

#[test]
fn fio_aliases_are_their_options() {
    // timeout= is fio's other name for runtime=, nr_files= for nrfiles=.
    let j = job_of(&fio_ok(
        "[global]\nsize=64m\ndirectory=/d\ntime_based\ntimeout=45\nnr_files=3\n[r]\nrw=read\n",
    ));
    assert_eq!(j.runs[0].duration_s, 45.0);
    assert_eq!(j.runs[0].files, Some(3));
    // ratemin= is rate_min=: refused for what it is, not as an unknown option.
    let e = fio_err("[global]\nsize=1g\n[j]\nrw=read\ndirectory=/d\nratemin=1024\n");
    assert!(
        e.contains("line 6: ratemin=1024") && e.contains("minimum rate"),
        "{e}"
    );
}

#[test]
fn fio_zoned_zone_without_a_size_takes_what_the_others_leave() {
    let j = job_of(&fio_ok(
        "[z]\nsize=1g\ndirectory=/d\nrw=randread\ntime_based\nruntime=5\n\
         random_distribution=zoned:70/10:20/30:10/\n",
    ));
    assert_eq!(
        j.runs[0].shape.distribution,
        Distribution::Hot {
            zones: vec![
                HotZone {
                    io_pct: 70.0,
                    space_pct: 10.0
                },
                HotZone {
                    io_pct: 20.0,
                    space_pct: 30.0
                },
                HotZone {
                    io_pct: 10.0,
                    space_pct: 60.0
                },
            ]
        }
    );
    // fio splits the rest evenly, in whole percents, between such zones.
    let imp = fio_ok(
        "[z]\nsize=1g\ndirectory=/d\nrw=randread\ntime_based\nruntime=5\n\
         random_distribution=zoned:50/40:25/:25/\n",
    );
    assert!(
        render::suite_toml(&imp, "s.toml", "h.txt")
            .unwrap()
            .contains("hot:50/40,25/30,25/30")
    );
}

#[test]
fn fio_zoned_lists_fio_would_not_take_or_volbench_cannot_run_are_refused() {
    for (dist, why) in [
        // Separate zones for writes after a comma: volbench has one list.
        ("zoned:50/10:50/90,20/50:80/50", "reads and writes"),
        // Nothing left for the zone with no size.
        ("zoned:50/60:30/40:20/", "leave 0%"),
        ("sequence:1,0", "'sequence' distribution"),
    ] {
        let e = fio_err(&format!(
            "[z]\nsize=1g\ndirectory=/d\nrw=randread\nrandom_distribution={dist}\n"
        ));
        assert!(
            e.contains("line 5: random_distribution=") && e.contains(why),
            "{dist}: {e}"
        );
    }
}

#[test]
fn fio_global_refusal_is_named_once_for_all_its_jobs() {
    let e = fio_err(
        "[global]\nsize=1g\ndirectory=/d\nrw=read\nflow=2\n[a]\n[b]\nstonewall\n[c]\nstonewall\n",
    );
    assert_eq!(
        e.matches("line 5: flow: not supported yet").count(),
        1,
        "{e}"
    );
}
