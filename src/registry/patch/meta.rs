//! Patch and list metadata of the built-in types: for every field that
//! upstream Kubernetes v1.34 annotates in its OpenAPI spec, the
//! `x-kubernetes-patch-strategy` and `x-kubernetes-patch-merge-key` that
//! strategic merge patch follows, and the `x-kubernetes-list-type`,
//! `x-kubernetes-list-map-keys` and `x-kubernetes-map-type` that
//! server-side apply and the served OpenAPI documents use.
//!
//! The table holds the GA group versions (and the meta, apiextensions and
//! apiregistration types). It was generated from the `x-kubernetes-*`
//! extensions of upstream v1.34.0's OpenAPI definitions (as republished,
//! extensions intact, in the v1.34.0 schemas of the `kubernetes-validate`
//! package), which come from the `patchStrategy` / `patchMergeKey` struct
//! tags and the `+listType` / `+listMapKey` / `+mapType` / `+structType`
//! markers of `k8s.io/api`. It is sorted by (type name, field) so lookups
//! can binary-search it.

/// The metadata of one field of one type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldMeta {
    /// OpenAPI definition name, e.g. `io.k8s.api.core.v1.PodSpec`.
    pub type_name: &'static str,
    /// JSON field name, e.g. `containers`.
    pub field: &'static str,
    /// `merge`, `replace`, `retainKeys` or `merge,retainKeys`.
    pub patch_strategy: Option<&'static str>,
    /// The field identifying list items for strategic merge patch.
    pub merge_key: Option<&'static str>,
    /// `atomic`, `set` or `map`.
    pub list_type: Option<&'static str>,
    /// The keys of a `map` list.
    pub list_map_keys: &'static [&'static str],
    /// `atomic` or `granular`, for map and struct valued fields.
    pub map_type: Option<&'static str>,
}

/// A type whose whole value is one unit (`x-kubernetes-map-type` on the
/// definition itself, upstream's `+structType`/`+mapType` on a type).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TypeMeta {
    pub type_name: &'static str,
    pub map_type: &'static str,
}

impl FieldMeta {
    /// The patch strategies, split (`merge,retainKeys` → `merge`, `retainKeys`).
    pub fn patch_strategies(&self) -> impl Iterator<Item = &'static str> {
        self.patch_strategy
            .unwrap_or("")
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
    }
}

const fn f(
    type_name: &'static str,
    field: &'static str,
    patch_strategy: Option<&'static str>,
    merge_key: Option<&'static str>,
    list_type: Option<&'static str>,
    list_map_keys: &'static [&'static str],
    map_type: Option<&'static str>,
) -> FieldMeta {
    FieldMeta {
        type_name,
        field,
        patch_strategy,
        merge_key,
        list_type,
        list_map_keys,
        map_type,
    }
}

