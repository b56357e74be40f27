//! `--k8s-job N`: the hosts are the pods of a Kubernetes Indexed Job that
//! volbench makes, owns and deletes. kubectl cannot give one stdin to all
//! of a Job's pods, so the Job only holds its pods up (`sleep` until its
//! deadline) and each agent is then started by the usual per-host
//! `kubectl exec -i POD --`, bounded by `--launch-parallel`. Every cluster
//! action is a kubectl command run as an argument vector, no shell.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;

mod placement;
use crate::error::{Result, VbError};
use crate::input::hosts::spec::K8sSpec;
use crate::units::bounds::{
    K8S_DEADLINE_MARGIN, K8S_MIN_API, K8S_MIN_START, MAX_DURATION, MAX_K8S_IMAGE, MAX_K8S_NAME,
    MAX_K8S_PODS,
};
pub(crate) use placement::Placement;

/// The annotation Kubernetes puts on each pod of an Indexed Job.
const INDEX_ANNOTATION: &str = "batch.kubernetes.io/job-completion-index";
/// kubectl's output kept for an error line.
const ERR_CAP: u64 = 1 << 14;
/// Between two looks at the pods while the Job controller makes them.
const POLL: Duration = Duration::from_millis(500);

/// The Job of one run: what it is called, where, how many pods of what.
#[derive(Debug, Clone)]
pub(crate) struct K8sJob {
    pub(crate) name: String,
    pub(crate) pods: u32,
    pub(crate) image: String,
    pub(crate) namespace: Option<String>,
    /// `activeDeadlineSeconds`, and how long the holder sleeps.
    pub(crate) deadline_s: u64,
    /// `--k8s-volume`: a claim and where every pod mounts it.
    pub(crate) volume: Option<(String, String)>,
    /// For the pods to be made and Ready: --host-timeout, at least
    /// `K8S_MIN_START`.
    pub(crate) start: Duration,
    /// For one kubectl call to the API server (apply, get, delete):
    /// --host-timeout, at least `K8S_MIN_API`.
    pub(crate) api: Duration,
    pub(crate) placement: Placement,
}

/// An RFC 1123 label (what a namespace is): lowercase letters, digits and
/// '-', at most 63 characters, a letter or digit at each end.
fn check_label(flag: &str, s: &str) -> Result<()> {
    let ok = !s.is_empty()
        && s.len() <= MAX_K8S_NAME
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-');
    if ok {
        Ok(())
    } else {
        Err(VbError::input(format!(
            "{flag} '{}' is not a Kubernetes name: lowercase letters, digits and '-', \
             at most {MAX_K8S_NAME} characters, starting and ending with a letter or digit",
            crate::units::bounds::one_line(s)
        )))
    }
}

/// `CLAIM:PATH`: a claim's name (an RFC 1123 subdomain) and an absolute
/// mount path on one line.
fn parse_volume(s: &str) -> Result<(String, String)> {
    let bad = |why: &str| {
        VbError::input(format!(
            "--k8s-volume '{}': {why}",
            crate::units::bounds::one_line(s)
        ))
    };
    let (claim, path) = s.split_once(':').ok_or_else(|| bad("give CLAIM:PATH"))?;
    let claim_ok = !claim.is_empty()
        && claim.len() <= 253
        && claim
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
        && claim
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphanumeric())
        && claim
            .bytes()
            .last()
            .is_some_and(|b| b.is_ascii_alphanumeric());
    if !claim_ok {
        return Err(bad(
            "the claim is not a Kubernetes name (lowercase letters, digits, '-' and '.')",
        ));
    }
    if !path.starts_with('/') || path.len() > 4096 || path.chars().any(char::is_control) {
        return Err(bad("the mount path must be absolute, on one line"));
    }
    Ok((claim.to_string(), path.to_string()))
}

