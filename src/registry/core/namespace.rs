//! Namespace (upstream's pkg/registry/core/namespace). Its own file because
//! a namespace's life is unlike other objects': its name is also a label, its
//! deletion waits on the server's `kubernetes` finalizer (Terminating) and the
//! system namespaces may not be deleted at all.

use serde_json::{json, Value};

use crate::registry::helpers as kh;
use crate::registry::meta::NameRule;
use crate::registry::strategy::{age_column, name_column, Column, Strategy};
use crate::registry::validation::{self, FieldError};
use crate::registry::{Registries, WriteOptions};

pub struct NamespaceStrategy;

static NAMESPACE_COLUMNS: std::sync::LazyLock<Vec<Column>> = std::sync::LazyLock::new(|| {
    vec![
        name_column(),
        Column {
            name: "Status",
            kind: "string",
            format: "",
            description: "The status of the namespace",
            priority: 0,
            cell: |o| o["status"]["phase"].clone(),
        },
        age_column(),
    ]
});

impl Strategy for NamespaceStrategy {
    fn status_update(&self) -> crate::registry::strategy::StatusUpdate {
        crate::registry::strategy::StatusUpdate::AllButSpec
    }

    fn tracks_generation(&self) -> bool {
        false
    }

    fn returns_deleted_object(&self) -> bool {
        true
    }

    fn name_rule(&self) -> NameRule {
        NameRule::Label
    }

    /// SetDefaults_Namespace: the namespace's name is also a label (so
    /// its writer owns it, as upstream's).
    fn default(&self, obj: &mut Value) {
        let name = crate::registry::meta::name(obj).to_string();
        if name.is_empty() {
            return;
        }
        let meta = crate::registry::meta::meta_mut(obj);
        let labels = meta.entry("labels").or_insert_with(|| json!({}));
        if let Some(l) = labels.as_object_mut() {
            l.insert("kubernetes.io/metadata.name".into(), Value::String(name));
        }
    }

    /// The `kubernetes` finalizer is the server's, added after the
    /// writer's fields are recorded (PrepareForCreate).
    fn prepare_for_create(&self, obj: &mut Value) {
        if let Some(m) = obj.as_object_mut() {
            m.insert("status".into(), json!({"phase": "Active"}));
            let spec = m.entry("spec").or_insert_with(|| json!({}));
            if !spec.is_object() {
                *spec = json!({});
            }
            if let Some(spec) = spec.as_object_mut() {
                let fins = spec.entry("finalizers").or_insert_with(|| json!([]));
                if !fins.is_array() {
                    *fins = json!([]);
                }
                if let Some(list) = fins.as_array_mut() {
                    if !list.iter().any(|f| f == "kubernetes") {
                        list.push(json!("kubernetes"));
                    }
                }
            }
        }
        self.default(obj);
    }

    /// ValidateNamespace: every spec.finalizers name is a qualified name
    /// and, without a domain, one of the standard finalizers
    /// (validateFinalizerName, all at `spec.finalizers`).
    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        for f in kh::items(&obj["spec"]["finalizers"]) {
            let name = f.as_str().unwrap_or("");
            for msg in validation::qualified_name(name) {
                errs.push(FieldError::invalid("spec.finalizers", json!(name), msg));
            }
            if !name.contains('/') && !STANDARD_FINALIZERS.contains(&name) {
                errs.push(FieldError::invalid(
                    "spec.finalizers",
                    json!(name),
                    "name is neither a standard finalizer name nor is it fully qualified",
                ));
            }
        }
        errs
    }

    /// ValidateNamespaceUpdate looks at the metadata alone: spec.finalizers
    /// change through the finalize subresource.
    fn validate_update(&self, _new: &Value, _old: &Value) -> Vec<FieldError> {
        Vec::new()
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        // spec.finalizers change only through the finalize subresource.
        if let Some(m) = new.as_object_mut() {
            m.insert("spec".into(), old.get("spec").cloned().unwrap_or(json!({})));
        }
        let name = crate::registry::meta::name(new).to_string();
        let meta = crate::registry::meta::meta_mut(new);
        let labels = meta.entry("labels").or_insert_with(|| json!({}));
        if let Some(l) = labels.as_object_mut() {
            l.insert("kubernetes.io/metadata.name".into(), Value::String(name));
        }
    }

    fn defer_deletion(&self, obj: &mut Value) -> bool {
        let pending = obj["spec"]["finalizers"]
            .as_array()
            .is_some_and(|f| !f.is_empty());
        if pending {
            if let Some(m) = obj.as_object_mut() {
                let status = m.entry("status").or_insert_with(|| json!({}));
                if let Some(s) = status.as_object_mut() {
                    s.insert("phase".into(), json!("Terminating"));
                }
            }
        }
        pending
    }

    fn forbid_deletion(&self, name: &str) -> Option<&'static str> {
        SYSTEM_NAMESPACES
            .contains(&name)
            .then_some("this namespace may not be deleted")
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&NAMESPACE_COLUMNS)
    }
}

/// helper.IsStandardFinalizerName: the finalizers that need no domain.
const STANDARD_FINALIZERS: &[&str] = &["kubernetes", "orphan", "foregroundDeletion"];

/// The namespaces every cluster has; none of them may be deleted.
pub const SYSTEM_NAMESPACES: &[&str] =
    &["default", "kube-system", "kube-public", "kube-node-lease"];

/// Creates each system namespace that is missing (an existing one is fine).
pub async fn ensure_system_namespaces(registries: &Registries) -> Result<(), String> {
    let ns = registries
        .get("", "v1", "namespaces")
        .ok_or("namespaces are not served")?;
    for name in SYSTEM_NAMESPACES {
        // Looked up first: a create that finds it costs the whole create path.
        if ns.get_object("", name, None).await.is_ok() {
            continue;
        }
        let body = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}});
        match ns.create("", body, &WriteOptions::default()).await {
            Ok(_) => tracing::debug!(namespace = name, "created system namespace"),
            Err(e) if e.code == 409 => {}
            Err(e) => return Err(format!("creating namespace {name}: {e}")),
        }
    }
    Ok(())
}
