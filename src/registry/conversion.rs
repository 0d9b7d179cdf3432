//! Conversion between served versions and the storage version: custom
//! resources with strategy `None` (apiVersion rewrite) or `Webhook`
//! (ConversionReview v1), HorizontalPodAutoscaler
//! autoscaling/v1 <-> v2, and Events core/v1 <-> events.k8s.io/v1, which
//! share one storage.

use serde_json::{json, Map, Value};

use crate::api::catalog::Resource;
use crate::api::ApiError;
use crate::registry::Registries;
use crate::webhook::{self, ClientConfig};

/// How long a conversion webhook may take.
const WEBHOOK_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// A `ConversionReview` (apiextensions.k8s.io/v1) for one object, as upstream sends it.
fn webhook(
    registries: &Registries,
    r: &Resource,
    conversion: &Value,
    obj: Value,
    desired: &str,
) -> Result<Value, ApiError> {
    let failed = |why: String| {
        ApiError::internal(format!(
            "conversion webhook for {}, Kind={} failed: {why}",
            desired, r.kind
        ))
    };
    let cfg = ClientConfig::from_json(&conversion["webhook"]["clientConfig"]);
    let uid = uuid::Uuid::new_v4().to_string();
    let review = json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
        "request": {"uid": uid, "desiredAPIVersion": desired, "objects": [obj]}
    });
    // Conversion runs inside synchronous read paths; the call blocks this
    // worker only (block_in_place hands its other tasks to other workers).
    let handle = tokio::runtime::Handle::try_current()
        .map_err(|_| failed("no runtime to call the webhook from".into()))?;
    let answer = tokio::task::block_in_place(|| {
        handle.block_on(webhook::post_json(
            registries,
            &cfg,
            &review,
            WEBHOOK_TIMEOUT,
        ))
    })
    .map_err(failed)?;
    let resp = &answer["response"];
    if resp["uid"].as_str() != Some(uid.as_str()) {
        return Err(failed(format!(
            "expected response.uid={uid:?}, got {:?}",
            resp["uid"].as_str().unwrap_or("")
        )));
    }
    if resp["result"]["status"].as_str() != Some("Success") {
        return Err(failed(
            resp["result"]["message"]
                .as_str()
                .unwrap_or("the webhook refused the conversion")
                .to_string(),
        ));
    }
    let converted = resp["convertedObjects"]
        .as_array()
        .and_then(|a| a.first())
        .cloned()
        .ok_or_else(|| failed("no converted object".into()))?;
    if converted["apiVersion"].as_str() != Some(desired) {
        return Err(failed(format!(
            "invalid apiVersion {:?} in converted object, expected {desired:?}",
            converted["apiVersion"].as_str().unwrap_or("")
        )));
    }
    Ok(converted)
}

/// Whether objects of `r` are stored in another group version than served.
pub fn needed(r: &Resource) -> bool {
    r.version != r.storage_version || r.group != r.storage_group
}

fn gv(group: &str, version: &str) -> String {
    if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    }
}

/// Converts `obj` (in `r`'s served version) to the storage version.
pub fn to_storage(registries: &Registries, r: &Resource, obj: Value) -> Result<Value, ApiError> {
    convert(
        registries,
        r,
        obj,
        &r.group,
        &r.version,
        &r.storage_group,
        &r.storage_version,
    )
}

/// A stored object as `r` serves it. A custom resource keeps the version
/// it was written in (a CRD's storage version can change), so it is
/// converted from that one; and, as upstream's storage codec decodes it,
/// it is first pruned and defaulted by the schema of that version, and
/// after the conversion pruned by the schema of `r`'s.
pub fn from_storage(
    registries: &Registries,
    r: &Resource,
    mut obj: Value,
) -> Result<Value, ApiError> {
    let Some(custom) = &r.custom else {
        return convert(
            registries,
            r,
            obj,
            &r.storage_group,
            &r.storage_version,
            &r.group,
            &r.version,
        );
    };
    let stored = obj
        .get("apiVersion")
        .and_then(Value::as_str)
        .and_then(|v| v.split_once('/'))
        .map(|(g, v)| (g.to_string(), v.to_string()));
    let (group, version) =
        stored.unwrap_or_else(|| (r.storage_group.clone(), r.storage_version.clone()));
    if group == r.group && version == r.version {
        return Ok(obj);
    }
    if let Some(schema) = custom.schemas.get(&version) {
        crate::schema::coerce(&mut obj, schema);
        crate::schema::apply_defaults(&mut obj, schema);
    }
    convert(registries, r, obj, &group, &version, &r.group, &r.version)
}

