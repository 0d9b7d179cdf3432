//! `--runtime-config`: which built-in group versions and resources are
//! served, as upstream's `ResourceConfig` decides it. `api/all`, `api/ga`,
//! `api/beta` and `api/alpha` apply first, then `<group>/<version>`, then
//! `<group>/<version>/<resource>`, which wins. What is off is absent from
//! discovery and answers 404.
//!
//! kapi serves v1.34's GA APIs only. A beta or alpha version upstream can
//! serve, switched on by name, is refused at start (it would be a silent
//! no-op here); switched on by `api/all`, `api/beta` or `api/alpha` it is
//! a warning, since those are common in cluster configs for the GA part.

use std::collections::BTreeMap;

/// Every group version upstream v1.34 registers, and whether it has
/// anything to serve in 1.34 (`false`: registered, serves nothing).
const REGISTERED: &[(&str, &[(&str, bool)])] = &[
    ("", &[("v1", true)]),
    (
        "admissionregistration.k8s.io",
        &[("v1", true), ("v1beta1", true), ("v1alpha1", true)],
    ),
    ("apiextensions.k8s.io", &[("v1", true), ("v1beta1", false)]),
    (
        "apiregistration.k8s.io",
        &[("v1", true), ("v1beta1", false)],
    ),
    (
        "apps",
        &[("v1", true), ("v1beta1", false), ("v1beta2", false)],
    ),
    (
        "authentication.k8s.io",
        &[("v1", true), ("v1beta1", false), ("v1alpha1", false)],
    ),
    ("authorization.k8s.io", &[("v1", true), ("v1beta1", false)]),
    (
        "autoscaling",
        &[
            ("v1", true),
            ("v2", true),
            ("v2beta1", false),
            ("v2beta2", false),
        ],
    ),
    ("batch", &[("v1", true), ("v1beta1", false)]),
    (
        "certificates.k8s.io",
        &[("v1", true), ("v1beta1", true), ("v1alpha1", true)],
    ),
    (
        "coordination.k8s.io",
        &[("v1", true), ("v1beta1", true), ("v1alpha2", true)],
    ),
    ("discovery.k8s.io", &[("v1", true), ("v1beta1", false)]),
    ("events.k8s.io", &[("v1", true), ("v1beta1", false)]),
    ("extensions", &[("v1beta1", false)]),
    (
        "flowcontrol.apiserver.k8s.io",
        &[
            ("v1", true),
            ("v1beta1", false),
            ("v1beta2", false),
            ("v1beta3", false),
        ],
    ),
    ("internal.apiserver.k8s.io", &[("v1alpha1", true)]),
    ("networking.k8s.io", &[("v1", true), ("v1beta1", true)]),
    (
        "node.k8s.io",
        &[("v1", true), ("v1beta1", false), ("v1alpha1", false)],
    ),
    ("policy", &[("v1", true), ("v1beta1", false)]),
    (
        "rbac.authorization.k8s.io",
        &[("v1", true), ("v1beta1", false), ("v1alpha1", false)],
    ),
    (
        "resource.k8s.io",
        &[
            ("v1", true),
            ("v1beta1", true),
            ("v1beta2", true),
            ("v1alpha3", true),
        ],
    ),
    (
        "scheduling.k8s.io",
        &[("v1", true), ("v1beta1", false), ("v1alpha1", false)],
    ),
    (
        "storage.k8s.io",
        &[("v1", true), ("v1beta1", true), ("v1alpha1", true)],
    ),
    ("storagemigration.k8s.io", &[("v1alpha1", true)]),
];

fn versions_of(group: &str) -> Option<&'static [(&'static str, bool)]> {
    REGISTERED
        .iter()
        .find(|(g, _)| *g == group)
        .map(|(_, v)| *v)
}

fn is_ga(version: &str) -> bool {
    version
        .strip_prefix('v')
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// `v<n>beta<m>` / `v<n>alpha<m>`.
fn is_level(version: &str, level: &str) -> bool {
    version
        .strip_prefix('v')
        .and_then(|r| r.split_once(level))
        .is_some_and(|(a, b)| {
            !a.is_empty()
                && !b.is_empty()
                && a.bytes().all(|c| c.is_ascii_digit())
                && b.bytes().all(|c| c.is_ascii_digit())
        })
}

/// What is served: per group version, and per resource where a key said so.
#[derive(Debug, Clone)]
pub struct ResourceConfig {
    versions: BTreeMap<(String, String), bool>,
    resources: BTreeMap<(String, String, String), bool>,
}

impl Default for ResourceConfig {
    /// upstream's defaults: GA on, beta and alpha off.
    fn default() -> ResourceConfig {
        let versions = REGISTERED
            .iter()
            .flat_map(|(g, vs)| {
                vs.iter()
                    .filter(|(_, serves)| *serves)
                    .map(move |(v, _)| ((g.to_string(), v.to_string()), is_ga(v)))
            })
            .collect();
        ResourceConfig {
            versions,
            resources: BTreeMap::new(),
        }
    }
}

/// A checked `--runtime-config`, with what kapi warns about.
#[derive(Debug, Clone, Default)]
pub struct RuntimeConfig {
    pub resources: ResourceConfig,
    pub warnings: Vec<String>,
}

impl ResourceConfig {
    /// Whether `resource` of `group`/`version` is served.
    pub fn enabled(&self, group: &str, version: &str, resource: &str) -> bool {
        let key = (group.to_string(), version.to_string(), resource.to_string());
        match self.resources.get(&key) {
            Some(on) => *on,
            None => self
                .versions
                .get(&(group.to_string(), version.to_string()))
                .copied()
                .unwrap_or(false),
        }
    }
}

/// The flag's value as `cliflag.ConfigurationMap` reads it: `k=v` pairs
/// split on commas, a bare key meaning "", later keys winning; each
/// occurrence of the flag adds to the same map.
pub fn parse_map(occurrences: &[String]) -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    for value in occurrences {
        for pair in value.split(',').filter(|s| !s.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            map.insert(k.trim().to_string(), v.trim().to_string());
        }
    }
    map
}

