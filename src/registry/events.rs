//! Strategy of events.k8s.io/v1 Event: upstream's event strategy
//! (pkg/registry/core/event) with the request version events.k8s.io/v1,
//! for which ValidateEventCreate and ValidateEventUpdate
//! (pkg/apis/core/validation/events.go) are stricter than for core/v1.
//!
//! The registry hands this strategy the object as the client sent it
//! (events.k8s.io/v1 field names); upstream validates the internal (core)
//! Event, so its errors name the core fields (`message`, not `note`;
//! `involvedObject`, not `regarding`), and so do these.

use serde_json::{json, Value};

use super::helpers::s;
use super::meta::NameRule;
use super::strategy::Strategy;
use super::validation::{self, FieldError};

pub struct EventStrategy;

/// events.k8s.io/v1 name -> core/v1 name (upstream's conversion).
const RENAMES: [(&str, &str); 7] = [
    ("regarding", "involvedObject"),
    ("note", "message"),
    ("reportingController", "reportingComponent"),
    ("deprecatedSource", "source"),
    ("deprecatedFirstTimestamp", "firstTimestamp"),
    ("deprecatedLastTimestamp", "lastTimestamp"),
    ("deprecatedCount", "count"),
];

/// The core/v1 form of an events.k8s.io/v1 Event.
fn to_core(obj: &Value) -> Value {
    let mut core = obj.clone();
    if let Some(m) = core.as_object_mut() {
        m.insert("apiVersion".into(), json!("v1"));
        for (new, old) in RENAMES {
            match m.remove(new) {
                Some(v) => m.insert(old.into(), v),
                None => m.remove(old),
            };
        }
    }
    core
}

/// A time field as Go holds it; `None` for the zero time.
fn time(v: &Value) -> Option<chrono::DateTime<chrono::Utc>> {
    let t = chrono::DateTime::parse_from_rfc3339(v.as_str()?).ok()?;
    let t = t.with_timezone(&chrono::Utc);
    (t.timestamp() != -62_135_596_800).then_some(t)
}

/// Go's time.Time.String() of a UTC time (how metav1.Time values print).
fn go_time(v: &Value) -> String {
    let Some(t) = time(v) else {
        return "0001-01-01 00:00:00 +0000 UTC".into();
    };
    let mut out = t.format("%Y-%m-%d %H:%M:%S").to_string();
    let nanos = t.timestamp_subsec_nanos();
    if nanos != 0 {
        let frac = format!("{nanos:09}");
        out.push('.');
        out.push_str(frac.trim_end_matches('0'));
    }
    out.push_str(" +0000 UTC");
    out
}

/// Go's `%#v` of a core.ObjectReference.
fn go_reference(r: &Value) -> String {
    format!(
        "core.ObjectReference{{Kind:{:?}, Namespace:{:?}, Name:{:?}, UID:{:?}, APIVersion:{:?}, ResourceVersion:{:?}, FieldPath:{:?}}}",
        s(r, "kind"),
        s(r, "namespace"),
        s(r, "name"),
        s(r, "uid"),
        s(r, "apiVersion"),
        s(r, "resourceVersion"),
        s(r, "fieldPath")
    )
}

fn go_source(v: &Value) -> String {
    format!(
        "core.EventSource{{Component:{:?}, Host:{:?}}}",
        s(v, "component"),
        s(v, "host")
    )
}

/// A value as Go's DeepEqual sees it: missing and zero-valued fields alike.
fn semantic(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| (k.clone(), semantic(x)))
                .filter(|(_, x)| !matches!(x, Value::Null) && x != "" && x != 0)
                .collect(),
        ),
        other => other.clone(),
    }
}

/// upstream's legacyValidateEvent, which every Event passes whatever the
/// version: core's check on the core form, with upstream's field name
/// for the reporting controller.
fn legacy(obj: &Value) -> Vec<FieldError> {
    let mut errs = super::core::EventStrategy.validate(&to_core(obj));
    for e in &mut errs {
        if e.field == "reportingComponent" {
            e.field = "reportingController".into();
        }
    }
    errs
}

