//! The subjects and bindings of RoleBindings and ClusterRoleBindings: whom
//! a binding applies to (upstream's appliesToUser), and how an allowing
//! binding is described.

use std::fmt;

use serde_json::Value;

use super::{s, SERVICE_ACCOUNT_PREFIX};
use crate::auth::UserInfo;

/// A subject of a binding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subject {
    pub kind: String,
    pub name: String,
    pub namespace: String,
}

impl Subject {
    fn from_json(v: &Value) -> Subject {
        Subject {
            kind: s(v, "kind").to_string(),
            name: s(v, "name").to_string(),
            namespace: s(v, "namespace").to_string(),
        }
    }

    /// upstream's appliesToUser; `namespace` is the binding's (a
    /// ServiceAccount subject without one means the binding's namespace).
    pub fn applies_to(&self, user: &UserInfo, namespace: &str) -> bool {
        match self.kind.as_str() {
            "User" => user.name == self.name,
            "Group" => user.in_group(&self.name),
            "ServiceAccount" => {
                let ns = if self.namespace.is_empty() {
                    namespace
                } else {
                    self.namespace.as_str()
                };
                if ns.is_empty() {
                    return false;
                }
                user.name
                    .strip_prefix(SERVICE_ACCOUNT_PREFIX)
                    .and_then(|rest| rest.split_once(':'))
                    .is_some_and(|(n, name)| n == ns && name == self.name)
            }
            _ => false,
        }
    }

    /// upstream's describeSubject.
    fn describe(&self, binding_namespace: &str) -> String {
        match self.kind.as_str() {
            "ServiceAccount" => {
                let ns = if self.namespace.is_empty() {
                    binding_namespace
                } else {
                    &self.namespace
                };
                format!("{} {:?}", self.kind, format!("{}/{}", self.name, ns))
            }
            _ => format!("{} {:?}", self.kind, self.name),
        }
    }
}

/// A RoleBinding (namespace set) or ClusterRoleBinding (namespace empty).
#[derive(Debug, Clone)]
pub struct Binding {
    pub name: String,
    pub namespace: String,
    pub role_kind: String,
    pub role_name: String,
    pub subjects: Vec<Subject>,
}

impl Binding {
    pub(super) fn from_json(v: &Value) -> Binding {
        let meta = &v["metadata"];
        Binding {
            name: s(meta, "name").to_string(),
            namespace: s(meta, "namespace").to_string(),
            role_kind: s(&v["roleRef"], "kind").to_string(),
            role_name: s(&v["roleRef"], "name").to_string(),
            subjects: v["subjects"]
                .as_array()
                .map(|a| a.iter().map(Subject::from_json).collect())
                .unwrap_or_default(),
        }
    }

    pub(super) fn subject_for(&self, user: &UserInfo) -> Option<&Subject> {
        self.subjects
            .iter()
            .find(|sub| sub.applies_to(user, &self.namespace))
    }
}

/// Where an allowing rule came from, worded as upstream's describers.
pub(super) struct Source<'a> {
    pub(super) binding: &'a Binding,
    pub(super) subject: &'a Subject,
}

impl fmt::Display for Source<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.binding;
        if b.namespace.is_empty() {
            write!(
                f,
                "ClusterRoleBinding {:?} of {} {:?} to {}",
                b.name,
                b.role_kind,
                b.role_name,
                self.subject.describe("")
            )
        } else {
            write!(
                f,
                "RoleBinding {:?} of {} {:?} to {}",
                format!("{}/{}", b.name, b.namespace),
                b.role_kind,
                b.role_name,
                self.subject.describe(&b.namespace)
            )
        }
    }
}
