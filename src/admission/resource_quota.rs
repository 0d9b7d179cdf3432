//! ResourceQuota (apiserver's admission/plugin/resourcequota and the quota
//! evaluators of pkg/quota/v1): a create (or a service or claim update)
//! that would take a namespace's usage over a quota's `status.hard` is
//! refused with upstream's `exceeded quota: ...` message; an admitted one
//! is charged to the quota's `status.used` at once. Object counts
//! (`count/<resource>[.<group>]`, and `pods`, `services`, `configmaps`,
//! `secrets`, `persistentvolumeclaims`, `replicationcontrollers`,
//! `resourcequotas`, `services.nodeports`, `services.loadbalancers`),
//! pod compute resources (`requests.*`, `limits.*`, `cpu`, `memory`,
//! `ephemeral-storage`, hugepages, extended resources) with the pod scopes
//! (`Terminating`, `NotTerminating`, `BestEffort`, `NotBestEffort`,
//! `PriorityClass`, `CrossNamespacePodAffinity`), and claim storage (also
//! per storage class) are measured.
//!
//! The quota controller that fills `status.hard` and recalculates
//! `status.used` is kube-controller-manager's, in
//! [`crate::controlplane::resourcequota`].

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use serde_json::Value;

use super::common::{self, forbidden};
use super::limit_ranger::pod_resources;
use super::{Attributes, Context, Operation, ValidatingPlugin};
use crate::api::quantity::Quantity;
use crate::api::ApiError;
use crate::registry::{meta, WriteOptions};

pub(crate) type ResourceList = BTreeMap<String, Quantity>;

const STORAGE_CLASS_SUFFIX: &str = ".storageclass.storage.k8s.io/";
const BETA_STORAGE_CLASS_ANNOTATION: &str = "volume.beta.kubernetes.io/storage-class";

/// The group and resource a quota resource name measures.
pub(crate) fn measured(name: &str) -> Option<(String, String)> {
    if let Some(rest) = name.strip_prefix("count/") {
        let (plural, group) = rest.split_once('.').unwrap_or((rest, ""));
        return (!plural.is_empty()).then(|| (group.to_string(), plural.to_string()));
    }
    let core = |p: &str| Some((String::new(), p.to_string()));
    match name {
        "pods" | "cpu" | "memory" | "ephemeral-storage" => core("pods"),
        "services" | "services.nodeports" | "services.loadbalancers" => core("services"),
        "persistentvolumeclaims" | "requests.storage" => core("persistentvolumeclaims"),
        "configmaps" | "secrets" | "replicationcontrollers" | "resourcequotas" => core(name),
        n if n.contains(STORAGE_CLASS_SUFFIX) => core("persistentvolumeclaims"),
        n if n.starts_with("requests.")
            || n.starts_with("limits.")
            || n.starts_with("hugepages-") =>
        {
            core("pods")
        }
        _ => None,
    }
}

fn count_name(group: &str, plural: &str) -> String {
    if group.is_empty() {
        format!("count/{plural}")
    } else {
        format!("count/{plural}.{group}")
    }
}

pub(crate) fn resource_list(v: &Value) -> ResourceList {
    v.as_object()
        .into_iter()
        .flatten()
        .filter_map(|(k, q)| Quantity::from_value(q).map(|q| (k.clone(), q)))
        .collect()
}

pub(crate) fn list_value(l: &ResourceList) -> Value {
    Value::Object(l.iter().map(|(k, v)| (k.clone(), v.to_value())).collect())
}

pub(crate) fn add(a: &mut ResourceList, b: &ResourceList) {
    for (k, v) in b {
        let cur = a.get(k).copied().unwrap_or_default();
        a.insert(k.clone(), cur + *v);
    }
}

/// upstream's `quota.Mask`.
pub(crate) fn mask(l: &ResourceList, names: &BTreeSet<String>) -> ResourceList {
    l.iter()
        .filter(|(k, _)| names.contains(*k))
        .map(|(k, v)| (k.clone(), *v))
        .collect()
}

