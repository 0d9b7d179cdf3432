//! LimitRanger (plugin/pkg/admission/limitranger): the LimitRanges of a
//! namespace default the requests and limits of a new pod's containers
//! (`Container` items: `defaultRequest`, `default`, recorded in the
//! `kubernetes.io/limit-ranger` annotation) and bound them (`min`, `max`,
//! `maxLimitRequestRatio` per container, and for the whole pod with `Pod`
//! items); `PersistentVolumeClaim` items bound a claim's storage request.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::common::{self, forbidden};
use super::{Attributes, Context, MutatingPlugin, Operation, ValidatingPlugin};
use crate::api::quantity::Quantity;
use crate::api::ApiError;
use crate::registry::meta;

pub const ANNOTATION: &str = "kubernetes.io/limit-ranger";

pub struct LimitRanger;

type ResourceList = BTreeMap<String, Quantity>;

fn resource_list(v: &Value) -> ResourceList {
    v.as_object()
        .into_iter()
        .flatten()
        .filter_map(|(k, q)| Quantity::from_value(q).map(|q| (k.clone(), q)))
        .collect()
}

/// upstream's `SupportsAttributes`: pods on create, claims on create and
/// update, never subresources.
fn supports(a: &Attributes<'_>) -> bool {
    if !a.subresource.is_empty() || a.object.is_none() {
        return false;
    }
    if !matches!(a.operation, Operation::Create | Operation::Update) {
        return false;
    }
    if common::is_core(a, "pods") {
        return a.operation == Operation::Create;
    }
    common::is_core(a, "persistentvolumeclaims")
}

/// The namespace's LimitRanges, unless the object is being deleted.
async fn limit_ranges(a: &Attributes<'_>, ctx: &Context) -> Result<Vec<Value>, ApiError> {
    if a.old_object.is_some_and(meta::is_deleting) {
        return Ok(Vec::new());
    }
    common::list_core(&ctx.registries, "limitranges", a.namespace)
        .await
        .map_err(|e| forbidden(a, e.message))
}

fn limits_of<'a>(lr: &'a Value, ty: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
    common::items(&lr["spec"], "limits").filter(move |l| l["type"] == ty)
}

/// upstream's `defaultContainerResourceRequirements`.
fn default_requirements(lr: &Value) -> (ResourceList, ResourceList) {
    let (mut requests, mut limits) = (ResourceList::new(), ResourceList::new());
    for l in limits_of(lr, "Container") {
        requests.extend(resource_list(&l["defaultRequest"]));
        limits.extend(resource_list(&l["default"]));
    }
    (requests, limits)
}

/// upstream's `mergeContainerResources`: what is missing is defaulted;
/// returns the annotation lines.
fn merge_container(
    c: &mut Map<String, Value>,
    requests: &ResourceList,
    limits: &ResourceList,
    prefix: &str,
    notes: &mut Vec<String>,
) {
    let name = c
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let resources = c.entry("resources").or_insert_with(|| json!({}));
    if !resources.is_object() {
        *resources = json!({});
    }
    let mut set = |field: &str, defaults: &ResourceList| -> Vec<String> {
        let mut changed = Vec::new();
        if defaults.is_empty() {
            return changed;
        }
        let entry = &mut resources[field];
        if !entry.is_object() {
            *entry = json!({});
        }
        if let Some(m) = entry.as_object_mut() {
            for (k, v) in defaults {
                if !m.contains_key(k) {
                    m.insert(k.clone(), v.to_value());
                    changed.push(k.clone());
                }
            }
        }
        changed
    };
    let mut set_limits = set("limits", limits);
    let mut set_requests = set("requests", requests);
    if !set_requests.is_empty() {
        set_requests.sort();
        notes.push(format!(
            "{} request for {prefix} {name}",
            set_requests.join(", ")
        ));
    }
    if !set_limits.is_empty() {
        set_limits.sort();
        notes.push(format!(
            "{} limit for {prefix} {name}",
            set_limits.join(", ")
        ));
    }
}

/// upstream's `PodMutateLimitFunc`.
fn mutate_pod(lr: &Value, pod: &mut Value) {
    let (requests, limits) = default_requirements(lr);
    let mut notes = Vec::new();
    if let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) {
        for (key, prefix) in [
            ("containers", "container"),
            ("initContainers", "init container"),
        ] {
            if let Some(cs) = spec.get_mut(key).and_then(Value::as_array_mut) {
                for c in cs.iter_mut().filter_map(Value::as_object_mut) {
                    merge_container(c, &requests, &limits, prefix, &mut notes);
                }
            }
        }
    }
    if !notes.is_empty() {
        let m = meta::meta_mut(pod);
        let ann = m.entry("annotations").or_insert_with(|| json!({}));
        if !ann.is_object() {
            *ann = json!({});
        }
        ann[ANNOTATION] = Value::String(format!("LimitRanger plugin set: {}", notes.join("; ")));
    }
}

