//! Event of the core/v1 API (upstream's pkg/registry/core/event and
//! legacyValidateEvent). Kept apart from the events.k8s.io Event
//! (registry/events.rs): the same objects, but the core/v1 request has its own
//! validation and its own `kubectl get events` table.

use serde_json::{json, Value};

use crate::registry::helpers as kh;
use crate::registry::meta::NameRule;
use crate::registry::strategy::{Column, Strategy};
use crate::registry::validation::{self, FieldError};

pub struct EventStrategy;

fn event_first_seen(o: &Value) -> String {
    match o["firstTimestamp"].as_str() {
        Some(t) => crate::registry::strategy::human_age(t),
        None => o["eventTime"]
            .as_str()
            .map(crate::registry::strategy::human_age)
            .unwrap_or_else(|| "<unknown>".into()),
    }
}

fn event_last_seen(o: &Value) -> Value {
    if let Some(t) = o["series"]["lastObservedTime"].as_str() {
        return json!(crate::registry::strategy::human_age(t));
    }
    json!(match o["lastTimestamp"].as_str() {
        Some(t) => crate::registry::strategy::human_age(t),
        None => event_first_seen(o),
    })
}

fn event_object(o: &Value) -> Value {
    let io = &o["involvedObject"];
    let kind = kh::s(io, "kind").to_lowercase();
    let name = kh::s(io, "name");
    json!(if name.is_empty() {
        kind
    } else {
        format!("{kind}/{name}")
    })
}

fn event_source(o: &Value) -> Value {
    let first = |a: &str, b: &str| {
        if a.is_empty() {
            b.to_string()
        } else {
            a.to_string()
        }
    };
    let component = first(
        kh::s(&o["source"], "component"),
        kh::s(o, "reportingComponent"),
    );
    let instance = first(kh::s(&o["source"], "host"), kh::s(o, "reportingInstance"));
    json!(if instance.is_empty() {
        component
    } else {
        format!("{component}, {instance}")
    })
}

fn event_count(o: &Value) -> Value {
    if !o["series"].is_null() {
        return json!(o["series"]["count"].as_i64().unwrap_or(0));
    }
    json!(o["count"].as_i64().filter(|c| *c != 0).unwrap_or(1))
}

static EVENT_COLUMNS: std::sync::LazyLock<Vec<Column>> = std::sync::LazyLock::new(|| {
    vec![
        Column { name: "Last Seen", kind: "string", format: "", description: "The time at which the most recent occurrence of this event was recorded.", priority: 0, cell: event_last_seen },
        Column { name: "Type", kind: "string", format: "", description: "Type of this event (Normal, Warning), new types could be added in the future", priority: 0, cell: |o| json!(kh::s(o, "type")) },
        Column { name: "Reason", kind: "string", format: "", description: "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.", priority: 0, cell: |o| json!(kh::s(o, "reason")) },
        Column { name: "Object", kind: "string", format: "", description: "The object that this event is about.", priority: 0, cell: event_object },
        Column { name: "Subobject", kind: "string", format: "", description: "If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2]. For example, if the object reference is to a container within a pod, this would take on a value like: \"spec.containers{name}\" (where \"name\" refers to the name of the container that triggered the event) or if no container name is specified \"spec.containers[2]\" (container with index 2 in this pod). This syntax is chosen only to have some well-defined way of referencing a part of an object.", priority: 1, cell: |o| json!(kh::s(&o["involvedObject"], "fieldPath")) },
        Column { name: "Source", kind: "string", format: "", description: "The component reporting this event. Should be a short machine understandable string.", priority: 1, cell: event_source },
        Column { name: "Message", kind: "string", format: "", description: "A human-readable description of the status of this operation.", priority: 0, cell: |o| json!(kh::s(o, "message").trim()) },
        Column { name: "First Seen", kind: "string", format: "", description: "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)", priority: 1, cell: |o| json!(event_first_seen(o)) },
        Column { name: "Count", kind: "string", format: "", description: "The number of times this event has occurred.", priority: 1, cell: event_count },
        Column { name: "Name", kind: "string", format: "name", description: crate::registry::strategy::NAME_DESCRIPTION, priority: 1, cell: |o| o["metadata"]["name"].clone() },
    ]
});

