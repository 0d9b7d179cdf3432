//! ObjectMeta on JSON objects: what upstream's `rest.BeforeCreate`,
//! `BeforeUpdate` and `ValidateObjectMeta` do to and check on metadata.

use rand::Rng;
use serde_json::{Map, Value};

use super::validation::{self, FieldError};

/// Which rule an object's name must satisfy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameRule {
    Subdomain,
    Label,
    Dns1035,
    PathSegment,
}

impl NameRule {
    pub fn check(self, name: &str) -> Vec<String> {
        match self {
            NameRule::Subdomain => validation::dns1123_subdomain(name),
            NameRule::Label => validation::dns1123_label(name),
            NameRule::Dns1035 => validation::dns1035_label(name),
            NameRule::PathSegment => validation::path_segment_name(name),
        }
    }
}

/// The time now as Kubernetes writes it (RFC 3339, whole seconds, UTC).
pub fn now_rfc3339() -> String {
    // Formatted once a second per thread: a create asks for it at least
    // twice (creationTimestamp, its managedFields entry), and formatting
    // costs more than the rest of a create's metadata.
    thread_local! {
        static LAST: std::cell::RefCell<(i64, String)> = const {
            std::cell::RefCell::new((i64::MIN, String::new()))
        };
    }
    let now = chrono::Utc::now();
    LAST.with_borrow_mut(|(second, text)| {
        if *second != now.timestamp() {
            *second = now.timestamp();
            *text = now.format("%Y-%m-%dT%H:%M:%SZ").to_string();
        }
        text.clone()
    })
}

pub fn meta(obj: &Value) -> Option<&Map<String, Value>> {
    obj.get("metadata").and_then(Value::as_object)
}

/// The metadata object, created if missing (the caller's object becomes a
/// JSON object if it was not one; decoding has already refused non-objects).
pub fn meta_mut(obj: &mut Value) -> &mut Map<String, Value> {
    if !obj.is_object() {
        *obj = Value::Object(Map::new());
    }
    let Value::Object(top) = obj else {
        unreachable!("made an object above")
    };
    let entry = top
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    if !entry.is_object() {
        *entry = Value::Object(Map::new());
    }
    let Value::Object(m) = entry else {
        unreachable!("made an object above")
    };
    m
}

pub fn str_field<'a>(obj: &'a Value, field: &str) -> &'a str {
    meta(obj)
        .and_then(|m| m.get(field))
        .and_then(Value::as_str)
        .unwrap_or("")
}

pub fn name(obj: &Value) -> &str {
    str_field(obj, "name")
}

pub fn namespace(obj: &Value) -> &str {
    str_field(obj, "namespace")
}

