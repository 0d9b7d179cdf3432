//! PodSecurity (k8s.io/pod-security-admission): the Pod Security Standards
//! levels `privileged`, `baseline` and `restricted`, chosen per namespace
//! by the labels `pod-security.kubernetes.io/{enforce,audit,warn}` (and
//! `-version`, `latest` by default). `enforce` refuses pods; `warn`
//! (which defaults to a stricter `enforce`) answers warnings for pods and
//! for the pod templates of workload resources; `audit` would annotate audit events (kapi has no audit log,
//! so it is parsed and otherwise ignored). The checks, their IDs, order,
//! versions and messages are upstream's `policy/check_*.go`; the default
//! policy is `privileged:latest` for every mode and nothing is exempt, as
//! kube-apiserver's default configuration.

use std::collections::{BTreeSet, HashMap};
use std::fmt;

use serde_json::{Map, Value};

use super::common::{self, forbidden_for};
use super::{Attributes, Context, Operation, ValidatingPlugin};
use crate::api::ApiError;
use crate::registry::validation::FieldError;

pub const ENFORCE_LEVEL_LABEL: &str = "pod-security.kubernetes.io/enforce";
pub const ENFORCE_VERSION_LABEL: &str = "pod-security.kubernetes.io/enforce-version";
pub const AUDIT_LEVEL_LABEL: &str = "pod-security.kubernetes.io/audit";
pub const AUDIT_VERSION_LABEL: &str = "pod-security.kubernetes.io/audit-version";
pub const WARN_LEVEL_LABEL: &str = "pod-security.kubernetes.io/warn";
pub const WARN_VERSION_LABEL: &str = "pod-security.kubernetes.io/warn-version";

/// The newest policy version any check has (`hostProbesAndHostLifecycle`,
/// 1.34): `latest` and newer versions evaluate as this one.
const MAX_MINOR: u32 = 34;

/// How many existing pods a namespace update checks (upstream's default).
const NAMESPACE_MAX_PODS_TO_CHECK: usize = 3000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Level {
    Privileged,
    Baseline,
    Restricted,
}

impl Level {
    pub fn parse(s: &str) -> Result<Level, String> {
        match s {
            "privileged" => Ok(Level::Privileged),
            "baseline" => Ok(Level::Baseline),
            "restricted" => Ok(Level::Restricted),
            _ => Err("must be one of privileged, baseline, restricted".into()),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Level::Privileged => "privileged",
            Level::Baseline => "baseline",
            Level::Restricted => "restricted",
        }
    }
}

/// A policy version: `None` is `latest`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Version(pub Option<u32>);

impl Version {
    pub const LATEST: Version = Version(None);

    pub fn parse(s: &str) -> Result<Version, String> {
        if s == "latest" {
            return Ok(Version::LATEST);
        }
        let err = || r#"must be "latest" or "v1.x""#.to_string();
        let minor = s.strip_prefix("v1.").ok_or_else(err)?;
        let valid = !minor.is_empty()
            && minor.bytes().all(|b| b.is_ascii_digit())
            && (minor == "0" || !minor.starts_with('0'));
        if !valid {
            return Err(err());
        }
        minor.parse().map(|m| Version(Some(m))).map_err(|_| err())
    }

    /// The minor version the checks are evaluated at.
    fn minor(self) -> u32 {
        self.0.map_or(MAX_MINOR, |m| m.min(MAX_MINOR))
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            None => f.write_str("latest"),
            Some(m) => write!(f, "v1.{m}"),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LevelVersion {
    pub level: Level,
    pub version: Version,
}

impl fmt::Display for LevelVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.level.as_str(), self.version)
    }
}

const PRIVILEGED_LATEST: LevelVersion = LevelVersion {
    level: Level::Privileged,
    version: Version::LATEST,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policy {
    pub enforce: LevelVersion,
    pub audit: LevelVersion,
    pub warn: LevelVersion,
}

impl Policy {
    pub const DEFAULT: Policy = Policy {
        enforce: PRIVILEGED_LATEST,
        audit: PRIVILEGED_LATEST,
        warn: PRIVILEGED_LATEST,
    };

    fn fully_privileged(&self) -> bool {
        [self.enforce, self.audit, self.warn]
            .iter()
            .all(|lv| lv.level == Level::Privileged)
    }
}

/// upstream's `api.PolicyToEvaluate`: the namespace's labels over the
/// defaults; a bad level enforces `restricted` (audit and warn fail open),
/// a bad version means `latest`. Also returns the label errors.
pub fn policy_to_evaluate(labels: &Map<String, Value>) -> (Policy, Vec<FieldError>) {
    let mut p = Policy::DEFAULT;
    let mut errs = Vec::new();
    let mut err = |label: &str, value: &str, e: String| {
        errs.push(FieldError::invalid(
            format!("metadata.labels[{label}]"),
            Value::String(value.to_string()),
            e,
        ))
    };
    let get = |k: &str| labels.get(k).map(|v| v.as_str().unwrap_or(""));
    let mut has_enforce_level = false;
    if let Some(l) = get(ENFORCE_LEVEL_LABEL) {
        p.enforce.level = Level::parse(l).unwrap_or_else(|e| {
            err(ENFORCE_LEVEL_LABEL, l, e);
            Level::Restricted
        });
        has_enforce_level = Level::parse(l).is_ok();
    }
    if let Some(v) = get(ENFORCE_VERSION_LABEL) {
        p.enforce.version = Version::parse(v).unwrap_or_else(|e| {
            err(ENFORCE_VERSION_LABEL, v, e);
            Version::LATEST
        });
    }
    if let Some(l) = get(AUDIT_LEVEL_LABEL) {
        p.audit.level = Level::parse(l).unwrap_or_else(|e| {
            err(AUDIT_LEVEL_LABEL, l, e);
            Level::Privileged
        });
    }
    if let Some(v) = get(AUDIT_VERSION_LABEL) {
        p.audit.version = Version::parse(v).unwrap_or_else(|e| {
            err(AUDIT_VERSION_LABEL, v, e);
            Version::LATEST
        });
    }
    if let Some(l) = get(WARN_LEVEL_LABEL) {
        p.warn.level = Level::parse(l).unwrap_or_else(|e| {
            err(WARN_LEVEL_LABEL, l, e);
            Level::Privileged
        });
    }
    if let Some(v) = get(WARN_VERSION_LABEL) {
        p.warn.version = Version::parse(v).unwrap_or_else(|e| {
            err(WARN_VERSION_LABEL, v, e);
            Version::LATEST
        });
    }
    // warn defaults to a stricter (valid) enforce level, and then to its
    // version unless one is given (kubernetes#113491, 1.26).
    if get(WARN_LEVEL_LABEL).is_none() && has_enforce_level && p.enforce.level > p.warn.level {
        p.warn.level = p.enforce.level;
        if get(WARN_VERSION_LABEL).is_none() {
            p.warn.version = p.enforce.version;
        }
    }
    (p, errs)
}

// ---- the checks ----

/// A failed check: upstream's ForbiddenReason and ForbiddenDetail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub reason: String,
    pub detail: String,
}

