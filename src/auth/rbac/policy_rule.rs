//! One `rbac/v1` PolicyRule: parsed from and written as JSON, and matched
//! against a request as upstream's RuleAllows (`pkg/apis/rbac/v1`
//! evaluation helpers) does.

use std::hash::Hash;

use serde_json::{json, Value};

use super::{go_quote_list, strings};
use crate::auth::authorizer::Attributes;

/// One `rbac/v1` PolicyRule.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct PolicyRule {
    pub verbs: Vec<String>,
    pub api_groups: Vec<String>,
    pub resources: Vec<String>,
    pub resource_names: Vec<String>,
    pub non_resource_urls: Vec<String>,
}

impl PolicyRule {
    pub fn from_json(v: &Value) -> PolicyRule {
        PolicyRule {
            verbs: strings(&v["verbs"]),
            api_groups: strings(&v["apiGroups"]),
            resources: strings(&v["resources"]),
            resource_names: strings(&v["resourceNames"]),
            non_resource_urls: strings(&v["nonResourceURLs"]),
        }
    }

    /// The rules of a role object (`rules`, absent or null is none).
    pub fn list_from(obj: &Value) -> Vec<PolicyRule> {
        obj["rules"]
            .as_array()
            .map(|a| a.iter().map(PolicyRule::from_json).collect())
            .unwrap_or_default()
    }

    /// As `rbac/v1` serializes it (empty lists omitted, verbs always).
    pub fn to_json(&self) -> Value {
        let mut m = serde_json::Map::new();
        m.insert("verbs".into(), json!(self.verbs));
        for (k, v) in [
            ("apiGroups", &self.api_groups),
            ("resources", &self.resources),
            ("resourceNames", &self.resource_names),
            ("nonResourceURLs", &self.non_resource_urls),
        ] {
            if !v.is_empty() {
                m.insert(k.into(), json!(v));
            }
        }
        Value::Object(m)
    }

    fn verb_matches(&self, verb: &str) -> bool {
        self.verbs.iter().any(|v| v == "*" || v == verb)
    }

    fn api_group_matches(&self, group: &str) -> bool {
        self.api_groups.iter().any(|g| g == "*" || g == group)
    }

    /// upstream's ResourceMatches: `*`, an exact `resource[/subresource]`,
    /// or `*/subresource`.
    fn resource_matches(&self, combined: &str, subresource: &str) -> bool {
        self.resources.iter().any(|r| {
            r == "*"
                || r == combined
                || (!subresource.is_empty()
                    && r.strip_prefix("*/").is_some_and(|sub| sub == subresource))
        })
    }

    fn resource_name_matches(&self, name: &str) -> bool {
        self.resource_names.is_empty() || self.resource_names.iter().any(|n| n == name)
    }

    fn non_resource_url_matches(&self, path: &str) -> bool {
        self.non_resource_urls.iter().any(|u| {
            u == "*"
                || u == path
                || u.strip_suffix('*')
                    .is_some_and(|prefix| path.starts_with(prefix.trim_end_matches('*')))
        })
    }

    /// upstream's RuleAllows.
    pub fn allows(&self, a: &Attributes<'_>) -> bool {
        if !self.verb_matches(a.verb) {
            return false;
        }
        if a.resource_request {
            let combined;
            let resource = if a.subresource.is_empty() {
                a.resource
            } else {
                combined = format!("{}/{}", a.resource, a.subresource);
                combined.as_str()
            };
            self.api_group_matches(a.api_group)
                && self.resource_matches(resource, a.subresource)
                && self.resource_name_matches(a.name)
        } else {
            self.non_resource_url_matches(a.path)
        }
    }

    /// upstream's `rbacv1helpers.CompactString`, for escalation messages.
    pub fn compact_string(&self) -> String {
        let mut parts = Vec::new();
        for (label, v) in [
            ("APIGroups", &self.api_groups),
            ("Resources", &self.resources),
            ("NonResourceURLs", &self.non_resource_urls),
            ("ResourceNames", &self.resource_names),
            ("Verbs", &self.verbs),
        ] {
            if !v.is_empty() {
                parts.push(format!("{label}:{}", go_quote_list(v)));
            }
        }
        format!("{{{}}}", parts.join(", "))
    }
}