/// upstream's `prettyPrint`: `k=v` sorted by name, comma separated.
fn pretty(l: &ResourceList) -> String {
    l.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// upstream's `QuotaV1Pod`: terminal pods, and pods past their deletion
/// grace period, no longer use compute resources.
fn pod_counts(pod: &Value) -> bool {
    if matches!(
        pod["status"]["phase"].as_str(),
        Some("Succeeded" | "Failed")
    ) {
        return false;
    }
    let m = &pod["metadata"];
    if let (Some(ts), Some(grace)) = (
        m["deletionTimestamp"].as_str(),
        m["deletionGracePeriodSeconds"].as_i64(),
    ) {
        if let Ok(t) = chrono::DateTime::parse_from_rfc3339(ts) {
            if chrono::Utc::now() > t + chrono::Duration::seconds(grace) {
                return false;
            }
        }
    }
    true
}

fn is_extended(name: &str) -> bool {
    name.contains('/') && !name.starts_with("kubernetes.io/") && !name.starts_with("requests.")
}

/// upstream's `podComputeUsageHelper`.
fn compute_usage(requests: &ResourceList, limits: &ResourceList) -> ResourceList {
    let mut r = ResourceList::new();
    r.insert("pods".into(), Quantity::int(1));
    for res in ["cpu", "memory", "ephemeral-storage"] {
        if let Some(q) = requests.get(res) {
            r.insert(res.into(), *q);
            r.insert(format!("requests.{res}"), *q);
        }
        if let Some(q) = limits.get(res) {
            r.insert(format!("limits.{res}"), *q);
        }
    }
    for (k, q) in requests {
        if k.starts_with("hugepages-") {
            r.insert(k.clone(), *q);
            r.insert(format!("requests.{k}"), *q);
        }
        if is_extended(k) {
            r.insert(format!("requests.{k}"), *q);
        }
    }
    r
}

fn claim_class(pvc: &Value) -> String {
    pvc["metadata"]["annotations"][BETA_STORAGE_CLASS_ANNOTATION]
        .as_str()
        .or_else(|| pvc["spec"]["storageClassName"].as_str())
        .unwrap_or("")
        .to_string()
}

/// What one object uses, as upstream's evaluators measure it.
pub(crate) fn usage(group: &str, plural: &str, obj: &Value) -> ResourceList {
    let mut r = ResourceList::new();
    r.insert(count_name(group, plural), Quantity::int(1));
    if !group.is_empty() {
        return r;
    }
    match plural {
        "pods" if pod_counts(obj) => {
            let spec = &obj["spec"];
            let u = compute_usage(
                &pod_resources(spec, "requests"),
                &pod_resources(spec, "limits"),
            );
            add(&mut r, &u);
        }
        "services" => {
            r.insert("services".into(), Quantity::int(1));
            let ports = obj["spec"]["ports"].as_array().map_or(0, Vec::len) as i64;
            match obj["spec"]["type"].as_str() {
                Some("NodePort") => {
                    r.insert("services.nodeports".into(), Quantity::int(ports));
                }
                Some("LoadBalancer") => {
                    let n = if obj["spec"]["allocateLoadBalancerNodePorts"].as_bool() == Some(false)
                    {
                        common::items(&obj["spec"], "ports")
                            .filter(|p| p["nodePort"].as_i64().unwrap_or(0) != 0)
                            .count() as i64
                    } else {
                        ports
                    };
                    r.insert("services.nodeports".into(), Quantity::int(n));
                    r.insert("services.loadbalancers".into(), Quantity::int(1));
                }
                _ => {}
            }
        }
        "persistentvolumeclaims" => {
            r.insert("persistentvolumeclaims".into(), Quantity::int(1));
            let class = claim_class(obj);
            if !class.is_empty() {
                r.insert(
                    format!("{class}{STORAGE_CLASS_SUFFIX}persistentvolumeclaims"),
                    Quantity::int(1),
                );
            }
            let requested = Quantity::from_value(&obj["spec"]["resources"]["requests"]["storage"]);
            let allocated = Quantity::from_value(&obj["status"]["allocatedResources"]["storage"]);
            let storage = match (requested, allocated) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            };
            if let Some(s) = storage {
                r.insert("requests.storage".into(), s);
                if !class.is_empty() {
                    r.insert(format!("{class}{STORAGE_CLASS_SUFFIX}requests.storage"), s);
                }
            }
        }
        "configmaps" | "secrets" | "replicationcontrollers" | "resourcequotas" => {
            r.insert(plural.into(), Quantity::int(1));
        }
        _ => {}
    }
    r
}

