//! vdbench's skew=: an rd's wds as one workload, their hot zones or their
//! reads and sizes weighed by the skews, and what one workload cannot be.

use super::*;

#[test]
fn vdbench_skewed_hotband_workloads_run_as_one_with_hot_zones() {
    let read = files(BTreeMap::new());
    let src = vdbench::Sources { read: &read };
    // Bands with their share of the I/O, a workload over the whole lun the rest.
    let imp = vdbench::import_text(
        "p.txt",
        "sd=sd1,lun=/dev/sdb,size=10g\n\
         wd=default,sd=sd1,xfersize=8k,rdpct=70,seekpct=random\n\
         wd=hot1,skew=20,hotband=(10,12)\n\
         wd=hot2,skew=30,hotband=(50,60)\n\
         wd=rest\n\
         rd=r,wd=*,iorate=max,elapsed=10,threads=4\n",
        &PathMap::default(),
        &src,
    )
    .unwrap();
    let j = job_of(&imp);
    assert_eq!(j.runs.len(), 1, "one workload, not three");
    let r = &j.runs[0];
    assert_eq!((r.read_pct, r.bs[0].bytes, r.threads), (70, 8192, 4));
    assert_eq!(r.shape.distribution.label(), "hot:5/10,21/2,19/38,35/10");
    let text = render::suite_toml(&imp, "s.toml", "h").unwrap();
    assert!(
        text.contains("skew=/hotband= of wd=hot1+hot2+rest"),
        "{text}"
    );
    // Reads at 60% and writes at 40%, of one size: one workload, 60% reads.
    let two = |a: &str, b: &str| {
        vdbench::import_text(
            "p.txt",
            &format!(
                "sd=sd1,lun=/dev/sdb\nwd=a,sd=sd1,{a}\nwd=b,sd=sd1,{b}\nrd=r,wd=(a,b),iorate=1000,elapsed=10\n"
            ),
            &PathMap::default(),
            &src,
        )
    };
    let imp = two("rdpct=100,skew=60", "rdpct=0,skew=40").unwrap();
    let r = &job_of(&imp).runs[0];
    assert_eq!((r.read_pct, r.rate_iops), (60, Some(1000.0)));
    // Sizes per wd, reads alike: a size mix weighed by the skews (70% of
    // the I/O at 4k, 30% at 64k; wd b's own mix split its share).
    let imp = two(
        "rdpct=50,xfersize=4k,skew=70",
        "rdpct=50,xfersize=(4k,50,64k,50),skew=30",
    )
    .unwrap();
    let r = &job_of(&imp).runs[0];
    let mix: Vec<(u64, u32)> = r.bs.iter().map(|b| (b.bytes, b.weight)).collect();
    assert_eq!(mix, [(4096, 17), (65536, 3)], "85% 4k, 15% 64k");
    assert_eq!(r.read_pct, 50);
    let text = render::suite_toml(&imp, "s.toml", "h").unwrap();
    assert!(
        text.contains("each I/O drawn from the wds by their skews (a 70%, b 30%)"),
        "{text}"
    );
    // A wd without skew takes what the others leave; a fractional share is said.
    let imp = two("rdpct=75,skew=50", "rdpct=30").unwrap();
    assert_eq!(job_of(&imp).runs[0].read_pct, 53);
    assert!(imp.printed().iter().any(|n| n.contains("52.5% rounded")));
    // Reads of 4k beside writes of 64k: one size mix cannot keep them apart.
    let e = two(
        "rdpct=100,xfersize=4k,skew=60",
        "rdpct=0,xfersize=64k,skew=40",
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("p.txt line 4: wd=(a,b)")
            && e.contains("reads and writes have different transfer sizes"),
        "{e}"
    );
    // Anything else that differs stays refused by name.
    let e = two("seekpct=0,skew=60", "seekpct=100,skew=40")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("differ in more than skew=, rdpct= and xfersize="),
        "{e}"
    );
}
