//! AlwaysPullImages (plugin/pkg/admission/alwayspullimages): every
//! container pulls its image, so a pod cannot use an image cached on a
//! node without the credentials to pull it.

use std::collections::HashSet;

use serde_json::{json, Value};

use super::common::forbidden;
use super::{Attributes, Context, MutatingPlugin, Operation, ValidatingPlugin};
use crate::api::ApiError;
use crate::registry::validation::FieldError;

pub struct AlwaysPullImages;

const CONTAINER_LISTS: [&str; 3] = ["initContainers", "containers", "ephemeralContainers"];

fn images(pod: &Value) -> HashSet<String> {
    CONTAINER_LISTS
        .iter()
        .flat_map(|l| pod["spec"][*l].as_array().into_iter().flatten())
        .filter_map(|c| c["image"].as_str().map(String::from))
        .collect()
}

/// Pods proper and their ephemeral containers, except updates that bring
/// no image the pod did not have.
fn applies(a: &Attributes<'_>) -> bool {
    let pods = a.resource.group.is_empty() && a.resource.plural == "pods";
    if !pods || !(a.subresource.is_empty() || a.subresource == "ephemeralcontainers") {
        return false;
    }
    match (a.operation, a.object.as_ref(), a.old_object) {
        (Operation::Create, Some(_), _) => true,
        (Operation::Update, Some(new), Some(old)) => !images(new).is_subset(&images(old)),
        _ => false,
    }
}

#[async_trait::async_trait]
impl MutatingPlugin for AlwaysPullImages {
    fn name(&self) -> &'static str {
        "AlwaysPullImages"
    }

    async fn admit(&self, a: &mut Attributes<'_>, _ctx: &Context) -> Result<Vec<String>, ApiError> {
        if !applies(a) {
            return Ok(Vec::new());
        }
        if let Some(spec) = a.object.as_mut().and_then(|p| p.get_mut("spec")) {
            for list in CONTAINER_LISTS {
                for c in spec
                    .get_mut(list)
                    .and_then(Value::as_array_mut)
                    .into_iter()
                    .flatten()
                {
                    if let Some(c) = c.as_object_mut() {
                        c.insert("imagePullPolicy".into(), json!("Always"));
                    }
                }
            }
        }
        Ok(Vec::new())
    }
}

#[async_trait::async_trait]
impl ValidatingPlugin for AlwaysPullImages {
    fn name(&self) -> &'static str {
        "AlwaysPullImages"
    }

    /// A later plugin (a webhook) may have changed the policy back.
    async fn validate(&self, a: &Attributes<'_>, _ctx: &Context) -> Result<Vec<String>, ApiError> {
        if !applies(a) {
            return Ok(Vec::new());
        }
        let Some(pod) = a.object.as_ref() else {
            return Ok(Vec::new());
        };
        for list in CONTAINER_LISTS {
            for (i, c) in pod["spec"][list]
                .as_array()
                .into_iter()
                .flatten()
                .enumerate()
            {
                let policy = c["imagePullPolicy"].as_str().unwrap_or("");
                if policy != "Always" {
                    let e = FieldError::not_supported(
                        format!("spec.{list}[{i}].imagePullPolicy"),
                        json!(policy),
                        &["Always"],
                    );
                    return Err(forbidden(a, format!("{}: {}", e.field, e.message())));
                }
            }
        }
        Ok(Vec::new())
    }
}