/// The quota's scopes as selector requirements (`spec.scopes` are `Exists`).
fn scope_selectors(quota: &Value) -> Vec<(String, String, Vec<String>)> {
    let mut out: Vec<(String, String, Vec<String>)> = common::items(&quota["spec"], "scopes")
        .filter_map(Value::as_str)
        .map(|s| (s.to_string(), "Exists".to_string(), Vec::new()))
        .collect();
    for e in common::items(&quota["spec"]["scopeSelector"], "matchExpressions") {
        let values = common::items(e, "values")
            .filter_map(Value::as_str)
            .map(String::from)
            .collect();
        out.push((
            e["scopeName"].as_str().unwrap_or("").to_string(),
            e["operator"].as_str().unwrap_or("").to_string(),
            values,
        ));
    }
    out
}

fn best_effort(spec: &Value) -> bool {
    ["containers", "initContainers"]
        .iter()
        .flat_map(|k| common::items(spec, k))
        .all(|c| {
            ["requests", "limits"].iter().all(|w| {
                ["cpu", "memory"].iter().all(|r| {
                    Quantity::from_value(&c["resources"][w][r]).is_none_or(|q| q.is_zero())
                })
            })
        })
}

fn cross_namespace_affinity(spec: &Value) -> bool {
    let a = &spec["affinity"];
    [&a["podAffinity"], &a["podAntiAffinity"]].iter().any(|pa| {
        let required = common::items(pa, "requiredDuringSchedulingIgnoredDuringExecution");
        let preferred = common::items(pa, "preferredDuringSchedulingIgnoredDuringExecution")
            .map(|w| &w["podAffinityTerm"]);
        required.chain(preferred).any(|t| {
            t["namespaces"].as_array().is_some_and(|n| !n.is_empty())
                || t["namespaceSelector"].is_object()
        })
    })
}

/// upstream's pod scope matching.
fn pod_matches_scope(scope: &str, op: &str, values: &[String], pod: &Value) -> bool {
    let spec = &pod["spec"];
    let truth = match scope {
        "Terminating" => spec["activeDeadlineSeconds"]
            .as_i64()
            .is_some_and(|d| d >= 0),
        "NotTerminating" => spec["activeDeadlineSeconds"].is_null(),
        "BestEffort" => best_effort(spec),
        "NotBestEffort" => !best_effort(spec),
        "CrossNamespacePodAffinity" => cross_namespace_affinity(spec),
        "PriorityClass" => {
            let pc = spec["priorityClassName"].as_str().unwrap_or("");
            return match op {
                "In" => values.iter().any(|v| v == pc),
                "NotIn" => !values.iter().any(|v| v == pc),
                "Exists" => true,
                _ => false,
            };
        }
        _ => return false,
    };
    match op {
        "Exists" => truth,
        "DoesNotExist" => !truth,
        _ => truth,
    }
}

/// Whether a quota's scopes select the object (only pods have scopes).
pub(crate) fn scopes_match(quota: &Value, group: &str, plural: &str, obj: &Value) -> bool {
    let selectors = scope_selectors(quota);
    if selectors.is_empty() {
        return true;
    }
    if !(group.is_empty() && plural == "pods") {
        return false;
    }
    selectors
        .iter()
        .all(|(s, op, values)| pod_matches_scope(s, op, values, obj))
}

