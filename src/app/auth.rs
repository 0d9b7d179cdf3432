//! Authentication and authorization as the flags configure them: the
//! authorizer chain of `--authorization-mode`, the ServiceAccount token
//! keys, and whom kapi trusts for client certificates.

use anyhow::Context;

use crate::aggregator;
use crate::auth::authorizer::{AlwaysAllow, AlwaysDeny, Authorizer, Chain, PrivilegedGroups};
use crate::auth::rbac::{RbacAuthorizer, SharedIndex};
use crate::config::{AuthorizationMode, CompletedConfig};
use crate::pki::Pki;
use crate::registry::Registries;

/// The authorizer of `--authorization-mode`: upstream's privileged-group
/// shortcut (`system:masters`) first, then each mode in order.
pub(super) fn authorizer_chain(
    modes: &[AuthorizationMode],
    index: &SharedIndex,
    registries: &Registries,
    mut webhook: Option<crate::auth::authz_webhook::WebhookAuthorizer>,
) -> anyhow::Result<Chain> {
    let mut chain: Vec<Box<dyn Authorizer>> = vec![Box::new(PrivilegedGroups::default())];
    for mode in modes {
        chain.push(match mode {
            AuthorizationMode::Webhook => match webhook.take() {
                Some(w) => Box::new(w),
                None => continue,
            },
            AuthorizationMode::AlwaysAllow => Box::new(AlwaysAllow),
            AuthorizationMode::AlwaysDeny => Box::new(AlwaysDeny),
            AuthorizationMode::Rbac => Box::new(RbacAuthorizer {
                index: index.clone(),
            }),
            AuthorizationMode::Node => Box::new(
                crate::auth::node::NodeAuthorizer::new(registries.clone())
                    .map_err(|e| anyhow::anyhow!(e))?,
            ),
        });
    }
    Ok(Chain(chain))
}

/// ServiceAccount token keys: kapi's own `sa.key` pair unless the flags
/// name a signing key and the keys that verify, as kube-apiserver's do.
pub(super) fn service_account_tokens(
    cfg: &CompletedConfig,
    pki: &Pki,
) -> anyhow::Result<crate::auth::serviceaccount::TokenIssuer> {
    let read = |flag: &str, f: &std::path::Path| {
        std::fs::read_to_string(f).with_context(|| format!("--{flag} {}", f.display()))
    };
    let signing = match &cfg.service_account_signing_key_file {
        Some(f) => read("service-account-signing-key-file", f)?,
        None => pki.service_account_key_pem.clone(),
    };
    let verify = service_account_verify_pems(cfg, pki, &signing)?;
    crate::auth::serviceaccount::TokenIssuer::new(
        &signing,
        &verify,
        cfg.service_account_issuer.clone(),
        cfg.api_audiences.clone(),
    )
    .map_err(|e| anyhow::anyhow!(e))
}

/// The PEM files whose keys verify ServiceAccount tokens
/// (`--service-account-key-file`, else the signing key's own).
pub(super) fn service_account_verify_pems(
    cfg: &CompletedConfig,
    pki: &Pki,
    signing: &str,
) -> anyhow::Result<Vec<String>> {
    let mut verify = Vec::new();
    for f in &cfg.service_account_key_files {
        verify.push(
            std::fs::read_to_string(f)
                .with_context(|| format!("--service-account-key-file {}", f.display()))?,
        );
    }
    if verify.is_empty() {
        // The signing key verifies its own tokens.
        verify.push(match &cfg.service_account_signing_key_file {
            Some(_) => signing.to_string(),
            None => pki.service_account_pub_pem.clone(),
        });
    }
    Ok(verify)
}

/// The issuer discovery documents, when the issuer is an https URL.
pub(super) fn openid_metadata(
    cfg: &CompletedConfig,
    pki: &Pki,
) -> anyhow::Result<Option<crate::auth::openid_metadata::OpenIdMetadata>> {
    let signing = match &cfg.service_account_signing_key_file {
        Some(f) => std::fs::read_to_string(f)
            .with_context(|| format!("--service-account-signing-key-file {}", f.display()))?,
        None => pki.service_account_key_pem.clone(),
    };
    let verify = service_account_verify_pems(cfg, pki, &signing)?;
    Ok(crate::auth::openid_metadata::OpenIdMetadata::new(
        &cfg.service_account_issuer,
        None,
        &verify,
    ))
}

/// Whom kapi trusts for client certificates: its own CA and
/// `--client-ca-file` for users, and a front-proxy CA (the caller's
/// `--requestheader-client-ca-file`, else kapi's own) for proxies.
pub(super) struct ClientTrust {
    pub(super) client_ca_bundle: String,
    pub(super) front_proxy: crate::auth::request_header::Trust,
}

pub(super) fn client_trust(cfg: &CompletedConfig, pki: &Pki) -> anyhow::Result<ClientTrust> {
    let mut client_ca_bundle = pki.ca.cert_pem.clone();
    if let Some(f) = &cfg.client_ca_file {
        let pem = std::fs::read_to_string(f)
            .with_context(|| format!("--client-ca-file {}", f.display()))?;
        if !client_ca_bundle.ends_with('\n') {
            client_ca_bundle.push('\n');
        }
        client_ca_bundle.push_str(&pem);
    }
    let front_proxy = match &cfg.request_header {
        Some(s) => crate::auth::request_header::Trust {
            ca_pem: std::fs::read_to_string(&s.client_ca_file).with_context(|| {
                format!(
                    "--requestheader-client-ca-file {}",
                    s.client_ca_file.display()
                )
            })?,
            allowed_names: s.allowed_names.clone(),
            headers: s.headers.clone(),
        },
        // Requests kapi itself makes as a front proxy name their user in
        // X-Remote-* headers.
        None => crate::auth::request_header::Trust {
            ca_pem: pki.front_proxy_ca.cert_pem.clone(),
            allowed_names: vec![aggregator::authentication_info::FRONT_PROXY_CLIENT.to_string()],
            headers: crate::auth::request_header::HeaderNames::standard().clone(),
        },
    };
    Ok(ClientTrust {
        client_ca_bundle,
        front_proxy,
    })
}
