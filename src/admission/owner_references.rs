//! OwnerReferencesPermissionEnforcement (plugin/pkg/admission/gc): changing
//! an object's ownerReferences needs `delete` on the object (an owner can
//! get it collected), and making a reference block its owner's deletion
//! needs `update` on the owner's `finalizers` subresource (it holds the
//! owner back as a finalizer would). Validating only, as upstream's.

use std::sync::Arc;

use serde_json::Value;

use super::certificates::decide;
use super::common::forbidden;
use super::{Attributes, Context, Operation, ValidatingPlugin};
use crate::api::catalog::Catalog;
use crate::api::ApiError;
use crate::auth::authorizer::{Attributes as AuthzAttributes, Authorizer, Decision};
use crate::auth::UserInfo;

pub struct OwnerReferencesPermissionEnforcement {
    pub authorizer: Arc<dyn Authorizer>,
}

fn owner_refs(obj: &Value) -> &[Value] {
    obj["metadata"]["ownerReferences"]
        .as_array()
        .map_or(&[], Vec::as_slice)
}

/// Semantic equality of two owner references: a field left out and one
/// set to null are the same, `controller: false` and a missing one are not
/// (both are pointers upstream).
fn same_ref(a: &Value, b: &Value) -> bool {
    let fields = |v: &Value| -> Vec<(String, Value)> {
        let mut f: Vec<(String, Value)> = v
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(_, x)| !x.is_null())
            .map(|(k, x)| (k.clone(), x.clone()))
            .collect();
        f.sort_by(|x, y| x.0.cmp(&y.0));
        f
    };
    fields(a) == fields(b)
}

/// upstream's isChangingOwnerReference.
fn changes_owner_refs(new: &Value, old: Option<&Value>) -> bool {
    if !new["metadata"].is_object() {
        return false;
    }
    let now = owner_refs(new);
    let Some(old) = old else {
        return !now.is_empty();
    };
    if !old["metadata"].is_object() {
        return false;
    }
    let before = owner_refs(old);
    before.len() != now.len() || before.iter().zip(now).any(|(o, n)| !same_ref(o, n))
}

fn blocks(r: &Value) -> bool {
    r["blockOwnerDeletion"].as_bool() == Some(true)
}

/// upstream's newBlockingOwnerDeletionRefs: references that block their
/// owner's deletion and did not before (new ones, or ones turned blocking).
fn newly_blocking<'a>(new: &'a Value, old: Option<&Value>) -> Vec<&'a Value> {
    let blocking = owner_refs(new).iter().filter(|r| blocks(r));
    let Some(old) = old.filter(|o| o["metadata"].is_object()) else {
        return blocking.collect();
    };
    let before = owner_refs(old);
    blocking
        .filter(|r| {
            // The last of several old references with one UID counts, as
            // upstream's index by UID keeps it.
            let was = before.iter().rev().find(|o| o["uid"] == r["uid"]);
            was.is_none_or(|o| !blocks(o))
        })
        .collect()
}

/// A resource an owner reference can name: group, version, plural, and
/// whether it is namespaced.
#[derive(Debug, PartialEq)]
struct Mapping {
    group: String,
    version: String,
    plural: String,
    namespaced: bool,
}

/// The REST mappings of an owner reference's apiVersion and kind, as
/// upstream's RESTMapper gives them (the kind's resources in that version),
/// or its error text.
fn mappings(catalog: &Catalog, api_version: &str, kind: &str) -> Result<Vec<Mapping>, String> {
    // schema.ParseGroupVersion.
    let (group, version) = match api_version.split('/').collect::<Vec<_>>()[..] {
        [""] => ("", ""),
        [v] => ("", v),
        [g, v] => (g, v),
        _ => return Err(format!("unexpected GroupVersion string: {api_version}")),
    };
    let found: Vec<Mapping> = catalog
        .all()
        .iter()
        .filter(|r| r.group == group && r.version == version && r.kind == kind)
        .map(|r| Mapping {
            group: r.group.clone(),
            version: r.version.clone(),
            plural: r.plural.clone(),
            namespaced: r.namespaced,
        })
        .collect();
    if found.is_empty() {
        // meta.NoKindMatchError, one version searched.
        let gv = if group.is_empty() {
            version.to_string()
        } else {
            format!("{group}/{version}")
        };
        return Err(format!(
            "no matches for kind {} in version {}",
            crate::api::go_quote(kind),
            crate::api::go_quote(&gv)
        ));
    }
    Ok(found)
}