/// The resource names of `hard` that measure (group, plural).
fn matching_names(hard: &ResourceList, group: &str, plural: &str) -> BTreeSet<String> {
    hard.keys()
        .filter(|k| measured(k).is_some_and(|(g, p)| g == group && p == plural))
        .cloned()
        .collect()
}

/// upstream's pod evaluator `Constraints`: quota on cpu or memory makes
/// every container name it.
fn pod_constraints(required: &BTreeSet<String>, pod: &Value) -> Result<(), String> {
    const VALIDATION: [&str; 6] = [
        "requests.cpu",
        "requests.memory",
        "limits.cpu",
        "limits.memory",
        "cpu",
        "memory",
    ];
    let required: BTreeSet<&str> = required
        .iter()
        .map(String::as_str)
        .filter(|r| VALIDATION.contains(r))
        .collect();
    let mut missing: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    for key in ["containers", "initContainers"] {
        for c in common::items(&pod["spec"], key) {
            let u = compute_usage(
                &resource_list(&c["resources"]["requests"]),
                &resource_list(&c["resources"]["limits"]),
            );
            for r in &required {
                if !u.contains_key(*r) {
                    missing
                        .entry(r)
                        .or_default()
                        .insert(c["name"].as_str().unwrap_or("").to_string());
                }
            }
        }
    }
    if missing.is_empty() {
        return Ok(());
    }
    let parts: Vec<String> = missing
        .iter()
        .map(|(r, cs)| {
            format!(
                "{r} for: {}",
                cs.iter().cloned().collect::<Vec<_>>().join(",")
            )
        })
        .collect();
    Err(format!("must specify {}", parts.join("; ")))
}

pub struct ResourceQuota {
    /// One admission at a time per namespace, as upstream's evaluator queues them.
    locks: parking_lot::Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

impl Default for ResourceQuota {
    fn default() -> Self {
        Self::new()
    }
}

impl ResourceQuota {
    pub fn new() -> Self {
        ResourceQuota {
            locks: parking_lot::Mutex::new(HashMap::new()),
        }
    }

    fn lock_for(&self, namespace: &str) -> Arc<tokio::sync::Mutex<()>> {
        self.locks
            .lock()
            .entry(namespace.to_string())
            .or_default()
            .clone()
    }

    /// upstream's `CheckRequest`: the quotas with their new usage, or the refusal.
    fn check(
        a: &Attributes<'_>,
        quotas: &[Value],
        obj: &Value,
    ) -> Result<Vec<(usize, ResourceList)>, ApiError> {
        let (group, plural) = (a.resource.group.as_str(), a.resource.plural.as_str());
        let mut interesting = Vec::new();
        for (i, q) in quotas.iter().enumerate() {
            let name = meta::name(q);
            let hard = resource_list(&q["status"]["hard"]);
            let matched = matching_names(&hard, group, plural);
            if matched.is_empty() || !scopes_match(q, group, plural, obj) {
                continue;
            }
            if group.is_empty() && plural == "pods" {
                pod_constraints(&matched, obj)
                    .map_err(|e| forbidden(a, format!("failed quota: {name}: {e}")))?;
            }
            let used = q["status"]["used"].as_object();
            let unknown: Vec<&String> = matched
                .iter()
                .filter(|r| used.is_none_or(|u| !u.contains_key(*r)))
                .collect();
            if !unknown.is_empty() {
                let names: Vec<&str> = unknown.iter().map(|s| s.as_str()).collect();
                return Err(forbidden(
                    a,
                    format!(
                        "status unknown for quota: {name}, resources: {}",
                        names.join(",")
                    ),
                ));
            }
            interesting.push(i);
        }
        if interesting.is_empty() {
            return Ok(Vec::new());
        }
        let mut delta = usage(group, plural, obj);
        let negative: Vec<&str> = delta
            .iter()
            .filter(|(_, v)| v.nanos < 0)
            .map(|(k, _)| k.as_str())
            .collect();
        if !negative.is_empty() {
            return Err(forbidden(
                a,
                format!(
                    "quota usage is negative for resource(s): {}",
                    negative.join(",")
                ),
            ));
        }
        if a.operation == Operation::Update {
            if let Some(old) = a.old_object {
                let prev = usage(group, plural, old);
                for (k, v) in delta.iter_mut() {
                    if let Some(p) = prev.get(k) {
                        let d = *v - *p;
                        *v = if d.nanos < 0 { Quantity::zero() } else { d };
                    }
                }
            }
        }
        delta.retain(|_, v| !v.is_zero());
        if delta.is_empty() {
            return Ok(Vec::new());
        }
        let mut out = Vec::new();
        for i in interesting {
            let q = &quotas[i];
            let hard = resource_list(&q["status"]["hard"]);
            let used = resource_list(&q["status"]["used"]);
            let hard_names: BTreeSet<String> = hard.keys().cloned().collect();
            let requested = mask(&delta, &hard_names);
            let mut new_used = used.clone();
            add(&mut new_used, &requested);
            let exceeded: BTreeSet<String> = requested
                .keys()
                .filter(|k| match (new_used.get(*k), hard.get(*k)) {
                    (Some(u), Some(h)) => u > h,
                    _ => false,
                })
                .cloned()
                .collect();
            if !exceeded.is_empty() {
                return Err(forbidden(
                    a,
                    format!(
                        "exceeded quota: {}, requested: {}, used: {}, limited: {}",
                        meta::name(q),
                        pretty(&mask(&requested, &exceeded)),
                        pretty(&mask(&used, &exceeded)),
                        pretty(&mask(&hard, &exceeded))
                    ),
                ));
            }
            out.push((i, new_used));
        }
        Ok(out)
    }

