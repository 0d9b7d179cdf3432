//! list (upstream's `Store.List`): selectors checked against what the
//! resource can select on, then served from the watch cache, or from storage
//! for later pages and exact revisions. The selection (`filter`) is watch's
//! too.

use std::sync::Arc;

use bytes::Bytes;
use serde_json::json;

use super::{attrs_fn, parse_rv, storage_err, Registry};
use crate::api::selector::{FieldSelector, LabelSelector};
use crate::api::ApiError;
use crate::registry::{ListOut, ListParams};
use crate::storage::cacher::Filter;
use crate::storage::store::{self, ListOptions, RvMatch};
use crate::trace;

impl Registry {
    pub(super) fn filter(&self, namespace: &str, params: &ListParams) -> Result<Filter, ApiError> {
        let label = LabelSelector::parse(params.label_selector.as_deref().unwrap_or(""))
            .map_err(ApiError::bad_request)?;
        let field = FieldSelector::parse(params.field_selector.as_deref().unwrap_or(""))
            .map_err(ApiError::bad_request)?;
        for k in field.keys() {
            let known = k == "metadata.name"
                || (k == "metadata.namespace" && self.resource.namespaced)
                || self.resource.selectable_fields.iter().any(|f| f == k);
            if !known {
                return Err(ApiError::bad_request(format!(
                    "field label not supported: {k}"
                )));
            }
        }
        let key_prefix = self.namespace_prefix(namespace);
        Ok(Filter {
            key_prefix,
            exact_key: None,
            label,
            field,
        })
    }

    pub async fn list(&self, namespace: &str, params: &ListParams) -> Result<ListOut, ApiError> {
        let filter = self.filter(namespace, params)?;
        let rv = match params.resource_version.as_deref().filter(|s| !s.is_empty()) {
            Some(s) => Some(parse_rv(s)?),
            None => None,
        };
        let rv_match = match params.resource_version_match.as_deref().filter(|s| !s.is_empty()) {
            None => None,
            Some("NotOlderThan") => Some(RvMatch::NotOlderThan),
            Some("Exact") => Some(RvMatch::Exact),
            Some(other) => {
                return Err(ApiError::bad_request(format!(
                    "resourceVersionMatch: Unsupported value: {other:?}: supported values: \"Exact\", \"NotOlderThan\""
                )))
            }
        };
        if rv_match.is_some() && rv.is_none() {
            return Err(ApiError::bad_request(
                "resourceVersionMatch is forbidden unless resourceVersion is provided",
            ));
        }
        if rv_match == Some(RvMatch::Exact) && rv == Some(0) {
            return Err(ApiError::bad_request(
                "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
            ));
        }
        let opts = ListOptions {
            resource_version: rv,
            rv_match,
            limit: params.limit.max(0),
            continue_token: params.continue_token.clone().filter(|s| !s.is_empty()),
            predicate: None,
        };
        let name_for_errors = "";
        if opts.continue_token.is_some() || rv_match == Some(RvMatch::Exact) {
            // Paging beyond the first page, and exact reads, come from storage at that revision.
            let attrs = attrs_fn(
                self.resource.selectable_fields.clone(),
                self.resource.namespaced,
            );
            let f = filter.clone();
            let predicate: store::Predicate = Arc::new(move |raw: &[u8]| {
                attrs
                    .attrs(raw)
                    .is_some_and(|a| f.label.matches(&a.labels) && f.field.matches(&a.fields))
            });
            let prefix = filter
                .key_prefix
                .clone()
                .unwrap_or_else(|| self.key_root.clone());
            let unfiltered = filter.label.is_empty() && filter.field.is_empty();
            let opts = ListOptions {
                predicate: (!unfiltered).then_some(predicate),
                ..opts
            };
            let began = trace::start_read();
            let listed = self.registries.store().list(&prefix, &opts).await;
            trace::result(
                began,
                "storage",
                &listed,
                || json!({"operation": "list", "prefix": prefix, "read": "from storage (a later page, or an exact resourceVersion)", "items": listed.as_ref().map(|r| r.items.len()).unwrap_or(0)}),
            );
            let mut res =
                listed.map_err(|e| storage_err(&self.resource, "list", name_for_errors, e))?;
            if filter.label.is_empty() && filter.field.is_empty() {
                // remainingItemCount is only exact without selectors.
            } else {
                res.remaining_item_count = None;
            }
            let began = trace::start_read();
            let items: Vec<Bytes> = res.items.iter().map(|o| self.served(o.to_json())).collect();
            trace::stage(began, "encode", "ok", || {
                self.decode_detail(items.iter().map(Bytes::len).sum())
            });
            return Ok(ListOut {
                items,
                cached: Vec::new(),
                resource_version: res.resource_version,
                continue_token: res.continue_token,
                remaining_item_count: res.remaining_item_count,
            });
        }
        let began = trace::start_read();
        let cacher = self.cacher()?;
        let listed = cacher.list(&filter, &opts).await;
        trace::result(
            began,
            cacher.read_from(),
            &listed,
            || json!({"operation": "list", "prefix": filter.key_prefix.as_deref().unwrap_or(&self.key_root), "items": listed.as_ref().map(|r| r.items.len()).unwrap_or(0)}),
        );
        let res = listed.map_err(|e| storage_err(&self.resource, "list", name_for_errors, e))?;
        let began = trace::start_read();
        let items: Vec<Bytes> = res
            .items
            .iter()
            .map(|o| self.served(o.json.clone()))
            .collect();
        trace::stage(began, "encode", "ok", || {
            self.decode_detail(items.iter().map(Bytes::len).sum())
        });
        let unchanged = items
            .iter()
            .zip(&res.items)
            .all(|(served, o)| served.as_ptr() == o.json.as_ptr());
        Ok(ListOut {
            items,
            cached: if unchanged { res.items } else { Vec::new() },
            resource_version: res.resource_version,
            continue_token: res.continue_token,
            remaining_item_count: res.remaining_item_count,
        })
    }
}
