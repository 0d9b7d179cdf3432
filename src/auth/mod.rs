//! Who is asking (authentication) and may they (authorization), as traits
//! with upstream's implementations behind them.

pub mod authenticator;
pub mod authorizer;
pub mod authz_webhook;
pub mod bootstrap_policy;
pub mod bootstrap_token;
pub mod node;
pub mod rbac;
pub mod request_header;
pub mod serviceaccount;
pub mod token_webhook;
pub mod tokenfile;
pub mod x509;

pub use authenticator::{AuthenticationError, Authenticator, Credentials};
pub use authorizer::{Attributes, Authorizer, Decision};

use std::collections::BTreeMap;

/// upstream `user.Info`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UserInfo {
    pub name: String,
    pub uid: String,
    pub groups: Vec<String>,
    pub extra: BTreeMap<String, Vec<String>>,
}

pub const ANONYMOUS_USER: &str = "system:anonymous";
pub const UNAUTHENTICATED_GROUP: &str = "system:unauthenticated";
pub const AUTHENTICATED_GROUP: &str = "system:authenticated";
pub const MASTERS_GROUP: &str = "system:masters";

impl UserInfo {
    pub fn anonymous() -> Self {
        UserInfo {
            name: ANONYMOUS_USER.into(),
            groups: vec![UNAUTHENTICATED_GROUP.into()],
            ..Default::default()
        }
    }

    /// Every authenticated user is in `system:authenticated`, as upstream adds it.
    pub fn with_authenticated_group(mut self) -> Self {
        if !self.groups.iter().any(|g| g == AUTHENTICATED_GROUP) && self.name != ANONYMOUS_USER {
            self.groups.push(AUTHENTICATED_GROUP.into());
        }
        self
    }

    pub fn in_group(&self, group: &str) -> bool {
        self.groups.iter().any(|g| g == group)
    }
}

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
