//! Small pieces the built-in plugins share: upstream's `admission.NewForbidden`,
//! reading objects of a namespace, and pod-spec helpers.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::StatusDetails;
use serde_json::Value;

use super::Attributes;
use crate::api::status::qualified_resource;
use crate::api::ApiError;
use crate::registry::{ListParams, Registries};

/// upstream's `apierrors.NewForbidden(resource, name, err)`.
pub fn forbidden_for(
    group: &str,
    plural: &str,
    name: &str,
    why: impl std::fmt::Display,
) -> ApiError {
    let qualified = qualified_resource(group, plural);
    let message = if plural.is_empty() {
        format!("forbidden: {why}")
    } else if name.is_empty() {
        format!("{qualified} is forbidden: {why}")
    } else {
        format!("{qualified} {name:?} is forbidden: {why}")
    };
    ApiError::forbidden(message).with_details(Some(StatusDetails {
        name: (!name.is_empty()).then(|| name.to_string()),
        group: (!group.is_empty()).then(|| group.to_string()),
        kind: (!plural.is_empty()).then(|| plural.to_string()),
        ..Default::default()
    }))
}

/// A plain Go error returned by an upstream plugin: `ErrorToAPIStatus`
/// makes it a 500 with no reason and no details, the message as it is.
pub fn plain_error(message: impl Into<String>) -> ApiError {
    ApiError::new(500, crate::api::Reason::Unspecified, message).with_details(None)
}

/// upstream's `admission.NewForbidden(a, err)`: the request's resource and
/// name (or the object's name or generateName, or `Unknown`).
pub fn forbidden(a: &Attributes<'_>, why: impl std::fmt::Display) -> ApiError {
    let name = if !a.name.is_empty() {
        a.name.to_string()
    } else {
        let m = a.object.as_ref().map(|o| &o["metadata"]);
        let n = m.and_then(|m| m["name"].as_str()).unwrap_or("");
        let g = m.and_then(|m| m["generateName"].as_str()).unwrap_or("");
        if !n.is_empty() {
            n.to_string()
        } else if !g.is_empty() {
            g.to_string()
        } else {
            "Unknown".to_string()
        }
    };
    forbidden_for(&a.resource.group, &a.resource.plural, &name, why)
}

/// True when the request is for `resource` of the core group (`pods`...).
pub fn is_core(a: &Attributes<'_>, plural: &str) -> bool {
    a.resource.group.is_empty() && a.resource.plural == plural
}

/// Every object of a core resource in a namespace (a consistent read).
pub async fn list_core(
    registries: &Registries,
    plural: &str,
    namespace: &str,
) -> Result<Vec<Value>, ApiError> {
    list_in(registries, "", "v1", plural, namespace).await
}

/// Whether a namespace has any object of a core resource, from the watch
/// cache (as upstream's plugins ask their informers' listers): a cheap
/// answer for the common "none here" case before any consistent read.
pub async fn any_core_cached(
    registries: &Registries,
    plural: &str,
    namespace: &str,
) -> Result<bool, ApiError> {
    let Some(reg) = registries.get("", "v1", plural) else {
        return Ok(false);
    };
    reg.any_in(namespace).await
}

/// Every object of a resource in a namespace ("" for all), as JSON.
pub async fn list_in(
    registries: &Registries,
    group: &str,
    version: &str,
    plural: &str,
    namespace: &str,
) -> Result<Vec<Value>, ApiError> {
    let Some(reg) = registries.get(group, version, plural) else {
        return Ok(Vec::new());
    };
    let list = reg.list(namespace, &ListParams::default()).await?;
    Ok(list
        .items
        .iter()
        .filter_map(|b| serde_json::from_slice(b).ok())
        .collect())
}

/// One object of a core resource; `None` when it does not exist (a
/// consistent read).
pub async fn get_core(
    registries: &Registries,
    plural: &str,
    namespace: &str,
    name: &str,
) -> Result<Option<Value>, ApiError> {
    get_core_at(registries, plural, namespace, name, false).await
}