/// upstream's legacyValidateEvent for core/v1 requests.
fn validate_event(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let ns = crate::registry::meta::namespace(obj);
    let io_ns = kh::s(&obj["involvedObject"], "namespace");
    let mismatch = |errs: &mut Vec<FieldError>| {
        errs.push(FieldError::invalid(
            "involvedObject.namespace",
            json!(io_ns),
            "does not match event.namespace",
        ))
    };
    let event_time = obj["eventTime"].as_str().filter(|t| !t.is_empty());
    if event_time.is_none() {
        if io_ns.is_empty() {
            if !ns.is_empty() && ns != "default" {
                mismatch(&mut errs);
            }
        } else if ns != io_ns {
            mismatch(&mut errs);
        }
    } else {
        if io_ns.is_empty() && ns != "default" && ns != "kube-system" {
            mismatch(&mut errs);
        }
        let rc = kh::s(obj, "reportingComponent");
        if rc.is_empty() {
            errs.push(FieldError::required("reportingComponent", ""));
        }
        for m in validation::qualified_name(rc) {
            errs.push(FieldError::invalid("reportingComponent", json!(rc), m));
        }
        for (key, limit) in [("reportingInstance", 128), ("action", 128), ("reason", 128)] {
            let v = kh::s(obj, key);
            if v.is_empty() {
                errs.push(FieldError::required(key, ""));
            }
            if v.len() > limit {
                errs.push(FieldError::invalid(
                    key,
                    json!(""),
                    format!("can have at most {limit} characters"),
                ));
            }
        }
        if kh::s(obj, "message").len() > 1024 {
            errs.push(FieldError::invalid(
                "message",
                json!(""),
                "can have at most 1024 characters",
            ));
        }
    }
    for m in validation::dns1123_subdomain(ns) {
        errs.push(FieldError::invalid("namespace", json!(ns), m));
    }
    errs
}

impl Strategy for EventStrategy {
    /// legacyValidateEvent checks no name rule: only the generic path-segment one applies.
    fn name_rule(&self) -> NameRule {
        NameRule::PathSegment
    }

    /// What Go writes of an Event however little was sent: its struct
    /// fields, null times, and the reporting strings.
    fn default(&self, obj: &mut Value) {
        if let Some(m) = obj.as_object_mut() {
            crate::registry::strategy::fill_go_zero(
                m,
                &json!({"involvedObject": {}, "source": {}, "firstTimestamp": null, "lastTimestamp": null,
                    "eventTime": null, "reportingComponent": "", "reportingInstance": ""}),
            );
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_event(obj)
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&EVENT_COLUMNS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::core::test_support::{cells, msgs};

    #[test]
    fn events() {
        let ev = json!({"metadata": {"name": "e1", "namespace": "default"}, "involvedObject": {"kind": "Pod", "name": "web", "namespace": "default", "fieldPath": "spec.containers{web}"},
            "reason": "Started", "message": " Started container web ", "type": "Normal", "count": 3, "source": {"component": "kubelet", "host": "n1"},
            "firstTimestamp": "2024-01-01T00:00:00Z"});
        assert!(EventStrategy.validate(&ev).is_empty());
        assert_eq!(EventStrategy.name_rule(), NameRule::PathSegment);
        let c = cells(&EVENT_COLUMNS, &ev);
        assert_eq!(c[1], "Normal");
        assert_eq!(c[2], "Started");
        assert_eq!(c[3], "pod/web");
        assert_eq!(c[4], "spec.containers{web}");
        assert_eq!(c[5], "kubelet, n1");
        assert_eq!(c[6], "Started container web");
        assert_eq!(c[8], 3);
        assert_eq!(c[9], "e1");
        assert_eq!(c[0], c[7]);
        let names: Vec<&str> = EVENT_COLUMNS.iter().map(|c| c.name).collect();
        assert_eq!(
            names,
            [
                "Last Seen",
                "Type",
                "Reason",
                "Object",
                "Subobject",
                "Source",
                "Message",
                "First Seen",
                "Count",
                "Name"
            ]
        );
        assert_eq!(event_count(&json!({})), 1);
        assert_eq!(event_last_seen(&json!({})), "<unknown>");

        let mut bad = ev.clone();
        bad["involvedObject"]["namespace"] = json!("other");
        assert_eq!(
            msgs(&EventStrategy.validate(&bad)),
            [(
                "involvedObject.namespace".to_string(),
                "Invalid value: \"other\": does not match event.namespace".to_string()
            )]
        );
        let new_style = json!({"metadata": {"namespace": "team"}, "eventTime": "2024-01-01T00:00:00.000000Z", "involvedObject": {"namespace": "team"}});
        let fields: Vec<String> = EventStrategy
            .validate(&new_style)
            .iter()
            .map(|e| e.field.clone())
            .collect();
        // As upstream: Required, then the qualified-name check of the empty value.
        assert_eq!(
            fields,
            [
                "reportingComponent",
                "reportingComponent",
                "reportingInstance",
                "action",
                "reason"
            ]
        );
    }
}