/// The apiVersion a stored object carries. Custom resources are stored
/// with their keys in order, so it is read off the start without parsing
/// the object.
fn stored_api_version(stored: &[u8]) -> Option<std::borrow::Cow<'_, str>> {
    const HEAD: &[u8] = b"{\"apiVersion\":\"";
    if let Some(rest) = stored.strip_prefix(HEAD) {
        if let Some(end) = rest.iter().position(|b| *b == b'"' || *b == b'\\') {
            if rest[end] == b'"' {
                return std::str::from_utf8(&rest[..end])
                    .ok()
                    .map(std::borrow::Cow::Borrowed);
            }
        }
    }
    #[derive(serde::Deserialize)]
    struct Head {
        #[serde(rename = "apiVersion")]
        api_version: Option<String>,
    }
    serde_json::from_slice::<Head>(stored)
        .ok()?
        .api_version
        .map(std::borrow::Cow::Owned)
}

/// Whether a stored object needs converting to be served as `r`: a custom
/// resource when it is stored in another version than `r`'s, a built-in
/// when `r` is not its storage version.
pub fn differs(r: &Resource, stored: &[u8]) -> bool {
    if r.custom.is_none() {
        return needed(r);
    }
    match stored_api_version(stored) {
        Some(v) => {
            v.strip_prefix(r.group.as_str())
                .and_then(|rest| rest.strip_prefix('/'))
                != Some(r.version.as_str())
        }
        None => needed(r),
    }
}

fn convert(
    registries: &Registries,
    r: &Resource,
    mut obj: Value,
    fg: &str,
    fv: &str,
    tg: &str,
    tv: &str,
) -> Result<Value, ApiError> {
    if fg == tg && fv == tv {
        return Ok(obj);
    }
    if let Some(custom) = &r.custom {
        let mut out = if custom.conversion["strategy"].as_str().unwrap_or("None") == "Webhook" {
            webhook(registries, r, &custom.conversion, obj, &gv(tg, tv))?
        } else {
            obj["apiVersion"] = json!(gv(tg, tv));
            obj
        };
        // upstream's schemaCoercingConverter: what is converted to a
        // version is pruned by that version's schema, so a field only
        // another version knows is not stored (or served) in this one.
        if let Some(schema) = custom.schemas.get(tv) {
            crate::schema::coerce(&mut out, schema);
        }
        return Ok(out);
    }
    match (r.kind.as_str(), fg, fv, tg, tv) {
        ("HorizontalPodAutoscaler", "autoscaling", "v1", "autoscaling", "v2") => {
            Ok(hpa_v1_to_v2(obj))
        }
        ("HorizontalPodAutoscaler", "autoscaling", "v2", "autoscaling", "v1") => {
            Ok(hpa_v2_to_v1(obj))
        }
        ("Event", "events.k8s.io", "v1", "", "v1") => Ok(event_new_to_core(obj)),
        ("Event", "", "v1", "events.k8s.io", "v1") => Ok(event_core_to_new(obj)),
        _ => Err(ApiError::internal(format!(
            "no conversion from {} to {} for {}",
            gv(fg, fv),
            gv(tg, tv),
            r.kind
        ))),
    }
}

fn take(m: &mut Map<String, Value>, k: &str) -> Option<Value> {
    m.remove(k).filter(|v| !v.is_null())
}

/// upstream keeps v2-only fields of v1 objects in this annotation.
const HPA_METRICS: &str = "autoscaling.alpha.kubernetes.io/metrics";
const HPA_CURRENT: &str = "autoscaling.alpha.kubernetes.io/current-metrics";
const HPA_CONDITIONS: &str = "autoscaling.alpha.kubernetes.io/conditions";
const HPA_BEHAVIOR: &str = "autoscaling.alpha.kubernetes.io/behavior";