fn check_image(s: &str) -> Result<()> {
    if s.is_empty() || s.len() > MAX_K8S_IMAGE {
        return Err(VbError::input(format!(
            "--k8s-image must be 1 to {MAX_K8S_IMAGE} bytes"
        )));
    }
    // An image reference is one word; a leading '-' would read as an option.
    if s.starts_with('-') || s.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(VbError::input(format!(
            "--k8s-image '{}' is not an image reference (one word, not starting with '-')",
            crate::units::bounds::one_line(s)
        )));
    }
    Ok(())
}

impl K8sJob {
    /// The Job the input read (`K8sSpec`: its name, chosen there with its
    /// hosts; its pods, image, namespace, volume and placement), for runs
    /// lasting `runs_s` seconds in all; `timeout` is --host-timeout (the
    /// pods' start, the API calls).
    pub(crate) fn new(k: &K8sSpec, runs_s: f64, timeout: Duration) -> Result<Self> {
        let (name, pods, image) = (k.name.as_str(), k.pods, k.image.as_str());
        let namespace = k.namespace.as_deref();
        let placement =
            Placement::parse(k.requests.as_deref(), k.limits.as_deref(), k.one_per_node)?;
        let volume = k.volume.as_deref();
        if !(1..=MAX_K8S_PODS).contains(&pods) {
            return Err(VbError::input(format!(
                "--k8s-job {pods}: a Job has 1 to {MAX_K8S_PODS} pods"
            )));
        }
        check_image(image)?;
        if let Some(ns) = namespace {
            check_label("--k8s-namespace", ns)?;
        }
        let volume = volume.map(parse_volume).transpose()?;
        // The runs' own time (bounded by their durations), the start, and
        // the stated margin for what has no bound (fills, gathering).
        let runs = if runs_s.is_finite() && runs_s > 0.0 {
            runs_s.ceil() as u64
        } else {
            0
        };
        let start = timeout.max(K8S_MIN_START);
        let deadline_s = runs
            .saturating_add(start.as_secs() + timeout.as_secs())
            .saturating_add(K8S_DEADLINE_MARGIN.as_secs())
            .min(MAX_DURATION.as_secs());
        Ok(K8sJob {
            name: name.to_string(),
            pods: pods as u32,
            image: image.to_string(),
            namespace: namespace.map(str::to_string),
            deadline_s,
            volume,
            start,
            api: timeout.max(K8S_MIN_API),
            placement,
        })
    }

