//! fio's data options (verify, buffer_compress_percentage,
//! dedupe_percentage) land in the suite's [defaults] and from there in the
//! job's data spec; the ones volbench cannot write are refused by name.

use super::*;

fn fio_data(opts: &str) -> JobSpec {
    job_of(&fio_ok(&format!(
        "[global]\nsize=1g\ndirectory=/d\ntime_based\nruntime=10\n[j]\nrw=randwrite\nbs=4k\n{opts}\n"
    )))
}

#[test]
fn fio_verify_and_compress_percentage_become_the_suites_data() {
    let j = fio_data("verify=md5\nverify_fatal=1\nbuffer_compress_percentage=50");
    assert!(j.target.data.verify);
    assert_eq!(j.target.data.compress, 2.0);
    let j = fio_data("verify=0\nbuffer_compress_percentage=0");
    assert!(!j.target.data.verify);
    assert_eq!(j.target.data.compress, 1.0);
}

#[test]
fn fio_dedupe_percentage_is_copies_of_each_unique_block() {
    // 75% identical blocks: 1 block in 4 is unique, so 4 copies of each.
    assert_eq!(fio_data("dedupe_percentage=75").target.data.dedup, 4);
    assert_eq!(fio_data("dedupe_percentage=0").target.data.dedup, 1);
}

#[test]
fn fio_data_options_volbench_cannot_write_are_refused_with_their_line() {
    for (opt, why) in [
        ("buffer_compress_percentage=95", "0 to 93.75"),
        ("buffer_compress_percentage=100", "0 to 93.75"),
        ("buffer_compress_percentage=x", "percentage"),
        ("dedupe_percentage=100", "below 100"),
        ("buffer_pattern=0xdeadbeef", "fixed buffer pattern"),
        ("zero_buffers", "fixed buffer pattern"),
        ("verify=pattern", "verify kind"),
        ("verify_only", "volbench verify"),
    ] {
        let e = fio_err(&format!(
            "[global]\nsize=1g\n[j]\nrw=randwrite\ndirectory=/d\n{opt}\n"
        ));
        assert!(
            e.contains("/jobs/job.fio line 6: ") && e.contains(opt) && e.contains(why),
            "{opt}: {e}"
        );
    }
}

#[test]
fn fio_jobs_with_different_data_are_refused() {
    let e = fio_err(
        "[global]\nsize=1g\ndirectory=/d\n[a]\nrw=randwrite\nverify=md5\n[b]\nstonewall\nrw=randread\n",
    );
    assert!(e.contains("its data (verify"), "{e}");
}

#[test]
fn suite_data_keys_are_bounded_like_the_flags_and_named_by_line() {
    let text = "name = \"x\"\ntable = \"patterns\"\n[defaults]\ncompress = 17\n\
                [[run]]\nname = \"r\"\nrw = \"randwrite\"\n";
    let s = suite::parse("s.toml", text).unwrap();
    let o = suite::Overrides::new("/d".into());
    let e = suite::to_job("s.toml", text, &s, &o)
        .unwrap_err()
        .to_string();
    assert!(e.contains("s.toml line 4") && e.contains("16"), "{e}");
}

fn vdbench_data(general: &str) -> Result<Imported> {
    let read = files(BTreeMap::new());
    vdbench::import_text(
        "p.vdb",
        &format!(
            "{general}\nsd=s1,lun=/dev/sdq,openflags=o_direct\nwd=w1,sd=s1,xfersize=4k,rdpct=70,seekpct=100\n\
             rd=r1,wd=w1,iorate=max,elapsed=10,interval=1,threads=4\n"
        ),
        &PathMap::default(),
        &vdbench::Sources { read: &read },
    )
}

#[test]
fn vdbench_data_parameters_become_the_suites_data() {
    let j = job_of(&vdbench_data("compratio=2,dedupratio=3,dedupunit=2k").unwrap());
    assert_eq!(j.target.data.compress, 2.0);
    assert_eq!(j.target.data.dedup, 3);
    assert_eq!(j.target.data.dedup_unit, 2048);
    let j = job_of(&vdbench_data("validate=yes").unwrap());
    assert!(j.target.data.verify);
    let j = job_of(&vdbench_data("validate=no").unwrap());
    assert!(!j.target.data.verify);
}

#[test]
fn vdbench_data_parameters_volbench_cannot_write_are_refused_by_line() {
    for (general, why) in [
        ("compratio=25", "ratio from 1 to 16"),
        ("dedupratio=0.5", "ratio from 1 to"),
        ("dedupunit=3k", "power of two"),
        ("validate=time", "only validate=yes or no"),
        ("journal=yes", "--verify --journal FILE"),
    ] {
        let e = vdbench_data(general).err().unwrap().to_string();
        assert!(
            e.contains("p.vdb line 1") && e.contains(why),
            "{general}: {e}"
        );
    }
}
