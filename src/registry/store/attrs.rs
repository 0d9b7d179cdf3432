//! The label and field values selectors match, read from a stored object:
//! what the watch cache indexes for each object written.

use std::sync::Arc;

use serde_json::Value;

use crate::api::catalog::Resource;
use crate::api::partial_json::TYPE_FIELDS;
use crate::storage::cacher::{AttrsFn, ObjectAttrs, ReadAttrs};

/// What one resource's selectors read.
struct Selectable {
    /// Selectable fields beyond metadata.name and metadata.namespace.
    fields: Vec<String>,
    namespaced: bool,
    /// The top-level fields `fields` reach into: all a stored object is
    /// decoded for, besides metadata.
    tops: Vec<String>,
    /// `tops` and what a metadata informer keeps (`apiVersion`, `kind`).
    tops_and_type: Vec<String>,
}

impl Selectable {
    fn new(fields: Vec<String>, namespaced: bool) -> Selectable {
        let mut tops: Vec<String> = fields
            .iter()
            .map(|f| resolve(f).split('.').next().unwrap_or("").to_string())
            .filter(|t| t != "metadata")
            .collect();
        tops.sort();
        tops.dedup();
        let mut tops_and_type = tops.clone();
        tops_and_type.extend(TYPE_FIELDS.map(String::from));
        Selectable {
            fields,
            namespaced,
            tops,
            tops_and_type,
        }
    }

    fn of(&self, v: &Value) -> ObjectAttrs {
        let text = |v: &Value| v.as_str().unwrap_or("").to_string();
        let labels = v["metadata"]["labels"]
            .as_object()
            .map(|l| l.iter().map(|(k, val)| (k.as_str(), text(val))).collect())
            .unwrap_or_default();
        let mut fields = vec![("metadata.name", text(&v["metadata"]["name"]))];
        if self.namespaced {
            fields.push(("metadata.namespace", text(&v["metadata"]["namespace"])));
        }
        for f in &self.fields {
            fields.push((f.as_str(), field_value(v, f)));
        }
        ObjectAttrs {
            labels,
            fields: fields.into_iter().collect(),
        }
    }
}

impl ReadAttrs for Selectable {
    /// From stored JSON, decoding only what [`Selectable::of`] reads.
    fn attrs(&self, raw: &[u8]) -> Option<ObjectAttrs> {
        crate::api::partial_json::decode(raw, &self.tops).map(|v| self.of(&v))
    }

    fn attrs_and_metadata(&self, raw: &[u8]) -> Option<(ObjectAttrs, Value)> {
        let mut v = crate::api::partial_json::decode(raw, &self.tops_and_type)?;
        let attrs = self.of(&v);
        if let Value::Object(top) = &mut v {
            // What `object_metadata` keeps, from the same parse.
            top.retain(|k, _| k == "metadata" || TYPE_FIELDS.contains(&k.as_str()));
        }
        Some((attrs, v))
    }
}

/// Label and field values of a stored object, for selectors; None when the
/// bytes are not a JSON object.
pub(super) fn attrs_fn(selectable: Vec<String>, namespaced: bool) -> AttrsFn {
    Arc::new(Selectable::new(selectable, namespaced))
}

/// Selectable field values of an object, for callers outside the registry.
pub fn selectable_values(r: &Resource, v: &Value) -> crate::api::selector::Pairs {
    Selectable::new(r.selectable_fields.clone(), r.namespaced)
        .of(v)
        .fields
}

/// The path a selectable field name reads.
fn resolve(path: &str) -> &str {
    match path {
        "source" => "source.component",
        // A legacy alias upstream still accepts.
        "name" => "metadata.name",
        other => other,
    }
}

/// A selectable field's value as a string, as upstream's field sets hold them.
pub fn field_value(v: &Value, path: &str) -> String {
    let path = resolve(path);
    let mut cur = v;
    for part in path.split('.') {
        cur = &cur[part];
    }
    match cur {
        Value::String(s) => s.clone(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::Array(a) => a
            .first()
            .map(|x| x["ip"].as_str().or(x.as_str()).unwrap_or("").to_string())
            .unwrap_or_default(),
        // Go's field sets print a plain (non-pointer) field's zero value
        // when the object leaves it out: a Node without `unschedulable`
        // matches `spec.unschedulable=false`.
        _ => match path {
            "spec.unschedulable" | "spec.hostNetwork" => "false".into(),
            "status.replicas" | "status.successful" => "0".into(),
            _ => String::new(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// For every stored kind with selectable fields, the values read from
    /// partly decoded JSON are those read from the whole object.
    #[test]
    fn partial_decode_reads_what_a_whole_decode_reads() {
        let obj = json!({
            "apiVersion": "v1", "kind": "X",
            "metadata": {"name": "a", "namespace": "n", "labels": {"app": "web"},
                         "managedFields": [{"manager": "m"}]},
            "spec": {"nodeName": "node-1", "unschedulable": true, "serviceAccountName": "sa",
                     "hostNetwork": true, "schedulerName": "s", "signerName": "x/y"},
            "status": {"phase": "Running", "podIP": "10.0.0.1", "podIPs": [{"ip": "10.0.0.1"}],
                       "nominatedNodeName": "node-2", "replicas": 3, "successful": 2},
            "involvedObject": {"kind": "Pod", "name": "p", "namespace": "n", "uid": "u",
                               "apiVersion": "v1", "resourceVersion": "1", "fieldPath": "f"},
            "reason": "R", "reportingComponent": "rc", "source": {"component": "kubelet"},
            "type": "Opaque",
            "data": {"k": "v"},
        });
        let raw = serde_json::to_vec(&obj).unwrap();
        let mut seen = 0;
        for d in crate::api::builtin::BUILTINS {
            if d.selectable_fields.is_empty() {
                continue;
            }
            seen += 1;
            let r = Resource::from_builtin(d);
            let s = Selectable::new(r.selectable_fields.clone(), r.namespaced);
            let whole = s.of(&obj);
            let partial = s.attrs(&raw).expect("valid JSON");
            let (same, meta) = s.attrs_and_metadata(&raw).expect("valid JSON");
            assert_eq!(same.labels, whole.labels, "{}", r.kind);
            assert_eq!(same.fields, whole.fields, "{}", r.kind);
            // A metadata informer's projection, whatever else was decoded.
            let projected = crate::api::partial_json::decode(&raw, &["apiVersion", "kind"]);
            assert_eq!(Some(meta), projected, "{}", r.kind);
            assert_eq!(partial.labels, whole.labels, "{}", r.kind);
            assert_eq!(partial.fields, whole.fields, "{}", r.kind);
        }
        assert!(seen > 5, "only {seen} kinds with selectable fields");
        assert!(attrs_fn(vec![], true).attrs(b"not json").is_none());
    }
}