    /// The Indexed Job: one pod per agent, none restarted (a lost pod is a
    /// lost host), each holding its container up with `sleep` until the
    /// deadline, after which Kubernetes ends them whatever became of us;
    /// with its resources, and one pod per node unless told otherwise.
    pub(crate) fn manifest(&self) -> serde_json::Value {
        let labels = json!({"app.kubernetes.io/name": "volbench", "volbench/job": self.name});
        let mut meta = serde_json::Map::new();
        meta.insert("name".into(), json!(self.name));
        meta.insert("labels".into(), labels.clone());
        if let Some(ns) = &self.namespace {
            meta.insert("namespace".into(), json!(ns));
        }
        let mut container = serde_json::Map::new();
        container.insert("name".into(), json!("volbench"));
        container.insert("image".into(), json!(self.image));
        container.insert(
            "command".into(),
            json!(["sleep", self.deadline_s.to_string()]),
        );
        container.insert("resources".into(), self.placement.resources());
        let mut pod = serde_json::Map::new();
        if let Some(a) = self.placement.affinity(&self.name) {
            pod.insert("affinity".into(), a);
        }
        pod.insert("restartPolicy".into(), json!("Never"));
        // sleep as PID 1 ignores SIGTERM: no 30 s wait on delete.
        pod.insert("terminationGracePeriodSeconds".into(), json!(5));
        if let Some((claim, path)) = &self.volume {
            container.insert(
                "volumeMounts".into(),
                json!([{"name": "data", "mountPath": path}]),
            );
            pod.insert(
                "volumes".into(),
                json!([{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]),
            );
        }
        pod.insert("containers".into(), json!([container]));
        json!({
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": meta,
            "spec": {
                "completionMode": "Indexed",
                "completions": self.pods,
                "parallelism": self.pods,
                "backoffLimit": 0,
                "activeDeadlineSeconds": self.deadline_s,
                "template": {
                    "metadata": {"labels": labels},
                    "spec": pod,
                },
            },
        })
    }

    /// `kubectl [-n NS] WORDS...`.
    fn kubectl(&self, words: &[&str]) -> Vec<String> {
        let mut v = vec!["kubectl".to_string()];
        if let Some(ns) = &self.namespace {
            v.extend(["-n".to_string(), ns.clone()]);
        }
        v.extend(words.iter().map(|w| w.to_string()));
        v
    }

    pub(crate) fn apply_argv(&self) -> Vec<String> {
        self.kubectl(&["apply", "-f", "-"])
    }

    fn selector(&self) -> String {
        format!("job-name={}", self.name)
    }

    pub(crate) fn list_argv(&self) -> Vec<String> {
        let path = format!(
            "jsonpath={{range .items[*]}}{{.metadata.name}}{{\" \"}}{{.metadata.annotations.{}}}{{\"\\n\"}}{{end}}",
            INDEX_ANNOTATION.replace('.', "\\.")
        );
        self.kubectl(&["get", "pods", "-l", &self.selector(), "-o", &path])
    }

    pub(crate) fn wait_argv(&self, timeout: Duration) -> Vec<String> {
        self.kubectl(&[
            "wait",
            "--for=condition=Ready",
            "pod",
            "-l",
            &self.selector(),
            &format!("--timeout={}s", timeout.as_secs()),
        ])
    }

    /// Background propagation: the pods go with the Job, and we do not wait.
    pub(crate) fn delete_argv(&self) -> Vec<String> {
        self.kubectl(&[
            "delete",
            "job",
            &self.name,
            "--cascade=background",
            "--wait=false",
            "--ignore-not-found",
        ])
    }

    /// The launcher template that reaches one pod.
    pub(crate) fn launcher(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("kubectl exec -i -n {ns} {{host}} --"),
            None => "kubectl exec -i {host} --".into(),
        }
    }

    /// Applies the Job (within `self.api`), waits for its pods to be Ready
    /// and returns their names in index order, all within `self.start`; a
    /// failure is one line naming the step and what kubectl said.
    pub(crate) fn start(&self) -> Result<Vec<String>> {
        let timeout = self.start;
        let end = Instant::now() + timeout;
        let manifest = self.manifest().to_string();
        kubectl_run("apply", &self.apply_argv(), manifest.as_bytes(), self.api)?;
        // `kubectl wait -l` fails at once on no pods: the Job controller
        // makes them a moment after the apply, so first see them all.
        let pods = loop {
            let left = end.saturating_duration_since(Instant::now());
            let out = kubectl_run("get pods", &self.list_argv(), b"", left.max(POLL))?;
            let pods = pods_in_order(&out, self.pods)?;
            if let Some(p) = pods {
                break p;
            }
            if Instant::now() >= end {
                return Err(VbError::target(format!(
                    "Kubernetes Job {}: its {} pods were not all made within {}s",
                    self.name,
                    self.pods,
                    timeout.as_secs()
                )));
            }
            std::thread::sleep(POLL);
        };
        let left = end.saturating_duration_since(Instant::now()).max(POLL);
        kubectl_run("wait", &self.wait_argv(left), b"", left + POLL * 4).map_err(|e| {
            if self.placement.one_per_node && self.pods > 1 {
                VbError::target(format!(
                    "{e} (one pod per node: the cluster needs {} nodes that can take one; \
                     --k8s-one-per-node off lets pods share a node)",
                    self.pods
                ))
            } else {
                e
            }
        })?;
        Ok(pods)
    }

    pub(crate) fn delete(&self, timeout: Duration) -> Result<()> {
        kubectl_run("delete", &self.delete_argv(), b"", timeout).map(|_| ())
    }
}

