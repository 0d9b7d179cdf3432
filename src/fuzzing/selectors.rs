//! Targets `label_selector` and `field_selector`: parsed, matched, and
//! used to filter a list.

use std::collections::BTreeMap;

use super::env::{block_on, env};
use super::REV;
use crate::api::selector::{FieldSelector, LabelSelector};
use crate::registry::ListParams;
use crate::storage::store::encode_continue;

fn labels() -> BTreeMap<String, String> {
    [
        ("app", "web"),
        ("tier", "front"),
        ("n", "5"),
        ("example.com/x", "a.b-c_d"),
        ("empty", ""),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

/// `labelSelector`: parsed, matched, and used to filter a list; a JSON
/// `metav1.LabelSelector` (as in a Deployment's spec) goes through `from_api`.
pub fn label_selector(input: &[u8]) {
    let Ok(text) = std::str::from_utf8(input) else {
        return;
    };
    if let Ok(sel) = LabelSelector::parse(text) {
        let _ = sel.is_empty();
        let _ = sel.matches(&labels());
        let _ = sel.matches(&BTreeMap::new());
    }
    if let Ok(api) =
        serde_json::from_str::<k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector>(text)
    {
        if let Ok(sel) = LabelSelector::from_api(&api) {
            let _ = sel.matches(&labels());
        }
    }
    list_with(ListParams {
        label_selector: Some(text.to_string()),
        ..continued()
    });
}

/// `fieldSelector`: parsed, matched, and used to filter a list.
pub fn field_selector(input: &[u8]) {
    let Ok(text) = std::str::from_utf8(input) else {
        return;
    };
    if let Ok(sel) = FieldSelector::parse(text) {
        let _ = sel.is_empty();
        let _ = sel.keys().count();
        let _ = sel.required("metadata.name");
        let mut fields = BTreeMap::new();
        fields.insert("metadata.name".to_string(), "a,b".to_string());
        fields.insert("metadata.namespace".to_string(), "default".to_string());
        fields.insert("status.phase".to_string(), "Running".to_string());
        let _ = sel.matches(&fields);
    }
    list_with(ListParams {
        field_selector: Some(text.to_string()),
        ..continued()
    });
}

/// List parameters that send a list to storage (not the watch cache,
/// which needs a running backend watch).
fn continued() -> ListParams {
    ListParams {
        limit: 5,
        continue_token: Some(encode_continue(REV, "default/a\u{0}")),
        ..Default::default()
    }
}

pub(super) fn list_with(params: ListParams) {
    let e = env();
    for (g, v, p) in [("", "v1", "pods"), ("example.com", "v1", "widgets")] {
        if let Some(reg) = e.registries.get(g, v, p) {
            let _ = block_on(reg.list("default", &params));
        }
    }
}
