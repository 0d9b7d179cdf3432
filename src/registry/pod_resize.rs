//! pods/resize (upstream's `podResizeStrategy` and `ValidatePodResize`):
//! an update that takes only the containers' `resources` and
//! `resizePolicy`, may change only CPU and memory, may not remove a request
//! or limit, and may not move the pod to another QoS class. Also the QoS
//! class itself (`ComputePodQOS`), which pod creation records.

use serde_json::{Map, Value};

use super::helpers::quantity;
use super::validation::FieldError;

const CONTAINER_LISTS: [&str; 2] = ["initContainers", "containers"];
/// The resources QoS is computed from, and the only ones a resize may change.
const QOS_RESOURCES: [&str; 2] = ["cpu", "memory"];

/// upstream's `ComputePodQOS`: pod-level resources when the spec has them,
/// else every container's; only CPU and memory above zero count.
pub fn compute_qos(spec: &Value) -> &'static str {
    let mut requests: Map<String, Value> = Map::new();
    let mut limits: Map<String, Value> = Map::new();
    let mut guaranteed = true;
    let positive = |m: &Value| -> Vec<(String, i128)> {
        m.as_object()
            .into_iter()
            .flatten()
            .filter(|(k, _)| QOS_RESOURCES.contains(&k.as_str()))
            .filter_map(|(k, v)| quantity(v).filter(|q| *q > 0).map(|q| (k.clone(), q)))
            .collect()
    };
    let add = |into: &mut Map<String, Value>, k: String, q: i128| {
        let sum = into
            .get(&k)
            .and_then(Value::as_str)
            .and_then(|s| s.parse::<i128>().ok());
        into.insert(k, Value::String((sum.unwrap_or(0) + q).to_string()));
    };
    let pod_level = spec.get("resources").filter(|r| r.is_object());
    let sets: Vec<&Value> = match pod_level {
        Some(r) => vec![r],
        None => CONTAINER_LISTS
            .iter()
            .flat_map(|k| spec[*k].as_array().into_iter().flatten())
            .map(|c| &c["resources"])
            .collect(),
    };
    for res in sets {
        for (k, q) in positive(&res["requests"]) {
            add(&mut requests, k, q);
        }
        let found = positive(&res["limits"]);
        let has = |r: &str| found.iter().any(|(k, _)| k == r);
        // Pod-level limits left out do not make the pod Burstable by
        // themselves; a container's do.
        let pod_level_without_limits = pod_level.is_some() && found.is_empty();
        if !(pod_level_without_limits || has("cpu") && has("memory")) {
            guaranteed = false;
        }
        for (k, q) in found {
            add(&mut limits, k, q);
        }
    }
    if requests.is_empty() && limits.is_empty() {
        return "BestEffort";
    }
    if guaranteed && requests.iter().any(|(k, v)| limits.get(k) != Some(v)) {
        guaranteed = false;
    }
    if guaranteed && requests.len() == limits.len() {
        "Guaranteed"
    } else {
        "Burstable"
    }
}

/// The pod as a resize leaves it: the old pod with each container's
/// `resources` and `resizePolicy` from `new`. Containers added, removed,
/// renamed or reordered leave the new spec as sent, for validation to
/// refuse.
pub fn resize_update(new: &Value, old: &Value) -> Value {
    let containers = |v: &Value, key: &str| v["spec"][key].as_array().cloned().unwrap_or_default();
    let mut merged = old.clone();
    for key in CONTAINER_LISTS {
        let (news, olds) = (containers(new, key), containers(old, key));
        let same_shape =
            news.len() == olds.len() && news.iter().zip(&olds).all(|(n, o)| n["name"] == o["name"]);
        if !same_shape {
            return new.clone();
        }
        let Some(list) = merged["spec"].get_mut(key).and_then(Value::as_array_mut) else {
            continue;
        };
        for (c, n) in list.iter_mut().zip(&news) {
            let Some(c) = c.as_object_mut() else { continue };
            for field in ["resources", "resizePolicy"] {
                match n.get(field) {
                    Some(v) => c.insert(field.into(), v.clone()),
                    None => c.remove(field),
                };
            }
        }
    }
    merged
}