    /// Checks and charges; `Ok(false)` when a quota changed underneath (retry).
    async fn admit_once(
        &self,
        a: &Attributes<'_>,
        ctx: &Context,
        obj: &Value,
    ) -> Result<bool, ApiError> {
        let quotas = common::list_core(&ctx.registries, "resourcequotas", a.namespace).await?;
        if quotas.is_empty() {
            return Ok(true);
        }
        let charged = Self::check(a, &quotas, obj)?;
        if a.dry_run || charged.is_empty() {
            return Ok(true);
        }
        let Some(reg) = ctx.registries.get("", "v1", "resourcequotas") else {
            return Ok(true);
        };
        let opts = WriteOptions {
            user_agent: Some(
                "kube-apiserver/v1.34.0 (linux/amd64) kubernetes/resourcequota".into(),
            ),
            ..Default::default()
        };
        for (i, used) in charged {
            let mut q = quotas[i].clone();
            q["status"]["used"] = list_value(&used);
            let name = meta::name(&q).to_string();
            match reg
                .update(a.namespace, &name, q, Some("status"), &opts)
                .await
            {
                Ok(_) => {}
                Err(e) if e.code == 409 => return Ok(false),
                Err(e) => return Err(e),
            }
        }
        Ok(true)
    }
}

#[async_trait::async_trait]
impl ValidatingPlugin for ResourceQuota {
    fn name(&self) -> &'static str {
        "ResourceQuota"
    }

