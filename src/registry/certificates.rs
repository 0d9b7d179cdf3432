//! CertificateSigningRequest's `approval` subresource, as upstream's
//! csrApprovalStrategy: an update through it changes `status.conditions`
//! and nothing else, stamps the conditions' times, and checks them.

use serde_json::{json, Value};

use super::meta;
use super::validation::FieldError;

/// The conditions only one request may carry at a time.
const APPROVED: &str = "Approved";
const DENIED: &str = "Denied";
const FAILED: &str = "Failed";

/// The old CSR with the new one's conditions, their times filled in:
/// `lastUpdateTime` now when missing, `lastTransitionTime` kept from a
/// condition of the same type and status, else now.
pub fn approval_update(new: &Value, old: &Value) -> Value {
    let mut merged = old.clone();
    let now = meta::now_rfc3339();
    let mut conditions = new["status"]["conditions"].clone();
    if let Some(list) = conditions.as_array_mut() {
        for c in list.iter_mut() {
            let previous = old["status"]["conditions"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|p| p["type"] == c["type"]);
            if let Some(m) = c.as_object_mut() {
                if m.get("lastUpdateTime").is_none_or(Value::is_null) {
                    m.insert("lastUpdateTime".into(), json!(now));
                }
                if m.get("lastTransitionTime").is_none_or(Value::is_null) {
                    let kept = previous
                        .filter(|p| p["status"] == m["status"])
                        .map(|p| p["lastTransitionTime"].clone())
                        .filter(|t| !t.is_null());
                    m.insert("lastTransitionTime".into(), kept.unwrap_or(json!(now)));
                }
            }
        }
    }
    if let Some(m) = merged.as_object_mut() {
        let status = m.entry("status").or_insert_with(|| json!({}));
        if let Some(s) = status.as_object_mut() {
            if conditions.is_null() {
                s.remove("conditions");
            } else {
                s.insert("conditions".into(), conditions);
            }
        }
    }
    merged
}

/// upstream's validateConditions for an approval update.
pub fn validate_approval(new: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let path = "status.conditions";
    let list: Vec<&Value> = new["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .collect();
    let mut seen: Vec<&str> = Vec::new();
    for (i, c) in list.iter().enumerate() {
        let at = format!("{path}[{i}]");
        let ty = c["type"].as_str().unwrap_or("");
        if ty.is_empty() {
            errs.push(FieldError::required(format!("{at}.type"), ""));
        }
        let status = c["status"].as_str().unwrap_or("");
        match status {
            "" => errs.push(FieldError::required(format!("{at}.status"), "")),
            "True" | "False" | "Unknown" => {}
            other => errs.push(FieldError::not_supported(
                format!("{at}.status"),
                json!(other),
                &["False", "True", "Unknown"],
            )),
        }
        if matches!(ty, APPROVED | DENIED | FAILED) {
            if !status.is_empty() && status != "True" {
                errs.push(FieldError::not_supported(
                    format!("{at}.status"),
                    json!(status),
                    &["True"],
                ));
            }
            if seen.contains(&ty) {
                errs.push(FieldError::duplicate(format!("{at}.type"), json!(ty)));
            }
            seen.push(ty);
        }
    }
    if seen.contains(&APPROVED) && seen.contains(&DENIED) {
        errs.push(FieldError::invalid(
            path,
            new["status"]["conditions"].clone(),
            "Approved and Denied conditions are mutually exclusive",
        ));
    }
    for ty in [APPROVED, DENIED] {
        let had = old["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| c["type"] == ty);
        if had && !seen.contains(&ty) {
            errs.push(FieldError::forbidden(
                path,
                format!("updates may not remove a condition of type {ty:?}"),
            ));
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_conditions_change_and_get_their_times() {
        let old = json!({"spec": {"signerName": "s"}, "status": {"certificate": "Y2VydA=="}});
        let new = json!({"spec": {"signerName": "changed"}, "status": {"conditions": [{"type": "Approved", "status": "True"}]}});
        let got = approval_update(&new, &old);
        assert_eq!(got["spec"]["signerName"], "s");
        assert_eq!(got["status"]["certificate"], "Y2VydA==");
        let c = &got["status"]["conditions"][0];
        assert!(c["lastUpdateTime"].is_string() && c["lastTransitionTime"].is_string());
        assert!(validate_approval(&got, &old).is_empty());
    }

    #[test]
    fn approved_and_denied_exclude_each_other() {
        let new = json!({"status": {"conditions": [
            {"type": "Approved", "status": "True"}, {"type": "Denied", "status": "True"}]}});
        let errs = validate_approval(&new, &json!({}));
        assert!(
            errs.iter().any(|e| e.field == "status.conditions"),
            "{errs:?}"
        );
    }
}

/// TODO(helper): being written.
pub struct CertificateSigningRequestStrategy;

impl super::strategy::Strategy for CertificateSigningRequestStrategy {}
