//! StorageObjectInUseProtection (plugin/pkg/admission/storage/
//! storageobjectinuseprotection): every new claim and volume carries a
//! finalizer, so deleting one still in use only marks it; the
//! pvc-protection and pv-protection controllers remove the finalizer once
//! nothing uses it (src/controlplane/storage_protection.rs).

use serde_json::{json, Value};

use super::{Attributes, Context, MutatingPlugin, Operation};
use crate::api::ApiError;

pub const PVC_FINALIZER: &str = "kubernetes.io/pvc-protection";
pub const PV_FINALIZER: &str = "kubernetes.io/pv-protection";

pub struct StorageObjectInUseProtection;

#[async_trait::async_trait]
impl MutatingPlugin for StorageObjectInUseProtection {
    fn name(&self) -> &'static str {
        "StorageObjectInUseProtection"
    }

    async fn admit(&self, a: &mut Attributes<'_>, _ctx: &Context) -> Result<Vec<String>, ApiError> {
        if a.operation != Operation::Create
            || !a.resource.group.is_empty()
            || !a.subresource.is_empty()
        {
            return Ok(Vec::new());
        }
        let finalizer = match a.resource.plural.as_str() {
            "persistentvolumeclaims" => PVC_FINALIZER,
            "persistentvolumes" => PV_FINALIZER,
            _ => return Ok(Vec::new()),
        };
        let Some(meta) = a
            .object
            .as_mut()
            .and_then(|o| o.as_object_mut())
            .map(|o| o.entry("metadata").or_insert_with(|| json!({})))
            .and_then(Value::as_object_mut)
        else {
            return Ok(Vec::new());
        };
        let list = meta.entry("finalizers").or_insert_with(|| json!([]));
        if !list.is_array() {
            *list = json!([]);
        }
        if let Some(list) = list.as_array_mut() {
            if !list.iter().any(|f| f == finalizer) {
                list.push(json!(finalizer));
            }
        }
        Ok(Vec::new())
    }
}
