//! Target `request_info`: a request line and headers through request-info
//! parsing, the route matcher, content negotiation and list parameters.

use http::Method;

use super::env::{block_on, env};
use crate::endpoints::negotiation;
use crate::registry::ListParams;

/// `METHOD target` on the first line (target: path and query), then
/// optionally the Accept and the Content-Type header values on the next
/// two lines: request-info parsing, the `kapi routes` matcher, content
/// negotiation, and the list parameters of the query.
pub fn request_info(input: &[u8]) {
    let Ok(text) = std::str::from_utf8(input) else {
        return;
    };
    let e = env();
    let mut lines = text.splitn(3, '\n');
    let first = lines.next().unwrap_or("");
    let (m, target) = first.split_once(' ').unwrap_or(("GET", first));
    let method = Method::from_bytes(m.as_bytes()).unwrap_or(Method::GET);
    let (path, query) = match target.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (target, None),
    };
    use crate::api::request_info::{percent_decode, query_value, RequestInfo};
    let info = RequestInfo::parse(&method, path, query);
    let _ = (info.is_long_running(), info.is_mutating(), info.scope());
    let _ = percent_decode(path);
    let _ = crate::routes::match_request(&e.catalog, &e.routes, &method, target);
    let accept = lines.next();
    let content_type = lines.next();
    for serializers in [
        negotiation::Serializers::ALL,
        negotiation::Serializers::JSON_YAML,
    ] {
        let include = query_value(query, "includeObject").is_some();
        let _ = negotiation::output(accept, include, serializers, info.verb == "watch");
    }
    let _ = negotiation::error_encoding(accept);
    let _ = negotiation::body_format(content_type);
    if info.verb == "list" {
        let params = ListParams {
            label_selector: query_value(query, "labelSelector"),
            field_selector: query_value(query, "fieldSelector"),
            limit: query_value(query, "limit")
                .and_then(|l| l.parse().ok())
                .unwrap_or(0),
            continue_token: query_value(query, "continue"),
            resource_version: query_value(query, "resourceVersion"),
            resource_version_match: query_value(query, "resourceVersionMatch"),
        };
        // Only lists that storage answers (see `continued`).
        if params
            .continue_token
            .as_deref()
            .is_some_and(|c| !c.is_empty())
            || params.resource_version_match.as_deref() == Some("Exact")
        {
            if let Some(reg) = e
                .registries
                .get(&info.api_group, &info.api_version, &info.resource)
            {
                let _ = block_on(reg.list(&info.namespace, &params));
            }
        }
    }
}
