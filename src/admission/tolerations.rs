//! Toleration sets as the scheduling plugins combine them (upstream's
//! plugin/pkg/admission/podtolerationrestriction/tolerations package).

use serde_json::Value;

/// Whether `ss` tolerates everything `t` does.
fn is_superset(ss: &Value, t: &Value) -> bool {
    if ss == t {
        return true;
    }
    let s = |v: &Value, k: &str| v[k].as_str().unwrap_or("").to_string();
    let (ss_key, ss_op, ss_effect) = (s(ss, "key"), s(ss, "operator"), s(ss, "effect"));
    // An empty key with Exists matches every key.
    if s(t, "key") != ss_key && (!ss_key.is_empty() || ss_op != "Exists") {
        return false;
    }
    // An empty effect matches every effect.
    if s(t, "effect") != ss_effect && !ss_effect.is_empty() {
        return false;
    }
    if ss_effect == "NoExecute" {
        if let Some(limit) = ss["tolerationSeconds"].as_i64() {
            match t["tolerationSeconds"].as_i64() {
                Some(secs) if secs <= limit => {}
                _ => return false,
            }
        }
    }
    match ss_op.as_str() {
        "Equal" | "" => s(t, "operator") == "Equal" && s(t, "value") == s(ss, "value"),
        "Exists" => true,
        _ => false,
    }
}

/// Both sets, without the tolerations another one already covers (the
/// first of two equal ones is kept): upstream's MergeTolerations.
pub fn merge(first: &[Value], second: &[Value]) -> Vec<Value> {
    let all: Vec<&Value> = first.iter().chain(second).collect();
    let mut merged: Vec<Value> = Vec::new();
    'next: for (i, t) in all.iter().enumerate() {
        if merged.iter().any(|m| is_superset(m, t)) {
            continue;
        }
        for later in &all[i + 1..] {
            if later != t && is_superset(later, t) {
                continue 'next;
            }
        }
        merged.push((*t).clone());
    }
    merged
}

/// Whether every toleration is covered by one of the whitelist's (an empty
/// whitelist allows everything): upstream's VerifyAgainstWhitelist.
pub fn allowed_by(tolerations: &[Value], whitelist: &[Value]) -> bool {
    whitelist.is_empty()
        || tolerations
            .iter()
            .all(|t| whitelist.iter().any(|w| is_superset(w, t)))
}

/// The tolerations of a pod spec.
pub fn of(spec: &Value) -> Vec<Value> {
    spec["tolerations"].as_array().cloned().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn merging_keeps_the_wider_toleration() {
        let exists = json!({"key": "k", "operator": "Exists", "effect": "NoSchedule"});
        let equal = json!({"key": "k", "operator": "Equal", "value": "v", "effect": "NoSchedule"});
        let other = json!({"key": "o", "operator": "Exists"});
        assert_eq!(
            merge(&[equal.clone()], &[exists.clone()]),
            vec![exists.clone()]
        );
        assert_eq!(
            merge(&[exists.clone(), other.clone()], &[equal]),
            vec![exists.clone(), other]
        );
        assert_eq!(merge(&[exists.clone()], &[exists.clone()]), vec![exists]);
    }

    #[test]
    fn whitelists_cover_or_refuse() {
        let any_k = json!({"key": "k", "operator": "Exists"});
        let t = json!({"key": "k", "operator": "Equal", "value": "v", "effect": "NoExecute"});
        let u = json!({"key": "u", "operator": "Exists"});
        assert!(allowed_by(&[t.clone()], &[any_k.clone()]));
        assert!(!allowed_by(&[t, u.clone()], &[any_k]));
        assert!(allowed_by(&[u], &[]));
        let limited = json!({"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60});
        let longer = json!({"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 600});
        assert!(!allowed_by(&[longer], &[limited]));
    }
}
