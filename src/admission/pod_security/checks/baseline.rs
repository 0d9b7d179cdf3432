//! The baseline level's checks (upstream's `policy/check_*.go` for the
//! baseline checks): what any pod must not do to escape its isolation (host
//! namespaces, host paths and ports, privileged containers, added
//! capabilities, unsafe sysctls, ...).

use std::collections::BTreeSet;

use serde_json::Value;

use super::{
    all_containers, annotations, cname, containers_phrase, join_quote, pluralize, valid_seccomp,
    violation, Violation,
};
use crate::admission::common;

pub(super) fn app_armor_profile(meta: &Value, spec: &Value, _: u32) -> Option<Violation> {
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

pub(super) fn capabilities_baseline(_: &Value, spec: &Value, _: u32) -> Option<Violation> {
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

pub(super) fn host_namespaces(_: &Value, spec: &Value, _: u32) -> Option<Violation> {
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

pub(super) fn host_path_volumes(_: &Value, spec: &Value, _: u32) -> Option<Violation> {
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

pub(super) fn host_ports(_: &Value, spec: &Value, _: u32) -> Option<Violation> {
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

pub(super) fn host_probes_and_lifecycle(_: &Value, spec: &Value, _: u32) -> Option<Violation> {
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

pub(super) fn privileged(_: &Value, spec: &Value, _: u32) -> Option<Violation> {
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

pub(super) fn proc_mount(_: &Value, spec: &Value, _: u32) -> Option<Violation> {
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

pub(super) fn se_linux_options(_: &Value, spec: &Value, minor: u32) -> Option<Violation> {
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

pub(super) fn seccomp_profile_baseline(
    meta: &Value,
    spec: &Value,
    minor: u32,
) -> Option<Violation> {
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

pub(super) fn sysctls(_: &Value, spec: &Value, minor: u32) -> Option<Violation> {
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

pub(super) fn windows_host_process(_: &Value, spec: &Value, _: u32) -> Option<Violation> {
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
