//! Escalation checks (upstream's pkg/registry/rbac/validation): whether
//! one set of rules covers another, and [`confirm_no_escalation`], which
//! refuses a role or binding granting what its writer does not hold.

use super::{go_quote_list, Index, PolicyRule};
use crate::auth::UserInfo;

/// upstream's BreakdownRule: one verb, group, resource and name per rule.
pub fn breakdown(rule: &PolicyRule) -> Vec<PolicyRule> {
    let mut out = Vec::new();
    for group in &rule.api_groups {
        for resource in &rule.resources {
            for verb in &rule.verbs {
                if rule.resource_names.is_empty() {
                    out.push(PolicyRule {
                        api_groups: vec![group.clone()],
                        resources: vec![resource.clone()],
                        verbs: vec![verb.clone()],
                        ..Default::default()
                    });
                } else {
                    for name in &rule.resource_names {
                        out.push(PolicyRule {
                            api_groups: vec![group.clone()],
                            resources: vec![resource.clone()],
                            verbs: vec![verb.clone()],
                            resource_names: vec![name.clone()],
                            ..Default::default()
                        });
                    }
                }
            }
        }
    }
    for url in &rule.non_resource_urls {
        for verb in &rule.verbs {
            out.push(PolicyRule {
                non_resource_urls: vec![url.clone()],
                verbs: vec![verb.clone()],
                ..Default::default()
            });
        }
    }
    out
}

fn has_all(set: &[String], wanted: &[String]) -> bool {
    wanted.iter().all(|w| set.contains(w))
}

fn resource_covers_all(set: &[String], wanted: &[String]) -> bool {
    if set.iter().any(|r| r == "*") || has_all(set, wanted) {
        return true;
    }
    wanted.iter().all(|path| {
        if set.contains(path) {
            return true;
        }
        match path.split_once('/') {
            Some((_, sub)) => set.iter().any(|r| *r == format!("*/{sub}")),
            None => false,
        }
    })
}

fn non_resource_url_covers(owner: &str, sub: &str) -> bool {
    owner == sub
        || owner
            .strip_suffix('*')
            .is_some_and(|p| sub.starts_with(p.trim_end_matches('*')))
}

/// upstream's ruleCovers: `owner` may hold several of everything, `sub` at
/// most one of each.
fn rule_covers(owner: &PolicyRule, sub: &PolicyRule) -> bool {
    let verbs = owner.verbs.iter().any(|v| v == "*") || has_all(&owner.verbs, &sub.verbs);
    let groups =
        owner.api_groups.iter().any(|g| g == "*") || has_all(&owner.api_groups, &sub.api_groups);
    let resources = resource_covers_all(&owner.resources, &sub.resources);
    let urls = sub.non_resource_urls.iter().all(|path| {
        owner
            .non_resource_urls
            .iter()
            .any(|o| non_resource_url_covers(o, path))
    });
    let names = if sub.resource_names.is_empty() {
        owner.resource_names.is_empty()
    } else {
        owner.resource_names.is_empty() || has_all(&owner.resource_names, &sub.resource_names)
    };
    verbs && groups && resources && names && urls
}

/// upstream's Covers: whether `owner` rules cover every `servant` rule,
/// and the broken-down rules they do not.
pub fn covers(owner: &[PolicyRule], servant: &[PolicyRule]) -> (bool, Vec<PolicyRule>) {
    let missing: Vec<PolicyRule> = servant
        .iter()
        .flat_map(breakdown)
        .filter(|sub| !owner.iter().any(|o| rule_covers(o, sub)))
        .collect();
    (missing.is_empty(), missing)
}

/// upstream's CompactRules: simple rules (one group, one resource, at most
/// one name, nothing else) that differ only by verb become one.
pub fn compact(rules: &[PolicyRule]) -> Vec<PolicyRule> {
    let mut out: Vec<PolicyRule> = Vec::new();
    let mut simple: Vec<PolicyRule> = Vec::new();
    for r in rules {
        let is_simple = r.resource_names.len() <= 1
            && r.non_resource_urls.is_empty()
            && r.api_groups.len() == 1
            && r.resources.len() == 1;
        if !is_simple {
            out.push(r.clone());
            continue;
        }
        match simple.iter_mut().find(|x| {
            x.api_groups == r.api_groups
                && x.resources == r.resources
                && x.resource_names == r.resource_names
        }) {
            Some(existing) => {
                for v in &r.verbs {
                    if !existing.verbs.contains(v) {
                        existing.verbs.push(v.clone());
                    }
                }
            }
            None => simple.push(r.clone()),
        }
    }
    out.extend(simple);
    out
}

/// upstream's ConfirmNoEscalation: `Err` is the message of the Forbidden.
pub fn confirm_no_escalation(
    index: &Index,
    user: &UserInfo,
    namespace: &str,
    rules: &[PolicyRule],
) -> Result<(), String> {
    let (owner, errors) = index.rules_for(user, namespace);
    let (ok, missing) = covers(&owner, rules);
    if ok {
        return Ok(());
    }
    let mut lines: Vec<String> = compact(&missing)
        .iter()
        .map(PolicyRule::compact_string)
        .collect();
    lines.sort();
    lines.dedup();
    let mut msg = format!(
        "user {:?} (groups={}) is attempting to grant RBAC permissions not currently held:\n{}",
        user.name,
        go_quote_list(&user.groups),
        lines.join("\n")
    );
    if !errors.is_empty() {
        msg.push_str(&format!("; resolution errors: [{}]", errors.join(", ")));
    }
    Err(msg)
}
