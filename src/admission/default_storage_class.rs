//! DefaultStorageClass (plugin/pkg/admission/storage/storageclass/setdefault):
//! a claim created without a class (no `spec.storageClassName`, no beta
//! annotation) gets the default StorageClass, the one annotated
//! `storageclass.kubernetes.io/is-default-class: "true"` (the newest when
//! several are, by name when created at once).

use serde_json::Value;

use super::common::{self, forbidden};
use super::{Attributes, Context, MutatingPlugin, Operation};
use crate::api::ApiError;

pub const IS_DEFAULT_ANNOTATION: &str = "storageclass.kubernetes.io/is-default-class";
pub const BETA_IS_DEFAULT_ANNOTATION: &str = "storageclass.beta.kubernetes.io/is-default-class";
const BETA_CLASS_ANNOTATION: &str = "volume.beta.kubernetes.io/storage-class";

pub struct DefaultStorageClass;

fn is_default(class: &Value) -> bool {
    let ann = &class["metadata"]["annotations"];
    ann[IS_DEFAULT_ANNOTATION] == "true" || ann[BETA_IS_DEFAULT_ANNOTATION] == "true"
}

/// upstream's `GetDefaultClass`: newest first, then by name.
pub fn default_class(classes: &[Value]) -> Option<&Value> {
    let created = |c: &Value| {
        c["metadata"]["creationTimestamp"]
            .as_str()
            .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
    };
    let name = |c: &Value| c["metadata"]["name"].as_str().unwrap_or("").to_string();
    let mut defaults: Vec<&Value> = classes.iter().filter(|c| is_default(c)).collect();
    defaults.sort_by(|a, b| {
        created(b)
            .cmp(&created(a))
            .then_with(|| name(a).cmp(&name(b)))
    });
    defaults.first().copied()
}

/// upstream's `PersistentVolumeClaimHasClass`.
fn has_class(pvc: &Value) -> bool {
    pvc["metadata"]["annotations"]
        .get(BETA_CLASS_ANNOTATION)
        .is_some()
        || pvc["spec"]
            .get("storageClassName")
            .is_some_and(|v| !v.is_null())
}

#[async_trait::async_trait]
impl MutatingPlugin for DefaultStorageClass {
    fn name(&self) -> &'static str {
        "DefaultStorageClass"
    }

    async fn admit(&self, a: &mut Attributes<'_>, ctx: &Context) -> Result<Vec<String>, ApiError> {
        if a.operation != Operation::Create
            || !common::is_core(a, "persistentvolumeclaims")
            || !a.subresource.is_empty()
        {
            return Ok(Vec::new());
        }
        if a.object.as_ref().is_none_or(has_class) {
            return Ok(Vec::new());
        }
        let classes = common::list_in(
            &ctx.registries,
            "storage.k8s.io",
            "v1",
            "storageclasses",
            "",
        )
        .await
        .map_err(|e| forbidden(a, e.message))?;
        let Some(name) = default_class(&classes).and_then(|c| c["metadata"]["name"].as_str())
        else {
            return Ok(Vec::new());
        };
        let name = name.to_string();
        if let Some(spec) = a
            .object
            .as_mut()
            .and_then(|o| o.get_mut("spec"))
            .and_then(Value::as_object_mut)
        {
            spec.insert("storageClassName".into(), Value::String(name));
        }
        Ok(Vec::new())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::admission::common::testing;

    #[test]
    fn newest_default_wins() {
        let c = |n: &str, t: &str, d: bool| {
            json!({"metadata": {"name": n, "creationTimestamp": t,
                "annotations": {IS_DEFAULT_ANNOTATION: if d { "true" } else { "false" }}}})
        };
        let classes = [
            c("old", "2024-01-01T00:00:00Z", true),
            c("b", "2024-06-01T00:00:00Z", true),
            c("a", "2024-06-01T00:00:00Z", true),
            c("newest-not-default", "2025-01-01T00:00:00Z", false),
        ];
        assert_eq!(
            default_class(&classes).map(|c| &c["metadata"]["name"]),
            Some(&json!("a"))
        );
        assert!(default_class(&classes[3..]).is_none());
    }

    #[tokio::test]
    async fn claims_without_a_class_get_the_default() {
        let env = testing::env().await;
        env.namespace("s", json!({})).await;
        env.create("storage.k8s.io", "v1", "storageclasses", json!({"apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass", "metadata": {"name": "std", "annotations": {IS_DEFAULT_ANNOTATION: "true"}},
            "provisioner": "example.com/p"})).await;
        let ctx = Context {
            registries: env.registries.clone(),
        };
        let pvcs = env.resource("", "v1", "persistentvolumeclaims");
        let mut a = testing::create_attrs(
            &pvcs,
            "s",
            "c",
            json!({"metadata": {"name": "c"}, "spec": {}}),
        );
        DefaultStorageClass
            .admit(&mut a, &ctx)
            .await
            .expect("admit");
        assert_eq!(
            a.object.as_ref().expect("pvc")["spec"]["storageClassName"],
            "std"
        );
        // An explicit empty class stays.
        let mut a = testing::create_attrs(
            &pvcs,
            "s",
            "c",
            json!({"metadata": {"name": "c"}, "spec": {"storageClassName": ""}}),
        );
        DefaultStorageClass
            .admit(&mut a, &ctx)
            .await
            .expect("admit");
        assert_eq!(
            a.object.as_ref().expect("pvc")["spec"]["storageClassName"],
            ""
        );
    }
}