/// `NAME INDEX` lines into the names in index order; None while fewer
/// than `n` distinct indexes are listed (the pods are still being made).
pub(crate) fn pods_in_order(text: &str, n: u32) -> Result<Option<Vec<String>>> {
    let mut slots: Vec<Option<String>> = vec![None; n as usize];
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let bad = || {
            VbError::target(format!(
                "kubectl get pods printed '{}', not a pod and its completion index",
                crate::units::bounds::one_line(line)
            ))
        };
        let (name, index) = line.split_once(' ').ok_or_else(bad)?;
        let index: usize = index.trim().parse().map_err(|_| bad())?;
        crate::input::hosts::check_host_name(name)?;
        match slots.get_mut(index) {
            Some(slot) => *slot = Some(name.to_string()),
            None => return Err(bad()),
        }
    }
    Ok(slots.into_iter().collect())
}

/// Runs one kubectl command with `input` on its stdin; its stdout, or an
/// error naming the step and kubectl's message.
fn kubectl_run(step: &str, argv: &[String], input: &[u8], timeout: Duration) -> Result<String> {
    let fail = |msg: String| VbError::target(format!("kubectl {step}: {msg}"));
    let (program, args) = argv
        .split_first()
        .ok_or_else(|| fail("no command".into()))?;
    let mut c = Command::new(program);
    c.args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // Its own process group, which goes whole at the deadline: kubectl's
    // credential plugin (or a wrapper's children) holding its pipes would
    // otherwise outlive it and hold us.
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut c, 0);
    let child = c
        .spawn()
        .map_err(|e| fail(format!("cannot run '{program}': {e}")))?;
    let done = crate::io::child::finish(
        child,
        input,
        crate::units::bounds::MAX_INPUT_FILE,
        ERR_CAP,
        timeout,
    );
    let err = crate::remote::protocol::sanitize(String::from_utf8_lossy(&done.stderr).trim(), 2000);
    match done.status {
        Some(st) if st.success() => Ok(String::from_utf8_lossy(&done.stdout).into_owned()),
        Some(st) => Err(fail(if err.is_empty() {
            format!("failed ({st})")
        } else {
            format!("failed ({st}): {err}")
        })),
        None => Err(fail(format!("no answer within {}s", timeout.as_secs()))),
    }
}

/// The Job while it may exist: deleted once, by whichever comes first of
/// the end of the run (this dropped, on success or error) and a stop's
/// exit (`Owned::deleter`, for the path that ends the process).
pub(crate) struct Owned(Arc<Mutex<Option<K8sJob>>>);

impl Owned {
    pub(crate) fn new(job: K8sJob) -> Self {
        Owned(Arc::new(Mutex::new(Some(job))))
    }

    /// A deleter for the process's way out after a stop.
    pub(crate) fn deleter(&self) -> impl FnOnce() + Send + 'static {
        let me = Owned(self.0.clone());
        move || drop(me)
    }
}