/// Complete, validate and merge, as kube-apiserver does at start.
/// Errors are upstream's texts (several joined as `[a, b]`).
pub fn resolve(
    occurrences: &[String],
    priority_and_fairness: bool,
) -> Result<RuntimeConfig, String> {
    let mut map = parse_map(occurrences);
    // upstream's Complete(): every spelling of the core group is `/v1`.
    let keys: Vec<String> = map.keys().cloned().collect();
    for key in keys {
        let core =
            key == "v1" || key.starts_with("v1/") || key == "api/v1" || key.starts_with("api/v1/");
        if core {
            if let Some(v) = map.remove(&key) {
                map.insert("/v1".into(), v);
            }
        }
        if key == "api/legacy" {
            map.remove(&key);
        }
    }
    let mut errors = Vec::new();
    if priority_and_fairness {
        let joined = map
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(",");
        for t in ["flowcontrol.apiserver.k8s.io/v1", "api/ga", "api/all"] {
            if joined.contains(&format!("{t}=false")) {
                errors.push(format!(
                    "--runtime-config={t}=false conflicts with --enable-priority-and-fairness=true"
                ));
                break;
            }
            if joined.contains(&format!("{t}=true")) {
                break;
            }
        }
    }
    if map.get("api/all").map(String::as_str) == Some("false") && map.len() == 1 {
        errors.push("invalid key with only api/all=false".into());
    } else {
        let mut unknown = Vec::new();
        for key in map.keys() {
            if ["api/all", "api/ga", "api/beta", "api/alpha"].contains(&key.as_str()) {
                continue;
            }
            let tokens: Vec<&str> = key.split('/').collect();
            if !(2..=3).contains(&tokens.len()) {
                errors.push(format!("runtime-config invalid key {key}"));
                break;
            }
            if versions_of(tokens[0]).is_none() {
                unknown.push(tokens[0].to_string());
            }
        }
        if !unknown.is_empty() {
            errors.push(format!("unknown api groups {}", unknown.join(",")));
        }
    }
    match errors.len() {
        0 => {}
        1 => return Err(errors.remove(0)),
        _ => return Err(format!("[{}]", errors.join(", "))),
    }
    merge(&map)
}

