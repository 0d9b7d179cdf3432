//! The CustomResourceDefinition strategy: defaults, validation and status
//! handling of CRDs themselves, as apiextensions-apiserver's.

use serde_json::{json, Value};

use crate::api::jsonpath;
use crate::registry::strategy::{set_default, Strategy};
use crate::registry::validation::{self, FieldError};

pub const CLEANUP_FINALIZER: &str = "customresourcecleanup.apiextensions.k8s.io";

pub struct CrdStrategy;

/// The version marked `storage: true`.
pub fn storage_version(crd: &Value) -> Option<String> {
    crd["spec"]["versions"]
        .as_array()?
        .iter()
        .find(|v| v["storage"] == true)
        .and_then(|v| v["name"].as_str())
        .map(String::from)
}

fn label_errors(field: &str, value: &str, errs: &mut Vec<FieldError>) {
    for m in validation::dns1035_label(value) {
        errs.push(FieldError::invalid(field, json!(value), m));
    }
}

impl Strategy for CrdStrategy {
    fn default(&self, obj: &mut Value) {
        let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) else {
            return;
        };
        set_default(spec, "conversion", json!({"strategy": "None"}));
        if let Some(names) = spec.get_mut("names").and_then(Value::as_object_mut) {
            let kind = names
                .get("kind")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            if !kind.is_empty() {
                set_default(names, "singular", json!(kind.to_lowercase()));
                set_default(names, "listKind", json!(format!("{kind}List")));
            }
        }
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        let stored = storage_version(obj).map(|v| vec![v]).unwrap_or_default();
        if let Some(m) = obj.as_object_mut() {
            m.insert(
                "status".into(),
                json!({"acceptedNames": {"plural": "", "kind": ""}, "storedVersions": stored}),
            );
        }
    }

    fn prepare_for_update(&self, new: &mut Value, _old: &Value) {
        // Every version ever used for storage stays listed until an admin removes it.
        if let Some(v) = storage_version(new) {
            let stored = new["status"]["storedVersions"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            if !stored.iter().any(|s| s == &json!(v)) {
                let mut stored = stored;
                stored.push(json!(v));
                new["status"]["storedVersions"] = Value::Array(stored);
            }
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let spec = &obj["spec"];
        let group = spec["group"].as_str().unwrap_or("");
        let names = &spec["names"];
        let plural = names["plural"].as_str().unwrap_or("");
        if group.is_empty() {
            errs.push(FieldError::required("spec.group", ""));
        } else {
            for m in validation::dns1123_subdomain(group) {
                errs.push(FieldError::invalid("spec.group", json!(group), m));
            }
            if !group.contains('.') {
                errs.push(FieldError::invalid(
                    "spec.group",
                    json!(group),
                    "should be a domain with at least one dot",
                ));
            }
        }
        let name = crate::registry::meta::name(obj);
        if !plural.is_empty() && !group.is_empty() && name != format!("{plural}.{group}") {
            errs.push(FieldError::invalid(
                "metadata.name",
                json!(name),
                "must be spec.names.plural+\".\"+spec.group",
            ));
        }
        match spec["scope"].as_str() {
            Some("Namespaced") | Some("Cluster") => {}
            Some(other) => errs.push(FieldError::not_supported(
                "spec.scope",
                json!(other),
                &["Cluster", "Namespaced"],
            )),
            None => errs.push(FieldError::required("spec.scope", "")),
        }
        if plural.is_empty() {
            errs.push(FieldError::required("spec.names.plural", ""));
        } else {
            label_errors("spec.names.plural", plural, &mut errs);
        }
        let singular = names["singular"].as_str().unwrap_or("");
        if !singular.is_empty() {
            label_errors("spec.names.singular", singular, &mut errs);
        }
        let kind = names["kind"].as_str().unwrap_or("");
        if kind.is_empty() {
            errs.push(FieldError::required("spec.names.kind", ""));
        } else {
            label_errors("spec.names.kind", &kind.to_lowercase(), &mut errs);
        }
        let list_kind = names["listKind"].as_str().unwrap_or("");
        if !list_kind.is_empty() {
            label_errors("spec.names.listKind", &list_kind.to_lowercase(), &mut errs);
            if list_kind == kind {
                errs.push(FieldError::invalid(
                    "spec.names.listKind",
                    json!(list_kind),
                    "kind and listKind may not be the same",
                ));
            }
        }
        for (i, s) in names["shortNames"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .enumerate()
        {
            label_errors(
                &format!("spec.names.shortNames[{i}]"),
                s.as_str().unwrap_or(""),
                &mut errs,
            );
        }
        let versions = spec["versions"].as_array().cloned().unwrap_or_default();
        if versions.is_empty() {
            errs.push(FieldError::invalid(
                "spec.versions",
                json!([]),
                "must have exactly one version marked as storage version",
            ));
        }
        let storage = versions.iter().filter(|v| v["storage"] == true).count();
        if !versions.is_empty() && storage != 1 {
            errs.push(FieldError::invalid(
                "spec.versions",
                json!(versions
                    .iter()
                    .filter_map(|v| v["name"].as_str())
                    .collect::<Vec<_>>()),
                "must have exactly one version marked as storage version",
            ));
        }
        let mut seen = std::collections::HashSet::new();
        for (i, v) in versions.iter().enumerate() {
            let path = format!("spec.versions[{i}]");
            let vname = v["name"].as_str().unwrap_or("");
            label_errors(&format!("{path}.name"), vname, &mut errs);
            if !seen.insert(vname.to_string()) {
                errs.push(FieldError::duplicate(format!("{path}.name"), json!(vname)));
            }
            let schema = &v["schema"]["openAPIV3Schema"];
            if schema.is_null() {
                errs.push(FieldError::required(
                    format!("{path}.schema.openAPIV3Schema"),
                    "schemas are required",
                ));
            } else {
                let spath = format!("{path}.schema.openAPIV3Schema");
                errs.extend(crate::schema::validate_structural(schema, &spath));
                if v["subresources"]["status"].is_object() {
                    errs.extend(crate::schema::validate_status_root(schema, &spath));
                }
                errs.extend(crate::cel::compile_schema_rules(schema, &spath));
            }
            for (j, c) in v["additionalPrinterColumns"]
                .as_array()
                .cloned()
                .unwrap_or_default()
                .iter()
                .enumerate()
            {
                let cp = format!("{path}.additionalPrinterColumns[{j}]");
                if c["name"].as_str().unwrap_or("").is_empty() {
                    errs.push(FieldError::required(format!("{cp}.name"), ""));
                }
                let ty = c["type"].as_str().unwrap_or("");
                if !["integer", "number", "string", "boolean", "date"].contains(&ty) {
                    errs.push(FieldError::not_supported(
                        format!("{cp}.type"),
                        json!(ty),
                        &["boolean", "date", "integer", "number", "string"],
                    ));
                }
                let jp = c["jsonPath"].as_str().unwrap_or("");
                if jp.is_empty() {
                    errs.push(FieldError::required(format!("{cp}.jsonPath"), ""));
                } else if !jsonpath::is_valid(jp) {
                    errs.push(FieldError::invalid(
                        format!("{cp}.jsonPath"),
                        json!(jp),
                        "must be a simple json path starting with .",
                    ));
                }
            }
            if let Some(scale) = v["subresources"]["scale"].as_object() {
                for (key, required, prefix) in [
                    ("specReplicasPath", true, ".spec."),
                    ("statusReplicasPath", true, ".status."),
                    ("labelSelectorPath", false, ""),
                ] {
                    let p = scale.get(key).and_then(Value::as_str).unwrap_or("");
                    if p.is_empty() {
                        if required {
                            errs.push(FieldError::required(
                                format!("{path}.subresources.scale.{key}"),
                                "",
                            ));
                        }
                    } else if !jsonpath::is_valid(p)
                        || (!prefix.is_empty() && !p.starts_with(prefix))
                        || (prefix.is_empty()
                            && !(p.starts_with(".spec.") || p.starts_with(".status.")))
                    {
                        errs.push(FieldError::invalid(
                            format!("{path}.subresources.scale.{key}"),
                            json!(p),
                            format!(
                                "should be a json path under {}",
                                if prefix.is_empty() {
                                    ".spec or .status"
                                } else {
                                    prefix.trim_end_matches('.')
                                }
                            ),
                        ));
                    }
                }
            }
        }
        let strategy = spec["conversion"]["strategy"].as_str().unwrap_or("None");
        if !["None", "Webhook"].contains(&strategy) {
            errs.push(FieldError::not_supported(
                "spec.conversion.strategy",
                json!(strategy),
                &["None", "Webhook"],
            ));
        }
        if strategy == "Webhook" && spec["conversion"]["webhook"]["clientConfig"].is_null() {
            errs.push(FieldError::required(
                "spec.conversion.webhook.clientConfig",
                "required when strategy is set to Webhook",
            ));
        }
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = self.validate(new);
        if new["spec"]["group"] != old["spec"]["group"] {
            errs.push(FieldError::invalid(
                "spec.group",
                new["spec"]["group"].clone(),
                "field is immutable",
            ));
        }
        if new["spec"]["names"]["plural"] != old["spec"]["names"]["plural"] {
            errs.push(FieldError::invalid(
                "spec.names.plural",
                new["spec"]["names"]["plural"].clone(),
                "field is immutable",
            ));
        }
        errs
    }

    fn defer_deletion(&self, obj: &mut Value) -> bool {
        // The cleanup finalizer holds the CRD until its objects are gone;
        // once deletion has begun, that finalizer alone decides.
        if crate::registry::meta::is_deleting(obj) {
            return false;
        }
        let meta = crate::registry::meta::meta_mut(obj);
        let fins = meta.entry("finalizers").or_insert_with(|| json!([]));
        if let Some(a) = fins.as_array_mut() {
            if !a.iter().any(|f| f == CLEANUP_FINALIZER) {
                a.push(json!(CLEANUP_FINALIZER));
            }
        }
        // The same update says why the CRD stays (upstream's REST.Delete).
        if let Some(m) = obj.as_object_mut() {
            let status = m.entry("status").or_insert_with(|| json!({}));
            if let Some(status) = status.as_object_mut() {
                let conds = status.entry("conditions").or_insert_with(|| json!([]));
                if !conds.is_array() {
                    *conds = json!([]);
                }
                if let Some(list) = conds.as_array_mut() {
                    list.retain(|c| c["type"] != "Terminating");
                    list.push(json!({
                        "type": "Terminating",
                        "status": "True",
                        "lastTransitionTime": crate::registry::graceful::now_rfc3339(),
                        "reason": "InstanceDeletionPending",
                        "message": "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon",
                    }));
                }
            }
        }
        true
    }
}