/// Every annotated field, sorted by (type name, field).
#[rustfmt::skip]
pub static FIELDS: &[FieldMeta] = &[
    f("io.k8s.api.admissionregistration.v1.MatchResources", "excludeResourceRules", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.admissionregistration.v1.MatchResources", "resourceRules", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.admissionregistration.v1.MutatingWebhook", "admissionReviewVersions", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.admissionregistration.v1.MutatingWebhook", "matchConditions", Some("merge"), Some("name"), Some("map"), &["name"], None),
    f("io.k8s.api.admissionregistration.v1.MutatingWebhook", "rules", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.admissionregistration.v1.MutatingWebhookConfiguration", "webhooks", Some("merge"), Some("name"), Some("map"), &["name"], None),
    f("io.k8s.api.admissionregistration.v1.NamedRuleWithOperations", "apiGroups", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.admissionregistration.v1.NamedRuleWithOperations", "apiVersions", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.admissionregistration.v1.NamedRuleWithOperations", "operations", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.admissionregistration.v1.NamedRuleWithOperations", "resourceNames", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.admissionregistration.v1.NamedRuleWithOperations", "resources", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.admissionregistration.v1.RuleWithOperations", "apiGroups", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.admissionregistration.v1.RuleWithOperations", "apiVersions", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.admissionregistration.v1.RuleWithOperations", "operations", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.admissionregistration.v1.RuleWithOperations", "resources", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.admissionregistration.v1.TypeChecking", "expressionWarnings", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicyBindingSpec", "validationActions", None, None, Some("set"), &[], None),
    f("io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicySpec", "auditAnnotations", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicySpec", "matchConditions", Some("merge"), Some("name"), Some("map"), &["name"], None),
    f("io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicySpec", "validations", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicySpec", "variables", Some("merge"), Some("name"), Some("map"), &["name"], None),
    f("io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicyStatus", "conditions", None, None, Some("map"), &["type"], None),
    f("io.k8s.api.admissionregistration.v1.ValidatingWebhook", "admissionReviewVersions", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.admissionregistration.v1.ValidatingWebhook", "matchConditions", Some("merge"), Some("name"), Some("map"), &["name"], None),
    f("io.k8s.api.admissionregistration.v1.ValidatingWebhook", "rules", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.admissionregistration.v1.ValidatingWebhookConfiguration", "webhooks", Some("merge"), Some("name"), Some("map"), &["name"], None),
    f("io.k8s.api.apps.v1.DaemonSetStatus", "conditions", Some("merge"), Some("type"), Some("map"), &["type"], None),
    f("io.k8s.api.apps.v1.DeploymentSpec", "strategy", Some("retainKeys"), None, None, &[], None),
    f("io.k8s.api.apps.v1.DeploymentStatus", "conditions", Some("merge"), Some("type"), Some("map"), &["type"], None),
    f("io.k8s.api.apps.v1.ReplicaSetStatus", "conditions", Some("merge"), Some("type"), Some("map"), &["type"], None),
    f("io.k8s.api.apps.v1.StatefulSetSpec", "volumeClaimTemplates", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.apps.v1.StatefulSetStatus", "conditions", Some("merge"), Some("type"), Some("map"), &["type"], None),
    f("io.k8s.api.authentication.v1.TokenRequestSpec", "audiences", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.authentication.v1.TokenReviewSpec", "audiences", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.authentication.v1.TokenReviewStatus", "audiences", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.authentication.v1.UserInfo", "groups", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.authorization.v1.FieldSelectorAttributes", "requirements", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.authorization.v1.LabelSelectorAttributes", "requirements", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.authorization.v1.NonResourceRule", "nonResourceURLs", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.authorization.v1.NonResourceRule", "verbs", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.authorization.v1.ResourceRule", "apiGroups", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.authorization.v1.ResourceRule", "resourceNames", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.authorization.v1.ResourceRule", "resources", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.authorization.v1.ResourceRule", "verbs", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.authorization.v1.SubjectAccessReviewSpec", "groups", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.authorization.v1.SubjectRulesReviewStatus", "nonResourceRules", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.authorization.v1.SubjectRulesReviewStatus", "resourceRules", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.autoscaling.v2.HPAScalingRules", "policies", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerSpec", "metrics", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerStatus", "conditions", Some("merge"), Some("type"), Some("map"), &["type"], None),
    f("io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerStatus", "currentMetrics", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.batch.v1.CronJobStatus", "active", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.batch.v1.JobStatus", "conditions", Some("merge"), Some("type"), Some("atomic"), &[], None),
    f("io.k8s.api.batch.v1.PodFailurePolicy", "rules", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.batch.v1.PodFailurePolicyOnExitCodesRequirement", "values", None, None, Some("set"), &[], None),
    f("io.k8s.api.batch.v1.PodFailurePolicyRule", "onPodConditions", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.batch.v1.SuccessPolicy", "rules", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.batch.v1.UncountedTerminatedPods", "failed", None, None, Some("set"), &[], None),
    f("io.k8s.api.batch.v1.UncountedTerminatedPods", "succeeded", None, None, Some("set"), &[], None),
    f("io.k8s.api.certificates.v1.CertificateSigningRequestSpec", "groups", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.certificates.v1.CertificateSigningRequestSpec", "request", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.certificates.v1.CertificateSigningRequestSpec", "usages", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.certificates.v1.CertificateSigningRequestStatus", "certificate", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.certificates.v1.CertificateSigningRequestStatus", "conditions", None, None, Some("map"), &["type"], None),
    f("io.k8s.api.core.v1.Capabilities", "add", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.Capabilities", "drop", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.CephFSPersistentVolumeSource", "monitors", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.CephFSVolumeSource", "monitors", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.ComponentStatus", "conditions", Some("merge"), Some("type"), Some("map"), &["type"], None),
    f("io.k8s.api.core.v1.ConfigMapProjection", "items", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.ConfigMapVolumeSource", "items", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.Container", "args", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.Container", "command", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.Container", "env", Some("merge"), Some("name"), Some("map"), &["name"], None),
    f("io.k8s.api.core.v1.Container", "envFrom", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.Container", "ports", Some("merge"), Some("containerPort"), Some("map"), &["containerPort", "protocol"], None),
    f("io.k8s.api.core.v1.Container", "resizePolicy", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.Container", "restartPolicyRules", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.Container", "volumeDevices", Some("merge"), Some("devicePath"), Some("map"), &["devicePath"], None),
    f("io.k8s.api.core.v1.Container", "volumeMounts", Some("merge"), Some("mountPath"), Some("map"), &["mountPath"], None),
    f("io.k8s.api.core.v1.ContainerImage", "names", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.ContainerRestartRuleOnExitCodes", "values", None, None, Some("set"), &[], None),
    f("io.k8s.api.core.v1.ContainerStatus", "allocatedResourcesStatus", Some("merge"), Some("name"), Some("map"), &["name"], None),
    f("io.k8s.api.core.v1.ContainerStatus", "volumeMounts", Some("merge"), Some("mountPath"), Some("map"), &["mountPath"], None),
    f("io.k8s.api.core.v1.DownwardAPIProjection", "items", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.DownwardAPIVolumeSource", "items", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.EndpointSubset", "addresses", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.EndpointSubset", "notReadyAddresses", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.EndpointSubset", "ports", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.Endpoints", "subsets", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.EphemeralContainer", "args", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.EphemeralContainer", "command", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.EphemeralContainer", "env", Some("merge"), Some("name"), Some("map"), &["name"], None),
    f("io.k8s.api.core.v1.EphemeralContainer", "envFrom", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.EphemeralContainer", "ports", Some("merge"), Some("containerPort"), Some("map"), &["containerPort", "protocol"], None),
    f("io.k8s.api.core.v1.EphemeralContainer", "resizePolicy", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.EphemeralContainer", "restartPolicyRules", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.EphemeralContainer", "volumeDevices", Some("merge"), Some("devicePath"), Some("map"), &["devicePath"], None),
    f("io.k8s.api.core.v1.EphemeralContainer", "volumeMounts", Some("merge"), Some("mountPath"), Some("map"), &["mountPath"], None),
    f("io.k8s.api.core.v1.ExecAction", "command", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.FCVolumeSource", "targetWWNs", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.FCVolumeSource", "wwids", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.HTTPGetAction", "httpHeaders", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.HostAlias", "hostnames", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.ISCSIPersistentVolumeSource", "portals", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.ISCSIVolumeSource", "portals", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.LimitRangeSpec", "limits", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.LinuxContainerUser", "supplementalGroups", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.LoadBalancerIngress", "ports", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.LoadBalancerStatus", "ingress", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.NamespaceSpec", "finalizers", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.NamespaceStatus", "conditions", Some("merge"), Some("type"), Some("map"), &["type"], None),
    f("io.k8s.api.core.v1.NodeAffinity", "preferredDuringSchedulingIgnoredDuringExecution", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.NodeSelector", "nodeSelectorTerms", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.NodeSelectorRequirement", "values", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.NodeSelectorTerm", "matchExpressions", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.NodeSelectorTerm", "matchFields", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.NodeSpec", "podCIDRs", Some("merge"), None, Some("set"), &[], None),
    f("io.k8s.api.core.v1.NodeSpec", "taints", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.NodeStatus", "addresses", Some("merge"), Some("type"), Some("map"), &["type"], None),
    f("io.k8s.api.core.v1.NodeStatus", "conditions", Some("merge"), Some("type"), Some("map"), &["type"], None),
    f("io.k8s.api.core.v1.NodeStatus", "images", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.NodeStatus", "runtimeHandlers", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.NodeStatus", "volumesAttached", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.NodeStatus", "volumesInUse", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.PersistentVolumeClaimSpec", "accessModes", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.PersistentVolumeClaimStatus", "accessModes", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.PersistentVolumeClaimStatus", "allocatedResourceStatuses", None, None, None, &[], Some("granular")),
    f("io.k8s.api.core.v1.PersistentVolumeClaimStatus", "conditions", Some("merge"), Some("type"), Some("map"), &["type"], None),
    f("io.k8s.api.core.v1.PersistentVolumeSpec", "accessModes", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.PersistentVolumeSpec", "claimRef", None, None, None, &[], Some("granular")),
    f("io.k8s.api.core.v1.PersistentVolumeSpec", "mountOptions", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.PodAffinity", "preferredDuringSchedulingIgnoredDuringExecution", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.PodAffinity", "requiredDuringSchedulingIgnoredDuringExecution", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.PodAffinityTerm", "matchLabelKeys", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.PodAffinityTerm", "mismatchLabelKeys", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.PodAffinityTerm", "namespaces", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.PodAntiAffinity", "preferredDuringSchedulingIgnoredDuringExecution", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.PodAntiAffinity", "requiredDuringSchedulingIgnoredDuringExecution", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.PodDNSConfig", "nameservers", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.PodDNSConfig", "options", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.PodDNSConfig", "searches", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.PodExtendedResourceClaimStatus", "requestMappings", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.PodSecurityContext", "supplementalGroups", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.PodSecurityContext", "sysctls", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.PodSpec", "containers", Some("merge"), Some("name"), Some("map"), &["name"], None),
    f("io.k8s.api.core.v1.PodSpec", "ephemeralContainers", Some("merge"), Some("name"), Some("map"), &["name"], None),
    f("io.k8s.api.core.v1.PodSpec", "hostAliases", Some("merge"), Some("ip"), Some("map"), &["ip"], None),
    f("io.k8s.api.core.v1.PodSpec", "imagePullSecrets", Some("merge"), Some("name"), Some("map"), &["name"], None),
    f("io.k8s.api.core.v1.PodSpec", "initContainers", Some("merge"), Some("name"), Some("map"), &["name"], None),
    f("io.k8s.api.core.v1.PodSpec", "nodeSelector", None, None, None, &[], Some("atomic")),
    f("io.k8s.api.core.v1.PodSpec", "readinessGates", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.PodSpec", "resourceClaims", Some("merge,retainKeys"), Some("name"), Some("map"), &["name"], None),
    f("io.k8s.api.core.v1.PodSpec", "schedulingGates", Some("merge"), Some("name"), Some("map"), &["name"], None),
    f("io.k8s.api.core.v1.PodSpec", "tolerations", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.PodSpec", "topologySpreadConstraints", Some("merge"), Some("topologyKey"), Some("map"), &["topologyKey", "whenUnsatisfiable"], None),
    f("io.k8s.api.core.v1.PodSpec", "volumes", Some("merge,retainKeys"), Some("name"), Some("map"), &["name"], None),
    f("io.k8s.api.core.v1.PodStatus", "conditions", Some("merge"), Some("type"), Some("map"), &["type"], None),
    f("io.k8s.api.core.v1.PodStatus", "containerStatuses", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.PodStatus", "ephemeralContainerStatuses", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.PodStatus", "hostIPs", Some("merge"), Some("ip"), Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.PodStatus", "initContainerStatuses", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.PodStatus", "podIPs", Some("merge"), Some("ip"), Some("map"), &["ip"], None),
    f("io.k8s.api.core.v1.PodStatus", "resourceClaimStatuses", Some("merge,retainKeys"), Some("name"), Some("map"), &["name"], None),
    f("io.k8s.api.core.v1.ProjectedVolumeSource", "sources", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.RBDPersistentVolumeSource", "monitors", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.RBDVolumeSource", "monitors", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.ReplicationControllerSpec", "selector", None, None, None, &[], Some("atomic")),
    f("io.k8s.api.core.v1.ReplicationControllerStatus", "conditions", Some("merge"), Some("type"), Some("map"), &["type"], None),
    f("io.k8s.api.core.v1.ResourceQuotaSpec", "scopes", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.ResourceRequirements", "claims", None, None, Some("map"), &["name"], None),
    f("io.k8s.api.core.v1.ResourceStatus", "resources", None, None, Some("map"), &["resourceID"], None),
    f("io.k8s.api.core.v1.ScopeSelector", "matchExpressions", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.ScopedResourceSelectorRequirement", "values", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.SecretProjection", "items", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.SecretVolumeSource", "items", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.ServiceAccount", "imagePullSecrets", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.ServiceAccount", "secrets", Some("merge"), Some("name"), Some("map"), &["name"], None),
    f("io.k8s.api.core.v1.ServiceSpec", "clusterIPs", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.ServiceSpec", "externalIPs", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.ServiceSpec", "ipFamilies", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.ServiceSpec", "loadBalancerSourceRanges", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.ServiceSpec", "ports", Some("merge"), Some("port"), Some("map"), &["port", "protocol"], None),
    f("io.k8s.api.core.v1.ServiceSpec", "selector", None, None, None, &[], Some("atomic")),
    f("io.k8s.api.core.v1.ServiceStatus", "conditions", Some("merge"), Some("type"), Some("map"), &["type"], None),
    f("io.k8s.api.core.v1.TopologySelectorLabelRequirement", "values", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.TopologySelectorTerm", "matchLabelExpressions", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.core.v1.TopologySpreadConstraint", "matchLabelKeys", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.discovery.v1.Endpoint", "addresses", None, None, Some("set"), &[], None),
    f("io.k8s.api.discovery.v1.EndpointHints", "forNodes", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.discovery.v1.EndpointHints", "forZones", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.discovery.v1.EndpointSlice", "endpoints", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.discovery.v1.EndpointSlice", "ports", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.flowcontrol.v1.FlowSchemaSpec", "rules", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.flowcontrol.v1.FlowSchemaStatus", "conditions", Some("merge"), Some("type"), Some("map"), &["type"], None),
    f("io.k8s.api.flowcontrol.v1.NonResourcePolicyRule", "nonResourceURLs", None, None, Some("set"), &[], None),
    f("io.k8s.api.flowcontrol.v1.NonResourcePolicyRule", "verbs", None, None, Some("set"), &[], None),
    f("io.k8s.api.flowcontrol.v1.PolicyRulesWithSubjects", "nonResourceRules", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.flowcontrol.v1.PolicyRulesWithSubjects", "resourceRules", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.flowcontrol.v1.PolicyRulesWithSubjects", "subjects", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.flowcontrol.v1.PriorityLevelConfigurationStatus", "conditions", Some("merge"), Some("type"), Some("map"), &["type"], None),
    f("io.k8s.api.flowcontrol.v1.ResourcePolicyRule", "apiGroups", None, None, Some("set"), &[], None),
    f("io.k8s.api.flowcontrol.v1.ResourcePolicyRule", "namespaces", None, None, Some("set"), &[], None),
    f("io.k8s.api.flowcontrol.v1.ResourcePolicyRule", "resources", None, None, Some("set"), &[], None),
    f("io.k8s.api.flowcontrol.v1.ResourcePolicyRule", "verbs", None, None, Some("set"), &[], None),
    f("io.k8s.api.networking.v1.HTTPIngressRuleValue", "paths", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.networking.v1.IPBlock", "except", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.networking.v1.IngressLoadBalancerIngress", "ports", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.networking.v1.IngressLoadBalancerStatus", "ingress", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.networking.v1.IngressSpec", "rules", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.networking.v1.IngressSpec", "tls", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.networking.v1.IngressTLS", "hosts", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.networking.v1.NetworkPolicyEgressRule", "ports", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.networking.v1.NetworkPolicyEgressRule", "to", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.networking.v1.NetworkPolicyIngressRule", "from", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.networking.v1.NetworkPolicyIngressRule", "ports", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.networking.v1.NetworkPolicySpec", "egress", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.networking.v1.NetworkPolicySpec", "ingress", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.networking.v1.NetworkPolicySpec", "policyTypes", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.networking.v1.ServiceCIDRSpec", "cidrs", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.networking.v1.ServiceCIDRStatus", "conditions", Some("merge"), Some("type"), Some("map"), &["type"], None),
    f("io.k8s.api.node.v1.Scheduling", "nodeSelector", None, None, None, &[], Some("atomic")),
    f("io.k8s.api.node.v1.Scheduling", "tolerations", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.policy.v1.PodDisruptionBudgetSpec", "selector", Some("replace"), None, None, &[], None),
    f("io.k8s.api.policy.v1.PodDisruptionBudgetStatus", "conditions", Some("merge"), Some("type"), Some("map"), &["type"], None),
    f("io.k8s.api.rbac.v1.AggregationRule", "clusterRoleSelectors", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.rbac.v1.ClusterRole", "rules", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.rbac.v1.ClusterRoleBinding", "subjects", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.rbac.v1.PolicyRule", "apiGroups", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.rbac.v1.PolicyRule", "nonResourceURLs", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.rbac.v1.PolicyRule", "resourceNames", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.rbac.v1.PolicyRule", "resources", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.rbac.v1.PolicyRule", "verbs", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.rbac.v1.Role", "rules", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.rbac.v1.RoleBinding", "subjects", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.resource.v1.AllocatedDeviceStatus", "conditions", None, None, Some("map"), &["type"], None),
    f("io.k8s.api.resource.v1.CapacityRequestPolicy", "validValues", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.resource.v1.Device", "bindingConditions", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.resource.v1.Device", "bindingFailureConditions", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.resource.v1.Device", "consumesCounters", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.resource.v1.Device", "taints", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.resource.v1.DeviceAllocationConfiguration", "requests", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.resource.v1.DeviceAllocationResult", "config", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.resource.v1.DeviceAllocationResult", "results", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.resource.v1.DeviceClaim", "config", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.resource.v1.DeviceClaim", "constraints", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.resource.v1.DeviceClaim", "requests", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.resource.v1.DeviceClaimConfiguration", "requests", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.resource.v1.DeviceClassSpec", "config", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.resource.v1.DeviceClassSpec", "selectors", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.resource.v1.DeviceConstraint", "requests", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.resource.v1.DeviceRequest", "firstAvailable", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.resource.v1.DeviceRequestAllocationResult", "bindingConditions", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.resource.v1.DeviceRequestAllocationResult", "bindingFailureConditions", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.resource.v1.DeviceRequestAllocationResult", "tolerations", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.resource.v1.DeviceSubRequest", "selectors", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.resource.v1.DeviceSubRequest", "tolerations", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.resource.v1.ExactDeviceRequest", "selectors", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.resource.v1.ExactDeviceRequest", "tolerations", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.resource.v1.NetworkDeviceData", "ips", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.resource.v1.ResourceClaimStatus", "devices", None, None, Some("map"), &["driver", "device", "pool", "shareID"], None),
    f("io.k8s.api.resource.v1.ResourceClaimStatus", "reservedFor", Some("merge"), Some("uid"), Some("map"), &["uid"], None),
    f("io.k8s.api.resource.v1.ResourceSliceSpec", "devices", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.resource.v1.ResourceSliceSpec", "sharedCounters", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.storage.v1.CSIDriverSpec", "tokenRequests", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.storage.v1.CSIDriverSpec", "volumeLifecycleModes", None, None, Some("set"), &[], None),
    f("io.k8s.api.storage.v1.CSINodeDriver", "topologyKeys", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.storage.v1.CSINodeSpec", "drivers", Some("merge"), Some("name"), Some("map"), &["name"], None),
    f("io.k8s.api.storage.v1.StorageClass", "allowedTopologies", None, None, Some("atomic"), &[], None),
    f("io.k8s.api.storage.v1.StorageClass", "mountOptions", None, None, Some("atomic"), &[], None),
    f("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionNames", "categories", None, None, Some("atomic"), &[], None),
    f("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionNames", "shortNames", None, None, Some("atomic"), &[], None),
    f("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionSpec", "versions", None, None, Some("atomic"), &[], None),
    f("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionStatus", "conditions", None, None, Some("map"), &["type"], None),
    f("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionStatus", "storedVersions", None, None, Some("atomic"), &[], None),
    f("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionVersion", "additionalPrinterColumns", None, None, Some("atomic"), &[], None),
    f("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionVersion", "selectableFields", None, None, Some("atomic"), &[], None),
    f("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps", "allOf", None, None, Some("atomic"), &[], None),
    f("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps", "anyOf", None, None, Some("atomic"), &[], None),
    f("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps", "enum", None, None, Some("atomic"), &[], None),
    f("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps", "oneOf", None, None, Some("atomic"), &[], None),
    f("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps", "required", None, None, Some("atomic"), &[], None),
    f("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps", "x-kubernetes-list-map-keys", None, None, Some("atomic"), &[], None),
    f("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps", "x-kubernetes-validations", Some("merge"), Some("rule"), Some("map"), &["rule"], None),
    f("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.WebhookConversion", "conversionReviewVersions", None, None, Some("atomic"), &[], None),
    f("io.k8s.apimachinery.pkg.apis.meta.v1.APIGroup", "serverAddressByClientCIDRs", None, None, Some("atomic"), &[], None),
    f("io.k8s.apimachinery.pkg.apis.meta.v1.APIGroup", "versions", None, None, Some("atomic"), &[], None),
    f("io.k8s.apimachinery.pkg.apis.meta.v1.APIGroupList", "groups", None, None, Some("atomic"), &[], None),
    f("io.k8s.apimachinery.pkg.apis.meta.v1.APIResource", "categories", None, None, Some("atomic"), &[], None),
    f("io.k8s.apimachinery.pkg.apis.meta.v1.APIResource", "shortNames", None, None, Some("atomic"), &[], None),
    f("io.k8s.apimachinery.pkg.apis.meta.v1.APIResourceList", "resources", None, None, Some("atomic"), &[], None),
    f("io.k8s.apimachinery.pkg.apis.meta.v1.APIVersions", "serverAddressByClientCIDRs", None, None, Some("atomic"), &[], None),
    f("io.k8s.apimachinery.pkg.apis.meta.v1.APIVersions", "versions", None, None, Some("atomic"), &[], None),
    f("io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions", "dryRun", None, None, Some("atomic"), &[], None),
    f("io.k8s.apimachinery.pkg.apis.meta.v1.FieldSelectorRequirement", "values", None, None, Some("atomic"), &[], None),
    f("io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector", "matchExpressions", None, None, Some("atomic"), &[], None),
    f("io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelectorRequirement", "values", None, None, Some("atomic"), &[], None),
    f("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "finalizers", Some("merge"), None, Some("set"), &[], None),
    f("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "managedFields", None, None, Some("atomic"), &[], None),
    f("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "ownerReferences", Some("merge"), Some("uid"), Some("map"), &["uid"], None),
    f("io.k8s.apimachinery.pkg.apis.meta.v1.Status", "details", None, None, Some("atomic"), &[], None),
    f("io.k8s.apimachinery.pkg.apis.meta.v1.StatusDetails", "causes", None, None, Some("atomic"), &[], None),
    f("io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIServiceSpec", "caBundle", None, None, Some("atomic"), &[], None),
    f("io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIServiceStatus", "conditions", Some("merge"), Some("type"), Some("map"), &["type"], None),
];

/// Types that are atomic (or explicitly granular) as a whole, sorted by name.
#[rustfmt::skip]
pub static TYPES: &[TypeMeta] = &[
    TypeMeta { type_name: "io.k8s.api.admissionregistration.v1.MatchResources", map_type: "atomic" },
    TypeMeta { type_name: "io.k8s.api.admissionregistration.v1.NamedRuleWithOperations", map_type: "atomic" },
    TypeMeta { type_name: "io.k8s.api.admissionregistration.v1.ParamKind", map_type: "atomic" },
    TypeMeta { type_name: "io.k8s.api.admissionregistration.v1.ParamRef", map_type: "atomic" },
    TypeMeta { type_name: "io.k8s.api.admissionregistration.v1.Variable", map_type: "atomic" },
    TypeMeta { type_name: "io.k8s.api.autoscaling.v1.CrossVersionObjectReference", map_type: "atomic" },
    TypeMeta { type_name: "io.k8s.api.core.v1.ConfigMapKeySelector", map_type: "atomic" },
    TypeMeta { type_name: "io.k8s.api.core.v1.EndpointAddress", map_type: "atomic" },
    TypeMeta { type_name: "io.k8s.api.core.v1.EndpointPort", map_type: "atomic" },
    TypeMeta { type_name: "io.k8s.api.core.v1.FileKeySelector", map_type: "atomic" },
    TypeMeta { type_name: "io.k8s.api.core.v1.LocalObjectReference", map_type: "atomic" },
    TypeMeta { type_name: "io.k8s.api.core.v1.NodeSelector", map_type: "atomic" },
    TypeMeta { type_name: "io.k8s.api.core.v1.NodeSelectorTerm", map_type: "atomic" },
    TypeMeta { type_name: "io.k8s.api.core.v1.ObjectFieldSelector", map_type: "atomic" },
    TypeMeta { type_name: "io.k8s.api.core.v1.ObjectReference", map_type: "atomic" },
    TypeMeta { type_name: "io.k8s.api.core.v1.ResourceFieldSelector", map_type: "atomic" },
    TypeMeta { type_name: "io.k8s.api.core.v1.ScopeSelector", map_type: "atomic" },
    TypeMeta { type_name: "io.k8s.api.core.v1.SecretKeySelector", map_type: "atomic" },
    TypeMeta { type_name: "io.k8s.api.core.v1.SecretReference", map_type: "atomic" },
    TypeMeta { type_name: "io.k8s.api.core.v1.TopologySelectorTerm", map_type: "atomic" },
    TypeMeta { type_name: "io.k8s.api.core.v1.TypedLocalObjectReference", map_type: "atomic" },
    TypeMeta { type_name: "io.k8s.api.discovery.v1.EndpointPort", map_type: "atomic" },
    TypeMeta { type_name: "io.k8s.api.networking.v1.ServiceBackendPort", map_type: "atomic" },
    TypeMeta { type_name: "io.k8s.api.rbac.v1.RoleRef", map_type: "atomic" },
    TypeMeta { type_name: "io.k8s.api.rbac.v1.Subject", map_type: "atomic" },
    TypeMeta { type_name: "io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector", map_type: "atomic" },
    TypeMeta { type_name: "io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference", map_type: "atomic" },
];

/// The metadata of `field` of `type_name`, if upstream annotates it.
pub fn lookup(type_name: &str, field: &str) -> Option<&'static FieldMeta> {
    FIELDS
        .binary_search_by(|m| (m.type_name, m.field).cmp(&(type_name, field)))
        .ok()
        .map(|i| &FIELDS[i])
}

/// The annotated fields of `type_name`.
pub fn fields_of(type_name: &str) -> &'static [FieldMeta] {
    let start = FIELDS.partition_point(|m| m.type_name < type_name);
    let end = FIELDS.partition_point(|m| m.type_name <= type_name);
    &FIELDS[start..end]
}

/// The `x-kubernetes-map-type` of a type as a whole.
pub fn type_map_type(type_name: &str) -> Option<&'static str> {
    TYPES
        .binary_search_by(|t| t.type_name.cmp(type_name))
        .ok()
        .map(|i| TYPES[i].map_type)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_are_sorted_and_unique() {
        for w in FIELDS.windows(2) {
            assert!(
                (w[0].type_name, w[0].field) < (w[1].type_name, w[1].field),
                "{}.{} out of order",
                w[1].type_name,
                w[1].field
            );
        }
        for w in TYPES.windows(2) {
            assert!(w[0].type_name < w[1].type_name);
        }
    }

    #[test]
    fn values_are_known() {
        for m in FIELDS {
            for s in m.patch_strategies() {
                assert!(matches!(s, "merge" | "replace" | "retainKeys"), "{m:?}");
            }
            assert!(
                matches!(m.list_type, None | Some("atomic" | "set" | "map")),
                "{m:?}"
            );
            assert!(
                matches!(m.map_type, None | Some("atomic" | "granular")),
                "{m:?}"
            );
            assert_eq!(
                m.list_type == Some("map"),
                !m.list_map_keys.is_empty(),
                "{m:?}"
            );
            if m.merge_key.is_some() {
                assert!(m.patch_strategies().any(|s| s == "merge"), "{m:?}");
            }
        }
    }

    #[test]
    fn well_known_fields() {
        let c = lookup("io.k8s.api.core.v1.PodSpec", "containers").unwrap();
        assert_eq!(c.patch_strategy, Some("merge"));
        assert_eq!(c.merge_key, Some("name"));
        assert_eq!(c.list_type, Some("map"));
        let p = lookup("io.k8s.api.core.v1.Container", "ports").unwrap();
        assert_eq!(p.merge_key, Some("containerPort"));
        assert_eq!(p.list_map_keys, &["containerPort", "protocol"]);
        let s = lookup("io.k8s.api.core.v1.ServiceSpec", "ports").unwrap();
        assert_eq!(s.merge_key, Some("port"));
        assert_eq!(s.list_map_keys, &["port", "protocol"]);
        let v = lookup("io.k8s.api.core.v1.PodSpec", "volumes").unwrap();
        assert_eq!(v.patch_strategy, Some("merge,retainKeys"));
        let d = lookup("io.k8s.api.apps.v1.DeploymentSpec", "strategy").unwrap();
        assert_eq!(d.patch_strategy, Some("retainKeys"));
        let fz = lookup(
            "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
            "finalizers",
        )
        .unwrap();
        assert_eq!(
            (fz.patch_strategy, fz.list_type),
            (Some("merge"), Some("set"))
        );
        let o = lookup(
            "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
            "ownerReferences",
        )
        .unwrap();
        assert_eq!(o.merge_key, Some("uid"));
        let t = lookup("io.k8s.api.core.v1.PodSpec", "tolerations").unwrap();
        assert_eq!((t.patch_strategy, t.list_type), (None, Some("atomic")));
        let ns = lookup("io.k8s.api.core.v1.PodSpec", "nodeSelector").unwrap();
        assert_eq!(ns.map_type, Some("atomic"));
        let pdb = lookup("io.k8s.api.policy.v1.PodDisruptionBudgetSpec", "selector").unwrap();
        assert_eq!(pdb.patch_strategy, Some("replace"));
        assert!(lookup("io.k8s.api.core.v1.PodSpec", "hostname").is_none());
        assert!(fields_of("io.k8s.api.core.v1.Container")
            .iter()
            .any(|m| m.field == "env" && m.merge_key == Some("name")));
        assert_eq!(
            type_map_type("io.k8s.api.core.v1.LocalObjectReference"),
            Some("atomic")
        );
        assert_eq!(type_map_type("io.k8s.api.core.v1.PodSpec"), None);
    }
}