fn annotations(obj: &mut Value) -> &mut Map<String, Value> {
    let m = crate::registry::meta::meta_mut(obj);
    let a = m.entry("annotations").or_insert_with(|| json!({}));
    if !a.is_object() {
        *a = json!({});
    }
    match a.as_object_mut() {
        Some(x) => x,
        None => unreachable!("made an object above"),
    }
}

fn hpa_v1_to_v2(mut obj: Value) -> Value {
    obj["apiVersion"] = json!("autoscaling/v2");
    let ann = annotations(&mut obj).clone();
    let extra = |k: &str| {
        ann.get(k)
            .and_then(Value::as_str)
            .and_then(|s| serde_json::from_str::<Value>(s).ok())
    };
    let mut metrics = extra(HPA_METRICS)
        .and_then(|v| v.as_array().cloned())
        .unwrap_or_default();
    let spec = obj
        .get_mut("spec")
        .and_then(Value::as_object_mut)
        .map(std::mem::take)
        .unwrap_or_default();
    let mut spec = spec;
    if let Some(cpu) = take(&mut spec, "targetCPUUtilizationPercentage") {
        metrics.insert(0, json!({"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": cpu}}}));
    }
    if !metrics.is_empty() {
        spec.insert("metrics".into(), Value::Array(metrics));
    }
    if let Some(b) = extra(HPA_BEHAVIOR) {
        spec.insert("behavior".into(), b);
    }
    obj["spec"] = Value::Object(spec);
    if let Some(status) = obj.get_mut("status").and_then(Value::as_object_mut) {
        let mut current = extra(HPA_CURRENT)
            .and_then(|v| v.as_array().cloned())
            .unwrap_or_default();
        if let Some(cpu) = take(status, "currentCPUUtilizationPercentage") {
            current.insert(0, json!({"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": cpu}}}));
        }
        if !current.is_empty() {
            status.insert("currentMetrics".into(), Value::Array(current));
        }
        if let Some(c) = extra(HPA_CONDITIONS) {
            status.insert("conditions".into(), c);
        }
    }
    let a = annotations(&mut obj);
    for k in [HPA_METRICS, HPA_CURRENT, HPA_CONDITIONS, HPA_BEHAVIOR] {
        a.remove(k);
    }
    if a.is_empty() {
        crate::registry::meta::meta_mut(&mut obj).remove("annotations");
    }
    obj
}

fn hpa_v2_to_v1(mut obj: Value) -> Value {
    obj["apiVersion"] = json!("autoscaling/v1");
    let mut spec = obj
        .get_mut("spec")
        .and_then(Value::as_object_mut)
        .map(std::mem::take)
        .unwrap_or_default();
    let metrics = take(&mut spec, "metrics")
        .and_then(|v| v.as_array().cloned())
        .unwrap_or_default();
    let behavior = take(&mut spec, "behavior");
    let (cpu, rest): (Vec<Value>, Vec<Value>) = metrics.into_iter().partition(|m| {
        m["type"] == "Resource"
            && m["resource"]["name"] == "cpu"
            && m["resource"]["target"]["type"] == "Utilization"
    });
    if let Some(c) = cpu.first() {
        spec.insert(
            "targetCPUUtilizationPercentage".into(),
            c["resource"]["target"]["averageUtilization"].clone(),
        );
    }
    obj["spec"] = Value::Object(spec);
    let mut extras: Vec<(&str, Value)> = Vec::new();
    if !rest.is_empty() {
        extras.push((HPA_METRICS, Value::Array(rest)));
    }
    if let Some(b) = behavior {
        extras.push((HPA_BEHAVIOR, b));
    }
    if let Some(status) = obj.get_mut("status").and_then(Value::as_object_mut) {
        let current = take(status, "currentMetrics")
            .and_then(|v| v.as_array().cloned())
            .unwrap_or_default();
        let (cpu, rest): (Vec<Value>, Vec<Value>) = current
            .into_iter()
            .partition(|m| m["type"] == "Resource" && m["resource"]["name"] == "cpu");
        if let Some(c) = cpu.first() {
            status.insert(
                "currentCPUUtilizationPercentage".into(),
                c["resource"]["current"]["averageUtilization"].clone(),
            );
        }
        if !rest.is_empty() {
            extras.push((HPA_CURRENT, Value::Array(rest)));
        }
        if let Some(c) = take(status, "conditions") {
            extras.push((HPA_CONDITIONS, c));
        }
    }
    if !extras.is_empty() {
        let a = annotations(&mut obj);
        for (k, v) in extras {
            a.insert(k.into(), json!(v.to_string()));
        }
    }
    obj
}