fn merge(map: &BTreeMap<String, String>) -> Result<RuntimeConfig, String> {
    let mut rc = ResourceConfig::default();
    let mut explicit: Vec<(String, String)> = Vec::new();
    let mut broad = false;
    let matchers: [(&str, fn(&str) -> bool); 4] = [
        ("api/all", |_| true),
        ("api/ga", is_ga),
        ("api/beta", |v| is_level(v, "beta")),
        ("api/alpha", |v| is_level(v, "alpha")),
    ];
    for (flag, matches) in matchers {
        let Some(value) = map.get(flag) else { continue };
        let on = match value.as_str() {
            "true" => true,
            "false" => false,
            other => return Err(format!("invalid value {flag}={other}")),
        };
        broad |= on && flag != "api/ga";
        for ((_, v), enabled) in rc.versions.iter_mut() {
            if matches(v) {
                *enabled = on;
            }
        }
    }
    let mut resource_prefs = Vec::new();
    for (key, value) in map {
        let tokens: Vec<&str> = key.split('/').collect();
        if !(2..=3).contains(&tokens.len()) {
            continue;
        }
        let (group, version) = (tokens[0], tokens[1]);
        let Some(versions) = versions_of(group) else {
            continue;
        };
        let gv = if group.is_empty() {
            version.to_string()
        } else {
            format!("{group}/{version}")
        };
        let Some((_, serves)) = versions.iter().find(|(v, _)| *v == version) else {
            return Err(format!("group version {gv} that has not been registered"));
        };
        let on = match value.as_str() {
            "" => true,
            v => crate::config::kube_apiserver::parse_bool(v).ok_or_else(|| {
                format!(
                    "invalid value of {key}: {value}, err: strconv.ParseBool: parsing {}: invalid syntax",
                    crate::api::go_quote(value)
                )
            })?,
        };
        if tokens.len() == 2 {
            if *serves {
                rc.versions.insert((group.into(), version.into()), on);
                rc.resources
                    .retain(|(g, v, _), _| !(g == group && v == version));
            }
            if on {
                explicit.push((group.into(), version.into()));
            }
        } else {
            let resource = tokens[2];
            if resource.to_lowercase() != resource {
                return Err(format!(
                    "invalid key {key}: group/version/resource and resource is always lowercase plural, not {}",
                    crate::api::go_quote(resource)
                ));
            }
            resource_prefs.push(((group, version, resource), on));
            if on {
                explicit.push((group.into(), version.into()));
            }
        }
    }
    for ((g, v, r), on) in resource_prefs {
        rc.resources.insert((g.into(), v.into(), r.into()), on);
    }
    // What kapi cannot serve: upstream's beta and alpha versions.
    let lacking = |g: &str, v: &str| {
        !is_ga(v) && versions_of(g).is_some_and(|vs| vs.iter().any(|(x, s)| x == &v && *s))
    };
    let mut named: Vec<String> = explicit
        .iter()
        .filter(|(g, v)| lacking(g, v))
        .map(|(g, v)| format!("{g}/{v}"))
        .collect();
    named.dedup();
    if !named.is_empty() {
        return Err(format!(
            "--runtime-config enables {}, which kapi does not serve: it serves the GA APIs of Kubernetes {} only",
            named.join(", "),
            format!("{}.{}", crate::version::KUBERNETES_MAJOR, crate::version::KUBERNETES_MINOR)
        ));
    }
    let mut warnings = Vec::new();
    if broad {
        let off: Vec<String> = rc
            .versions
            .iter()
            .filter(|((g, v), on)| **on && lacking(g, v))
            .map(|((g, v), _)| format!("{g}/{v}"))
            .collect();
        if !off.is_empty() {
            warnings.push(format!(
                "--runtime-config enables beta and alpha APIs kapi does not serve; only the GA ones are served (not served: {})",
                off.join(", ")
            ));
        }
    }
    Ok(RuntimeConfig {
        resources: rc,
        warnings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(s: &str) -> Result<RuntimeConfig, String> {
        resolve(&[s.to_string()], true)
    }

    #[test]
    fn defaults_serve_ga_only() {
        let rc = run("").expect("empty");
        assert!(rc.resources.enabled("apps", "v1", "deployments"));
        assert!(rc.resources.enabled("", "v1", "pods"));
        assert!(!rc
            .resources
            .enabled("resource.k8s.io", "v1beta1", "resourceclaims"));
    }

    #[test]
    fn versions_then_resources_win() {
        let rc = run("apps/v1=false,apps/v1/deployments=true,batch/v1/cronjobs=false").expect("ok");
        let r = &rc.resources;
        assert!(r.enabled("apps", "v1", "deployments"));
        assert!(!r.enabled("apps", "v1", "statefulsets"));
        assert!(r.enabled("batch", "v1", "jobs"));
        assert!(!r.enabled("batch", "v1", "cronjobs"));
        // A bare key is true; every core spelling is /v1.
        let rc = run("api/all=false,flowcontrol.apiserver.k8s.io/v1=true,v1,apps/v1").expect("ok");
        assert!(rc.resources.enabled("", "v1", "pods"));
        assert!(rc.resources.enabled("apps", "v1", "deployments"));
        assert!(!rc.resources.enabled("batch", "v1", "jobs"));
    }

    #[test]
    fn errors_are_upstreams() {
        let e = |s: &str| run(s).err().unwrap_or_default();
        assert_eq!(e("foo"), "runtime-config invalid key foo");
        assert_eq!(
            e("foo.example.com/v1=true"),
            "unknown api groups foo.example.com"
        );
        assert_eq!(
            e("apps/v9=true"),
            "group version apps/v9 that has not been registered"
        );
        assert_eq!(e("api/beta=yes"), "invalid value api/beta=yes");
        assert_eq!(
            e("apps/v1=yes"),
            "invalid value of apps/v1: yes, err: strconv.ParseBool: parsing \"yes\": invalid syntax"
        );
        assert_eq!(
            e("apps/v1/Deployment=false"),
            "invalid key apps/v1/Deployment: group/version/resource and resource is always lowercase plural, not \"Deployment\""
        );
        assert_eq!(
            e("api/all=false"),
            "[--runtime-config=api/all=false conflicts with --enable-priority-and-fairness=true, invalid key with only api/all=false]"
        );
        assert_eq!(
            e("flowcontrol.apiserver.k8s.io/v1=false"),
            "--runtime-config=flowcontrol.apiserver.k8s.io/v1=false conflicts with --enable-priority-and-fairness=true"
        );
        assert!(resolve(&["flowcontrol.apiserver.k8s.io/v1=false".into()], false).is_ok());
        // Registered, nothing to serve: accepted, as upstream.
        assert!(run("extensions/v1beta1=true").is_ok());
        // Upstream would serve it; kapi cannot.
        assert!(e("resource.k8s.io/v1beta1=true").contains("which kapi does not serve"));
        let warned = run("api/all=true").expect("ok");
        assert_eq!(warned.warnings.len(), 1, "{:?}", warned.warnings);
    }
}