/// upstream's validateV1EventSeries.
fn validate_series(obj: &Value, errs: &mut Vec<FieldError>) {
    let series = &obj["series"];
    if series.is_null() {
        return;
    }
    if series["count"].as_i64().unwrap_or(0) < 2 {
        errs.push(FieldError::invalid(
            "series.count",
            json!(""),
            "should be at least 2",
        ));
    }
    if time(&series["lastObservedTime"]).is_none() {
        errs.push(FieldError::required("series.lastObservedTime", ""));
    }
}

/// ValidateObjectMeta's name check with NameIsDNSSubdomain (the generic
/// checks of the registry cover the rest of the metadata).
fn validate_name(obj: &Value, errs: &mut Vec<FieldError>) {
    let meta = &obj["metadata"];
    let generate = s(meta, "generateName");
    let before = errs.len();
    if !generate.is_empty() {
        let probe = format!("{}a", generate.trim_end_matches('-'));
        for m in validation::dns1123_subdomain(&probe) {
            errs.push(FieldError::invalid(
                "metadata.generateName",
                json!(generate),
                m,
            ));
        }
    }
    let name = s(meta, "name");
    if errs.len() == before && !name.is_empty() {
        for m in validation::dns1123_subdomain(name) {
            errs.push(FieldError::invalid("metadata.name", json!(name), m));
        }
    }
}

fn validate_create(obj: &Value) -> Vec<FieldError> {
    let mut errs = legacy(obj);
    validate_name(obj, &mut errs);
    validate_series(obj, &mut errs);
    if time(&obj["eventTime"]).is_none() {
        errs.push(FieldError::required("eventTime", ""));
    }
    let ty = s(obj, "type");
    if ty != "Normal" && ty != "Warning" {
        errs.push(FieldError::invalid(
            "type",
            json!(""),
            format!("has invalid value: {ty}"),
        ));
    }
    let unset = |errs: &mut Vec<FieldError>, field: &str| {
        errs.push(FieldError::invalid(field, json!(""), "needs to be unset"));
    };
    if time(&obj["deprecatedFirstTimestamp"]).is_some() {
        unset(&mut errs, "firstTimestamp");
    }
    if time(&obj["deprecatedLastTimestamp"]).is_some() {
        unset(&mut errs, "lastTimestamp");
    }
    if obj["deprecatedCount"].as_i64().unwrap_or(0) != 0 {
        unset(&mut errs, "count");
    }
    let source = &obj["deprecatedSource"];
    if !s(source, "component").is_empty() || !s(source, "host").is_empty() {
        unset(&mut errs, "source");
    }
    errs
}

/// How one of the fields an update may not change compares and prints.
enum Kind {
    Str,
    Int,
    Time,
    Reference,
    OptionalReference,
    Source,
}

/// ValidateEventUpdate's immutable fields, in its order (`reason` twice, as upstream).
const IMMUTABLE: [(&str, &str, Kind); 14] = [
    ("regarding", "involvedObject", Kind::Reference),
    ("reason", "reason", Kind::Str),
    ("note", "message", Kind::Str),
    ("deprecatedSource", "source", Kind::Source),
    ("deprecatedFirstTimestamp", "firstTimestamp", Kind::Time),
    ("deprecatedLastTimestamp", "lastTimestamp", Kind::Time),
    ("deprecatedCount", "count", Kind::Int),
    ("reason", "reason", Kind::Str),
    ("type", "type", Kind::Str),
    ("eventTime", "eventTime", Kind::Time),
    ("action", "action", Kind::Str),
    ("related", "related", Kind::OptionalReference),
    ("reportingController", "reportingController", Kind::Str),
    ("reportingInstance", "reportingInstance", Kind::Str),
];