pub fn finalizers(obj: &Value) -> Vec<String> {
    meta(obj)
        .and_then(|m| m.get("finalizers"))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

pub fn is_deleting(obj: &Value) -> bool {
    meta(obj)
        .and_then(|m| m.get("deletionTimestamp"))
        .is_some_and(|v| !v.is_null())
}

const GENERATE_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// upstream's SimpleNameGenerator: the prefix (trimmed to fit) and five random characters.
pub fn generate_name(prefix: &str) -> String {
    let base: String = prefix.chars().take(63 - 5).collect();
    let mut rng = rand::rng();
    let suffix: String = (0..5)
        .map(|_| GENERATE_ALPHABET[rng.random_range(0..GENERATE_ALPHABET.len())] as char)
        .collect();
    format!("{base}{suffix}")
}

/// Sets the fields the server owns on create.
pub fn prepare_create(obj: &mut Value) {
    let has_spec = obj.get("spec").is_some();
    let m = meta_mut(obj);
    let name_empty = m
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .is_empty();
    if name_empty {
        if let Some(prefix) = m
            .get("generateName")
            .and_then(Value::as_str)
            .filter(|p| !p.is_empty())
        {
            let n = generate_name(prefix);
            m.insert("name".into(), Value::String(n));
        }
    }
    m.insert(
        "uid".into(),
        Value::String(uuid::Uuid::new_v4().to_string()),
    );
    m.insert("creationTimestamp".into(), Value::String(now_rfc3339()));
    m.remove("resourceVersion");
    m.remove("deletionTimestamp");
    m.remove("deletionGracePeriodSeconds");
    m.remove("selfLink");
    if has_spec {
        m.insert("generation".into(), Value::from(1));
    } else {
        m.remove("generation");
    }
}

/// Keeps what clients may not change on update; bumps generation when the
/// strategy says the desired state changed (for most kinds: the spec).
pub fn prepare_update(new: &mut Value, old: &Value, spec_changed: bool) {
    let old_meta = meta(old).cloned().unwrap_or_default();
    let m = meta_mut(new);
    for field in [
        "uid",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
    ] {
        match old_meta.get(field) {
            Some(v) => {
                m.insert(field.into(), v.clone());
            }
            None => {
                m.remove(field);
            }
        }
    }
    m.remove("selfLink");
    m.remove("resourceVersion");
    match old_meta.get("generation").and_then(Value::as_i64) {
        Some(g) => {
            let g = if spec_changed { g + 1 } else { g };
            m.insert("generation".into(), Value::from(g));
        }
        None => {
            m.remove("generation");
        }
    }
}

fn check_string_map(m: &Map<String, Value>, key: &str, errs: &mut Vec<FieldError>, labels: bool) {
    let Some(v) = m.get(key) else { return };
    let Some(map) = v.as_object() else {
        if !v.is_null() {
            errs.push(FieldError::invalid(
                format!("metadata.{key}"),
                v.clone(),
                "must be a map of strings",
            ));
        }
        return;
    };
    let mut total = 0usize;
    for (k, val) in map {
        for msg in validation::qualified_name(k) {
            errs.push(FieldError::invalid(
                format!("metadata.{key}"),
                Value::String(k.clone()),
                msg,
            ));
        }
        let s = val.as_str().unwrap_or("");
        total += k.len() + s.len();
        if labels {
            for msg in validation::label_value(s) {
                errs.push(FieldError::invalid(
                    "metadata.labels".to_string(),
                    Value::String(s.to_string()),
                    msg,
                ));
            }
        }
    }
    if !labels && total > 256 * 1024 {
        errs.push(FieldError::too_long("metadata.annotations", 256 * 1024));
    }
}

/// upstream's ValidateObjectMeta for the parts a client controls.
pub fn validate(obj: &Value, namespaced: bool, rule: NameRule) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let Some(m) = meta(obj) else {
        return vec![FieldError::required(
            "metadata.name",
            "name or generateName is required",
        )];
    };
    let name = m.get("name").and_then(Value::as_str).unwrap_or("");
    if name.is_empty() {
        errs.push(FieldError::required(
            "metadata.name",
            "name or generateName is required",
        ));
    } else {
        for msg in rule.check(name) {
            errs.push(FieldError::invalid(
                "metadata.name",
                Value::String(name.into()),
                msg,
            ));
        }
    }
    if let Some(g) = m
        .get("generateName")
        .and_then(Value::as_str)
        .filter(|g| !g.is_empty())
    {
        // The prefix itself may end with '-'; check it as if completed.
        let probe = format!("{g}a");
        for msg in rule.check(&probe) {
            errs.push(FieldError::invalid(
                "metadata.generateName",
                Value::String(g.into()),
                msg,
            ));
        }
    }
    let ns = m.get("namespace").and_then(Value::as_str).unwrap_or("");
    if namespaced {
        if ns.is_empty() {
            errs.push(FieldError::required("metadata.namespace", ""));
        } else {
            for msg in validation::dns1123_label(ns) {
                errs.push(FieldError::invalid(
                    "metadata.namespace",
                    Value::String(ns.into()),
                    msg,
                ));
            }
        }
    } else if !ns.is_empty() {
        errs.push(FieldError::forbidden(
            "metadata.namespace",
            "not allowed on this type",
        ));
    }
    check_string_map(m, "labels", &mut errs, true);
    check_string_map(m, "annotations", &mut errs, false);
    for (i, f) in finalizers(obj).iter().enumerate() {
        for msg in validation::qualified_name(f) {
            errs.push(FieldError::invalid(
                format!("metadata.finalizers[{i}]"),
                Value::String(f.clone()),
                msg,
            ));
        }
    }
    errs
}

/// Changes to metadata an update may not make.
pub fn validate_update(new: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if name(new) != name(old) {
        errs.push(FieldError::invalid(
            "metadata.name",
            Value::String(name(new).into()),
            "field is immutable",
        ));
    }
    if namespace(new) != namespace(old) {
        errs.push(FieldError::invalid(
            "metadata.namespace",
            Value::String(namespace(new).into()),
            "field is immutable",
        ));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn create_sets_server_fields() {
        let mut o =
            json!({"metadata": {"generateName": "web-", "resourceVersion": "5"}, "spec": {}});
        prepare_create(&mut o);
        assert!(name(&o).starts_with("web-") && name(&o).len() == 9);
        assert!(o["metadata"]["uid"].is_string());
        assert_eq!(o["metadata"]["generation"], 1);
        assert!(o["metadata"].get("resourceVersion").is_none());
    }

    #[test]
    fn update_keeps_identity_and_bumps_generation() {
        let old = json!({"metadata": {"name": "a", "uid": "u", "creationTimestamp": "t", "generation": 3}, "spec": {"x": 1}});
        let mut new =
            json!({"metadata": {"name": "a", "uid": "other", "generation": 9}, "spec": {"x": 2}});
        prepare_update(&mut new, &old, true);
        assert_eq!(new["metadata"]["uid"], "u");
        assert_eq!(new["metadata"]["generation"], 4);
        let mut same = json!({"metadata": {"name": "a"}, "spec": {"x": 1}});
        prepare_update(&mut same, &old, false);
        assert_eq!(same["metadata"]["generation"], 3);
    }

    #[test]
    fn validates_names_and_labels() {
        let bad =
            json!({"metadata": {"name": "Bad_Name", "namespace": "ns", "labels": {"ok": "-bad"}}});
        let errs = validate(&bad, true, NameRule::Subdomain);
        assert_eq!(errs.len(), 2, "{errs:?}");
        assert_eq!(errs[0].field, "metadata.name");
        let cluster = json!({"metadata": {"name": "n", "namespace": "x"}});
        assert_eq!(
            validate(&cluster, false, NameRule::Label)[0].field,
            "metadata.namespace"
        );
    }
}
