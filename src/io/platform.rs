//! What the platform says about this machine without the network: the
//! socket buffer sysctls, and the cloud, VM size and region from DMI and
//! cloud-init's instance data. No metadata service is ever asked: the
//! network may be closed, and volbench contacts no address of its own.

use std::io::Read;

use crate::result::environment::{NetBuffers, Platform};
use crate::units::bounds::MAX_VM_SIZE_LEN;

/// Azure's DMI chassis asset tag, the same on every Azure VM.
const AZURE_ASSET_TAG: &str = "7783-7084-3265-9085-8269-3286-77";
/// cloud-init writes it at boot; world-readable, unlike the -sensitive one.
const INSTANCE_DATA: &str = "/run/cloud-init/instance-data.json";
/// Larger than any instance data seen (tens of KiB): more is not read.
const MAX_INSTANCE_DATA: u64 = 4 << 20;

/// The socket buffer limits, from /proc/sys.
pub(crate) fn net_buffers() -> NetBuffers {
    let read =
        |name: &str| std::fs::read_to_string(format!("/proc/sys/{}", name.replace('.', "/"))).ok();
    NetBuffers {
        rmem_max: read("net.core.rmem_max").and_then(|t| sysctl_number(&t)),
        wmem_max: read("net.core.wmem_max").and_then(|t| sysctl_number(&t)),
        rmem_default: read("net.core.rmem_default").and_then(|t| sysctl_number(&t)),
        wmem_default: read("net.core.wmem_default").and_then(|t| sysctl_number(&t)),
        tcp_rmem: read("net.ipv4.tcp_rmem").and_then(|t| sysctl_triple(&t)),
        tcp_wmem: read("net.ipv4.tcp_wmem").and_then(|t| sysctl_triple(&t)),
    }
}

/// "212992\n" -> 212992.
pub(crate) fn sysctl_number(text: &str) -> Option<u64> {
    text.trim().parse().ok()
}

/// "4096\t131072\t6291456\n" -> [4096, 131072, 6291456]: min, default, max.
pub(crate) fn sysctl_triple(text: &str) -> Option<[u64; 3]> {
    let v: Vec<u64> = text
        .split_whitespace()
        .map(|w| w.parse().ok())
        .collect::<Option<_>>()?;
    v.try_into().ok()
}

/// The DMI fields the platform is told apart by.
#[derive(Debug, Default)]
pub(crate) struct Dmi {
    pub(crate) sys_vendor: String,
    pub(crate) product_name: String,
    pub(crate) chassis_asset_tag: String,
}

/// This machine's platform: cloud-init's instance data where it says, DMI
/// for what it leaves out.
pub(crate) fn platform() -> Platform {
    let dmi_field = |f: &str| {
        std::fs::read_to_string(format!("/sys/class/dmi/id/{f}"))
            .map(|s| s.trim().to_string())
            .unwrap_or_default()
    };
    let dmi = Dmi {
        sys_vendor: dmi_field("sys_vendor"),
        product_name: dmi_field("product_name"),
        chassis_asset_tag: dmi_field("chassis_asset_tag"),
    };
    let instance = read_instance_data().map(|t| from_instance_data(&t));
    merge(instance.unwrap_or_default(), from_dmi(&dmi))
}

fn read_instance_data() -> Option<String> {
    let f = std::fs::File::open(INSTANCE_DATA).ok()?;
    if !f.metadata().ok()?.is_file() {
        return None;
    }
    let mut text = String::new();
    f.take(MAX_INSTANCE_DATA).read_to_string(&mut text).ok()?;
    Some(text)
}

/// The first source's values, the second's where the first has none.
pub(crate) fn merge(first: Platform, second: Platform) -> Platform {
    let source = match (&first.source, &second.source) {
        (Some(a), Some(b)) if first.vm_size.is_none() && second.vm_size.is_some() => {
            Some(format!("{a}, {b}"))
        }
        (a, b) => a.clone().or(b.clone()),
    };
    Platform {
        cloud: first.cloud.or(second.cloud),
        vm_size: first.vm_size.or(second.vm_size),
        region: first.region.or(second.region),
        source,
    }
}

/// A name as a table shows it: printable, no spaces, bounded like
/// `--vm-size`; anything else is dropped rather than recorded.
fn name(s: &str) -> Option<String> {
    let s = s.trim();
    let ok = !s.is_empty() && s.len() <= MAX_VM_SIZE_LEN && s.chars().all(|c| c.is_ascii_graphic());
    ok.then(|| s.to_string())
}

/// Azure by its asset tag, AWS by its vendor (Nitro puts the instance type
/// in product_name), Google by its product name. Azure's DMI names no size.
pub(crate) fn from_dmi(d: &Dmi) -> Platform {
    let (cloud, vm_size) = if d.chassis_asset_tag == AZURE_ASSET_TAG {
        ("azure", None)
    } else if d.sys_vendor == "Amazon EC2" {
        // "m6i.4xlarge"; Xen-era instances say "HVM domU" (not a size).
        let size = Some(d.product_name.as_str()).filter(|p| p.contains('.'));
        ("aws", size.and_then(name))
    } else if d.product_name == "Google Compute Engine" {
        ("gce", None)
    } else {
        return Platform::default();
    };
    Platform {
        cloud: Some(cloud.into()),
        vm_size,
        region: None,
        source: Some("dmi".into()),
    }
}