fn min_constraint(
    ty: &str,
    name: &str,
    enforced: Quantity,
    requests: &ResourceList,
    limits: &ResourceList,
) -> Option<String> {
    let Some(req) = requests.get(name) else {
        return Some(format!(
            "minimum {name} usage per {ty} is {enforced}.  No request is specified"
        ));
    };
    if *req < enforced {
        return Some(format!(
            "minimum {name} usage per {ty} is {enforced}, but request is {req}"
        ));
    }
    match limits.get(name) {
        Some(lim) if *lim < enforced => Some(format!(
            "minimum {name} usage per {ty} is {enforced}, but limit is {lim}"
        )),
        _ => None,
    }
}

fn max_constraint(
    ty: &str,
    name: &str,
    enforced: Quantity,
    requests: &ResourceList,
    limits: &ResourceList,
) -> Option<String> {
    let Some(lim) = limits.get(name) else {
        return Some(format!(
            "maximum {name} usage per {ty} is {enforced}.  No limit is specified"
        ));
    };
    if *lim > enforced {
        return Some(format!(
            "maximum {name} usage per {ty} is {enforced}, but limit is {lim}"
        ));
    }
    match requests.get(name) {
        Some(req) if *req > enforced => Some(format!(
            "maximum {name} usage per {ty} is {enforced}, but request is {req}"
        )),
        _ => None,
    }
}

/// upstream's `maxRequestConstraint` (claims have no limits).
fn max_request_constraint(
    ty: &str,
    name: &str,
    enforced: Quantity,
    requests: &ResourceList,
) -> Option<String> {
    match requests.get(name) {
        None => Some(format!(
            "maximum {name} usage per {ty} is {enforced}.  No request is specified"
        )),
        Some(req) if *req > enforced => Some(format!(
            "maximum {name} usage per {ty} is {enforced}, but request is {req}"
        )),
        _ => None,
    }
}

fn ratio_constraint(
    ty: &str,
    name: &str,
    enforced: Quantity,
    requests: &ResourceList,
    limits: &ResourceList,
) -> Option<String> {
    let req = requests.get(name).filter(|q| !q.is_zero());
    let lim = limits.get(name).filter(|q| !q.is_zero());
    let Some(req) = req else {
        return Some(format!("{name} max limit to request ratio per {ty} is {enforced}, but no request is specified or request is 0"));
    };
    let Some(lim) = lim else {
        return Some(format!("{name} max limit to request ratio per {ty} is {enforced}, but no limit is specified or limit is 0"));
    };
    let observed = lim.nanos as f64 / req.nanos as f64;
    if observed > enforced.nanos as f64 / 1e9 {
        return Some(format!(
            "{name} max limit to request ratio per {ty} is {enforced}, but provided ratio is {observed:.6}"
        ));
    }
    None
}

fn bounds(
    limit: &Value,
    ty: &str,
    requests: &ResourceList,
    limits: &ResourceList,
    errs: &mut Vec<String>,
) {
    for (k, v) in resource_list(&limit["min"]) {
        errs.extend(min_constraint(ty, &k, v, requests, limits));
    }
    for (k, v) in resource_list(&limit["max"]) {
        errs.extend(max_constraint(ty, &k, v, requests, limits));
    }
    for (k, v) in resource_list(&limit["maxLimitRequestRatio"]) {
        errs.extend(ratio_constraint(ty, &k, v, requests, limits));
    }
}

fn container_lists(c: &Value) -> (ResourceList, ResourceList) {
    (
        resource_list(&c["resources"]["requests"]),
        resource_list(&c["resources"]["limits"]),
    )
}

fn add_into(total: &mut ResourceList, l: &ResourceList) {
    for (k, v) in l {
        let cur = total.get(k).copied().unwrap_or_default();
        total.insert(k.clone(), cur + *v);
    }
}

fn max_into(total: &mut ResourceList, l: &ResourceList) {
    for (k, v) in l {
        match total.get(k) {
            Some(cur) if *cur >= *v => {}
            _ => {
                total.insert(k.clone(), *v);
            }
        }
    }
}

/// upstream's `resourcehelper.PodRequests`/`PodLimits` (`which` is
/// "requests" or "limits"): the containers' sum, sidecars included, at
/// least what any init container needs while it runs, plus the overhead.
pub fn pod_resources(spec: &Value, which: &str) -> ResourceList {
    let get = |c: &Value| resource_list(&c["resources"][which]);
    let mut total = ResourceList::new();
    for c in common::items(spec, "containers") {
        add_into(&mut total, &get(c));
    }
    let mut sidecars = ResourceList::new();
    let mut init_max = ResourceList::new();
    for c in common::items(spec, "initContainers") {
        let r = get(c);
        if c["restartPolicy"] == "Always" {
            add_into(&mut sidecars, &r);
            add_into(&mut total, &r);
        } else {
            let mut running = sidecars.clone();
            add_into(&mut running, &r);
            max_into(&mut init_max, &running);
        }
    }
    max_into(&mut total, &init_max);
    add_into(&mut total, &resource_list(&spec["overhead"]));
    total
}

