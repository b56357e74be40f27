//! Parameter files written the way vdbench's own samples and its users
//! write them: keyword abbreviations, comments after a blank, lines joined
//! by a trailing comma, and an rd that leaves the thread count to the sd.

use super::*;

fn vdb(text: &str) -> Result<Imported> {
    let read = files(BTreeMap::new());
    vdbench::import_text(
        "p.vdb",
        text,
        &PathMap::default(),
        &vdbench::Sources { read: &read },
    )
}

fn runs(text: &str) -> Vec<crate::spec::RunSpec> {
    job_of(&vdb(text).unwrap_or_else(|e| panic!("{e}"))).runs
}

#[test]
fn vdbench_abbreviated_keywords_are_the_full_ones() {
    // xf= xfersize, th= threads, se= seekpct, el= elapsed, in= interval,
    // io= iorate, openflag= openflags, readpct= rdpct.
    let r = runs(
        "sd=s1,lun=/dev/sdq,openflag=o_direct,th=6\nwd=w1,sd=s1,xf=16k,readpct=25,se=0\n\
         rd=r1,wd=w1,io=max,el=40,in=2\n",
    );
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].threads, 6);
    assert_eq!(r[0].duration_s, 40.0);
    assert_eq!(r[0].read_pct, 25);
    assert_eq!(r[0].bs[0].bytes, 16 << 10);
    // writepct= is the other side of rdpct=.
    let r = runs(
        "sd=s1,lun=/dev/sdq,openflags=o_direct\nwd=w1,sd=s1,wrpct=80\nrd=r1,wd=w1,elapsed=5\n",
    );
    assert_eq!(r[0].read_pct, 20);
    // In an rd, xfersize= and rdpct= are for-loops: one run per value.
    let r = runs(
        "sd=s1,lun=/dev/sdq,openflags=o_direct\nwd=w1,sd=s1\n\
         rd=r1,wd=w1,elapsed=5,xfersize=(4k,64k),rdpct=(100,0),threads=2\n",
    );
    assert_eq!(r.len(), 4);
}

#[test]
fn vdbench_text_after_a_blank_and_hash_lines_are_comments() {
    let r = runs(
        "# made by hand\nsd=s1,lun=/dev/sdq,openflags=o_direct,threads=3   * the spare disk\n\
         wd=w1,sd=s1,xfersize=8k\trandom 8k reads\nrd=r1,wd=w1,elapsed=7 seven seconds\n\
         eof\nthis line is past the end and never read\n",
    );
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].duration_s, 7.0);
    assert_eq!(r[0].threads, 3);
}

#[test]
fn vdbench_a_trailing_comma_continues_the_definition() {
    // The second line of the wd starts with sd=: still the wd's own sd list,
    // not a new storage definition.
    let r = runs(
        "sd=s1,lun=/dev/sdq,\n   openflags=o_direct,threads=12\nwd=w1,\n  sd=s1,rdpct=0,\n  seekpct=0\n\
         rd=r1,wd=w1,\n  elapsed=9\n",
    );
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].threads, 12);
    assert_eq!(r[0].duration_s, 9.0);
    assert_eq!(r[0].read_pct, 0);
}

#[test]
fn vdbench_rd_without_threads_uses_the_sds_threads() {
    // No threads= anywhere: vdbench's sd default of 8.
    let r = runs("sd=s1,lun=/dev/sdq,openflags=o_direct\nwd=w1,sd=s1\nrd=r1,wd=w1,elapsed=5\n");
    assert_eq!(r[0].threads, 8);
    let r = runs(
        "sd=default,threads=24\nsd=s1,lun=/dev/sdq,openflags=o_direct\nwd=w1,sd=s1\nrd=r1,wd=w1,elapsed=5\n",
    );
    assert_eq!(r[0].threads, 24);
}

#[test]
fn vdbench_pause_zero_maps_and_a_real_pause_is_refused_by_name() {
    assert_eq!(
        runs("sd=s1,lun=/dev/sdq,openflags=o_direct\nwd=w1,sd=s1\nrd=r1,wd=w1,elapsed=5,pause=0\n")
            .len(),
        1
    );
    let e =
        vdb("sd=s1,lun=/dev/sdq,openflags=o_direct\nwd=w1,sd=s1\nrd=r1,wd=w1,elapsed=5,pause=30\n")
            .unwrap_err()
            .to_string();
    assert!(e.contains("p.vdb line 3: pause=30"), "{e}");
}
