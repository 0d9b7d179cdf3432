//! Who is asking: upstream's `user.Info` and the authentication building
//! blocks that need nothing but the request (client certificates, the
//! front proxy's request headers, a static token file). The authenticator
//! chain that also reads the registry (ServiceAccount and bootstrap tokens,
//! the token webhook) is `crate::auth`.

pub mod request_header;
pub mod tokenfile;
pub mod x509;

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