/// Go's `%v, %v` of an authorizer's reason and its (always nil) error.
fn reason_of(d: &Decision) -> String {
    let reason = match d {
        Decision::Allow(r) | Decision::Deny(r) => r.as_str(),
        Decision::NoOpinion => "",
    };
    format!("{reason}, <nil>")
}

impl OwnerReferencesPermissionEnforcement {
    async fn check(&self, a: &Attributes<'_>, ctx: &Context) -> Result<(), ApiError> {
        // Old kubelets send pod status with ownerReferences corrupted; the
        // pod status strategy already keeps them from changing there.
        if a.resource.group.is_empty() && a.resource.plural == "pods" && a.subresource == "status" {
            return Ok(());
        }
        let Some(new) = a.object.as_ref() else {
            return Ok(());
        };
        if !changes_owner_refs(new, a.old_object) {
            return Ok(());
        }
        // Who creates an object could as well not have: only changes to
        // an existing one need the power to delete it.
        if a.operation != Operation::Create {
            let attrs = AuthzAttributes {
                user: Some(a.user),
                verb: "delete",
                resource_request: true,
                api_group: &a.resource.group,
                api_version: &a.resource.version,
                namespace: a.namespace,
                resource: &a.resource.plural,
                subresource: a.subresource,
                name: a.name,
                ..Default::default()
            };
            let d = decide(self.authorizer.as_ref(), &attrs).await;
            if !matches!(d, Decision::Allow(_)) {
                return Err(forbidden(
                    a,
                    format!(
                        "cannot set an ownerRef on a resource you can't delete: {}",
                        reason_of(&d)
                    ),
                ));
            }
        }
        let blocking = newly_blocking(new, a.old_object);
        if blocking.is_empty() {
            return Ok(());
        }
        // One question first that spares mapping every owner: may the user
        // set finalizers on anything at all.
        if matches!(
            decide(self.authorizer.as_ref(), &finalize_anything(a.user)).await,
            Decision::Allow(_)
        ) {
            return Ok(());
        }
        for r in blocking {
            let api_version = r["apiVersion"].as_str().unwrap_or("");
            let kind = r["kind"].as_str().unwrap_or("");
            let found = mappings(&ctx.registries.catalog, api_version, kind).map_err(|e| {
                forbidden(
                    a,
                    format!(
                        "cannot set blockOwnerDeletion in this case because cannot find RESTMapping for APIVersion {api_version} Kind {kind}: {e}"
                    ),
                )
            })?;
            let name = r["name"].as_str().unwrap_or("");
            // Every resource the kind maps to must allow it.
            for m in found {
                let attrs = AuthzAttributes {
                    user: Some(a.user),
                    verb: "update",
                    resource_request: true,
                    api_group: &m.group,
                    api_version: &m.version,
                    // A namespaced owner lives in its dependent's namespace.
                    namespace: if m.namespaced { a.namespace } else { "" },
                    resource: &m.plural,
                    subresource: "finalizers",
                    name,
                    ..Default::default()
                };
                let d = decide(self.authorizer.as_ref(), &attrs).await;
                if !matches!(d, Decision::Allow(_)) {
                    return Err(forbidden(
                        a,
                        format!(
                            "cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on: {}",
                            reason_of(&d)
                        ),
                    ));
                }
            }
        }
        Ok(())
    }
}