/// Field renames between core/v1 Event and events.k8s.io/v1 Event.
const EVENT_RENAMES: &[(&str, &str)] = &[
    ("involvedObject", "regarding"),
    ("related", "related"),
    ("message", "note"),
    ("reportingComponent", "reportingController"),
    ("source", "deprecatedSource"),
    ("firstTimestamp", "deprecatedFirstTimestamp"),
    ("lastTimestamp", "deprecatedLastTimestamp"),
    ("count", "deprecatedCount"),
];

fn event_core_to_new(mut obj: Value) -> Value {
    if let Some(m) = obj.as_object_mut() {
        m.insert("apiVersion".into(), json!("events.k8s.io/v1"));
        for (old, new) in EVENT_RENAMES {
            if let Some(v) = m.remove(*old) {
                m.insert((*new).to_string(), v);
            }
        }
    }
    obj
}

fn event_new_to_core(mut obj: Value) -> Value {
    if let Some(m) = obj.as_object_mut() {
        m.insert("apiVersion".into(), json!("v1"));
        for (old, new) in EVENT_RENAMES {
            if let Some(v) = m.remove(*new) {
                m.insert((*old).to_string(), v);
            }
        }
        m.entry("involvedObject").or_insert_with(|| json!({}));
    }
    obj
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hpa_round_trip() {
        let v1 = json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "h"},
            "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "d", "apiVersion": "apps/v1"}, "minReplicas": 1, "maxReplicas": 5, "targetCPUUtilizationPercentage": 70}});
        let v2 = hpa_v1_to_v2(v1.clone());
        assert_eq!(
            v2["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"],
            70
        );
        assert!(v2["spec"].get("targetCPUUtilizationPercentage").is_none());
        let back = hpa_v2_to_v1(v2);
        assert_eq!(back, v1);
        let rich = json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "h"},
            "spec": {"maxReplicas": 3, "metrics": [{"type": "Pods", "pods": {"metric": {"name": "qps"}, "target": {"type": "AverageValue", "averageValue": "10"}}}]}});
        let v1 = hpa_v2_to_v1(rich.clone());
        assert!(v1["metadata"]["annotations"][HPA_METRICS].is_string());
        assert_eq!(hpa_v1_to_v2(v1), rich);
    }

    #[test]
    fn a_stored_objects_version_is_read_off_its_start_or_parsed() {
        let read = |b: &[u8]| stored_api_version(b).map(|v| v.into_owned());
        assert_eq!(
            read(br#"{"apiVersion":"g.io/v2","kind":"K","metadata":{}}"#).as_deref(),
            Some("g.io/v2")
        );
        // Not first, or escaped: the whole object is parsed.
        assert_eq!(
            read(br#"{"kind":"K","apiVersion":"g.io/v1"}"#).as_deref(),
            Some("g.io/v1")
        );
        assert_eq!(
            read(br#"{"apiVersion":"g.io\/v3","kind":"K"}"#).as_deref(),
            Some("g.io/v3")
        );
        assert_eq!(read(br#"{"kind":"K"}"#), None);
        assert_eq!(read(b"not json"), None);
    }

    #[test]
    fn events_round_trip() {
        let core = json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e"}, "involvedObject": {"kind": "Pod", "name": "p"}, "message": "hi", "reason": "R"});
        let new = event_core_to_new(core.clone());
        assert_eq!(new["regarding"]["name"], "p");
        assert_eq!(new["note"], "hi");
        assert_eq!(event_new_to_core(new), core);
    }
}