/// upstream's `ValidatePodResize` over a pod [`resize_update`] made.
pub fn validate_resize(new: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = super::core::validate_pod_spec(&new["spec"], "spec");
    let pod_level = |p: &Value| {
        p["spec"]["resources"].as_object().is_some_and(|r| {
            ["requests", "limits"].iter().any(|k| {
                r.get(*k)
                    .is_some_and(|m| m.as_object().is_some_and(|m| !m.is_empty()))
            })
        })
    };
    if pod_level(old) || pod_level(new) {
        return vec![FieldError::forbidden(
            "",
            "pods with pod-level resources cannot be resized",
        )];
    }
    if old["metadata"]["annotations"]
        .get("kubernetes.io/config.mirror")
        .is_some()
    {
        return vec![FieldError::forbidden("", "static pods cannot be resized")];
    }
    if old["spec"]["os"]["name"] == "windows" {
        return vec![FieldError::forbidden("", "windows pods cannot be resized")];
    }
    let old_qos = old["status"]["qosClass"]
        .as_str()
        .filter(|q| !q.is_empty())
        .unwrap_or_else(|| compute_qos(&old["spec"]));
    let new_qos = compute_qos(&new["spec"]);
    if old_qos != new_qos {
        errs.push(FieldError::invalid(
            "spec",
            Value::String(new_qos.into()),
            "Pod QOS Class may not change as a result of resizing",
        ));
    }
    if !resize_supported(old) {
        errs.push(FieldError::forbidden(
            "spec",
            "Pod running on node without support for resize",
        ));
    }
    let containers = |v: &Value, key: &str| v["spec"][key].as_array().cloned().unwrap_or_default();
    for key in CONTAINER_LISTS {
        let (news, olds) = (containers(new, key), containers(old, key));
        if news.len() != olds.len() {
            errs.push(FieldError::forbidden(
                format!("spec.{key}"),
                "containers may not be added or removed on resize",
            ));
            return errs;
        }
        for (i, (n, o)) in news.iter().zip(&olds).enumerate() {
            if n["name"] != o["name"] {
                errs.push(FieldError::forbidden(
                    format!("spec.{key}[{i}].name"),
                    "containers may not be renamed or reordered on resize",
                ));
                return errs;
            }
        }
        for (i, (n, o)) in news.iter().zip(&olds).enumerate() {
            // Only sidecars (restartable init containers) resize.
            if key == "initContainers" && o["restartPolicy"] != "Always" {
                continue;
            }
            let at = format!("spec.{key}[{i}].resources");
            for (part, what) in [("requests", "requests"), ("limits", "limits")] {
                for name in o["resources"][part]
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|(k, _)| k)
                {
                    if n["resources"][part].get(name).is_none() {
                        errs.push(FieldError::forbidden(
                            format!("{at}.{part}[{name}]"),
                            format!("resource {what} cannot be removed"),
                        ));
                    }
                }
            }
        }
    }
    // Anything but CPU and memory (and the resize policy) must stay.
    let without_cpu_memory = |p: &Value| {
        let mut spec = p["spec"].clone();
        for key in CONTAINER_LISTS {
            for c in spec
                .get_mut(key)
                .and_then(Value::as_array_mut)
                .into_iter()
                .flatten()
                .filter_map(Value::as_object_mut)
            {
                c.remove("resizePolicy");
                let Some(res) = c.get_mut("resources").and_then(Value::as_object_mut) else {
                    continue;
                };
                for part in ["requests", "limits"] {
                    if let Some(m) = res.get_mut(part).and_then(Value::as_object_mut) {
                        for r in QOS_RESOURCES {
                            m.remove(r);
                        }
                        if m.is_empty() {
                            res.remove(part);
                        }
                    }
                }
                if res.is_empty() {
                    c.remove("resources");
                }
            }
        }
        spec
    };
    if without_cpu_memory(new) != without_cpu_memory(old) {
        errs.push(FieldError::forbidden(
            "spec",
            "only cpu and memory resources are mutable",
        ));
    }
    errs
}

