//! `--authorization-mode`: the modes kapi knows and upstream's checks of
//! the list.

use super::complete::FlagError;

/// One `--authorization-mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthorizationMode {
    AlwaysAllow,
    AlwaysDeny,
    Rbac,
    Webhook,
    Node,
}

impl AuthorizationMode {
    pub const NAMES: &'static [&'static str] =
        &["AlwaysAllow", "AlwaysDeny", "Node", "RBAC", "Webhook"];

    pub fn as_str(self) -> &'static str {
        match self {
            AuthorizationMode::AlwaysAllow => "AlwaysAllow",
            AuthorizationMode::AlwaysDeny => "AlwaysDeny",
            AuthorizationMode::Rbac => "RBAC",
            AuthorizationMode::Webhook => "Webhook",
            AuthorizationMode::Node => "Node",
        }
    }
}

/// The modes in order: each known, none twice, at least one (upstream's checks).
pub(super) fn parse_authorization_modes(
    values: &[String],
) -> Result<Vec<AuthorizationMode>, FlagError> {
    let err = |message: String| FlagError {
        flag: "authorization-mode",
        message,
    };
    let mut modes = Vec::new();
    for v in values.iter().map(|v| v.trim()).filter(|v| !v.is_empty()) {
        let mode = match v {
            "AlwaysAllow" => AuthorizationMode::AlwaysAllow,
            "AlwaysDeny" => AuthorizationMode::AlwaysDeny,
            "RBAC" => AuthorizationMode::Rbac,
            "Webhook" => AuthorizationMode::Webhook,
            "Node" => AuthorizationMode::Node,
            other => {
                return Err(err(format!(
                    "authorization-mode {other:?} is not a valid mode (supported: {})",
                    AuthorizationMode::NAMES.join(", ")
                )))
            }
        };
        if modes.contains(&mode) {
            return Err(err(format!(
                "authorization-mode {} has mode specified more than once",
                crate::api::go_quote(v)
            )));
        }
        modes.push(mode);
    }
    if modes.is_empty() {
        return Err(err("at least one authorization-mode must be passed".into()));
    }
    Ok(modes)
}