fn validate_update(new: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = legacy(new);
    if new["series"] != old["series"] {
        validate_series(new, &mut errs);
    }
    for (key, path, kind) in &IMMUTABLE {
        let (n, o) = (&new[*key], &old[*key]);
        let (same, shown) = match kind {
            Kind::Str => (s(new, key) == s(old, key), None),
            Kind::Int => (n.as_i64().unwrap_or(0) == o.as_i64().unwrap_or(0), None),
            Kind::Time => (time(n) == time(o), Some(go_time(n))),
            Kind::Reference => (semantic(n) == semantic(o), Some(go_reference(n))),
            Kind::OptionalReference => (
                n.is_null() == o.is_null() && semantic(n) == semantic(o),
                Some(if n.is_null() {
                    "null".to_string()
                } else {
                    go_reference(n)
                }),
            ),
            Kind::Source => (semantic(n) == semantic(o), Some(go_source(n))),
        };
        if same {
            continue;
        }
        errs.push(match (kind, shown) {
            (Kind::Int, _) => {
                FieldError::invalid(*path, json!(n.as_i64().unwrap_or(0)), "field is immutable")
            }
            (_, Some(shown)) => super::helpers::invalid_raw(*path, &shown, "field is immutable"),
            (_, None) => FieldError::invalid(*path, json!(s(new, key)), "field is immutable"),
        });
    }
    errs
}

impl Strategy for EventStrategy {
    /// The DNS-subdomain name rule is ValidateEventCreate's own (checked
    /// among its errors, and not on update); the generic rule is upstream's
    /// path-segment one.
    fn name_rule(&self) -> NameRule {
        NameRule::PathSegment
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_create(obj)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        validate_update(new, old)
    }

