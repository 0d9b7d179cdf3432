//! IPAddress (upstream's pkg/registry/networking/ipaddress).

use serde_json::{json, Value};

use super::{drop_generation, ip_errors, IMMUTABLE};
use crate::registry::helpers::s;
use crate::registry::meta::NameRule;
use crate::registry::resource::gojson;
use crate::registry::strategy::NAME_DESCRIPTION;
use crate::registry::strategy::{age_cell, name_cell, Strategy};
use crate::registry::validation::{self, FieldError};

const PARENT_REF_DESCRIPTION: &str = "ParentRef references the resource that an IPAddress is attached to. An IPAddress must reference a parent object.";

pub struct IPAddressStrategy;

/// The internal ParentReference as upstream quotes it (`null` when unset).
fn parent_ref_go(v: &Value) -> String {
    if !has_parent_ref(v) {
        return "null".into();
    }
    gojson::opt_struct(v, |p| {
        gojson::structure(&[
            ("Group", gojson::str_field(&p["group"])),
            ("Resource", gojson::str_field(&p["resource"])),
            ("Namespace", gojson::str_field(&p["namespace"])),
            ("Name", gojson::str_field(&p["name"])),
        ])
    })
}

/// Whether the parent reference is set. The typed decoding fills a missing
/// `parentRef` (a pointer upstream) with empty strings, so an all-empty one
/// counts as unset.
fn has_parent_ref(p: &Value) -> bool {
    p.as_object().is_some_and(|m| {
        m.values()
            .any(|v| v.as_str().is_some_and(|s| !s.is_empty()))
    })
}

fn validate_ip_address(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let name = crate::registry::meta::name(obj);
    if !name.is_empty() {
        for msg in ip_errors(name) {
            errs.push(FieldError::invalid("metadata.name", json!(name), msg));
        }
    }
    let p = &obj["spec"]["parentRef"];
    if !has_parent_ref(p) {
        errs.push(FieldError::required("spec.parentRef", ""));
        return errs;
    }
    let group = s(p, "group");
    if !group.is_empty() {
        for msg in validation::dns1123_subdomain(group) {
            errs.push(FieldError::invalid(
                "spec.parentRef.group",
                json!(group),
                msg,
            ));
        }
    }
    for (key, required) in [("resource", true), ("name", true), ("namespace", false)] {
        let v = s(p, key);
        let path = format!("spec.parentRef.{key}");
        if v.is_empty() {
            if required {
                errs.push(FieldError::required(path, ""));
            }
            continue;
        }
        for msg in validation::path_segment_name(v) {
            errs.push(FieldError::invalid(path.clone(), json!(v), msg));
        }
    }
    errs
}

fn parent_ref_cell(o: &Value) -> Value {
    let p = &o["spec"]["parentRef"];
    if !has_parent_ref(p) {
        return json!("<none>");
    }
    let (group, resource) = (s(p, "group"), s(p, "resource"));
    let mut out = if group.is_empty() {
        resource.to_lowercase()
    } else {
        format!("{resource}.{group}").to_lowercase()
    };
    let ns = s(p, "namespace");
    if !ns.is_empty() {
        out.push('/');
        out.push_str(ns);
    }
    out.push('/');
    out.push_str(s(p, "name"));
    json!(out)
}

impl Strategy for IPAddressStrategy {
    // The IP checks are this kind's name rule; they run in `validate` (a
    // path segment is the loosest rule the registry knows and accepts every IP).
    fn name_rule(&self) -> NameRule {
        NameRule::PathSegment
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        drop_generation(obj);
    }

    fn generation_changed(&self, _new: &Value, _old: &Value) -> bool {
        false
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_ip_address(obj)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = validate_ip_address(new);
        let (np, op) = (&new["spec"]["parentRef"], &old["spec"]["parentRef"]);
        let norm = |v: &Value| {
            if has_parent_ref(v) {
                v.clone()
            } else {
                Value::Null
            }
        };
        if norm(np) != norm(op) {
            errs.push(crate::registry::helpers::invalid_raw(
                "spec.parentRef",
                &parent_ref_go(np),
                IMMUTABLE,
            ));
        }
        errs
    }

    /// Upstream's printer declares two columns but fills three cells (the
    /// age too); kubectl prints the two.
    fn dynamic_columns(&self) -> Option<(Vec<Value>, Box<dyn Fn(&Value) -> Vec<Value> + '_>)> {
        let defs = vec![
            json!({"name": "Name", "type": "string", "format": "name", "description": NAME_DESCRIPTION, "priority": 0}),
            json!({"name": "ParentRef", "type": "string", "format": "", "description": PARENT_REF_DESCRIPTION, "priority": 0}),
        ];
        Some((
            defs,
            Box::new(|o: &Value| vec![name_cell(o), parent_ref_cell(o), age_cell(o)]),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msgs(errs: &[FieldError]) -> Vec<(String, String)> {
        errs.iter()
            .map(|e| (e.field.clone(), e.message()))
            .collect()
    }

    #[test]
    fn ip_address_validation() {
        let ok = json!({"metadata": {"name": "10.0.0.5"}, "spec": {"parentRef": {"group": "", "resource": "services", "namespace": "default", "name": "web"}}});
        assert!(IPAddressStrategy.validate(&ok).is_empty());
        let bad = json!({"metadata": {"name": "10.0.0.05"}, "spec": {"parentRef": {"group": "Bad_Group", "namespace": "a/b"}}});
        let got = msgs(&IPAddressStrategy.validate(&bad));
        assert_eq!(
            got[0],
            (
                "metadata.name".into(),
                "Invalid value: \"10.0.0.05\": must not have leading 0s".into()
            )
        );
        assert_eq!(got[1].0, "spec.parentRef.group");
        assert_eq!(
            got[2],
            ("spec.parentRef.resource".into(), "Required value".into())
        );
        assert_eq!(
            got[3],
            ("spec.parentRef.name".into(), "Required value".into())
        );
        assert_eq!(
            got[4],
            (
                "spec.parentRef.namespace".into(),
                "Invalid value: \"a/b\": may not contain '/'".into()
            )
        );
        let none = json!({"metadata": {"name": "10.0.0.5"}, "spec": {}});
        assert_eq!(
            msgs(&IPAddressStrategy.validate(&none)),
            [("spec.parentRef".into(), "Required value".into())]
        );
        // What the typed decoding makes of a missing parentRef.
        let decoded = json!({"metadata": {"name": "10.0.0.5"}, "spec": {"parentRef": {"name": "", "resource": ""}}});
        assert_eq!(
            msgs(&IPAddressStrategy.validate(&decoded)),
            [("spec.parentRef".into(), "Required value".into())]
        );
        let mut moved = ok.clone();
        moved["spec"]["parentRef"]["name"] = json!("other");
        assert_eq!(
            msgs(&IPAddressStrategy.validate_update(&moved, &ok)),
            [(
                "spec.parentRef".into(),
                "Invalid value: {\"Group\":\"\",\"Resource\":\"services\",\"Namespace\":\"default\",\"Name\":\"other\"}: field is immutable".into()
            )]
        );
        assert_eq!(parent_ref_cell(&ok), "services/default/web");
        let grouped = json!({"spec": {"parentRef": {"group": "Example.com", "resource": "Gateways", "name": "g"}}});
        assert_eq!(parent_ref_cell(&grouped), "gateways.example.com/g");
        assert_eq!(parent_ref_cell(&json!({})), "<none>");
        let mut o = json!({"metadata": {"generation": 1}});
        IPAddressStrategy.prepare_for_create(&mut o);
        assert!(o["metadata"].get("generation").is_none());
    }
}