/// cloud-init's instance-data.json: its standard `v1` keys (`cloud_name`,
/// `region`, `instance_type` where a datasource fills it), else the
/// datasource's own (`ds.meta_data`: AWS's `instance-type`, Azure's
/// `imds.compute.vmSize` and `location`).
pub(crate) fn from_instance_data(text: &str) -> Platform {
    let Ok(v) = serde_json::from_str::<serde_json::Value>(text) else {
        return Platform::default();
    };
    let at = |path: &[&str]| {
        let mut x = &v;
        for p in path {
            x = x.get(p)?;
        }
        x.as_str().and_then(name)
    };
    let cloud = at(&["v1", "cloud_name"]).filter(|c| c != "unknown");
    let vm_size = at(&["v1", "instance_type"])
        .or_else(|| at(&["ds", "meta_data", "instance-type"]))
        .or_else(|| at(&["ds", "meta_data", "imds", "compute", "vmSize"]));
    let region =
        at(&["v1", "region"]).or_else(|| at(&["ds", "meta_data", "imds", "compute", "location"]));
    let found = cloud.is_some() || vm_size.is_some() || region.is_some();
    Platform {
        cloud,
        vm_size,
        region,
        source: found.then(|| "cloud-init".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysctl_text_is_read_as_the_kernel_prints_it() {
        assert_eq!(sysctl_number("212992\n"), Some(212992));
        assert_eq!(sysctl_number("x"), None);
        assert_eq!(
            sysctl_triple("4096\t131072\t6291456\n"),
            Some([4096, 131072, 6291456])
        );
        assert_eq!(sysctl_triple("4096 131072"), None);
        assert_eq!(sysctl_triple("4096 131072 6291456 1"), None);
        assert_eq!(sysctl_triple("4096 -1 6291456"), None);
    }

    #[test]
    fn dmi_names_azure_by_its_asset_tag_and_aws_by_its_instance_type() {
        let azure = from_dmi(&Dmi {
            sys_vendor: "Microsoft Corporation".into(),
            product_name: "Virtual Machine".into(),
            chassis_asset_tag: AZURE_ASSET_TAG.into(),
        });
        assert_eq!(azure.cloud.as_deref(), Some("azure"));
        assert_eq!(azure.vm_size, None, "Azure's DMI has no size");
        let aws = from_dmi(&Dmi {
            sys_vendor: "Amazon EC2".into(),
            product_name: "m6i.4xlarge".into(),
            chassis_asset_tag: "Amazon EC2".into(),
        });
        assert_eq!(aws.cloud.as_deref(), Some("aws"));
        assert_eq!(aws.vm_size.as_deref(), Some("m6i.4xlarge"));
        let old = from_dmi(&Dmi {
            sys_vendor: "Amazon EC2".into(),
            product_name: "HVM domU".into(),
            ..Dmi::default()
        });
        assert_eq!(old.vm_size, None);
        let qemu = from_dmi(&Dmi {
            sys_vendor: "QEMU".into(),
            product_name: "Standard PC (Q35 + ICH9, 2009)".into(),
            ..Dmi::default()
        });
        assert!(qemu.is_empty());
    }

    const AZURE_INSTANCE_DATA: &str = r#"{
      "ds": {"meta_data": {"imds": {"compute": {
        "location": "westeurope", "vmSize": "Standard_D16s_v5", "osType": "Linux"}}}},
      "v1": {"cloud_name": "azure", "region": "westeurope", "machine": "x86_64",
             "instance_id": "5e7c...", "availability_zone": "1"}
    }"#;

    #[test]
    fn cloud_init_gives_cloud_size_and_region() {
        let p = from_instance_data(AZURE_INSTANCE_DATA);
        assert_eq!(p.cloud.as_deref(), Some("azure"));
        assert_eq!(p.vm_size.as_deref(), Some("Standard_D16s_v5"));
        assert_eq!(p.region.as_deref(), Some("westeurope"));
        assert_eq!(p.source.as_deref(), Some("cloud-init"));
        let aws = from_instance_data(
            r#"{"v1": {"cloud_name": "aws", "region": "us-east-1"},
                "ds": {"meta_data": {"instance-type": "c6in.8xlarge"}}}"#,
        );
        assert_eq!(aws.vm_size.as_deref(), Some("c6in.8xlarge"));
        assert_eq!(aws.region.as_deref(), Some("us-east-1"));
        // `v1.instance_type` wins over the datasource's own key.
        let v1 = from_instance_data(
            r#"{"v1": {"instance_type": "n2-standard-8"},
                "ds": {"meta_data": {"instance-type": "other"}}}"#,
        );
        assert_eq!(v1.vm_size.as_deref(), Some("n2-standard-8"));
    }

    #[test]
    fn hostile_or_unknown_instance_data_records_nothing_it_cannot_show() {
        assert!(from_instance_data("not json").is_empty());
        assert!(from_instance_data("{}").is_empty());
        assert!(from_instance_data(r#"{"v1": {"cloud_name": "unknown"}}"#).is_empty());
        let p = from_instance_data(&format!(
            r#"{{"v1": {{"region": "a\u001b[31mb", "instance_type": "{}", "cloud_name": 7}}}}"#,
            "x".repeat(MAX_VM_SIZE_LEN + 1)
        ));
        assert!(p.is_empty(), "{p:?}");
    }

    #[test]
    fn cloud_init_wins_and_dmi_fills_the_gaps() {
        let ci = Platform {
            region: Some("westeurope".into()),
            source: Some("cloud-init".into()),
            ..Platform::default()
        };
        let dmi = Platform {
            cloud: Some("aws".into()),
            vm_size: Some("m6i.large".into()),
            source: Some("dmi".into()),
            region: None,
        };
        let m = merge(ci, dmi);
        assert_eq!(m.region.as_deref(), Some("westeurope"));
        assert_eq!(m.vm_size.as_deref(), Some("m6i.large"));
        assert_eq!(m.source.as_deref(), Some("cloud-init, dmi"));
        assert!(merge(Platform::default(), Platform::default()).is_empty());
    }
}
