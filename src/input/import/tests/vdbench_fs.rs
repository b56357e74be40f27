//! vdbench's fsd/fwd parameter sets (in the style of its file-system
//! examples) imported as a format phase and a timed mix over one tree.

use super::*;
use crate::spec::meta::MetaOp;

fn vdb(text: &str) -> Result<Imported> {
    let read = files(BTreeMap::new());
    vdbench::import_text(
        "fs.parm",
        text,
        &PathMap::default(),
        &vdbench::Sources { read: &read },
    )
}

#[test]
fn vdbench_fsd_fwd_become_a_format_phase_and_a_weighted_mix() {
    let imp = vdb(
        "fsd=tree,anchor=/mnt/fs,depth=2,width=4,files=50,size=16k,shared=yes\n\
         fwd=meta,fsd=tree,operation=getattr,threads=3,skew=70\n\
         fwd=data,fsd=tree,operation=read,xfersize=4k,threads=1\n\
         rd=run1,fwd=(meta,data),fwdrate=max,format=yes,elapsed=20,interval=2\n",
    )
    .unwrap();
    assert_eq!(imp.target, "/mnt/fs");
    let j = job_of(&imp);
    assert_eq!(j.runs.len(), 2);
    let fmt = j.runs[0].meta.as_ref().unwrap();
    assert_eq!(fmt.ops[0].op, MetaOp::Create);
    assert!(fmt.whole_tree);
    let r = &j.runs[1];
    let m = r.meta.as_ref().unwrap();
    assert_eq!((m.depth, m.width, m.files_per_dir), (2, 4, 50));
    assert_eq!(m.file_size[0].bytes, 16 << 10);
    assert!(m.shared_dirs);
    let w: Vec<(MetaOp, u32)> = m.ops.iter().map(|o| (o.op, o.weight)).collect();
    // The fwd without skew= takes what the other leaves.
    assert_eq!(w, vec![(MetaOp::Stat, 70), (MetaOp::Read, 30)]);
    assert_eq!(r.threads, 4);
    assert_eq!(r.duration_s, 20.0);
    // vdbench drops its first interval: that is the warm-up.
    assert_eq!(r.warmup_s, 2.0);
    assert_eq!(r.rate_iops, None);
    assert!(imp.printed().iter().any(|n| n.contains("xfersize=4k")));
}

#[test]
fn vdbench_fs_refuses_what_a_tree_cannot_do_by_name_and_line() {
    let e = vdb("fsd=f,anchor=/d,depth=1,width=2,files=3,size=(4k,50,64k,40)\nfwd=w,fsd=f,operation=read\nrd=r,fwd=w\n")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("fs.parm line 1: size=(4k,50,64k,40)") && e.contains("add up to 90"),
        "{e}"
    );
    let e = vdb("fsd=f,anchor=/d\nfwd=w,fsd=f,operation=copy\nrd=r,fwd=w\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("line 2: operation=copy"), "{e}");
    let e = vdb("sd=s,lun=/dev/sdb\nfsd=f,anchor=/d\nfwd=w,fsd=f,operation=read\nrd=r,fwd=w\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("sd=s") && e.contains("import them apart"), "{e}");
    let e = vdb("fsd=f,anchor=/d\nfwd=w,fsd=f,operation=read\nrd=r,fwd=w,format=clean\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("line 3: format=clean"), "{e}");
    // format=restart completes the tree: its create phase keeps what is complete.
    let imp =
        vdb("fsd=f,anchor=/d\nfwd=w,fsd=f,operation=read\nrd=r,fwd=w,format=restart\n").unwrap();
    let j = job_of(&imp);
    let m = j.runs[0].meta.as_ref().unwrap();
    assert_eq!(j.runs[0].name, "r-format-create");
    assert!(m.keep_complete && m.whole_tree, "{m:?}");
    assert!(!j.runs[1].meta.as_ref().unwrap().keep_complete);
    let e = vdb("fsd=f,anchor=/d\nfwd=w,fsd=f,operation=read\nrd=r,fwd=w,fwdrate=curve\n")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("line 3: fwdrate=curve: not supported yet"),
        "{e}"
    );
}

#[test]
fn vdbench_trees_and_luns_among_the_kernels_files_are_refused_by_name() {
    let e = vdb("fsd=f,anchor=/dev/vb,depth=1,width=2,files=3,size=4k\nfwd=w,fsd=f,operation=read\nrd=r,fwd=w\n")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("line 1: anchor=/dev/vb") && e.contains("kernel's files"),
        "{e}"
    );
    let e = vdb("sd=s,lun=/dev/null\nwd=w,sd=s\nrd=r,wd=w\n")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("lun=/dev/null") && e.contains("not a block device"),
        "{e}"
    );
}
