//! IngressClass (upstream's pkg/registry/networking/ingressclass).

use serde_json::{json, Value};

use super::validate_typed_local_ref;

use crate::registry::helpers::{self, s};
use crate::registry::strategy::{age_column, name_column, set_default, Column, Strategy};
use crate::registry::validation::{self, FieldError};

pub struct IngressClassStrategy;

static INGRESS_CLASS_COLUMNS: std::sync::LazyLock<Vec<Column>> = std::sync::LazyLock::new(|| {
    vec![
        name_column(),
        Column {
            name: "Controller",
            kind: "string",
            format: "",
            description: "Controller that is responsible for handling this class",
            priority: 0,
            cell: |o| json!(s(&o["spec"], "controller")),
        },
        Column {
            name: "Parameters",
            kind: "string",
            format: "",
            description: "A reference to a resource with additional parameters",
            priority: 0,
            cell: |o| {
                let p = &o["spec"]["parameters"];
                if p.is_null() {
                    return json!("<none>");
                }
                let mut out = s(p, "kind").to_string();
                if let Some(g) = p["apiGroup"].as_str() {
                    out = format!("{out}.{g}");
                }
                json!(format!("{out}/{}", s(p, "name")))
            },
        },
        age_column(),
    ]
});

fn validate_ingress_class_spec(spec: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let controller = s(spec, "controller");
    if controller.len() > 250 {
        errs.push(FieldError::too_long("spec.controller", 250));
    }
    errs.extend(helpers::domain_prefixed_path("spec.controller", controller));
    let p = &spec["parameters"];
    if !p.is_null() {
        validate_typed_local_ref(p, "spec.parameters", &mut errs);
        match p["scope"].as_str() {
            None => errs.push(FieldError::required("spec.parameters.scope", "")),
            Some(scope @ ("Namespace" | "Cluster")) => {
                if scope == "Namespace" {
                    match p["namespace"].as_str() {
                        None => errs.push(FieldError::required(
                            "spec.parameters.namespace",
                            "`parameters.scope` is set to 'Namespace'",
                        )),
                        Some(ns) => {
                            for m in validation::dns1123_label(ns) {
                                errs.push(FieldError::invalid(
                                    "spec.parameters.namespace",
                                    json!(ns),
                                    m,
                                ));
                            }
                        }
                    }
                } else if !p["namespace"].is_null() {
                    errs.push(FieldError::forbidden(
                        "spec.parameters.namespace",
                        "`parameters.scope` is set to 'Cluster'",
                    ));
                }
            }
            Some(other) => errs.push(FieldError::not_supported(
                "spec.parameters.scope",
                json!(other),
                &["Cluster", "Namespace"],
            )),
        }
    }
    errs
}

impl Strategy for IngressClassStrategy {
    fn default(&self, obj: &mut Value) {
        if let Some(p) = obj
            .get_mut("spec")
            .and_then(|s| s.get_mut("parameters"))
            .and_then(Value::as_object_mut)
        {
            set_default(p, "scope", json!("Cluster"));
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_ingress_class_spec(&obj["spec"])
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        helpers::immutable(
            "spec.controller",
            &new["spec"]["controller"],
            &old["spec"]["controller"],
            &mut errs,
        );
        errs.extend(validate_ingress_class_spec(&new["spec"]));
        errs
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&INGRESS_CLASS_COLUMNS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ingress_class() {
        let mut o = json!({"spec": {"controller": "example.com/ingress", "parameters": {"kind": "Params", "apiGroup": "k8s.example.com", "name": "p"}}});
        IngressClassStrategy.default(&mut o);
        assert_eq!(o["spec"]["parameters"]["scope"], "Cluster");
        assert!(IngressClassStrategy.validate(&o).is_empty());
        assert_eq!(
            (INGRESS_CLASS_COLUMNS[2].cell)(&o),
            "Params.k8s.example.com/p"
        );
        assert_eq!((INGRESS_CLASS_COLUMNS[2].cell)(&json!({})), "<none>");
        let errs = IngressClassStrategy.validate(&json!({"spec": {"controller": "nginx"}}));
        assert_eq!(errs[0].field, "spec.controller");
        assert_eq!(
            errs[0].message(),
            "Invalid value: \"nginx\": must be a domain-prefixed path (such as \"acme.io/foo\")"
        );
        let mut new = o.clone();
        new["spec"]["controller"] = json!("example.com/other");
        let errs = IngressClassStrategy.validate_update(&new, &o);
        assert_eq!(
            errs[0].message(),
            "Invalid value: \"example.com/other\": field is immutable"
        );
    }
}
