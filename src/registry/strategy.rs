//! Per-resource behaviour (upstream's RESTCreateStrategy and friends):
//! defaults, what create and update reset, validation, Table columns.
//! Every stored built-in kind has its own (see `for_kind`).

use serde_json::Value;

use super::meta::NameRule;
use super::validation::FieldError;

/// One Table column and how to compute its cell.
pub struct Column {
    pub name: &'static str,
    pub kind: &'static str,
    pub format: &'static str,
    pub description: &'static str,
    pub priority: i32,
    pub cell: fn(&Value) -> Value,
}

/// What upstream's status strategies keep of the object a status write
/// sends. Most reset only the spec, so metadata changes (annotations,
/// finalizers) go through with the status; others keep the stored object
/// but for its status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusUpdate {
    /// The stored object, with the status sent (custom resources, CRDs,
    /// APIServices, and the kinds whose strategies call
    /// ResetObjectMetaForStatus).
    StatusOnly,
    /// Everything sent but the spec (Nodes, Services, Jobs, ...).
    AllButSpec,
    /// Everything sent but the spec and the labels (the apps workloads).
    AllButSpecAndLabels,
    /// Everything sent but the spec and the owner references (Pods: old
    /// kubelets corrupted them through pods/status).
    AllButSpecAndOwners,
}

pub trait Strategy: Send + Sync {
    fn name_rule(&self) -> NameRule {
        NameRule::Subdomain
    }

    /// upstream's SetDefaults_* for the kind.
    fn default(&self, _obj: &mut Value) {}

    /// Resets what a create may not set (e.g. status).
    fn prepare_for_create(&self, _obj: &mut Value) {}

    /// The part of upstream's PrepareForCreate that reads the request's
    /// user (a CSR records who asked for the certificate).
    fn prepare_for_create_by(&self, _obj: &mut Value, _user: &crate::authentication::UserInfo) {}

    /// Carries over what an update of the main resource may not change.
    fn prepare_for_update(&self, _new: &mut Value, _old: &Value) {}

    /// Called when a delete is asked for. Returning true defers the
    /// deletion like a finalizer would (the object is marked with
    /// deletionTimestamp and kept); the strategy may change the object.
    fn defer_deletion(&self, _obj: &mut Value) -> bool {
        false
    }

    /// upstream's CheckGracefulDelete: for a kind deleted gracefully (pods),
    /// the grace period in seconds a delete of `obj` gets when it asks for
    /// `requested` (never negative here); `None` for kinds removed at once.
    fn graceful_delete_period(&self, _obj: &Value, _requested: Option<i64>) -> Option<i64> {
        None
    }

    /// Whether a delete that removed the object answers with it rather
    /// than a Success Status (upstream's ReturnDeletedObject, set for pods,
    /// services, service accounts, namespaces and persistent volumes and
    /// claims).
    fn returns_deleted_object(&self) -> bool {
        false
    }

    /// Objects of this kind that may never be deleted, with upstream's reason.
    fn forbid_deletion(&self, _name: &str) -> Option<&'static str> {
        None
    }

    /// What a write to the status subresource takes from the object sent
    /// (the status strategy's PrepareForUpdate).
    fn status_update(&self) -> StatusUpdate {
        StatusUpdate::StatusOnly
    }

    /// Whether a create keeps the status the client sent (Nodes do, as upstream).
    fn keeps_status_on_create(&self) -> bool {
        false
    }

    /// Whether objects of this kind carry `metadata.generation` (1 on
    /// create, bumped when the desired state changes). Upstream's
    /// strategies set it kind by kind; Services, Namespaces, Nodes and
    /// persistent volumes, among others, have none.
    fn tracks_generation(&self) -> bool {
        true
    }

    /// Whether an update changes the desired state (bumping metadata.generation).
    fn generation_changed(&self, new: &Value, old: &Value) -> bool {
        new.get("spec") != old.get("spec")
    }

    fn validate(&self, _obj: &Value) -> Vec<FieldError> {
        Vec::new()
    }

    fn validate_update(&self, new: &Value, _old: &Value) -> Vec<FieldError> {
        self.validate(new)
    }

    /// Columns of server-side Table output; `None` gives upstream's default (Name, Created At).
    fn columns(&self) -> Option<&'static [Column]> {
        None
    }

    /// Column definitions and a row-building function for kinds whose
    /// columns are data (a CRD's additionalPrinterColumns); overrides `columns`.
    fn dynamic_columns(&self) -> Option<(Vec<Value>, Box<dyn Fn(&Value) -> Vec<Value> + '_>)> {
        None
    }
}