/// upstream's finalizeAnythingRecord.
fn finalize_anything(user: &UserInfo) -> AuthzAttributes<'_> {
    AuthzAttributes {
        user: Some(user),
        verb: "update",
        resource_request: true,
        api_group: "*",
        api_version: "*",
        resource: "*",
        subresource: "finalizers",
        name: "*",
        ..Default::default()
    }
}

#[async_trait::async_trait]
impl ValidatingPlugin for OwnerReferencesPermissionEnforcement {
    fn name(&self) -> &'static str {
        "OwnerReferencesPermissionEnforcement"
    }

    async fn validate(&self, a: &Attributes<'_>, ctx: &Context) -> Result<Vec<String>, ApiError> {
        if !matches!(a.operation, Operation::Create | Operation::Update) {
            return Ok(Vec::new());
        }
        self.check(a, ctx).await?;
        Ok(Vec::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn with_refs(refs: Value) -> Value {
        json!({"metadata": {"name": "x", "ownerReferences": refs}})
    }

    #[test]
    fn owner_reference_changes() {
        let one = with_refs(json!([{"apiVersion": "v1", "kind": "Node", "name": "n", "uid": "1"}]));
        assert!(changes_owner_refs(&one, None));
        assert!(!changes_owner_refs(&with_refs(json!([])), None));
        assert!(!changes_owner_refs(&one, Some(&one)));
        let mut nulls = one.clone();
        nulls["metadata"]["ownerReferences"][0]["controller"] = Value::Null;
        assert!(!changes_owner_refs(&nulls, Some(&one)));
        let mut controller = one.clone();
        controller["metadata"]["ownerReferences"][0]["controller"] = json!(false);
        assert!(changes_owner_refs(&controller, Some(&one)));
        assert!(changes_owner_refs(&with_refs(json!([])), Some(&one)));
        assert!(!changes_owner_refs(&json!("not an object"), None));
    }

    #[test]
    fn newly_blocking_references() {
        let old = with_refs(json!([
            {"uid": "a", "blockOwnerDeletion": true},
            {"uid": "b", "blockOwnerDeletion": false},
        ]));
        let new = with_refs(json!([
            {"uid": "a", "blockOwnerDeletion": true},
            {"uid": "b", "blockOwnerDeletion": true},
            {"uid": "c", "blockOwnerDeletion": true},
            {"uid": "d"},
        ]));
        let uids: Vec<&Value> = newly_blocking(&new, Some(&old))
            .iter()
            .map(|r| &r["uid"])
            .collect();
        assert_eq!(uids, vec![&json!("b"), &json!("c")]);
        assert_eq!(newly_blocking(&new, None).len(), 3);
    }

    #[test]
    fn owner_kinds_to_resources() {
        let catalog = crate::app::builtin_catalog();
        assert_eq!(
            mappings(&catalog, "apps/v1", "Deployment"),
            Ok(vec![Mapping {
                group: "apps".into(),
                version: "v1".into(),
                plural: "deployments".into(),
                namespaced: true
            }])
        );
        let node = mappings(&catalog, "v1", "Node").expect("nodes");
        assert_eq!(
            (node[0].plural.as_str(), node[0].namespaced),
            ("nodes", false)
        );
        assert_eq!(
            mappings(&catalog, "example.com/v1", "Thing"),
            Err("no matches for kind \"Thing\" in version \"example.com/v1\"".to_string())
        );
        assert_eq!(
            mappings(&catalog, "v1", "Thing"),
            Err("no matches for kind \"Thing\" in version \"v1\"".to_string())
        );
        assert_eq!(
            mappings(&catalog, "a/b/c", "Thing"),
            Err("unexpected GroupVersion string: a/b/c".to_string())
        );
    }

    #[test]
    fn reasons_as_go_prints_them() {
        assert_eq!(reason_of(&Decision::NoOpinion), ", <nil>");
        assert_eq!(reason_of(&Decision::Deny("no".into())), "no, <nil>");
    }
}
