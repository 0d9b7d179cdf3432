//! The clusterrole-aggregation controller: an aggregated ClusterRole
//! (`aggregationRule.clusterRoleSelectors`) holds the union of the rules
//! of the ClusterRoles it selects.

use serde_json::Value;

use super::{loopback_user, s, PolicyRule, GROUP};
use crate::registry::{Registries, WriteOptions};

/// The rules an aggregated ClusterRole should have: the rules of every
/// other ClusterRole its selectors match, in name order, without repeats
/// (upstream's ClusterRoleAggregationController.syncClusterRole).
pub fn aggregated_rules(role: &Value, all: &[Value]) -> Option<Vec<Value>> {
    let selectors = role["aggregationRule"]["clusterRoleSelectors"].as_array()?;
    let own = s(&role["metadata"], "name");
    let mut matched: Vec<&Value> = all
        .iter()
        .filter(|cr| s(&cr["metadata"], "name") != own)
        .filter(|cr| {
            selectors.iter().any(|sel| {
                crate::registry::helpers::selector_matches(sel, &cr["metadata"]["labels"])
                    .unwrap_or(false)
            })
        })
        .collect();
    matched.sort_by(|a, b| s(&a["metadata"], "name").cmp(s(&b["metadata"], "name")));
    let mut out: Vec<Value> = Vec::new();
    let mut seen: Vec<PolicyRule> = Vec::new();
    for cr in matched {
        for rule in cr["rules"].as_array().into_iter().flatten() {
            let parsed = PolicyRule::from_json(rule);
            if !seen.contains(&parsed) {
                seen.push(parsed);
                out.push(rule.clone());
            }
        }
    }
    Some(out)
}

/// Writes the aggregated rules of every aggregated ClusterRole that is not
/// current. Aggregations of aggregations converge in memory first, so a
/// change reaches `admin` through `edit` and `view` in one pass.
pub(super) async fn aggregate(
    registries: &Registries,
    cluster_roles: &[Value],
) -> Result<(), String> {
    if !cluster_roles
        .iter()
        .any(|cr| !cr["aggregationRule"].is_null())
    {
        return Ok(());
    }
    let mut state: Vec<Value> = cluster_roles.to_vec();
    let mut changed: Vec<usize> = Vec::new();
    for _ in 0..10 {
        let mut any = false;
        for i in 0..state.len() {
            let Some(rules) = aggregated_rules(&state[i], &state) else {
                continue;
            };
            let current = PolicyRule::list_from(&state[i]);
            let wanted: Vec<PolicyRule> = rules.iter().map(PolicyRule::from_json).collect();
            if current != wanted {
                state[i]["rules"] = Value::Array(rules);
                if !changed.contains(&i) {
                    changed.push(i);
                }
                any = true;
            }
        }
        if !any {
            break;
        }
    }
    if changed.is_empty() {
        return Ok(());
    }
    let reg = registries
        .get(GROUP, "v1", "clusterroles")
        .ok_or("clusterroles are not served")?;
    let opts = WriteOptions {
        field_manager: Some("clusterrole-aggregation-controller".into()),
        user: loopback_user(),
        ..Default::default()
    };
    let mut failed = Vec::new();
    for i in changed {
        let name = s(&state[i]["metadata"], "name").to_string();
        match reg.update("", &name, state[i].clone(), None, &opts).await {
            Ok(_) => tracing::debug!(clusterrole = %name, "aggregated rules"),
            Err(e) => failed.push(format!("{name}: {e}")),
        }
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "updating aggregated clusterroles: {}",
            failed.join("; ")
        ))
    }
}
