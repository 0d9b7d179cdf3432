//! DefaultIngressClass (plugin/pkg/admission/network/defaultingressclass):
//! an Ingress created without a class (no `spec.ingressClassName`, no
//! `kubernetes.io/ingress.class` annotation) gets the default IngressClass,
//! the one annotated `ingressclass.kubernetes.io/is-default-class: "true"`
//! (the newest when several are).

use serde_json::{json, Value};

use super::common::forbidden;
use super::{Attributes, Context, MutatingPlugin, Operation};
use crate::api::ApiError;

pub const IS_DEFAULT_ANNOTATION: &str = "ingressclass.kubernetes.io/is-default-class";
const CLASS_ANNOTATION: &str = "kubernetes.io/ingress.class";

pub struct DefaultIngressClass;

/// The default class: newest first, then by name.
fn default_class(classes: &[Value]) -> Option<&Value> {
    let created = |c: &Value| {
        c["metadata"]["creationTimestamp"]
            .as_str()
            .unwrap_or("")
            .to_string()
    };
    let name = |c: &Value| c["metadata"]["name"].as_str().unwrap_or("").to_string();
    let mut defaults: Vec<&Value> = classes
        .iter()
        .filter(|c| c["metadata"]["annotations"][IS_DEFAULT_ANNOTATION] == "true")
        .collect();
    defaults.sort_by(|a, b| {
        created(b)
            .cmp(&created(a))
            .then_with(|| name(a).cmp(&name(b)))
    });
    defaults.first().copied()
}

#[async_trait::async_trait]
impl MutatingPlugin for DefaultIngressClass {
    fn name(&self) -> &'static str {
        "DefaultIngressClass"
    }

    async fn admit(&self, a: &mut Attributes<'_>, ctx: &Context) -> Result<Vec<String>, ApiError> {
        if a.operation != Operation::Create
            || a.resource.group != "networking.k8s.io"
            || a.resource.plural != "ingresses"
            || !a.subresource.is_empty()
        {
            return Ok(Vec::new());
        }
        let has_class = a.object.as_ref().is_none_or(|i| {
            !i["spec"]["ingressClassName"].is_null()
                || !i["metadata"]["annotations"][CLASS_ANNOTATION].is_null()
        });
        if has_class {
            return Ok(Vec::new());
        }
        let classes = super::common::list_in(
            &ctx.registries,
            "networking.k8s.io",
            "v1",
            "ingressclasses",
            "",
        )
        .await
        .map_err(|e| forbidden(a, e.message))?;
        let Some(name) = default_class(&classes).and_then(|c| c["metadata"]["name"].as_str())
        else {
            return Ok(Vec::new());
        };
        let name = name.to_string();
        if let Some(obj) = a.object.as_mut().and_then(Value::as_object_mut) {
            let spec = obj.entry("spec").or_insert_with(|| json!({}));
            if let Some(spec) = spec.as_object_mut() {
                spec.insert("ingressClassName".into(), json!(name));
            }
        }
        Ok(Vec::new())
    }
}