impl Drop for Owned {
    fn drop(&mut self) {
        let job = self.0.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(job) = job {
            match job.delete(job.api) {
                Ok(()) => crate::console::errln!("volbench: Kubernetes Job {} deleted", job.name),
                Err(e) => crate::console::errln!(
                    "volbench: warning: Kubernetes Job {} may still exist ({e}); \
                     it ends by itself after {}s",
                    job.name,
                    job.deadline_s
                ),
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    /// A `--k8s-job` as the input reads it, placement by default.
    fn spec(pods: usize, image: &str, ns: Option<&str>, volume: Option<&str>) -> K8sSpec {
        K8sSpec {
            name: "volbench-1-1".into(),
            pods,
            image: image.into(),
            namespace: ns.map(str::to_string),
            volume: volume.map(str::to_string),
            requests: None,
            limits: None,
            one_per_node: true,
        }
    }

    fn job(ns: Option<&str>) -> K8sJob {
        let k = spec(3, "reg.example/vb:1", ns, Some("scratch-rwx:/data"));
        K8sJob::new(&k, 90.5, Duration::from_secs(60)).unwrap()
    }

    #[test]
    fn the_manifest_is_an_indexed_job_with_a_deadline() {
        let j = job(Some("bench"));
        let m = j.manifest();
        assert_eq!(m["spec"]["completionMode"], "Indexed");
        assert_eq!(m["spec"]["completions"], 3);
        assert_eq!(m["spec"]["parallelism"], 3);
        assert_eq!(m["spec"]["backoffLimit"], 0);
        assert_eq!(m["metadata"]["namespace"], "bench");
        // 91 s of runs, the pods' 120 s start, the 60 s host timeout, the
        // hour's margin.
        assert_eq!(j.start, K8S_MIN_START);
        assert_eq!(j.deadline_s, 91 + 120 + 60 + 3600);
        assert_eq!(m["spec"]["activeDeadlineSeconds"], j.deadline_s);
        let pod = &m["spec"]["template"]["spec"];
        assert_eq!(pod["restartPolicy"], "Never");
        assert_eq!(pod["containers"][0]["command"][1], j.deadline_s.to_string());
        assert!(j.name.starts_with("volbench-"));
        assert_eq!(
            pod["volumes"][0]["persistentVolumeClaim"]["claimName"],
            "scratch-rwx"
        );
        assert_eq!(
            pod["containers"][0]["volumeMounts"][0]["mountPath"],
            "/data"
        );
        // Resources and one pod per node (placement.rs), in the manifest.
        assert_eq!(pod["containers"][0]["resources"]["limits"]["memory"], "8Gi");
        assert_eq!(
            pod["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]
                ["labelSelector"]["matchLabels"]["volbench/job"],
            j.name.as_str()
        );
        assert_eq!(j.api, K8S_MIN_API.max(Duration::from_secs(60)));
        assert_eq!(j.launcher(), "kubectl exec -i -n bench {host} --");
        assert_eq!(j.apply_argv()[..3], ["kubectl", "-n", "bench"]);
        assert!(j.delete_argv().contains(&"--wait=false".to_string()));
    }

    #[test]
    fn bad_pods_images_and_namespaces_are_refused() {
        let t = Duration::from_secs(60);
        assert!(K8sJob::new(&spec(0, "i", None, None), 1.0, t).is_err());
        assert!(K8sJob::new(&spec(MAX_K8S_PODS + 1, "i", None, None), 1.0, t).is_err());
        assert!(K8sJob::new(&spec(1, "", None, None), 1.0, t).is_err());
        assert!(K8sJob::new(&spec(1, "-x", None, None), 1.0, t).is_err());
        assert!(K8sJob::new(&spec(1, "a b", None, None), 1.0, t).is_err());
        for ns in ["Bench", "-a", "a_b", "", &"a".repeat(64)] {
            let e = K8sJob::new(&spec(1, "i", Some(ns), None), 1.0, t).unwrap_err();
            assert_eq!(e.kind, crate::error::Kind::Input, "{ns}");
        }
        for v in ["data", ":/d", "Claim:/d", "c:rel", "c:/a\nb"] {
            let e = K8sJob::new(&spec(1, "i", None, Some(v)), 1.0, t).unwrap_err();
            assert!(e.to_string().contains("--k8s-volume"), "{v}: {e}");
        }
        // A run of 30 days at most: the deadline stays within the bound.
        let long = K8sJob::new(&spec(1, "i", None, None), 1e12, t).unwrap();
        assert_eq!(long.deadline_s, MAX_DURATION.as_secs());
    }

    #[test]
    fn pods_come_in_index_order_once_all_are_listed() {
        let all = pods_in_order("vb-x-2-abc 2\nvb-x-0-def 0\nvb-x-1-ghi 1\n", 3).unwrap();
        assert_eq!(all.unwrap(), ["vb-x-0-def", "vb-x-1-ghi", "vb-x-2-abc"]);
        assert_eq!(pods_in_order("vb-x-0-def 0\n", 3).unwrap(), None);
        assert!(pods_in_order("vb-x-0-def 7\n", 3).is_err());
        assert!(pods_in_order("vb-x-0-def\n", 3).is_err());
        assert!(pods_in_order("-oProxy 0\n", 1).is_err());
    }
}
