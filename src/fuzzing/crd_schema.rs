//! Target `crd_schema`: a CRD's `openAPIV3Schema` validated as a CRD
//! create would, and custom resources written against it.

use serde_json::{json, Value};

use super::env::{block_on, dry_run, env, schema_of};
use super::widget::{custom_resource, widget_crd};
use super::PREFIX;
use crate::api::catalog::Catalog;
use crate::registry::fieldmanager::{self, Schema, Scope};
use crate::registry::{FieldValidation, PatchType, Registries};

/// A value for a structural schema: its default, first enum value, or a
/// plausible value of its type, nested `depth` levels at most.
fn sample(schema: &Value, depth: usize) -> Value {
    if let Some(d) = schema.get("default") {
        return d.clone();
    }
    if let Some(first) = schema
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|a| a.first())
    {
        return first.clone();
    }
    if depth == 0 {
        return Value::Null;
    }
    if schema["x-kubernetes-int-or-string"] == true {
        return json!(1);
    }
    match schema["type"].as_str().unwrap_or("") {
        "object" => {
            let mut m = serde_json::Map::new();
            if let Some(props) = schema.get("properties").and_then(Value::as_object) {
                for (k, s) in props.iter().take(32) {
                    m.insert(k.clone(), sample(s, depth - 1));
                }
            } else if let Some(add) = schema.get("additionalProperties").filter(|a| a.is_object()) {
                m.insert("key".into(), sample(add, depth - 1));
            }
            if schema["x-kubernetes-embedded-resource"] == true {
                m.insert("apiVersion".into(), json!("v1"));
                m.insert("kind".into(), json!("ConfigMap"));
                m.insert("metadata".into(), json!({"name": "embedded"}));
            }
            Value::Object(m)
        }
        "array" => match schema.get("items") {
            Some(items) => json!([sample(items, depth - 1)]),
            None => json!([]),
        },
        "integer" => schema.get("minimum").cloned().unwrap_or(json!(1)),
        "number" => schema.get("minimum").cloned().unwrap_or(json!(1.5)),
        "boolean" => json!(true),
        "string" => match schema["format"].as_str().unwrap_or("") {
            "date-time" => json!("2024-01-01T00:00:00Z"),
            "date" => json!("2024-01-01"),
            "duration" => json!("1h30m"),
            "byte" => json!("aGVsbG8="),
            "int-or-string" => json!("10%"),
            "quantity" => json!("500m"),
            "uuid" => json!("00000000-0000-4000-8000-000000000001"),
            "ipv4" => json!("10.0.0.1"),
            "ipv6" => json!("::1"),
            "cidr" => json!("10.0.0.0/8"),
            "email" => json!("a@example.com"),
            "hostname" => json!("example.com"),
            "uri" => json!("https://example.com/x"),
            _ => json!("x"),
        },
        _ => Value::Null,
    }
}

/// A CRD's `openAPIV3Schema` (JSON): the CRD is created (a dry run, so the
/// whole CRD validation: structural rules, CEL compilation, defaults);
/// when it is accepted, custom resources are created, updated and applied
/// against it as the served resource the apiextensions controller makes.
pub fn crd_schema(input: &[u8]) {
    let Ok(schema) = serde_json::from_slice::<Value>(input) else {
        return;
    };
    let e = env();
    let Some(crds) = e
        .registries
        .get("apiextensions.k8s.io", "v1", "customresourcedefinitions")
    else {
        return;
    };
    let opts = dry_run("fuzz", FieldValidation::Strict);
    let crd = widget_crd(schema.clone());
    let Ok(written) = block_on(crds.create("", crd, &opts)) else {
        return;
    };
    let _ = crate::schema::to_openapi(&schema);
    let Ok(crd) = serde_json::from_slice::<Value>(&written.object) else {
        return;
    };
    let Some(r) = custom_resource(&crd) else {
        return;
    };
    let served_schema = r
        .custom
        .as_ref()
        .and_then(|c| c.schema.clone())
        .unwrap_or(Value::Null);
    let catalog = Catalog::default();
    catalog.add(r.clone());
    let registries = Registries::new(catalog, e.cachers.clone(), PREFIX.into());
    let Some(reg) = registries.get(&r.group, &r.version, &r.plural) else {
        return;
    };
    let mut obj = sample(&served_schema, 8);
    if !obj.is_object() {
        obj = json!({});
    }
    obj["apiVersion"] = json!("example.com/v1");
    obj["kind"] = json!("Widget");
    obj["metadata"] = json!({"name": "w1", "namespace": "default", "labels": {"a": "b"}});
    let minimal =
        json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w2"}});
    let warn = dry_run("fuzz", FieldValidation::Warn);
    block_on(async {
        let _ = reg.create("default", obj.clone(), &warn).await;
        let _ = reg.create("default", minimal, &warn).await;
        let _ = reg
            .create("default", e.bases[4].object.clone(), &warn)
            .await;
        // The backend answers the base Widget as the live w1: ratcheting
        // and transition rules see an old object.
        let _ = reg.update("default", "w1", obj.clone(), None, &warn).await;
        let _ = reg
            .update("default", "w1", obj.clone(), Some("status"), &warn)
            .await;
        let body = serde_json::to_vec(&obj).unwrap_or_default();
        let _ = reg
            .patch("default", "w1", PatchType::Apply, &body, None, &warn)
            .await;
    });
    // A Registry holds its Registries, which hold it: forgetting it breaks
    // the cycle (the server's Registries live as long as the process).
    drop(reg);
    registries.forget(&r.group, &r.version, &r.plural);
    let scope = Scope::new(Schema::structural(&served_schema), "");
    let _ = fieldmanager::apply_in(&scope, None, &obj, "fuzz", false);
    let _ = schema_of(&r);
}