fn violation(reason: impl Into<String>, detail: impl Into<String>) -> Option<Violation> {
    Some(Violation {
        reason: reason.into(),
        detail: detail.into(),
    })
}

type CheckFn = fn(&Value, &Value, u32) -> Option<Violation>;

struct Check {
    id: &'static str,
    level: Level,
    /// The first policy minor version the check exists in.
    since: u32,
    /// Baseline checks this restricted check replaces at restricted level.
    overrides: &'static [&'static str],
    run: CheckFn,
}

const CHECKS: &[Check] = &[
    Check {
        id: "allowPrivilegeEscalation",
        level: Level::Restricted,
        since: 8,
        overrides: &[],
        run: allow_privilege_escalation,
    },
    Check {
        id: "appArmorProfile",
        level: Level::Baseline,
        since: 0,
        overrides: &[],
        run: app_armor_profile,
    },
    Check {
        id: "capabilities_baseline",
        level: Level::Baseline,
        since: 0,
        overrides: &[],
        run: capabilities_baseline,
    },
    Check {
        id: "capabilities_restricted",
        level: Level::Restricted,
        since: 22,
        overrides: &["capabilities_baseline"],
        run: capabilities_restricted,
    },
    Check {
        id: "hostNamespaces",
        level: Level::Baseline,
        since: 0,
        overrides: &[],
        run: host_namespaces,
    },
    Check {
        id: "hostPathVolumes",
        level: Level::Baseline,
        since: 0,
        overrides: &[],
        run: host_path_volumes,
    },
    Check {
        id: "hostPorts",
        level: Level::Baseline,
        since: 0,
        overrides: &[],
        run: host_ports,
    },
    Check {
        id: "hostProbesAndHostLifecycle",
        level: Level::Baseline,
        since: 34,
        overrides: &[],
        run: host_probes_and_lifecycle,
    },
    Check {
        id: "privileged",
        level: Level::Baseline,
        since: 0,
        overrides: &[],
        run: privileged,
    },
    Check {
        id: "procMount",
        level: Level::Baseline,
        since: 0,
        overrides: &[],
        run: proc_mount,
    },
    Check {
        id: "restrictedVolumes",
        level: Level::Restricted,
        since: 0,
        overrides: &["hostPathVolumes"],
        run: restricted_volumes,
    },
    Check {
        id: "runAsNonRoot",
        level: Level::Restricted,
        since: 0,
        overrides: &[],
        run: run_as_non_root,
    },
    Check {
        id: "runAsUser",
        level: Level::Restricted,
        since: 23,
        overrides: &[],
        run: run_as_user,
    },
    Check {
        id: "seLinuxOptions",
        level: Level::Baseline,
        since: 0,
        overrides: &[],
        run: se_linux_options,
    },
    Check {
        id: "seccompProfile_baseline",
        level: Level::Baseline,
        since: 0,
        overrides: &[],
        run: seccomp_profile_baseline,
    },
    Check {
        id: "seccompProfile_restricted",
        level: Level::Restricted,
        since: 19,
        overrides: &["seccompProfile_baseline"],
        run: seccomp_profile_restricted,
    },
    Check {
        id: "sysctls",
        level: Level::Baseline,
        since: 0,
        overrides: &[],
        run: sysctls,
    },
    Check {
        id: "windowsHostProcess",
        level: Level::Baseline,
        since: 0,
        overrides: &[],
        run: windows_host_process,
    },
];

/// upstream's `EvaluatePod`: the failed checks of a level and version, in
/// upstream's order (baseline checks by ID, then restricted ones by ID).
pub fn evaluate(lv: LevelVersion, meta: &Value, spec: &Value) -> Vec<Violation> {
    if lv.level == Level::Privileged {
        return Vec::new();
    }
    let minor = lv.version.minor();
    let applies = |c: &&Check| c.since <= minor;
    let mut baseline: Vec<&Check> = CHECKS
        .iter()
        .filter(|c| c.level == Level::Baseline)
        .filter(applies)
        .collect();
    let mut restricted: Vec<&Check> = CHECKS
        .iter()
        .filter(|c| c.level == Level::Restricted)
        .filter(applies)
        .collect();
    baseline.sort_by_key(|c| c.id);
    restricted.sort_by_key(|c| c.id);
    let checks: Vec<&Check> = if lv.level == Level::Baseline {
        baseline
    } else {
        let overridden: BTreeSet<&str> = restricted
            .iter()
            .flat_map(|c| c.overrides.iter().copied())
            .collect();
        baseline
            .into_iter()
            .filter(|c| !overridden.contains(c.id))
            .chain(restricted)
            .collect()
    };
    checks
        .iter()
        .filter_map(|c| (c.run)(meta, spec, minor))
        .collect()
}

