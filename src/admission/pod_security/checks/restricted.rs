//! The restricted level's checks (upstream's `policy/check_*.go` for the
//! restricted checks): the hardening best practices a pod must follow on top
//! of baseline (non-root, no privilege escalation, dropped capabilities, a
//! seccomp profile, only ephemeral volume types).

use std::collections::BTreeSet;

use serde_json::Value;

use super::{
    all_containers, cname, containers_phrase, is_windows, join_quote, pluralize, valid_seccomp,
    violation, Violation,
};
use crate::admission::common;

pub(super) fn allow_privilege_escalation(_: &Value, spec: &Value, minor: u32) -> Option<Violation> {
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

pub(super) fn capabilities_restricted(_: &Value, spec: &Value, minor: u32) -> Option<Violation> {
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

pub(super) fn restricted_volumes(_: &Value, spec: &Value, _: u32) -> Option<Violation> {
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

pub(super) fn run_as_non_root(_: &Value, spec: &Value, _: u32) -> Option<Violation> {
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

pub(super) fn run_as_user(_: &Value, spec: &Value, _: u32) -> Option<Violation> {
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

pub(super) fn seccomp_profile_restricted(_: &Value, spec: &Value, minor: u32) -> Option<Violation> {
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