/// Resources that are never stored (reviews, `pods/binding`'s Binding,
/// ComponentStatus, the connect options): their handlers do their own
/// checks, so the registry's write path never runs a strategy for them.
pub struct NeverStored;

impl Strategy for NeverStored {}

/// The strategy of a built-in kind; `None` for a kind kapi does not serve
/// (or serves without storing: see [`NeverStored`]).
pub fn for_kind(group: &str, kind: &str) -> Option<&'static dyn Strategy> {
    use super::{admissionregistration as admreg, resource};
    let s: &'static dyn Strategy = match (group, kind) {
        ("", "Namespace") => &super::core::NamespaceStrategy,
        ("", "ConfigMap") => &super::core::ConfigMapStrategy,
        ("", "Secret") => &super::core::SecretStrategy,
        ("", "Service") => &super::core::ServiceStrategy,
        ("", "Pod") => &super::core::PodStrategy,
        ("", "ServiceAccount") => &super::core::ServiceAccountStrategy,
        ("apps", "Deployment") => &super::apps::DeploymentStrategy,
        ("apps", "ReplicaSet") => &super::apps::ReplicaSetStrategy,
        ("apps", "StatefulSet") => &super::apps::StatefulSetStrategy,
        ("apps", "DaemonSet") => &super::apps::DaemonSetStrategy,
        ("apps", "ControllerRevision") => &super::apps::ControllerRevisionStrategy,
        ("", "PersistentVolumeClaim") => &super::core::PersistentVolumeClaimStrategy,
        ("", "PersistentVolume") => &super::core::PersistentVolumeStrategy,
        ("", "Node") => &super::core::NodeStrategy,
        ("", "Event") => &super::core::EventStrategy,
        ("events.k8s.io", "Event") => &super::events::EventStrategy,
        ("", "LimitRange") => &super::core::LimitRangeStrategy,
        ("", "ResourceQuota") => &super::core::ResourceQuotaStrategy,
        ("", "Endpoints") => &super::core::EndpointsStrategy,
        ("", "ComponentStatus") => &super::core::ComponentStatusStrategy,
        ("", "ReplicationController") => &super::core::ReplicationControllerStrategy,
        ("", "PodTemplate") => &super::core::PodTemplateStrategy,
        ("batch", "Job") => &super::batch::JobStrategy,
        ("batch", "CronJob") => &super::batch::CronJobStrategy,
        ("networking.k8s.io", "Ingress") => &super::networking::IngressStrategy,
        ("networking.k8s.io", "IngressClass") => &super::networking::IngressClassStrategy,
        ("networking.k8s.io", "NetworkPolicy") => &super::networking::NetworkPolicyStrategy,
        ("networking.k8s.io", "IPAddress") => &super::ipaddress::IPAddressStrategy,
        ("networking.k8s.io", "ServiceCIDR") => &super::ipaddress::ServiceCIDRStrategy,
        ("discovery.k8s.io", "EndpointSlice") => &super::discovery::EndpointSliceStrategy,
        ("coordination.k8s.io", "Lease") => &super::coordination::LeaseStrategy,
        ("policy", "PodDisruptionBudget") => &super::policy::PodDisruptionBudgetStrategy,
        ("autoscaling", "HorizontalPodAutoscaler") => {
            &super::autoscaling::HorizontalPodAutoscalerStrategy
        }
        ("storage.k8s.io", "StorageClass") => &super::storage_kinds::StorageClassStrategy,
        ("storage.k8s.io", "CSIDriver") => &super::storage_kinds::CSIDriverStrategy,
        ("storage.k8s.io", "CSINode") => &super::storage_kinds::CSINodeStrategy,
        ("storage.k8s.io", "CSIStorageCapacity") => {
            &super::storage_kinds::CSIStorageCapacityStrategy
        }
        ("storage.k8s.io", "VolumeAttachment") => &super::storage_kinds::VolumeAttachmentStrategy,
        ("storage.k8s.io", "VolumeAttributesClass") => {
            &super::storage_kinds::VolumeAttributesClassStrategy
        }
        ("scheduling.k8s.io", "PriorityClass") => &super::scheduling::PriorityClassStrategy,
        ("node.k8s.io", "RuntimeClass") => &super::node::RuntimeClassStrategy,
        ("certificates.k8s.io", "CertificateSigningRequest") => {
            &super::certificates::CertificateSigningRequestStrategy
        }
        ("flowcontrol.apiserver.k8s.io", "FlowSchema") => &super::flowcontrol::FlowSchemaStrategy,
        ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration") => {
            &super::flowcontrol::PriorityLevelConfigurationStrategy
        }
        ("admissionregistration.k8s.io", "MutatingWebhookConfiguration") => {
            &admreg::MutatingWebhookConfigurationStrategy
        }
        ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration") => {
            &admreg::ValidatingWebhookConfigurationStrategy
        }
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy") => {
            &admreg::ValidatingAdmissionPolicyStrategy
        }
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding") => {
            &admreg::ValidatingAdmissionPolicyBindingStrategy
        }
        ("resource.k8s.io", "DeviceClass") => &resource::DeviceClassStrategy,
        ("resource.k8s.io", "ResourceClaim") => &resource::ResourceClaimStrategy,
        ("resource.k8s.io", "ResourceClaimTemplate") => &resource::ResourceClaimTemplateStrategy,
        ("resource.k8s.io", "ResourceSlice") => &resource::ResourceSliceStrategy,
        ("rbac.authorization.k8s.io", "Role") => &super::rbac::RoleStrategy,
        ("rbac.authorization.k8s.io", "ClusterRole") => &super::rbac::ClusterRoleStrategy,
        ("rbac.authorization.k8s.io", "RoleBinding") => &super::rbac::RoleBindingStrategy,
        ("rbac.authorization.k8s.io", "ClusterRoleBinding") => {
            &super::rbac::ClusterRoleBindingStrategy
        }
        ("apiregistration.k8s.io", "APIService") => &super::apiregistration::ApiServiceStrategy,
        ("apiextensions.k8s.io", "CustomResourceDefinition") => {
            &crate::registry::apiextensions::CrdStrategy
        }
        _ => return None,
    };
    Some(s)
}