/// upstream's `AggregateCheckResult.ForbiddenDetail()`.
pub fn forbidden_detail(vs: &[Violation]) -> String {
    vs.iter()
        .map(|v| {
            if v.detail.is_empty() {
                v.reason.clone()
            } else {
                format!("{} ({})", v.reason, v.detail)
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// upstream's `AggregateCheckResult.ForbiddenReason()`.
fn forbidden_reason(vs: &[Violation]) -> String {
    vs.iter()
        .map(|v| v.reason.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

fn pluralize<'a>(singular: &'a str, plural: &'a str, n: usize) -> &'a str {
    if n == 1 {
        singular
    } else {
        plural
    }
}

fn join_quote<S: AsRef<str>>(items: impl IntoIterator<Item = S>) -> String {
    let v: Vec<String> = items
        .into_iter()
        .map(|s| format!("\"{}\"", s.as_ref()))
        .collect();
    v.join(", ")
}

/// `container(s) "a", "b"`.
fn containers_phrase(names: &[String]) -> String {
    format!(
        "{} {}",
        pluralize("container", "containers", names.len()),
        join_quote(names)
    )
}

/// upstream's `visitContainers`: init containers, containers, ephemeral containers.
fn all_containers(spec: &Value) -> impl Iterator<Item = &Value> {
    ["initContainers", "containers", "ephemeralContainers"]
        .into_iter()
        .flat_map(move |k| common::items(spec, k))
}

fn cname(c: &Value) -> String {
    c["name"].as_str().unwrap_or("").to_string()
}

fn is_windows(spec: &Value) -> bool {
    spec["os"]["name"].as_str() == Some("windows")
}

fn annotations(meta: &Value) -> impl Iterator<Item = (&String, &str)> {
    meta["annotations"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| (k, v.as_str().unwrap_or("")))
}

fn allow_privilege_escalation(_: &Value, spec: &Value, minor: u32) -> Option<Violation> {
    if minor >= 25 && is_windows(spec) {
        return None;
    }
    let bad: Vec<String> = all_containers(spec)
        .filter(|c| c["securityContext"]["allowPrivilegeEscalation"].as_bool() != Some(false))
        .map(cname)
        .collect();
    if bad.is_empty() {
        return None;
    }
    violation(
        "allowPrivilegeEscalation != false",
        format!(
            "{} must set securityContext.allowPrivilegeEscalation=false",
            containers_phrase(&bad)
        ),
    )
}

fn app_armor_profile(meta: &Value, spec: &Value, _: u32) -> Option<Violation> {
    let allowed_type = |t: &Value| matches!(t.as_str(), Some("RuntimeDefault" | "Localhost"));
    let mut setters: Vec<String> = Vec::new();
    let mut values: BTreeSet<String> = BTreeSet::new();
    let pod_profile = &spec["securityContext"]["appArmorProfile"];
    if pod_profile.is_object() && !allowed_type(&pod_profile["type"]) {
        setters.push("pod".into());
        values.insert(pod_profile["type"].as_str().unwrap_or("").to_string());
    }
    let mut bad = Vec::new();
    for c in all_containers(spec) {
        let p = &c["securityContext"]["appArmorProfile"];
        if p.is_object() && !allowed_type(&p["type"]) {
            bad.push(cname(c));
            values.insert(p["type"].as_str().unwrap_or("").to_string());
        }
    }
    if !bad.is_empty() {
        setters.push(containers_phrase(&bad));
    }
    let mut forbidden_annotations: Vec<String> = annotations(meta)
        .filter(|(k, v)| {
            k.starts_with("container.apparmor.security.beta.kubernetes.io/")
                && !(v.is_empty() || *v == "runtime/default" || v.starts_with("localhost/"))
        })
        .map(|(k, v)| format!("{k}={v:?}"))
        .collect();
    let mut list: Vec<String> = values.into_iter().collect();
    if !forbidden_annotations.is_empty() {
        forbidden_annotations.sort();
        setters.push(pluralize("annotation", "annotations", forbidden_annotations.len()).into());
        list.extend(forbidden_annotations);
    }
    if setters.is_empty() {
        return None;
    }
    violation(
        pluralize(
            "forbidden AppArmor profile",
            "forbidden AppArmor profiles",
            list.len(),
        ),
        format!(
            "{} must not set AppArmor profile type to {}",
            setters.join(" and "),
            join_quote(&list)
        ),
    )
}

const CAPABILITIES_ALLOWED: [&str; 13] = [
    "AUDIT_WRITE",
    "CHOWN",
    "DAC_OVERRIDE",
    "FOWNER",
    "FSETID",
    "KILL",
    "MKNOD",
    "NET_BIND_SERVICE",
    "SETFCAP",
    "SETGID",
    "SETPCAP",
    "SETUID",
    "SYS_CHROOT",
];

fn capabilities_baseline(_: &Value, spec: &Value, _: u32) -> Option<Violation> {
    let mut bad = Vec::new();
    let mut caps = BTreeSet::new();
    for c in all_containers(spec) {
        let Some(add) = c["securityContext"]["capabilities"]["add"].as_array() else {
            continue;
        };
        let mut valid = true;
        for cap in add.iter().map(|v| v.as_str().unwrap_or("")) {
            if !CAPABILITIES_ALLOWED.contains(&cap) {
                valid = false;
                caps.insert(cap.to_string());
            }
        }
        if !valid {
            bad.push(cname(c));
        }
    }
    if bad.is_empty() {
        return None;
    }
    violation(
        "non-default capabilities",
        format!(
            "{} must not include {} in securityContext.capabilities.add",
            containers_phrase(&bad),
            join_quote(&caps)
        ),
    )
}

fn capabilities_restricted(_: &Value, spec: &Value, minor: u32) -> Option<Violation> {
    if minor >= 25 && is_windows(spec) {
        return None;
    }
    let mut missing_drop = Vec::new();
    let mut adding = Vec::new();
    let mut caps = BTreeSet::new();
    for c in all_containers(spec) {
        let capabilities = &c["securityContext"]["capabilities"];
        if !capabilities.is_object() {
            missing_drop.push(cname(c));
            continue;
        }
        let dropped_all = capabilities["drop"]
            .as_array()
            .is_some_and(|d| d.iter().any(|x| x == "ALL"));
        if !dropped_all {
            missing_drop.push(cname(c));
        }
        let mut forbidden_add = false;
        for cap in capabilities["add"].as_array().into_iter().flatten() {
            let cap = cap.as_str().unwrap_or("");
            if cap != "NET_BIND_SERVICE" {
                forbidden_add = true;
                caps.insert(cap.to_string());
            }
        }
        if forbidden_add {
            adding.push(cname(c));
        }
    }
    let mut details = Vec::new();
    if !missing_drop.is_empty() {
        details.push(format!(
            r#"{} must set securityContext.capabilities.drop=["ALL"]"#,
            containers_phrase(&missing_drop)
        ));
    }
    if !adding.is_empty() {
        details.push(format!(
            "{} must not include {} in securityContext.capabilities.add",
            containers_phrase(&adding),
            join_quote(&caps)
        ));
    }
    if details.is_empty() {
        return None;
    }
    violation("unrestricted capabilities", details.join("; "))
}

fn host_namespaces(_: &Value, spec: &Value, _: u32) -> Option<Violation> {
    // Sorted as upstream's string set lists them.
    let found: Vec<&str> = ["hostIPC", "hostNetwork", "hostPID"]
        .into_iter()
        .filter(|k| spec[*k].as_bool() == Some(true))
        .collect();
    if found.is_empty() {
        return None;
    }
    violation("host namespaces", found.join(", "))
}

fn host_path_volumes(_: &Value, spec: &Value, _: u32) -> Option<Violation> {
    let bad: Vec<String> = common::items(spec, "volumes")
        .filter(|v| v.get("hostPath").is_some_and(|h| !h.is_null()))
        .map(cname)
        .collect();
    if bad.is_empty() {
        return None;
    }
    violation(
        "hostPath volumes",
        format!(
            "{} {}",
            pluralize("volume", "volumes", bad.len()),
            join_quote(&bad)
        ),
    )
}

fn host_ports(_: &Value, spec: &Value, _: u32) -> Option<Violation> {
    let mut bad = Vec::new();
    let mut ports = BTreeSet::new();
    for c in all_containers(spec) {
        let mut valid = true;
        for p in common::items(c, "ports") {
            let hp = p["hostPort"].as_i64().unwrap_or(0);
            if hp != 0 {
                valid = false;
                ports.insert(hp.to_string());
            }
        }
        if !valid {
            bad.push(cname(c));
        }
    }
    if bad.is_empty() {
        return None;
    }
    violation(
        "hostPort",
        format!(
            "{} {} {} {}",
            containers_phrase(&bad),
            pluralize("uses", "use", bad.len()),
            pluralize("hostPort", "hostPorts", ports.len()),
            ports.into_iter().collect::<Vec<_>>().join(", ")
        ),
    )
}

fn host_probes_and_lifecycle(_: &Value, spec: &Value, _: u32) -> Option<Violation> {
    let mut bad = BTreeSet::new();
    let mut hosts = BTreeSet::new();
    for c in all_containers(spec) {
        let handlers = [
            &c["livenessProbe"],
            &c["readinessProbe"],
            &c["startupProbe"],
            &c["lifecycle"]["postStart"],
            &c["lifecycle"]["preStop"],
        ];
        for h in handlers {
            for kind in ["httpGet", "tcpSocket"] {
                if let Some(host) = h[kind]["host"].as_str().filter(|s| !s.is_empty()) {
                    bad.insert(cname(c));
                    hosts.insert(host.to_string());
                }
            }
        }
    }
    if bad.is_empty() {
        return None;
    }
    violation(
        "probe or lifecycle host",
        format!(
            "{} {} {} {} {}",
            pluralize("container", "containers", bad.len()),
            join_quote(&bad),
            pluralize("uses", "use", bad.len()),
            pluralize(
                "probe or lifecycle host",
                "probe or lifecycle hosts",
                hosts.len()
            ),
            join_quote(&hosts)
        ),
    )
}

fn privileged(_: &Value, spec: &Value, _: u32) -> Option<Violation> {
    let bad: Vec<String> = all_containers(spec)
        .filter(|c| c["securityContext"]["privileged"].as_bool() == Some(true))
        .map(cname)
        .collect();
    if bad.is_empty() {
        return None;
    }
    violation(
        "privileged",
        format!(
            "{} must not set securityContext.privileged=true",
            containers_phrase(&bad)
        ),
    )
}

fn proc_mount(_: &Value, spec: &Value, _: u32) -> Option<Violation> {
    let mut bad = Vec::new();
    let mut types = BTreeSet::new();
    for c in all_containers(spec) {
        if let Some(t) = c["securityContext"]["procMount"].as_str() {
            if t != "Default" {
                bad.push(cname(c));
                types.insert(t.to_string());
            }
        }
    }
    if bad.is_empty() {
        return None;
    }
    violation(
        "procMount",
        format!(
            "{} must not set securityContext.procMount to {}",
            containers_phrase(&bad),
            join_quote(&types)
        ),
    )
}

const ALLOWED_VOLUME_TYPES: [&str; 9] = [
    "configMap",
    "csi",
    "downwardAPI",
    "emptyDir",
    "ephemeral",
    "image",
    "persistentVolumeClaim",
    "projected",
    "secret",
];

const RESTRICTED_VOLUME_TYPES: [&str; 21] = [
    "hostPath",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "gitRepo",
    "nfs",
    "iscsi",
    "glusterfs",
    "rbd",
    "flexVolume",
    "cinder",
    "cephfs",
    "flocker",
    "fc",
    "azureFile",
    "vsphereVolume",
    "quobyte",
    "azureDisk",
    "photonPersistentDisk",
    "portworxVolume",
    "scaleIO",
    "storageos",
];

fn restricted_volumes(_: &Value, spec: &Value, _: u32) -> Option<Violation> {
    let mut bad = Vec::new();
    let mut types = BTreeSet::new();
    for v in common::items(spec, "volumes") {
        let sources: Vec<&str> = v
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(k, val)| *k != "name" && !val.is_null())
            .map(|(k, _)| k.as_str())
            .collect();
        if sources.iter().any(|s| ALLOWED_VOLUME_TYPES.contains(s)) {
            continue;
        }
        bad.push(cname(v));
        let ty = RESTRICTED_VOLUME_TYPES
            .iter()
            .find(|t| sources.contains(t))
            .copied()
            .unwrap_or("unknown");
        types.insert(ty.to_string());
    }
    if bad.is_empty() {
        return None;
    }
    violation(
        "restricted volume types",
        format!(
            "{} {} {} {} {}",
            pluralize("volume", "volumes", bad.len()),
            join_quote(&bad),
            pluralize("uses", "use", bad.len()),
            pluralize(
                "restricted volume type",
                "restricted volume types",
                types.len()
            ),
            join_quote(&types)
        ),
    )
}

fn run_as_non_root(_: &Value, spec: &Value, _: u32) -> Option<Violation> {
    let mut setters = Vec::new();
    let mut pod_non_root = false;
    match spec["securityContext"]["runAsNonRoot"].as_bool() {
        Some(false) => setters.push("pod".to_string()),
        Some(true) => pod_non_root = true,
        None => {}
    }
    let mut explicit = Vec::new();
    let mut implicit = Vec::new();
    for c in all_containers(spec) {
        match c["securityContext"]["runAsNonRoot"].as_bool() {
            Some(false) => explicit.push(cname(c)),
            Some(true) => {}
            None if !pod_non_root => implicit.push(cname(c)),
            None => {}
        }
    }
    if !explicit.is_empty() {
        setters.push(containers_phrase(&explicit));
    }
    if !setters.is_empty() {
        return violation(
            "runAsNonRoot != true",
            format!(
                "{} must not set securityContext.runAsNonRoot=false",
                setters.join(" and ")
            ),
        );
    }
    if !implicit.is_empty() {
        return violation(
            "runAsNonRoot != true",
            format!(
                "pod or {} must set securityContext.runAsNonRoot=true",
                containers_phrase(&implicit)
            ),
        );
    }
    None
}

fn run_as_user(_: &Value, spec: &Value, _: u32) -> Option<Violation> {
    let mut setters = Vec::new();
    if spec["securityContext"]["runAsUser"].as_i64() == Some(0) {
        setters.push("pod".to_string());
    }
    let bad: Vec<String> = all_containers(spec)
        .filter(|c| c["securityContext"]["runAsUser"].as_i64() == Some(0))
        .map(cname)
        .collect();
    if !bad.is_empty() {
        setters.push(containers_phrase(&bad));
    }
    if setters.is_empty() {
        return None;
    }
    violation(
        "runAsUser=0",
        format!("{} must not set runAsUser=0", setters.join(" and ")),
    )
}

fn se_linux_options(_: &Value, spec: &Value, minor: u32) -> Option<Violation> {
    let mut allowed = vec!["", "container_t", "container_init_t", "container_kvm_t"];
    if minor >= 31 {
        allowed.push("container_engine_t");
    }
    let mut bad_types = BTreeSet::new();
    let (mut set_user, mut set_role) = (false, false);
    let mut valid = |o: &Value| {
        let mut ok = true;
        let t = o["type"].as_str().unwrap_or("");
        if !allowed.contains(&t) {
            ok = false;
            bad_types.insert(t.to_string());
        }
        if !o["user"].as_str().unwrap_or("").is_empty() {
            ok = false;
            set_user = true;
        }
        if !o["role"].as_str().unwrap_or("").is_empty() {
            ok = false;
            set_role = true;
        }
        ok
    };
    let mut setters = Vec::new();
    let pod_opts = &spec["securityContext"]["seLinuxOptions"];
    if pod_opts.is_object() && !valid(pod_opts) {
        setters.push("pod".to_string());
    }
    let mut bad = Vec::new();
    for c in all_containers(spec) {
        let o = &c["securityContext"]["seLinuxOptions"];
        if o.is_object() && !valid(o) {
            bad.push(cname(c));
        }
    }
    if !bad.is_empty() {
        setters.push(containers_phrase(&bad));
    }
    if setters.is_empty() {
        return None;
    }
    let mut data = Vec::new();
    if !bad_types.is_empty() {
        data.push(format!(
            "{} {}",
            pluralize("type", "types", bad_types.len()),
            join_quote(&bad_types)
        ));
    }
    if set_user {
        data.push("user may not be set".to_string());
    }
    if set_role {
        data.push("role may not be set".to_string());
    }
    violation(
        "seLinuxOptions",
        format!(
            "{} set forbidden securityContext.seLinuxOptions: {}",
            setters.join(" and "),
            data.join("; ")
        ),
    )
}

fn valid_seccomp(t: &Value) -> bool {
    matches!(t.as_str(), Some("RuntimeDefault" | "Localhost"))
}

fn seccomp_profile_baseline(meta: &Value, spec: &Value, minor: u32) -> Option<Violation> {
    if minor < 19 {
        // The alpha annotations, before the fields existed.
        let valid = |v: &str| {
            v == "runtime/default" || v == "docker/default" || v.starts_with("localhost/")
        };
        let ann = &meta["annotations"];
        let mut bad = BTreeSet::new();
        let pod_key = "seccomp.security.alpha.kubernetes.io/pod";
        if let Some(v) = ann[pod_key].as_str() {
            if !valid(v) {
                bad.insert(format!("{pod_key}={v:?}"));
            }
        }
        for c in all_containers(spec) {
            let key = format!(
                "container.seccomp.security.alpha.kubernetes.io/{}",
                cname(c)
            );
            if let Some(v) = ann[key.as_str()].as_str() {
                if !valid(v) {
                    bad.insert(format!("{key}={v:?}"));
                }
            }
        }
        if bad.is_empty() {
            return None;
        }
        return violation(
            "seccompProfile",
            format!(
                "forbidden {} {}",
                pluralize("annotation", "annotations", bad.len()),
                bad.into_iter().collect::<Vec<_>>().join(", ")
            ),
        );
    }
    let mut setters = Vec::new();
    let mut values = BTreeSet::new();
    let pod = &spec["securityContext"]["seccompProfile"];
    if pod.is_object() && !valid_seccomp(&pod["type"]) {
        setters.push("pod".to_string());
        values.insert(pod["type"].as_str().unwrap_or("").to_string());
    }
    let mut bad = Vec::new();
    for c in all_containers(spec) {
        let p = &c["securityContext"]["seccompProfile"];
        if p.is_object() && !valid_seccomp(&p["type"]) {
            bad.push(cname(c));
            values.insert(p["type"].as_str().unwrap_or("").to_string());
        }
    }
    if !bad.is_empty() {
        setters.push(containers_phrase(&bad));
    }
    if setters.is_empty() {
        return None;
    }
    violation(
        "seccompProfile",
        format!(
            "{} must not set securityContext.seccompProfile.type to {}",
            setters.join(" and "),
            join_quote(&values)
        ),
    )
}

fn seccomp_profile_restricted(_: &Value, spec: &Value, minor: u32) -> Option<Violation> {
    if minor >= 25 && is_windows(spec) {
        return None;
    }
    let mut setters = Vec::new();
    let mut values = BTreeSet::new();
    let mut pod_set = false;
    let pod = &spec["securityContext"]["seccompProfile"];
    if pod.is_object() {
        if valid_seccomp(&pod["type"]) {
            pod_set = true;
        } else {
            setters.push("pod".to_string());
            values.insert(pod["type"].as_str().unwrap_or("").to_string());
        }
    }
    let mut explicit = Vec::new();
    let mut implicit = Vec::new();
    for c in all_containers(spec) {
        let p = &c["securityContext"]["seccompProfile"];
        if p.is_object() {
            if !valid_seccomp(&p["type"]) {
                explicit.push(cname(c));
                values.insert(p["type"].as_str().unwrap_or("").to_string());
            }
        } else if !pod_set {
            implicit.push(cname(c));
        }
    }
    if !explicit.is_empty() {
        setters.push(containers_phrase(&explicit));
    }
    if !setters.is_empty() {
        return violation(
            "seccompProfile",
            format!(
                "{} must not set securityContext.seccompProfile.type to {}",
                setters.join(" and "),
                join_quote(&values)
            ),
        );
    }
    if !implicit.is_empty() {
        return violation(
            "seccompProfile",
            format!(
                r#"pod or {} must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost""#,
                containers_phrase(&implicit)
            ),
        );
    }
    None
}

fn sysctls(_: &Value, spec: &Value, minor: u32) -> Option<Violation> {
    let mut allowed = vec![
        "kernel.shm_rmid_forced",
        "net.ipv4.ip_local_port_range",
        "net.ipv4.tcp_syncookies",
        "net.ipv4.ping_group_range",
        "net.ipv4.ip_unprivileged_port_start",
    ];
    if minor >= 27 {
        allowed.push("net.ipv4.ip_local_reserved_ports");
    }
    if minor >= 29 {
        allowed.extend([
            "net.ipv4.tcp_keepalive_time",
            "net.ipv4.tcp_fin_timeout",
            "net.ipv4.tcp_keepalive_intvl",
            "net.ipv4.tcp_keepalive_probes",
        ]);
    }
    if minor >= 32 {
        allowed.extend(["net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem"]);
    }
    let bad: Vec<&str> = common::items(&spec["securityContext"], "sysctls")
        .map(|s| s["name"].as_str().unwrap_or(""))
        .filter(|n| !allowed.contains(n))
        .collect();
    if bad.is_empty() {
        return None;
    }
    violation("forbidden sysctls", bad.join(", "))
}

fn windows_host_process(_: &Value, spec: &Value, _: u32) -> Option<Violation> {
    let host_process = |sc: &Value| sc["windowsOptions"]["hostProcess"].as_bool() == Some(true);
    let bad: Vec<String> = all_containers(spec)
        .filter(|c| host_process(&c["securityContext"]))
        .map(cname)
        .collect();
    let mut setters = Vec::new();
    if host_process(&spec["securityContext"]) {
        setters.push("pod".to_string());
    }
    if !bad.is_empty() {
        setters.push(containers_phrase(&bad));
    }
    if setters.is_empty() {
        return None;
    }
    violation(
        "hostProcess",
        format!(
            "{} must not set securityContext.windowsOptions.hostProcess=true",
            setters.join(" and ")
        ),
    )
}

// ---- the admission plugin ----

pub struct PodSecurity;

/// Pod subresources that never change the pod's spec.
const IGNORED_POD_SUBRESOURCES: [&str; 8] = [
    "exec",
    "attach",
    "binding",
    "eviction",
    "log",
    "portforward",
    "proxy",
    "status",
];

/// Where a workload resource keeps its pod template (upstream's `DefaultPodSpecExtractor`).
fn template_path(group: &str, plural: &str) -> Option<&'static [&'static str]> {
    Some(match (group, plural) {
        ("", "podtemplates") => &["template"],
        ("", "replicationcontrollers") => &["spec", "template"],
        ("apps", "replicasets" | "deployments" | "statefulsets" | "daemonsets") => {
            &["spec", "template"]
        }
        ("batch", "jobs") => &["spec", "template"],
        ("batch", "cronjobs") => &["spec", "jobTemplate", "spec", "template"],
        _ => return None,
    })
}

/// upstream's `isSignificantPodUpdate`: images and containers, the only
/// mutable parts of a pod the policy looks at.
fn significant_pod_update(new: &Value, old: &Value) -> bool {
    let (ns, os) = (&new["spec"], &old["spec"]);
    for key in ["containers", "initContainers"] {
        let (a, b): (Vec<&Value>, Vec<&Value>) = (
            common::items(ns, key).collect(),
            common::items(os, key).collect(),
        );
        if a.len() != b.len() {
            return true;
        }
        if a.iter()
            .zip(b.iter())
            .any(|(x, y)| x["image"] != y["image"])
        {
            return true;
        }
    }
    for c in common::items(ns, "ephemeralContainers") {
        match common::items(os, "ephemeralContainers").find(|o| o["name"] == c["name"]) {
            None => return true,
            Some(o) if o["image"] != c["image"] => return true,
            _ => {}
        }
    }
    false
}

async fn namespace_labels(ctx: &Context, namespace: &str) -> Result<Map<String, Value>, ApiError> {
    match common::get_core_cached(&ctx.registries, "namespaces", "", namespace).await {
        Ok(Some(ns)) => Ok(ns["metadata"]["labels"]
            .as_object()
            .cloned()
            .unwrap_or_default()),
        Ok(None) => Err(ApiError::internal(format!(
            "failed to lookup namespace {namespace:?}"
        ))),
        Err(e) => Err(ApiError::internal(format!(
            "failed to lookup namespace {namespace:?}: {}",
            e.message
        ))),
    }
}

impl PodSecurity {
    /// upstream's `EvaluatePod`: refuses under `enforce` (pods only), else
    /// warns under `warn`.
    fn evaluate_pod(
        &self,
        a: &Attributes<'_>,
        policy: &Policy,
        meta: &Value,
        spec: &Value,
        enforce: bool,
    ) -> Result<Vec<String>, ApiError> {
        let mut cache: HashMap<LevelVersion, Vec<Violation>> = HashMap::new();
        if enforce {
            let vs = evaluate(policy.enforce, meta, spec);
            if !vs.is_empty() {
                return Err(forbidden_for(
                    &a.resource.group,
                    &a.resource.plural,
                    a.name,
                    format!(
                        "violates PodSecurity {:?}: {}",
                        policy.enforce.to_string(),
                        forbidden_detail(&vs)
                    ),
                ));
            }
            cache.insert(policy.enforce, vs);
        }
        let warn = match cache.remove(&policy.warn) {
            Some(v) => v,
            None => evaluate(policy.warn, meta, spec),
        };
        if warn.is_empty() {
            return Ok(Vec::new());
        }
        Ok(vec![format!(
            "would violate PodSecurity {:?}: {}",
            policy.warn.to_string(),
            forbidden_detail(&warn)
        )])
    }

    async fn validate_pod(
        &self,
        a: &Attributes<'_>,
        ctx: &Context,
    ) -> Result<Vec<String>, ApiError> {
        if IGNORED_POD_SUBRESOURCES.contains(&a.subresource) {
            return Ok(Vec::new());
        }
        let labels = namespace_labels(ctx, a.namespace).await?;
        let (policy, errs) = policy_to_evaluate(&labels);
        if errs.is_empty() && policy.fully_privileged() {
            return Ok(Vec::new());
        }
        let Some(pod) = a.object.as_ref() else {
            return Ok(Vec::new());
        };
        if a.operation == Operation::Update {
            if let Some(old) = a.old_object {
                if !significant_pod_update(pod, old) {
                    return Ok(Vec::new());
                }
            }
        }
        self.evaluate_pod(a, &policy, &pod["metadata"], &pod["spec"], true)
    }

    async fn validate_controller(
        &self,
        a: &Attributes<'_>,
        ctx: &Context,
        path: &[&str],
    ) -> Result<Vec<String>, ApiError> {
        if !a.subresource.is_empty() {
            return Ok(Vec::new());
        }
        let labels = namespace_labels(ctx, a.namespace).await?;
        let (policy, errs) = policy_to_evaluate(&labels);
        if errs.is_empty()
            && policy.warn.level == Level::Privileged
            && policy.audit.level == Level::Privileged
        {
            return Ok(Vec::new());
        }
        let Some(obj) = a.object.as_ref() else {
            return Ok(Vec::new());
        };
        let mut template = obj;
        for p in path {
            template = &template[*p];
        }
        if template.is_null() {
            return Ok(Vec::new());
        }
        self.evaluate_pod(a, &policy, &template["metadata"], &template["spec"], false)
    }

    async fn validate_namespace(
        &self,
        a: &Attributes<'_>,
        ctx: &Context,
    ) -> Result<Vec<String>, ApiError> {
        if !a.subresource.is_empty() {
            return Ok(Vec::new());
        }
        let Some(ns) = a.object.as_ref() else {
            return Ok(Vec::new());
        };
        let labels = ns["metadata"]["labels"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        let (new_policy, new_errs) = policy_to_evaluate(&labels);
        let invalid = |errs: &[FieldError]| {
            ApiError::invalid(
                "",
                "Namespace",
                a.name,
                errs.iter().map(FieldError::to_cause).collect(),
            )
        };
        match a.operation {
            Operation::Create => {
                if !new_errs.is_empty() {
                    return Err(invalid(&new_errs));
                }
                Ok(Vec::new())
            }
            Operation::Update => {
                let old_labels = a
                    .old_object
                    .and_then(|o| o["metadata"]["labels"].as_object().cloned())
                    .unwrap_or_default();
                let (old_policy, old_errs) = policy_to_evaluate(&old_labels);
                if !new_errs.is_empty() && (old_errs.is_empty() || new_errs != old_errs) {
                    return Err(invalid(&new_errs));
                }
                let (ne, oe) = (new_policy.enforce, old_policy.enforce);
                if ne == oe
                    || ne.level == Level::Privileged
                    || (ne.version == oe.version && ne.level <= oe.level)
                {
                    return Ok(Vec::new());
                }
                self.evaluate_pods_in_namespace(ctx, a.name, ne).await
            }
            _ => Ok(Vec::new()),
        }
    }

    /// upstream's `EvaluatePodsInNamespace`: warnings naming the existing
    /// pods a tighter enforce level would refuse.
    async fn evaluate_pods_in_namespace(
        &self,
        ctx: &Context,
        namespace: &str,
        enforce: LevelVersion,
    ) -> Result<Vec<String>, ApiError> {
        let pods = match common::list_core(&ctx.registries, "pods", namespace).await {
            Ok(p) => p,
            Err(_) => {
                return Ok(vec![
                    "failed to list pods while checking new PodSecurity enforce level".into(),
                ])
            }
        };
        // One pod per controller first, then the rest (upstream's prioritizePods).
        let mut seen_controllers = BTreeSet::new();
        let (mut first, mut rest) = (Vec::new(), Vec::new());
        for p in &pods {
            let controller = p["metadata"]["ownerReferences"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|r| r["controller"].as_bool() == Some(true))
                .and_then(|r| r["uid"].as_str());
            match controller {
                Some(uid) if !seen_controllers.insert(uid.to_string()) => rest.push(p),
                _ => first.push(p),
            }
        }
        first.extend(rest);
        let total = first.len();
        first.truncate(NAMESPACE_MAX_PODS_TO_CHECK);
        let checked = first.len();
        let mut order: Vec<String> = Vec::new();
        let mut counts: HashMap<String, (String, usize)> = HashMap::new();
        for p in first {
            let vs = evaluate(enforce, &p["metadata"], &p["spec"]);
            if vs.is_empty() {
                continue;
            }
            let warning = forbidden_reason(&vs);
            let name = p["metadata"]["name"].as_str().unwrap_or("").to_string();
            match counts.get_mut(&warning) {
                Some((first_name, n)) => {
                    if name < *first_name {
                        *first_name = name;
                    }
                    *n += 1;
                }
                None => {
                    order.push(warning.clone());
                    counts.insert(warning, (name, 1));
                }
            }
        }
        let mut warnings = Vec::new();
        if checked < total {
            warnings.push(format!(
                "new PodSecurity enforce level only checked against the first {checked} of {total} existing pods"
            ));
        }
        if !order.is_empty() {
            warnings.push(format!(
                "existing pods in namespace {namespace:?} violate the new PodSecurity enforce level {:?}",
                enforce.to_string()
            ));
        }
        let mut pod_warnings: Vec<String> = order
            .into_iter()
            .map(|w| {
                let (name, n) = counts.get(&w).cloned().unwrap_or_default();
                match n {
                    0 => w,
                    1 => format!("{name}: {w}"),
                    2 => format!("{name} (and 1 other pod): {w}"),
                    n => format!("{name} (and {} other pods): {w}", n - 1),
                }
            })
            .collect();
        pod_warnings.sort();
        warnings.extend(pod_warnings);
        Ok(warnings)
    }
}

#[async_trait::async_trait]
impl ValidatingPlugin for PodSecurity {
    fn name(&self) -> &'static str {
        "PodSecurity"
    }

    async fn validate(&self, a: &Attributes<'_>, ctx: &Context) -> Result<Vec<String>, ApiError> {
        if !matches!(a.operation, Operation::Create | Operation::Update) {
            return Ok(Vec::new());
        }
        let (group, plural) = (a.resource.group.as_str(), a.resource.plural.as_str());
        match (group, plural) {
            ("", "namespaces") => self.validate_namespace(a, ctx).await,
            ("", "pods") => self.validate_pod(a, ctx).await,
            _ => match template_path(group, plural) {
                Some(path) => self.validate_controller(a, ctx, path).await,
                None => Ok(Vec::new()),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::admission::common::testing;

    fn lv(level: Level, version: Option<u32>) -> LevelVersion {
        LevelVersion {
            level,
            version: Version(version),
        }
    }

    fn detail(level: Level, spec: Value) -> String {
        forbidden_detail(&evaluate(lv(level, None), &json!({}), &spec))
    }

    #[test]
    fn labels_parse_like_upstream() {
        let labels = json!({
            "pod-security.kubernetes.io/enforce": "restricted",
            "pod-security.kubernetes.io/enforce-version": "v1.30",
            "pod-security.kubernetes.io/warn": "baseline",
        });
        let (p, errs) = policy_to_evaluate(labels.as_object().unwrap_or(&Map::new()));
        assert!(errs.is_empty());
        assert_eq!(p.enforce.to_string(), "restricted:v1.30");
        assert_eq!(p.warn.to_string(), "baseline:latest");
        assert_eq!(p.audit.to_string(), "privileged:latest");

        // warn follows a stricter enforce when not given.
        let labels = json!({
            "pod-security.kubernetes.io/enforce": "baseline",
            "pod-security.kubernetes.io/enforce-version": "v1.29",
        });
        let (p, _) = policy_to_evaluate(labels.as_object().unwrap_or(&Map::new()));
        assert_eq!(p.warn.to_string(), "baseline:v1.29");

        let labels = json!({
            "pod-security.kubernetes.io/enforce": "strict",
            "pod-security.kubernetes.io/warn": "nope",
            "pod-security.kubernetes.io/audit-version": "1.2",
        });
        let (p, errs) = policy_to_evaluate(labels.as_object().unwrap_or(&Map::new()));
        assert_eq!(p.enforce.level, Level::Restricted, "enforce fails closed");
        assert_eq!(p.warn.level, Level::Privileged, "warn fails open");
        let msgs: Vec<String> = errs
            .iter()
            .map(|e| format!("{}: {}", e.field, e.message()))
            .collect();
        assert_eq!(
            msgs,
            [
                "metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: \"strict\": must be one of privileged, baseline, restricted",
                "metadata.labels[pod-security.kubernetes.io/audit-version]: Invalid value: \"1.2\": must be \"latest\" or \"v1.x\"",
                "metadata.labels[pod-security.kubernetes.io/warn]: Invalid value: \"nope\": must be one of privileged, baseline, restricted",
            ]
        );
        assert!(Version::parse("v1.01").is_err());
        assert_eq!(Version::parse("v1.0"), Ok(Version(Some(0))));
    }

    #[test]
    fn restricted_lists_every_violation_in_upstream_order() {
        let spec = json!({"containers": [{"name": "c", "image": "x",
            "securityContext": {"privileged": true}}]});
        assert_eq!(
            detail(Level::Restricted, spec),
            "privileged (container \"c\" must not set securityContext.privileged=true), \
             allowPrivilegeEscalation != false (container \"c\" must set securityContext.allowPrivilegeEscalation=false), \
             unrestricted capabilities (container \"c\" must set securityContext.capabilities.drop=[\"ALL\"]), \
             runAsNonRoot != true (pod or container \"c\" must set securityContext.runAsNonRoot=true), \
             seccompProfile (pod or container \"c\" must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\")"
        );
    }

    #[test]
    fn a_restricted_pod_passes() {
        let spec = json!({
            "securityContext": {"runAsNonRoot": true, "seccompProfile": {"type": "RuntimeDefault"}},
            "containers": [{"name": "c", "securityContext": {
                "allowPrivilegeEscalation": false,
                "capabilities": {"drop": ["ALL"], "add": ["NET_BIND_SERVICE"]}}}],
            "volumes": [{"name": "v", "configMap": {"name": "x"}}]
        });
        assert_eq!(detail(Level::Restricted, spec), "");
    }

    #[test]
    fn baseline_checks() {
        let spec = json!({
            "hostNetwork": true, "hostPID": true,
            "securityContext": {
                "sysctls": [{"name": "kernel.msgmax", "value": "1"}, {"name": "net.ipv4.tcp_syncookies", "value": "1"}],
                "seccompProfile": {"type": "Unconfined"},
                "seLinuxOptions": {"type": "spc_t", "user": "u"},
                "windowsOptions": {"hostProcess": true},
            },
            "initContainers": [{"name": "i", "securityContext": {"capabilities": {"add": ["NET_RAW", "CHOWN"]}}}],
            "containers": [
                {"name": "a", "ports": [{"containerPort": 80, "hostPort": 8080}, {"containerPort": 81, "hostPort": 81}],
                 "securityContext": {"procMount": "Unmasked", "appArmorProfile": {"type": "Unconfined"}},
                 "livenessProbe": {"httpGet": {"host": "10.0.0.1", "port": 80}}},
                {"name": "b", "securityContext": {"capabilities": {"add": ["SYS_ADMIN"]}}}
            ],
            "volumes": [{"name": "h", "hostPath": {"path": "/"}}]
        });
        let vs = evaluate(lv(Level::Baseline, None), &json!({}), &spec);
        let got: Vec<String> = vs
            .iter()
            .map(|v| format!("{} ({})", v.reason, v.detail))
            .collect();
        assert_eq!(
            got,
            [
                "forbidden AppArmor profile (container \"a\" must not set AppArmor profile type to \"Unconfined\")",
                "non-default capabilities (containers \"i\", \"b\" must not include \"NET_RAW\", \"SYS_ADMIN\" in securityContext.capabilities.add)",
                "host namespaces (hostNetwork, hostPID)",
                "hostPath volumes (volume \"h\")",
                "hostPort (container \"a\" uses hostPorts 8080, 81)",
                "probe or lifecycle host (container \"a\" uses probe or lifecycle host \"10.0.0.1\")",
                "procMount (container \"a\" must not set securityContext.procMount to \"Unmasked\")",
                "seLinuxOptions (pod set forbidden securityContext.seLinuxOptions: type \"spc_t\"; user may not be set)",
                "seccompProfile (pod must not set securityContext.seccompProfile.type to \"Unconfined\")",
                "forbidden sysctls (kernel.msgmax)",
                "hostProcess (pod must not set securityContext.windowsOptions.hostProcess=true)",
            ]
        );
        // Older versions know fewer checks.
        let older = evaluate(lv(Level::Baseline, Some(33)), &json!({}), &spec);
        assert!(!older.iter().any(|v| v.reason == "probe or lifecycle host"));
    }

    #[test]
    fn restricted_volume_types_and_overrides() {
        let spec = json!({
            "securityContext": {"runAsNonRoot": true, "seccompProfile": {"type": "Localhost", "localhostProfile": "p"}},
            "containers": [{"name": "c", "securityContext": {"allowPrivilegeEscalation": false, "runAsUser": 0,
                "capabilities": {"drop": ["ALL"], "add": ["SYS_TIME"]}}}],
            "volumes": [{"name": "h", "hostPath": {"path": "/"}}, {"name": "n", "nfs": {"server": "s", "path": "/"}},
                        {"name": "ok", "emptyDir": {}}]
        });
        assert_eq!(
            detail(Level::Restricted, spec),
            "unrestricted capabilities (container \"c\" must not include \"SYS_TIME\" in securityContext.capabilities.add), \
             restricted volume types (volumes \"h\", \"n\" use restricted volume types \"hostPath\", \"nfs\"), \
             runAsUser=0 (container \"c\" must not set runAsUser=0)"
        );
    }

    #[tokio::test]
    async fn enforce_refuses_and_warn_warns() {
        let env = testing::env().await;
        env.namespace(
            "r",
            json!({"pod-security.kubernetes.io/enforce": "baseline", "pod-security.kubernetes.io/warn": "restricted"}),
        )
        .await;
        let ctx = Context {
            registries: env.registries.clone(),
        };
        let pods = env.resource("", "v1", "pods");
        let pod = json!({"metadata": {"name": "p", "namespace": "r"},
            "spec": {"containers": [{"name": "c", "image": "x", "securityContext": {"privileged": true}}]}});
        let a = testing::create_attrs(&pods, "r", "p", pod);
        let e = PodSecurity
            .validate(&a, &ctx)
            .await
            .err()
            .map(|e| (e.code, e.message));
        assert_eq!(
            e,
            Some((
                403,
                "pods \"p\" is forbidden: violates PodSecurity \"baseline:latest\": privileged (container \"c\" must not set securityContext.privileged=true)".to_string()
            ))
        );
        let plain = json!({"metadata": {"name": "q", "namespace": "r"},
            "spec": {"containers": [{"name": "c", "image": "x"}]}});
        let a = testing::create_attrs(&pods, "r", "q", plain.clone());
        let w = PodSecurity.validate(&a, &ctx).await.unwrap_or_default();
        assert_eq!(w.len(), 1);
        assert!(w[0].starts_with("would violate PodSecurity \"restricted:latest\": allowPrivilegeEscalation != false"), "{w:?}");

        // Deployments are only warned about.
        let deploy = env.resource("apps", "v1", "deployments");
        let d = json!({"metadata": {"name": "d", "namespace": "r"}, "spec": {"template": {"spec":
            {"containers": [{"name": "c", "image": "x", "securityContext": {"privileged": true}}]}}}});
        let a = testing::create_attrs(&deploy, "r", "d", d);
        let w = PodSecurity.validate(&a, &ctx).await.unwrap_or_default();
        assert!(
            w.len() == 1
                && w[0].starts_with("would violate PodSecurity \"restricted:latest\": privileged"),
            "{w:?}"
        );

        // Bad labels on a namespace are refused.
        let nss = env.resource("", "v1", "namespaces");
        let a = testing::create_attrs(
            &nss,
            "",
            "bad",
            json!({"metadata": {"name": "bad",
            "labels": {"pod-security.kubernetes.io/enforce": "strict"}}}),
        );
        let e = PodSecurity
            .validate(&a, &ctx)
            .await
            .err()
            .map(|e| (e.code, e.message));
        assert_eq!(
            e,
            Some((422, "Namespace \"bad\" is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: \"strict\": must be one of privileged, baseline, restricted".to_string()))
        );
    }
}