/// upstream's `PodValidateLimitFunc`.
fn validate_pod(lr: &Value, pod: &Value) -> Vec<String> {
    let spec = &pod["spec"];
    let mut errs = Vec::new();
    for limit in common::items(&lr["spec"], "limits") {
        match limit["type"].as_str() {
            Some("Container") => {
                for key in ["containers", "initContainers"] {
                    for c in common::items(spec, key) {
                        let (req, lim) = container_lists(c);
                        bounds(limit, "Container", &req, &lim, &mut errs);
                    }
                }
            }
            Some("Pod") => {
                let (req, lim) = (
                    pod_resources(spec, "requests"),
                    pod_resources(spec, "limits"),
                );
                bounds(limit, "Pod", &req, &lim, &mut errs);
            }
            _ => {}
        }
    }
    errs
}

/// upstream's `PersistentVolumeClaimValidateLimitFunc`.
fn validate_claim(lr: &Value, pvc: &Value) -> Vec<String> {
    let requests = resource_list(&pvc["spec"]["resources"]["requests"]);
    let mut errs = Vec::new();
    for limit in limits_of(lr, "PersistentVolumeClaim") {
        for (k, v) in resource_list(&limit["min"]) {
            errs.extend(min_constraint(
                "PersistentVolumeClaim",
                &k,
                v,
                &requests,
                &ResourceList::new(),
            ));
        }
        for (k, v) in resource_list(&limit["max"]) {
            errs.extend(max_request_constraint(
                "PersistentVolumeClaim",
                &k,
                v,
                &requests,
            ));
        }
    }
    errs
}

/// `utilerrors.NewAggregate(errs).Error()`.
fn aggregate(errs: &[String]) -> String {
    if errs.len() == 1 {
        errs[0].clone()
    } else {
        format!("[{}]", errs.join(", "))
    }
}

#[async_trait::async_trait]
impl MutatingPlugin for LimitRanger {
    fn name(&self) -> &'static str {
        "LimitRanger"
    }

    async fn admit(&self, a: &mut Attributes<'_>, ctx: &Context) -> Result<Vec<String>, ApiError> {
        if !supports(a) || !common::is_core(a, "pods") {
            return Ok(Vec::new());
        }
        for lr in limit_ranges(a, ctx).await? {
            if let Some(pod) = a.object.as_mut() {
                mutate_pod(&lr, pod);
            }
        }
        Ok(Vec::new())
    }
}