pub const NAME_DESCRIPTION: &str = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";
pub const AGE_DESCRIPTION: &str = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

pub fn name_cell(o: &Value) -> Value {
    o["metadata"]["name"].clone()
}

pub fn age_cell(o: &Value) -> Value {
    Value::String(human_age(
        o["metadata"]["creationTimestamp"].as_str().unwrap_or(""),
    ))
}

/// upstream's `duration.HumanDuration` of the time since `ts`.
pub fn human_age(ts: &str) -> String {
    let Ok(t) = chrono::DateTime::parse_from_rfc3339(ts) else {
        return "<unknown>".into();
    };
    let secs = (chrono::Utc::now() - t.with_timezone(&chrono::Utc)).num_seconds();
    human_duration(secs)
}

pub fn human_duration(secs: i64) -> String {
    if secs < 0 {
        return "0s".into();
    }
    let (m, h, d) = (secs / 60, secs / 3600, secs / 86400);
    if secs < 120 {
        format!("{secs}s")
    } else if m < 10 {
        let s = secs % 60;
        if s == 0 {
            format!("{m}m")
        } else {
            format!("{m}m{s}s")
        }
    } else if m < 180 {
        format!("{m}m")
    } else if h < 8 {
        let mm = m % 60;
        if mm == 0 {
            format!("{h}h")
        } else {
            format!("{h}h{mm}m")
        }
    } else if h < 48 {
        format!("{h}h")
    } else if h < 192 {
        let hh = h % 24;
        if hh == 0 {
            format!("{d}d")
        } else {
            format!("{d}d{hh}h")
        }
    } else if d < 365 * 2 {
        format!("{d}d")
    } else if d < 365 * 8 {
        let dd = d % 365;
        if dd == 0 {
            format!("{}y", d / 365)
        } else {
            format!("{}y{dd}d", d / 365)
        }
    } else {
        format!("{}y", d / 365)
    }
}