/// As [`get_core`], from the watch cache, and live when the cache does not
/// have it yet: upstream's lister with live lookup, for plugins reading
/// objects (namespaces, service accounts) on every request.
pub async fn get_core_cached(
    registries: &Registries,
    plural: &str,
    namespace: &str,
    name: &str,
) -> Result<Option<Value>, ApiError> {
    get_core_at(registries, plural, namespace, name, true).await
}

async fn get_core_at(
    registries: &Registries,
    plural: &str,
    namespace: &str,
    name: &str,
    cached: bool,
) -> Result<Option<Value>, ApiError> {
    let Some(reg) = registries.get("", "v1", plural) else {
        return Ok(None);
    };
    let got = match cached {
        true => match reg.get_object(namespace, name, Some(&reg.fresh_rv())).await {
            Err(e) if e.code == 404 => reg.get_object(namespace, name, None).await,
            other => other,
        },
        false => reg.get_object(namespace, name, None).await,
    };
    match got {
        Ok(b) => Ok(serde_json::from_slice(&b).ok()),
        Err(e) if e.code == 404 => Ok(None),
        Err(e) => Err(e),
    }
}

/// The items of an array field (`containers`, `volumes`...); none when missing.
pub fn items<'a>(obj: &'a Value, key: &str) -> impl Iterator<Item = &'a Value> {
    obj[key].as_array().into_iter().flatten()
}

#[cfg(test)]
pub mod testing {
    //! A real registry set over an embedded store in a temporary directory.

    use std::sync::Arc;

    use serde_json::{json, Value};
    use tokio_util::sync::CancellationToken;

    use crate::admission::{Attributes, Operation};
    use crate::api::catalog::Resource;
    use crate::auth::UserInfo;
    use crate::registry::{Registries, WriteOptions};
    use crate::storage::cacher_set::CacherSet;
    use crate::storage::embedded::Embedded;
    use crate::storage::store::Store;

    pub struct Env {
        pub registries: Registries,
        _dir: tempfile::TempDir,
        _stop: CancellationToken,
    }

    pub async fn env() -> Env {
        let dir = tempfile::tempdir().expect("tempdir");
        let backend = Embedded::open(dir.path()).expect("store");
        let stop = CancellationToken::new();
        let cachers = CacherSet::new(Store::new(Arc::new(backend)), stop.child_token());
        let registries =
            Registries::new(crate::app::builtin_catalog(), cachers, "/registry".into());
        Env {
            registries,
            _dir: dir,
            _stop: stop,
        }
    }

    impl Env {
        /// Creates an object through its registry (no admission installed).
        pub async fn create(&self, group: &str, version: &str, plural: &str, obj: Value) -> Value {
            let reg = self.registries.get(group, version, plural).expect("served");
            let ns = obj["metadata"]["namespace"]
                .as_str()
                .unwrap_or("")
                .to_string();
            let w = reg
                .create(&ns, obj, &WriteOptions::default())
                .await
                .expect("create");
            serde_json::from_slice(&w.object).expect("json")
        }

        pub async fn namespace(&self, name: &str, labels: Value) {
            self.create(
                "",
                "v1",
                "namespaces",
                json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}),
            )
            .await;
        }

        pub fn resource(&self, group: &str, version: &str, plural: &str) -> Arc<Resource> {
            self.registries
                .catalog
                .get(group, version, plural)
                .expect("resource")
        }
    }

    pub fn user() -> &'static UserInfo {
        static U: std::sync::OnceLock<UserInfo> = std::sync::OnceLock::new();
        U.get_or_init(UserInfo::default)
    }

    /// Attributes of a create of `obj` as `resource`.
    pub fn create_attrs<'a>(
        resource: &'a Resource,
        ns: &'a str,
        name: &'a str,
        obj: Value,
    ) -> Attributes<'a> {
        Attributes {
            operation: Operation::Create,
            resource,
            subresource: "",
            namespace: ns,
            name,
            object: Some(obj),
            old_object: None,
            user: user(),
            dry_run: false,
            options: json!({}),
        }
    }
}