    /// upstream prints events.k8s.io Events with the core Event printer.
    fn dynamic_columns(&self) -> Option<(Vec<Value>, Box<dyn Fn(&Value) -> Vec<Value> + '_>)> {
        let cols = super::core::EventStrategy.columns()?;
        let defs = cols
            .iter()
            .map(|c| json!({"name": c.name, "type": c.kind, "format": c.format, "description": c.description, "priority": c.priority}))
            .collect();
        let cells = move |o: &Value| {
            let core = to_core(o);
            cols.iter().map(|c| (c.cell)(&core)).collect()
        };
        Some((defs, Box::new(cells)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msgs(v: Vec<FieldError>) -> Vec<(String, String)> {
        v.into_iter()
            .map(|e| (e.field.clone(), e.message()))
            .collect()
    }

    fn event() -> Value {
        json!({"apiVersion": "events.k8s.io/v1", "kind": "Event",
            "metadata": {"name": "web.1", "namespace": "default"},
            "eventTime": "2024-05-01T10:00:00.000000Z", "type": "Normal", "reason": "Started",
            "action": "Start", "note": "started it", "reportingController": "example.com/ctl",
            "reportingInstance": "ctl-1", "regarding": {"kind": "Pod", "name": "web", "namespace": "default"}})
    }

    #[test]
    fn a_complete_event_is_valid() {
        assert!(
            EventStrategy.validate(&event()).is_empty(),
            "{:?}",
            EventStrategy.validate(&event())
        );
        assert_eq!(EventStrategy.name_rule(), NameRule::PathSegment);
    }

    #[test]
    fn create_requires_the_new_fields() {
        let o = json!({"metadata": {"name": "Bad_Name", "namespace": "default"},
            "deprecatedFirstTimestamp": "2024-05-01T10:00:00Z", "deprecatedCount": 3,
            "deprecatedSource": {"component": "kubelet"}, "series": {"count": 1}});
        let got = msgs(EventStrategy.validate(&o));
        let fields: Vec<&str> = got.iter().map(|e| e.0.as_str()).collect();
        assert_eq!(
            fields,
            [
                "metadata.name",
                "series.count",
                "series.lastObservedTime",
                "eventTime",
                "type",
                "firstTimestamp",
                "count",
                "source"
            ]
        );
        assert_eq!(got[1].1, "Invalid value: \"\": should be at least 2");
        assert_eq!(got[3].1, "Required value");
        assert_eq!(got[4].1, "Invalid value: \"\": has invalid value: ");
        assert_eq!(got[5].1, "Invalid value: \"\": needs to be unset");
    }

    #[test]
    fn legacy_rules_name_core_fields() {
        let mut o = event();
        if let Some(m) = o.as_object_mut() {
            m.remove("reportingController");
            m.remove("action");
        }
        o["note"] = json!("x".repeat(1025));
        o["regarding"]["namespace"] = json!("other");
        o["type"] = json!("Odd");
        let got = msgs(EventStrategy.validate(&o));
        let fields: Vec<&str> = got.iter().map(|e| e.0.as_str()).collect();
        assert!(fields.contains(&"reportingController"), "{got:?}");
        assert!(fields.contains(&"action"), "{got:?}");
        assert!(
            got.contains(&(
                "message".to_string(),
                "Invalid value: \"\": can have at most 1024 characters".to_string()
            )),
            "{got:?}"
        );
        assert!(
            got.contains(&(
                "type".to_string(),
                "Invalid value: \"\": has invalid value: Odd".to_string()
            )),
            "{got:?}"
        );
        // kube-system events may leave the namespace of what they are about empty.
        let mut sys = event();
        sys["metadata"]["namespace"] = json!("kube-system");
        sys["regarding"] = json!({"kind": "Node", "name": "n1"});
        assert!(EventStrategy.validate(&sys).is_empty());
        sys["metadata"]["namespace"] = json!("apps");
        assert_eq!(
            msgs(EventStrategy.validate(&sys))[0].0,
            "involvedObject.namespace"
        );
    }

    #[test]
    fn updates_may_change_only_the_series() {
        let old = event();
        let mut new = event();
        new["series"] = json!({"count": 2, "lastObservedTime": "2024-05-01T10:05:00.000000Z"});
        assert!(EventStrategy.validate_update(&new, &old).is_empty());
        new["note"] = json!("changed");
        new["regarding"]["name"] = json!("other");
        new["deprecatedCount"] = json!(4);
        new["eventTime"] = json!("2024-05-01T10:00:01.500000Z");
        new["related"] = json!({"kind": "Node", "name": "n"});
        let got = msgs(EventStrategy.validate_update(&new, &old));
        assert_eq!(got, [
            ("involvedObject".to_string(), "Invalid value: core.ObjectReference{Kind:\"Pod\", Namespace:\"default\", Name:\"other\", UID:\"\", APIVersion:\"\", ResourceVersion:\"\", FieldPath:\"\"}: field is immutable".to_string()),
            ("message".into(), "Invalid value: \"changed\": field is immutable".into()),
            ("count".into(), "Invalid value: 4: field is immutable".into()),
            ("eventTime".into(), "Invalid value: 2024-05-01 10:00:01.5 +0000 UTC: field is immutable".into()),
            ("related".into(), "Invalid value: core.ObjectReference{Kind:\"Node\", Namespace:\"\", Name:\"n\", UID:\"\", APIVersion:\"\", ResourceVersion:\"\", FieldPath:\"\"}: field is immutable".into()),
        ]);
        let mut bad_series = event();
        bad_series["series"] = json!({"count": 1});
        let fields: Vec<String> = msgs(EventStrategy.validate_update(&bad_series, &old))
            .into_iter()
            .map(|e| e.0)
            .collect();
        assert_eq!(fields, ["series.count", "series.lastObservedTime"]);
    }

    #[test]
    fn printed_as_core_events() {
        let (defs, cells) = EventStrategy.dynamic_columns().expect("columns");
        let names: Vec<&str> = defs.iter().filter_map(|d| d["name"].as_str()).collect();
        assert_eq!(
            names[..5],
            ["Last Seen", "Type", "Reason", "Object", "Subobject"]
        );
        let row = cells(&event());
        assert_eq!(row[1], "Normal");
        assert_eq!(row[2], "Started");
        assert_eq!(row[3], "pod/web");
        assert_eq!(row[5], "example.com/ctl, ctl-1");
        assert_eq!(row[6], "started it");
        assert_eq!(go_time(&Value::Null), "0001-01-01 00:00:00 +0000 UTC");
    }
}