#[async_trait::async_trait]
impl ValidatingPlugin for LimitRanger {
    fn name(&self) -> &'static str {
        "LimitRanger"
    }

    async fn validate(&self, a: &Attributes<'_>, ctx: &Context) -> Result<Vec<String>, ApiError> {
        if !supports(a) {
            return Ok(Vec::new());
        }
        let Some(obj) = a.object.as_ref() else {
            return Ok(Vec::new());
        };
        let pods = common::is_core(a, "pods");
        for lr in limit_ranges(a, ctx).await? {
            let errs = if pods {
                validate_pod(&lr, obj)
            } else {
                validate_claim(&lr, obj)
            };
            if !errs.is_empty() {
                return Err(forbidden(a, aggregate(&errs)));
            }
        }
        Ok(Vec::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::common::testing;

    #[test]
    fn defaults_and_annotation() {
        let lr = json!({"spec": {"limits": [{"type": "Container",
            "default": {"cpu": "500m", "memory": "256Mi"}, "defaultRequest": {"cpu": "100m", "memory": "128Mi"}}]}});
        let mut pod = json!({"metadata": {"name": "p"}, "spec": {"containers": [
            {"name": "a", "image": "x", "resources": {"limits": {"cpu": "1"}}},
            {"name": "b", "image": "x"}]}});
        mutate_pod(&lr, &mut pod);
        assert_eq!(
            pod["spec"]["containers"][0]["resources"],
            json!({"limits": {"cpu": "1", "memory": "256Mi"}, "requests": {"cpu": "100m", "memory": "128Mi"}})
        );
        assert_eq!(
            pod["spec"]["containers"][1]["resources"],
            json!({"limits": {"cpu": "500m", "memory": "256Mi"}, "requests": {"cpu": "100m", "memory": "128Mi"}})
        );
        assert_eq!(
            pod["metadata"]["annotations"][ANNOTATION],
            "LimitRanger plugin set: cpu, memory request for container a; memory limit for container a; cpu, memory request for container b; cpu, memory limit for container b"
        );
    }

    #[test]
    fn bounds_messages() {
        let lr = json!({"spec": {"limits": [{"type": "Container", "max": {"cpu": "1"}, "min": {"memory": "1Gi"},
            "maxLimitRequestRatio": {"cpu": "2"}}]}});
        let pod = json!({"spec": {"containers": [{"name": "c", "resources": {
            "limits": {"cpu": "2", "memory": "2Gi"}, "requests": {"cpu": "500m", "memory": "512Mi"}}}]}});
        assert_eq!(
            validate_pod(&lr, &pod),
            [
                "minimum memory usage per Container is 1Gi, but request is 512Mi",
                "maximum cpu usage per Container is 1, but limit is 2",
                "cpu max limit to request ratio per Container is 2, but provided ratio is 4.000000",
            ]
        );
        let none = json!({"spec": {"containers": [{"name": "c"}]}});
        assert_eq!(
            validate_pod(&lr, &none),
            [
                "minimum memory usage per Container is 1Gi.  No request is specified",
                "maximum cpu usage per Container is 1.  No limit is specified",
                "cpu max limit to request ratio per Container is 2, but no request is specified or request is 0",
            ]
        );
        let pod_lr = json!({"spec": {"limits": [{"type": "Pod", "max": {"cpu": "1500m"}}]}});
        let two = json!({"spec": {"containers": [
            {"name": "a", "resources": {"limits": {"cpu": "1"}}},
            {"name": "b", "resources": {"limits": {"cpu": "1"}}}]}});
        assert_eq!(
            validate_pod(&pod_lr, &two),
            ["maximum cpu usage per Pod is 1500m, but limit is 2"]
        );
        let pvc_lr = json!({"spec": {"limits": [{"type": "PersistentVolumeClaim", "max": {"storage": "1Gi"}, "min": {"storage": "100Mi"}}]}});
        let pvc = json!({"spec": {"resources": {"requests": {"storage": "5Gi"}}}});
        assert_eq!(
            validate_claim(&pvc_lr, &pvc),
            ["maximum storage usage per PersistentVolumeClaim is 1Gi, but request is 5Gi"]
        );
        assert_eq!(aggregate(&["a".into(), "b".into()]), "[a, b]");
    }

    #[test]
    fn pod_totals_count_init_containers_and_sidecars() {
        let spec = json!({
            "initContainers": [
                {"name": "side", "restartPolicy": "Always", "resources": {"requests": {"cpu": "100m"}}},
                {"name": "init", "resources": {"requests": {"cpu": "2"}}}],
            "containers": [{"name": "c", "resources": {"requests": {"cpu": "500m"}}}],
            "overhead": {"cpu": "10m"}
        });
        let r = pod_resources(&spec, "requests");
        assert_eq!(
            r.get("cpu").map(|q| q.to_string()).as_deref(),
            Some("2110m")
        );
    }

    #[tokio::test]
    async fn the_plugin_defaults_then_refuses() {
        let env = testing::env().await;
        env.namespace("lr", json!({})).await;
        env.create("", "v1", "limitranges", json!({"apiVersion": "v1", "kind": "LimitRange",
            "metadata": {"name": "l", "namespace": "lr"},
            "spec": {"limits": [{"type": "Container", "max": {"cpu": "1"}, "defaultRequest": {"cpu": "200m"}}]}})).await;
        let ctx = Context {
            registries: env.registries.clone(),
        };
        let pods = env.resource("", "v1", "pods");
        let pod = json!({"metadata": {"name": "p", "namespace": "lr"},
            "spec": {"containers": [{"name": "c", "image": "x"}]}});
        let mut a = testing::create_attrs(&pods, "lr", "p", pod);
        LimitRanger.admit(&mut a, &ctx).await.expect("admit");
        LimitRanger.validate(&a, &ctx).await.expect("valid");
        // The strategy defaulted `default` from `max`.
        assert_eq!(
            a.object.as_ref().expect("pod")["spec"]["containers"][0]["resources"],
            json!({"limits": {"cpu": "1"}, "requests": {"cpu": "200m"}})
        );
        let big = json!({"metadata": {"name": "big", "namespace": "lr"},
            "spec": {"containers": [{"name": "c", "image": "x", "resources": {"limits": {"cpu": "2"}}}]}});
        let mut a = testing::create_attrs(&pods, "lr", "big", big);
        LimitRanger.admit(&mut a, &ctx).await.expect("admit");
        let e = LimitRanger
            .validate(&a, &ctx)
            .await
            .err()
            .map(|e| (e.code, e.message));
        assert_eq!(
            e,
            Some((
                403,
                "pods \"big\" is forbidden: maximum cpu usage per Container is 1, but limit is 2"
                    .to_string()
            ))
        );
    }
}
