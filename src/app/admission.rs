//! The admission chain of `--enable-admission-plugins`: each plugin name
//! built into its mutating and validating halves.

use std::sync::Arc;

use crate::auth::authorizer::Authorizer;

/// The admission chain of `--enable-admission-plugins` and
/// `--disable-admission-plugins` (the chain orders them as upstream).
/// Config has refused names kapi does not implement.
pub(super) fn admission_chain(
    enabled: &[String],
    authorizer: &Arc<dyn Authorizer>,
    config: &crate::admission::config::AdmissionConfig,
    image_policy: Option<Arc<dyn crate::admission::ValidatingPlugin>>,
) -> Result<crate::admission::Chain, String> {
    use crate::admission::{self as adm, MutatingPlugin, ValidatingPlugin};
    let mut mutating: Vec<Arc<dyn MutatingPlugin>> = Vec::new();
    let mut validating: Vec<Arc<dyn ValidatingPlugin>> = Vec::new();
    for name in enabled {
        let az = || authorizer.clone();
        match name.as_str() {
            "AlwaysAdmit" => mutating.push(Arc::new(adm::always::AlwaysAdmit)),
            "AlwaysDeny" => mutating.push(Arc::new(adm::always::AlwaysDeny)),
            "NamespaceAutoProvision" => {
                mutating.push(Arc::new(adm::namespace_exists::NamespaceAutoProvision))
            }
            "NamespaceExists" => validating.push(Arc::new(adm::namespace_exists::NamespaceExists)),
            "NamespaceLifecycle" => {
                mutating.push(Arc::new(adm::namespace_lifecycle::NamespaceLifecycle))
            }
            "LimitPodHardAntiAffinityTopology" => validating.push(Arc::new(
                adm::antiaffinity::LimitPodHardAntiAffinityTopology,
            )),
            "LimitRanger" => {
                mutating.push(Arc::new(adm::limit_ranger::LimitRanger));
                validating.push(Arc::new(adm::limit_ranger::LimitRanger));
            }
            "ServiceAccount" => {
                mutating.push(Arc::new(adm::service_account::ServiceAccount));
                validating.push(Arc::new(adm::service_account::ServiceAccount));
            }
            // Upstream's NodeRestriction decides in its Admit, before any
            // later mutating plugin or webhook sees the request.
            "NodeRestriction" => mutating.push(Arc::new(adm::node_restriction::NodeRestriction {
                authorizer: az(),
            })),
            "TaintNodesByCondition" => {
                mutating.push(Arc::new(adm::node_taint::TaintNodesByCondition))
            }
            "AlwaysPullImages" => {
                mutating.push(Arc::new(adm::always_pull_images::AlwaysPullImages));
                validating.push(Arc::new(adm::always_pull_images::AlwaysPullImages));
            }
            "ImagePolicyWebhook" => validating.push(image_policy.clone().ok_or(
                "couldn't init admission plugin \"ImagePolicyWebhook\": no config specified",
            )?),
            "PodSecurity" => validating.push(Arc::new(adm::pod_security::PodSecurity)),
            "PodNodeSelector" => {
                let p = Arc::new(adm::pod_node_selector::PodNodeSelector::from_config(
                    config.plugin("PodNodeSelector"),
                ));
                mutating.push(p.clone());
                validating.push(p);
            }
            "Priority" => mutating.push(Arc::new(adm::priority::Priority)),
            "DefaultTolerationSeconds" => mutating.push(Arc::new(
                adm::default_toleration_seconds::DefaultTolerationSeconds,
            )),
            "PodTolerationRestriction" => {
                let p = Arc::new(
                    adm::pod_toleration_restriction::PodTolerationRestriction::from_config(
                        config.plugin("PodTolerationRestriction"),
                    )
                    .map_err(|e| {
                        format!("couldn't init admission plugin \"PodTolerationRestriction\": {e}")
                    })?,
                );
                mutating.push(p.clone());
                validating.push(p);
            }
            "ExtendedResourceToleration" => mutating.push(Arc::new(
                adm::extended_resource_toleration::ExtendedResourceToleration,
            )),
            "DefaultStorageClass" => {
                mutating.push(Arc::new(adm::default_storage_class::DefaultStorageClass))
            }
            "StorageObjectInUseProtection" => mutating.push(Arc::new(
                adm::storage_protection::StorageObjectInUseProtection,
            )),
            "OwnerReferencesPermissionEnforcement" => validating.push(Arc::new(
                adm::owner_references::OwnerReferencesPermissionEnforcement { authorizer: az() },
            )),
            "PersistentVolumeClaimResize" => {
                validating.push(Arc::new(adm::pvc_resize::PersistentVolumeClaimResize))
            }
            "RuntimeClass" => {
                mutating.push(Arc::new(adm::runtime_class::RuntimeClass));
                validating.push(Arc::new(adm::runtime_class::RuntimeClass));
            }
            "CertificateApproval" => {
                validating.push(Arc::new(adm::certificates::CertificateApproval {
                    authorizer: az(),
                }))
            }
            "CertificateSigning" => {
                validating.push(Arc::new(adm::certificates::CertificateSigning {
                    authorizer: az(),
                }))
            }
            "CertificateSubjectRestriction" => {
                validating.push(Arc::new(adm::certificates::CertificateSubjectRestriction {
                    authorizer: az(),
                }))
            }
            "DefaultIngressClass" => {
                mutating.push(Arc::new(adm::default_ingress_class::DefaultIngressClass))
            }
            "DenyServiceExternalIPs" => {
                validating.push(Arc::new(adm::deny_external_ips::DenyServiceExternalIPs))
            }
            "ClusterTrustBundleAttest" | "PodTopologyLabels" | "MutatingAdmissionPolicy" => {
                let n = adm::ORDER
                    .iter()
                    .find(|o| *o == name)
                    .copied()
                    .unwrap_or("");
                validating.push(Arc::new(adm::inactive::Inactive(n)));
            }
            "MutatingAdmissionWebhook" => {
                mutating.push(Arc::new(adm::webhook::MutatingAdmissionWebhook::default()))
            }
            "ValidatingAdmissionPolicy" => {
                validating.push(Arc::new(adm::policy::ValidatingAdmissionPolicy::default()))
            }
            "ValidatingAdmissionWebhook" => {
                validating.push(Arc::new(adm::webhook::ValidatingAdmissionWebhook::default()))
            }
            "ResourceQuota" => validating.push(Arc::new(adm::resource_quota::ResourceQuota::new())),
            "EventRateLimit" => {
                let c = config.plugin("EventRateLimit").ok_or(
                    "EventRateLimit: no config file specified (--admission-control-config-file)",
                )?;
                let p = adm::event_rate_limit::EventRateLimit::from_config(c)
                    .map_err(|e| format!("EventRateLimit: {e}"))?;
                validating.push(Arc::new(p));
            }
            other => tracing::error!(plugin = %other, "admission plugin has no implementation"),
        }
    }
    Ok(adm::Chain::new(mutating, validating))
}

/// Every plugin name config accepts has a place in the chain: a name
/// reaching the `other` arm above would be skipped silently.
#[cfg(test)]
#[test]
fn every_accepted_admission_plugin_is_built() {
    let authorizer: Arc<dyn Authorizer> = Arc::new(crate::auth::authorizer::AlwaysAllow);
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("admission.yaml");
    std::fs::write(&file, "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: EventRateLimit\n  configuration:\n    limits: [{type: Server, qps: 1, burst: 1}]\n").expect("write");
    let config = crate::admission::config::AdmissionConfig::load(&file).expect("config");
    for name in crate::admission::ORDER {
        // ImagePolicyWebhook needs a backend: tests/admission_plugins.rs.
        if crate::admission::NOT_IMPLEMENTED
            .iter()
            .any(|(n, _)| n == name)
            || *name == "ImagePolicyWebhook"
        {
            continue;
        }
        let chain =
            admission_chain(&[name.to_string()], &authorizer, &config, None).expect("chain");
        assert_eq!(chain.names(), vec![*name], "{name}");
    }
}
