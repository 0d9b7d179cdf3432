//! The Widget custom resource every target knows: its CRD, its schema,
//! and the served resource the apiextensions controller would make of it.

use std::sync::Arc;

use serde_json::{json, Value};

use crate::api::catalog::{CustomInfo, Owner, Resource, Subresource};
use crate::registry::meta;

/// The CRD of the custom resource every target knows: defaults, enums,
/// patterns, a map list, a set, CEL rules (one a transition rule), and
/// status and scale subresources.
pub fn widget_crd(schema: Value) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList", "shortNames": ["wd"]},
            "versions": [{
                "name": "v1",
                "served": true,
                "storage": true,
                "schema": {"openAPIV3Schema": schema},
                "subresources": {
                    "status": {},
                    "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}
                },
                "additionalPrinterColumns": [{"name": "Color", "type": "string", "jsonPath": ".spec.color"}],
                "selectableFields": [{"jsonPath": ".spec.color"}]
            }]
        }
    })
}

/// The Widget's `openAPIV3Schema`.
pub fn widget_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": {
                "type": "object",
                "required": ["color"],
                "x-kubernetes-validations": [
                    {"rule": "self.minReplicas <= self.replicas", "message": "replicas must not be below minReplicas"},
                    {"rule": "self.color == oldSelf.color", "message": "color is immutable"},
                    {"rule": "self.ports.all(p, p.port > 0)", "messageExpression": "'bad port in ' + self.color"}
                ],
                "properties": {
                    "color": {"type": "string", "enum": ["red", "blue", "green"]},
                    "size": {"type": "string", "default": "M", "pattern": "^(S|M|L|XL)$", "maxLength": 2},
                    "replicas": {"type": "integer", "minimum": 0, "maximum": 100, "default": 1},
                    "minReplicas": {"type": "integer", "default": 0},
                    "ratio": {"type": "number", "multipleOf": 0.5},
                    "schedule": {"type": "string", "format": "date-time"},
                    "timeout": {"type": "string", "format": "duration"},
                    "quota": {"x-kubernetes-int-or-string": true},
                    "tags": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set", "maxItems": 16},
                    "ports": {
                        "type": "array",
                        "x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["name"],
                        "items": {
                            "type": "object",
                            "required": ["name"],
                            "properties": {"name": {"type": "string"}, "port": {"type": "integer", "format": "int32"}}
                        }
                    },
                    "labels": {"type": "object", "additionalProperties": {"type": "string"}, "maxProperties": 8},
                    "template": {"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true},
                    "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
                }
            },
            "status": {
                "type": "object",
                "properties": {
                    "replicas": {"type": "integer"},
                    "conditions": {"type": "array", "items": {"type": "object", "properties": {"type": {"type": "string"}, "status": {"type": "string"}}}}
                }
            }
        }
    })
}

/// The served resource of the first served version of a CRD, as
/// `apiextensions::controller::resources_of` (private) builds it.
pub(super) fn custom_resource(crd: &Value) -> Option<Resource> {
    let s = |v: &Value| v.as_str().unwrap_or("").to_string();
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(String::from)
                    .collect()
            })
            .unwrap_or_default()
    };
    let spec = &crd["spec"];
    let names = &spec["names"];
    let group = s(&spec["group"]);
    let plural = s(&names["plural"]);
    let storage = crate::registry::apiextensions::storage_version(crd).unwrap_or_default();
    let v = spec["versions"]
        .as_array()?
        .iter()
        .find(|v| v["served"] == true)?
        .clone();
    let version = s(&v["name"]);
    let status = v["subresources"]["status"].is_object();
    let scale = v["subresources"]["scale"]
        .as_object()
        .map(|sc| crate::api::catalog::ScaleInfo {
            spec_replicas_path: s(sc.get("specReplicasPath").unwrap_or(&Value::Null)),
            status_replicas_path: s(sc.get("statusReplicasPath").unwrap_or(&Value::Null)),
            label_selector_path: sc
                .get("labelSelectorPath")
                .and_then(Value::as_str)
                .map(String::from),
        });
    let mut subresources = Vec::new();
    if status {
        subresources.push(Subresource {
            name: "status".into(),
            group: group.clone(),
            version: version.clone(),
            kind: s(&names["kind"]),
            verbs: vec!["get".into(), "patch".into(), "update".into()],
        });
    }
    if scale.is_some() {
        subresources.push(Subresource {
            name: "scale".into(),
            group: "autoscaling".into(),
            version: "v1".into(),
            kind: "Scale".into(),
            verbs: vec!["get".into(), "patch".into(), "update".into()],
        });
    }
    let printer_columns = v["additionalPrinterColumns"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|c| crate::api::catalog::PrinterColumn {
            name: s(&c["name"]),
            kind: s(&c["type"]),
            format: s(&c["format"]),
            description: s(&c["description"]),
            priority: c["priority"].as_i64().unwrap_or(0) as i32,
            json_path: s(&c["jsonPath"]),
        })
        .collect();
    let selectable: Vec<String> = v["selectableFields"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .filter_map(|f| f["jsonPath"].as_str())
        .map(|p| p.trim_start_matches('.').to_string())
        .collect();
    let info = CustomInfo {
        crd_name: meta::name(crd).to_string(),
        schema: v["schema"]["openAPIV3Schema"]
            .as_object()
            .map(|m| Value::Object(m.clone())),
        status,
        scale,
        printer_columns,
        storage_version: storage.clone(),
        conversion: spec["conversion"].clone(),
        selectable_fields: selectable.clone(),
        schemas: std::sync::Arc::new(crate::apiextensions::controller::version_schemas(crd)),
    };
    Some(Resource {
        group: group.clone(),
        version,
        kind: s(&names["kind"]),
        list_kind: s(&names["listKind"]),
        plural: plural.clone(),
        singular: s(&names["singular"]),
        namespaced: spec["scope"] == "Namespaced",
        verbs: [
            "delete",
            "deletecollection",
            "get",
            "list",
            "patch",
            "create",
            "update",
            "watch",
        ]
        .iter()
        .map(|x| x.to_string())
        .collect(),
        short_names: strings(&names["shortNames"]),
        categories: strings(&names["categories"]),
        subresources,
        storage_path: format!("{group}/{plural}"),
        storage_group: group,
        storage_version: storage,
        selectable_fields: selectable,
        codec: None,
        schema: None,
        owner: Owner::Apiextensions,
        custom: Some(Arc::new(info)),
        proxy: None,
        routes: Default::default(),
    })
}
