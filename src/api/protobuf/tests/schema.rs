//! The generated tables and the registry built from them: kinds map to
//! messages, tags are sorted, every embedded message is known, JSON names
//! come from the OpenAPI schemas.

use super::*;
use crate::api::protobuf::registry::from_schemas::openapi_properties;
use crate::api::protobuf::registry::{registry, short_name, Special};

#[test]
fn group_versions_map_to_packages() {
    for r in RESOURCES {
        let pkg = package_for_api_version(r.api_version);
        assert_eq!(
            r.message.to_ascii_lowercase(),
            format!("{pkg}.{}", r.kind).to_ascii_lowercase(),
            "{} {}",
            r.api_version,
            r.kind
        );
        assert_eq!(message_for_kind(r.api_version, r.kind), Some(r.message));
    }
    assert_eq!(
        message_for_kind("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
        Some("io.k8s.api.rbac.v1.ClusterRoleBinding")
    );
    assert_eq!(
        message_for_kind("v1", "ConfigMapList"),
        Some("io.k8s.api.core.v1.ConfigMapList")
    );
    assert_eq!(
        message_for_kind("apps/v1", "DeleteOptions"),
        Some("io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions")
    );
    assert_eq!(
        message_for_kind("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
        Some("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition")
    );
    for (api_version, kind, message) in [
        ("autoscaling/v1", "Scale", "io.k8s.api.autoscaling.v1.Scale"),
        ("policy/v1", "Eviction", "io.k8s.api.policy.v1.Eviction"),
        (
            "authentication.k8s.io/v1",
            "TokenRequest",
            "io.k8s.api.authentication.v1.TokenRequest",
        ),
        (
            "v1",
            "Status",
            "io.k8s.apimachinery.pkg.apis.meta.v1.Status",
        ),
        (
            "meta.k8s.io/v1",
            "WatchEvent",
            "io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent",
        ),
        ("v1", "List", "io.k8s.api.core.v1.List"),
        (
            "admission.k8s.io/v1",
            "AdmissionReview",
            "io.k8s.api.admission.v1.AdmissionReview",
        ),
        (
            "apidiscovery.k8s.io/v2",
            "APIGroupDiscoveryList",
            "io.k8s.api.apidiscovery.v2.APIGroupDiscoveryList",
        ),
        (
            "apiregistration.k8s.io/v1",
            "APIServiceList",
            "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIServiceList",
        ),
        (
            "metrics.k8s.io/v1beta1",
            "PodMetrics",
            "io.k8s.metrics.pkg.apis.metrics.v1beta1.PodMetrics",
        ),
        (
            "storage.k8s.io/v1beta1",
            "CSIDriver",
            "io.k8s.api.storage.v1beta1.CSIDriver",
        ),
        (
            "internal.apiserver.k8s.io/v1alpha1",
            "StorageVersion",
            "io.k8s.api.apiserverinternal.v1alpha1.StorageVersion",
        ),
    ] {
        assert_eq!(
            message_for_kind(api_version, kind),
            Some(message),
            "{api_version} {kind}"
        );
    }
    assert_eq!(message_for_kind("meta.k8s.io/v1", "Table"), None);
    assert_eq!(
        message_for_kind("storage.k8s.io/v1", "CSIDriver"),
        Some("io.k8s.api.storage.v1.CSIDriver")
    );
}

#[test]
fn schema_is_consistent() {
    let reg = registry();
    for (i, m) in MESSAGES.iter().enumerate() {
        assert!(
            m.fields.windows(2).all(|w| w[0].tag < w[1].tag),
            "{}",
            m.name
        );
        for (f, info) in m.fields.iter().zip(&reg.fields[i]) {
            assert!(
                !matches!(f.kind, Kind::Enumeration),
                "{}.{}",
                m.name,
                f.name
            );
            if let Kind::Message(t) | Kind::Map(_, &Kind::Message(t)) = f.kind {
                assert!(info.target.is_some(), "{}.{} -> {t}", m.name, f.name);
            }
        }
    }
}

#[test]
fn json_names_come_from_openapi_schemas() {
    let reg = registry();
    let props = openapi_properties();
    let mut missing = Vec::new();
    for (i, m) in MESSAGES.iter().enumerate() {
        if reg.special[i] != Special::None {
            continue;
        }
        let Some(p) = props.get(m.name) else {
            continue;
        };
        for info in &reg.fields[i] {
            if !info.inline && !p.names.iter().any(|n| n == info.json) {
                missing.push(format!("{}.{}", m.name, info.json));
            }
        }
    }
    // Fields k8s-pb 0.9 has that Kubernetes 1.34's OpenAPI does not:
    // named by the lowerCamelCase fallback.
    let newer = [
        "io.k8s.api.core.v1.NodeStatus.declaredFeatures",
        "io.k8s.api.core.v1.PodCertificateProjection.userAnnotations",
        "io.k8s.api.core.v1.PodSpec.workloadRef",
        "io.k8s.api.core.v1.PodStatus.allocatedResources",
        "io.k8s.api.core.v1.PodStatus.resources",
        "io.k8s.api.resource.v1alpha3.DeviceTaintRule.status",
        "io.k8s.api.storage.v1.CSIDriverSpec.serviceAccountTokenInSecrets",
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionCondition.observedGeneration",
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionStatus.observedGeneration",
    ];
    missing.retain(|m| !newer.contains(&m.as_str()));
    assert!(
        missing.is_empty(),
        "fields without a schema property: {missing:?}"
    );
    let inline: Vec<String> = MESSAGES
        .iter()
        .enumerate()
        .flat_map(|(i, m)| {
            m.fields
                .iter()
                .zip(&reg.fields[i])
                .filter(|(_, info)| info.inline)
                .map(|(f, _)| format!("{}.{}", short_name(m.name), f.name))
                .collect::<Vec<_>>()
        })
        .collect();
    for want in [
        "Volume.volume_source",
        "Probe.handler",
        "ConfigMapEnvSource.local_object_reference",
        "EphemeralContainer.ephemeral_container_common",
        "PersistentVolumeSpec.persistent_volume_source",
        "IngressRule.ingress_rule_value",
    ] {
        assert!(
            inline.iter().any(|i| i == want),
            "{want} not inline: {inline:?}"
        );
    }
    eprintln!("inline fields: {inline:?}");
    let pod_status = reg.index("io.k8s.api.core.v1.PodStatus").unwrap();
    assert!(reg.fields[pod_status].iter().any(|f| f.json == "podIPs"));
}