    async fn validate(&self, a: &Attributes<'_>, ctx: &Context) -> Result<Vec<String>, ApiError> {
        if !a.subresource.is_empty() || !a.resource.namespaced || a.namespace.is_empty() {
            return Ok(Vec::new());
        }
        let core = a.resource.group.is_empty();
        let charged_on_update = core
            && matches!(
                a.resource.plural.as_str(),
                "services" | "persistentvolumeclaims"
            );
        match a.operation {
            Operation::Create => {}
            Operation::Update if charged_on_update => {}
            _ => return Ok(Vec::new()),
        }
        let Some(obj) = a.object.as_ref() else {
            return Ok(Vec::new());
        };
        // Most namespaces have no quota: the watch cache says so without a
        // storage round trip or a queue. A quota the cache has not seen yet
        // is not enforced anyway until the controller fills status.hard.
        if !common::any_core_cached(&ctx.registries, "resourcequotas", a.namespace).await? {
            return Ok(Vec::new());
        }
        let lock = self.lock_for(a.namespace);
        let _held = lock.lock().await;
        for _ in 0..5 {
            if self.admit_once(a, ctx, obj).await? {
                return Ok(Vec::new());
            }
        }
        Err(ApiError::conflict(
            "",
            "resourcequotas",
            "",
            "the object has been modified; please apply your changes to the latest version and try again",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::common::testing;

    #[test]
    fn names_map_to_resources() {
        let m = |n: &str| measured(n).map(|(g, p)| format!("{p}.{g}"));
        assert_eq!(
            m("count/deployments.apps").as_deref(),
            Some("deployments.apps")
        );
        assert_eq!(
            m("count/widgets.example.com").as_deref(),
            Some("widgets.example.com")
        );
        assert_eq!(m("count/pods").as_deref(), Some("pods."));
        assert_eq!(m("requests.cpu").as_deref(), Some("pods."));
        assert_eq!(
            m("requests.storage").as_deref(),
            Some("persistentvolumeclaims.")
        );
        assert_eq!(
            m("gold.storageclass.storage.k8s.io/requests.storage").as_deref(),
            Some("persistentvolumeclaims.")
        );
        assert_eq!(m("services.nodeports").as_deref(), Some("services."));
        assert_eq!(m("configmaps").as_deref(), Some("configmaps."));
        assert_eq!(m("bogus"), None);
    }

    #[test]
    fn usage_of_pods_services_and_claims() {
        let pod = json!({"spec": {"containers": [
            {"name": "a", "resources": {"requests": {"cpu": "100m", "memory": "1Gi"}, "limits": {"cpu": "1"}}},
            {"name": "b", "resources": {"requests": {"cpu": "200m", "memory": "512Mi", "example.com/gpu": "1"}}}]}});
        let u = usage("", "pods", &pod);
        let s = |k: &str| u.get(k).map(|q| q.to_string()).unwrap_or_default();
        assert_eq!(
            (s("pods"), s("count/pods"), s("requests.cpu"), s("cpu")),
            ("1".into(), "1".into(), "300m".into(), "300m".into())
        );
        assert_eq!(
            (
                s("requests.memory"),
                s("limits.cpu"),
                s("requests.example.com/gpu")
            ),
            ("1536Mi".into(), "1".into(), "1".into())
        );
        let done = json!({"spec": pod["spec"], "status": {"phase": "Succeeded"}});
        assert_eq!(
            usage("", "pods", &done).keys().collect::<Vec<_>>(),
            ["count/pods"]
        );

        let svc = json!({"spec": {"type": "LoadBalancer", "ports": [{"port": 80}, {"port": 443}]}});
        let u = usage("", "services", &svc);
        assert_eq!(
            pretty(&u),
            "count/services=1,services=1,services.loadbalancers=1,services.nodeports=2"
        );

        let pvc = json!({"spec": {"storageClassName": "gold", "resources": {"requests": {"storage": "10Gi"}}}});
        assert_eq!(
            pretty(&usage("", "persistentvolumeclaims", &pvc)),
            "count/persistentvolumeclaims=1,gold.storageclass.storage.k8s.io/persistentvolumeclaims=1,gold.storageclass.storage.k8s.io/requests.storage=10Gi,persistentvolumeclaims=1,requests.storage=10Gi"
        );
        assert_eq!(
            pretty(&usage("apps", "deployments", &json!({}))),
            "count/deployments.apps=1"
        );
    }

    #[test]
    fn scopes_and_constraints() {
        let be = json!({"spec": {"containers": [{"name": "c"}]}});
        let burst = json!({"spec": {"activeDeadlineSeconds": 10, "priorityClassName": "high",
            "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}});
        let q = |scopes: Value| json!({"spec": {"scopes": scopes}});
        assert!(scopes_match(&q(json!(["BestEffort"])), "", "pods", &be));
        assert!(!scopes_match(&q(json!(["BestEffort"])), "", "pods", &burst));
        assert!(scopes_match(
            &q(json!(["NotBestEffort", "Terminating"])),
            "",
            "pods",
            &burst
        ));
        assert!(!scopes_match(
            &q(json!(["NotTerminating"])),
            "",
            "pods",
            &burst
        ));
        assert!(!scopes_match(
            &q(json!(["BestEffort"])),
            "",
            "configmaps",
            &json!({})
        ));
        let pc = json!({"spec": {"scopeSelector": {"matchExpressions": [
            {"scopeName": "PriorityClass", "operator": "In", "values": ["high"]}]}}});
        assert!(scopes_match(&pc, "", "pods", &burst));
        assert!(!scopes_match(&pc, "", "pods", &be));

        let required: BTreeSet<String> = ["limits.cpu", "requests.cpu", "pods"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(
            pod_constraints(&required, &burst),
            Err("must specify limits.cpu for: c".to_string())
        );
        assert_eq!(
            pod_constraints(&required, &be),
            Err("must specify limits.cpu for: c; requests.cpu for: c".to_string())
        );
    }

    use crate::registry::Registries;
    use serde_json::json;

    /// The controller's pass over every quota, as its full resync makes it.
    async fn sync_all(registries: &Registries) {
        for q in common::list_core(registries, "resourcequotas", "")
            .await
            .expect("quotas")
        {
            crate::controlplane::resourcequota::sync_quota(registries, &q)
                .await
                .expect("sync");
        }
    }

    #[tokio::test]
    async fn refuses_over_quota_and_charges_usage() {
        let env = testing::env().await;
        env.namespace("q", json!({})).await;
        env.create("", "v1", "resourcequotas", json!({"apiVersion": "v1", "kind": "ResourceQuota",
            "metadata": {"name": "q", "namespace": "q"}, "spec": {"hard": {"configmaps": "2", "count/secrets": "5"}}})).await;
        let ctx = Context {
            registries: env.registries.clone(),
        };
        let cms = env.resource("", "v1", "configmaps");
        // Before the controller filled status.hard, the quota does not apply.
        let a = testing::create_attrs(
            &cms,
            "q",
            "a",
            json!({"metadata": {"name": "a", "namespace": "q"}}),
        );
        let plugin = ResourceQuota::new();
        plugin.validate(&a, &ctx).await.expect("unconstrained");

        sync_all(&env.registries).await;
        let quota = common::get_core(&env.registries, "resourcequotas", "q", "q")
            .await
            .ok()
            .flatten()
            .unwrap_or_default();
        assert_eq!(
            quota["status"],
            json!({"hard": {"configmaps": "2", "count/secrets": "5"}, "used": {"configmaps": "0", "count/secrets": "0"}})
        );

        for n in ["a", "b"] {
            let a = testing::create_attrs(
                &cms,
                "q",
                n,
                json!({"metadata": {"name": n, "namespace": "q"}}),
            );
            plugin.validate(&a, &ctx).await.expect("within quota");
        }
        let quota = common::get_core(&env.registries, "resourcequotas", "q", "q")
            .await
            .ok()
            .flatten()
            .unwrap_or_default();
        assert_eq!(quota["status"]["used"]["configmaps"], "2");
        let a = testing::create_attrs(
            &cms,
            "q",
            "c",
            json!({"metadata": {"name": "c", "namespace": "q"}}),
        );
        let e = plugin
            .validate(&a, &ctx)
            .await
            .err()
            .map(|e| (e.code, e.message));
        assert_eq!(
            e,
            Some((403, "configmaps \"c\" is forbidden: exceeded quota: q, requested: configmaps=1, used: configmaps=2, limited: configmaps=2".to_string()))
        );

        // The controller recalculates from what is stored (nothing was).
        sync_all(&env.registries).await;
        let quota = common::get_core(&env.registries, "resourcequotas", "q", "q")
            .await
            .ok()
            .flatten()
            .unwrap_or_default();
        assert_eq!(quota["status"]["used"]["configmaps"], "0");
    }
}
