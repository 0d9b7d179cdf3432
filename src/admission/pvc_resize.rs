//! PersistentVolumeClaimResize (plugin/pkg/admission/storage/
//! persistentvolume/resize): a claim may grow only when it is bound and
//! its StorageClass allows volume expansion.

use super::common::{self, forbidden};
use super::{Attributes, Context, Operation, ValidatingPlugin};
use crate::api::ApiError;
use crate::registry::helpers::quantity;

const BETA_CLASS_ANNOTATION: &str = "volume.beta.kubernetes.io/storage-class";

pub struct PersistentVolumeClaimResize;

fn class_of(pvc: &serde_json::Value) -> String {
    pvc["metadata"]["annotations"][BETA_CLASS_ANNOTATION]
        .as_str()
        .or_else(|| pvc["spec"]["storageClassName"].as_str())
        .unwrap_or("")
        .to_string()
}

#[async_trait::async_trait]
impl ValidatingPlugin for PersistentVolumeClaimResize {
    fn name(&self) -> &'static str {
        "PersistentVolumeClaimResize"
    }

    async fn validate(&self, a: &Attributes<'_>, ctx: &Context) -> Result<Vec<String>, ApiError> {
        if a.operation != Operation::Update
            || !common::is_core(a, "persistentvolumeclaims")
            || !a.subresource.is_empty()
        {
            return Ok(Vec::new());
        }
        let (Some(new), Some(old)) = (a.object.as_ref(), a.old_object) else {
            return Ok(Vec::new());
        };
        let size = |p: &serde_json::Value| quantity(&p["spec"]["resources"]["requests"]["storage"]);
        if size(new).unwrap_or(0) <= size(old).unwrap_or(0) {
            return Ok(Vec::new());
        }
        if old["status"]["phase"] != "Bound" {
            return Err(forbidden(
                a,
                "Only bound persistent volume claims can be expanded",
            ));
        }
        let class = class_of(new);
        let mut allowed = !class.is_empty() && class == class_of(old);
        if allowed {
            let classes = common::list_in(
                &ctx.registries,
                "storage.k8s.io",
                "v1",
                "storageclasses",
                "",
            )
            .await?;
            allowed = classes.iter().any(|c| {
                c["metadata"]["name"] == class.as_str() && c["allowVolumeExpansion"] == true
            });
        }
        if !allowed {
            return Err(forbidden(
                a,
                "only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize",
            ));
        }
        Ok(Vec::new())
    }
}