/// upstream's version-skew check: a running container whose status does
/// not report its resources runs on a kubelet that cannot resize.
fn resize_supported(pod: &Value) -> bool {
    pod["status"]["containerStatuses"]
        .as_array()
        .into_iter()
        .flatten()
        .all(|s| s["state"].get("running").is_none() || s.get("resources").is_some())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(req: Value, lim: Value) -> Value {
        json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "i",
            "resources": {"requests": req, "limits": lim}}]},
            "status": {"qosClass": compute_qos(&json!({"containers": [{"resources": {"requests": req, "limits": lim}}]}))}})
    }

    #[test]
    fn qos_as_upstream_computes_it() {
        let c = |req: Value, lim: Value| {
            compute_qos(&json!({"containers": [{"resources": {"requests": req, "limits": lim}}]}))
        };
        assert_eq!(c(json!({}), json!({})), "BestEffort");
        assert_eq!(c(json!({"cpu": "0"}), json!({})), "BestEffort");
        assert_eq!(
            c(
                json!({"cpu": "1", "memory": "1Gi"}),
                json!({"cpu": "1000m", "memory": "1Gi"})
            ),
            "Guaranteed"
        );
        assert_eq!(
            c(json!({"cpu": "1"}), json!({"cpu": "1", "memory": "1Gi"})),
            "Burstable"
        );
        assert_eq!(c(json!({"example.com/gpu": "1"}), json!({})), "BestEffort");
        let with_init = json!({"initContainers": [{"resources": {"requests": {"cpu": "1"}}}],
            "containers": [{"resources": {"requests": {"cpu": "1", "memory": "1"}, "limits": {"cpu": "1", "memory": "1"}}}]});
        assert_eq!(compute_qos(&with_init), "Burstable");
    }

    #[test]
    fn a_resize_takes_resources_only_and_keeps_the_class() {
        let old = pod(json!({"cpu": "100m"}), json!({"cpu": "200m"}));
        let mut sent = old.clone();
        sent["spec"]["containers"][0]["image"] = json!("other");
        sent["spec"]["containers"][0]["resources"]["limits"]["cpu"] = json!("300m");
        let merged = resize_update(&sent, &old);
        assert_eq!(merged["spec"]["containers"][0]["image"], "i");
        assert_eq!(
            merged["spec"]["containers"][0]["resources"]["limits"]["cpu"],
            "300m"
        );
        assert!(validate_resize(&merged, &old).is_empty());

        let mut to_guaranteed = old.clone();
        to_guaranteed["spec"]["containers"][0]["resources"] = json!({"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}});
        let errs = validate_resize(&resize_update(&to_guaranteed, &old), &old);
        assert!(
            errs.iter()
                .any(|e| e.message().contains("Pod QOS Class may not change")),
            "{errs:?}"
        );

        let mut removed = old.clone();
        removed["spec"]["containers"][0]["resources"]["limits"] = json!({});
        let errs = validate_resize(&resize_update(&removed, &old), &old);
        assert!(
            errs.iter()
                .any(|e| e.message().contains("resource limits cannot be removed")),
            "{errs:?}"
        );

        let mut gpu = old.clone();
        gpu["spec"]["containers"][0]["resources"]["limits"]["example.com/gpu"] = json!("1");
        gpu["spec"]["containers"][0]["resources"]["requests"]["example.com/gpu"] = json!("1");
        let errs = validate_resize(&resize_update(&gpu, &old), &old);
        assert!(
            errs.iter().any(|e| e
                .message()
                .contains("only cpu and memory resources are mutable")),
            "{errs:?}"
        );
    }
}
