//! kube-apiserver's authenticators and authorizers: the authenticator
//! chain, ServiceAccount and bootstrap tokens, the token and authorization
//! webhooks, RBAC (with its default policy), the Node authorizer, and the
//! review APIs that ask them. They read the registry; the interfaces they
//! implement ([`crate::authentication`], [`crate::authorization`]) sit
//! below it, so the registry and admission can name users and ask the
//! authorizer without depending on these.

pub mod authenticator;
pub mod authz_webhook;
pub mod bootstrap_policy;
pub mod bootstrap_token;
pub mod node;
pub mod openid_metadata;
pub mod rbac;
pub mod reviews;
pub mod serviceaccount;
pub mod token_request;
pub mod token_webhook;

pub use crate::authentication::{
    request_header, tokenfile, x509, UserInfo, ANONYMOUS_USER, AUTHENTICATED_GROUP, MASTERS_GROUP,
    UNAUTHENTICATED_GROUP,
};
pub use crate::authorization as authorizer;

pub use authenticator::{AuthenticationError, Authenticator, Credentials, Identified};
pub use authorizer::{Attributes, Authorizer, Decision};

/// The version of the review objects sent to a webhook (TokenReview,
/// SubjectAccessReview): v1beta1 by default, as upstream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReviewVersion {
    V1,
    V1beta1,
}

impl ReviewVersion {
    /// `unsupported` starts upstream's error, e.g. "unsupported authorization version".
    pub fn parse(s: &str, unsupported: &str) -> Result<ReviewVersion, String> {
        match s {
            "v1" => Ok(ReviewVersion::V1),
            "v1beta1" => Ok(ReviewVersion::V1beta1),
            other => Err(format!(
                "{unsupported} {}, supported versions are \"v1\", \"v1beta1\"",
                crate::api::go_quote(other)
            )),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ReviewVersion::V1 => "v1",
            ReviewVersion::V1beta1 => "v1beta1",
        }
    }
}
