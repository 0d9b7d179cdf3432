//! The checks of the Pod Security Standards (upstream's `policy` package):
//! the table of every check with its ID, level, first version and what it
//! overrides, `evaluate` over it, and the message helpers the checks share.
//! The checks themselves are by level, in baseline.rs and restricted.rs.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::admission::common;
use crate::admission::pod_security::policy::{Level, LevelVersion};
use baseline::{
    app_armor_profile, capabilities_baseline, host_namespaces, host_path_volumes, host_ports,
    host_probes_and_lifecycle, privileged, proc_mount, se_linux_options, seccomp_profile_baseline,
    sysctls, windows_host_process,
};
use restricted::{
    allow_privilege_escalation, capabilities_restricted, restricted_volumes, run_as_non_root,
    run_as_user, seccomp_profile_restricted,
};

mod baseline;
mod restricted;

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
pub(super) fn forbidden_reason(vs: &[Violation]) -> String {
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

fn valid_seccomp(t: &Value) -> bool {
    matches!(t.as_str(), Some("RuntimeDefault" | "Localhost"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::admission::pod_security::policy::Version;

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
}