/// Sets `key` unless the object already has a non-null value there.
pub fn set_default(obj: &mut serde_json::Map<String, Value>, key: &str, value: Value) {
    if obj.get(key).is_none_or(Value::is_null) {
        obj.insert(key.into(), value);
    }
}

/// Fields Go's encoder always writes (non-pointer structs, fields without
/// `omitempty`, times without `omitzero`) but k8s-openapi's Options leave
/// out: `zero`'s keys, deep, where `obj` has none.
pub fn fill_go_zero(obj: &mut serde_json::Map<String, Value>, zero: &Value) {
    let Some(zero) = zero.as_object() else {
        return;
    };
    for (k, z) in zero {
        match obj.get_mut(k) {
            None => {
                obj.insert(k.clone(), z.clone());
            }
            Some(Value::Object(inner)) if z.is_object() => fill_go_zero(inner, z),
            Some(_) => {}
        }
    }
}

pub fn name_column() -> Column {
    Column {
        name: "Name",
        kind: "string",
        format: "name",
        description: NAME_DESCRIPTION,
        priority: 0,
        cell: name_cell,
    }
}

pub fn age_column() -> Column {
    Column {
        name: "Age",
        kind: "string",
        format: "",
        description: AGE_DESCRIPTION,
        priority: 0,
        cell: age_cell,
    }
}

#[cfg(test)]
mod tests {
    /// A kind stored without a strategy of its own would be stored without
    /// upstream's defaults and validation.
    #[test]
    fn every_stored_built_in_kind_has_its_own_strategy() {
        let missing: Vec<String> = crate::api::builtin::BUILTINS
            .iter()
            .filter(|d| !d.storage_path.is_empty())
            .filter(|d| super::for_kind(d.group, d.kind).is_none())
            .map(|d| format!("{}/{}", d.group, d.kind))
            .collect();
        assert!(missing.is_empty(), "stored without a strategy: {missing:?}");
    }

    #[test]
    fn human_durations() {
        assert_eq!(super::human_duration(5), "5s");
        assert_eq!(super::human_duration(150), "2m30s");
        assert_eq!(super::human_duration(3600 * 5), "5h");
        assert_eq!(super::human_duration(86400 * 3), "3d");
    }
}

/// A registry's strategy: a built-in's static one or a custom resource's
/// own (which carries its CRD's schema).
#[derive(Clone)]
pub enum StrategyRef {
    Static(&'static dyn Strategy),
    Dynamic(std::sync::Arc<dyn Strategy>),
}

impl std::ops::Deref for StrategyRef {
    type Target = dyn Strategy;

    fn deref(&self) -> &Self::Target {
        match self {
            StrategyRef::Static(s) => *s,
            StrategyRef::Dynamic(s) => s.as_ref(),
        }
    }
}
