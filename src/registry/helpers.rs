//! Small pieces the kind strategies share: upstream's common validators
//! (label selectors, ports, quantities, immutability), the printers'
//! formatting helpers, and JSON accessors that never panic on client data.

use serde_json::{json, Map, Value};

use super::validation::{self, ErrorType, FieldError};

/// `obj[key]` as a mutable object, when it is one.
pub fn obj_mut<'a>(v: &'a mut Value, key: &str) -> Option<&'a mut Map<String, Value>> {
    v.get_mut(key).and_then(Value::as_object_mut)
}

/// `obj[key]` as a mutable object, created (replacing a null) when missing.
pub fn ensure_obj<'a>(v: &'a mut Map<String, Value>, key: &str) -> &'a mut Map<String, Value> {
    let entry = v.entry(key).or_insert_with(|| json!({}));
    if !entry.is_object() {
        *entry = json!({});
    }
    match entry {
        Value::Object(m) => m,
        _ => unreachable!("made an object above"),
    }
}

/// A string field, "" when missing or not a string.
pub fn s<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// Strings of an array field (non-strings skipped).
pub fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// Items of an array field (empty when missing).
pub fn items(v: &Value) -> Vec<Value> {
    v.as_array().cloned().unwrap_or_default()
}

/// True when the field is missing, null, or an empty string/array/object.
pub fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(m) => m.is_empty(),
        _ => false,
    }
}

/// An `Invalid value` whose value is rendered as upstream renders a Go
/// value that is not a plain JSON scalar (e.g. `[]networking.IngressRule(nil)`).
pub fn invalid_raw(field: impl Into<String>, rendered: &str, detail: &str) -> FieldError {
    FieldError {
        kind: ErrorType::Invalid,
        field: field.into(),
        value: None,
        detail: format!("{rendered}: {detail}"),
    }
}

/// upstream's ValidateImmutableField.
pub fn immutable(field: &str, new: &Value, old: &Value, errs: &mut Vec<FieldError>) {
    if new != old {
        errs.push(FieldError::invalid(
            field,
            new.clone(),
            "field is immutable",
        ));
    }
}

/// upstream's ValidateNonnegativeField for an optional integer.
pub fn nonnegative(field: &str, v: &Value, errs: &mut Vec<FieldError>) {
    if let Some(n) = v.as_i64() {
        if n < 0 {
            errs.push(FieldError::invalid(
                field,
                json!(n),
                "must be greater than or equal to 0",
            ));
        }
    }
}

/// upstream's IsValidPortNum.
pub fn port_num(n: i64) -> Vec<String> {
    if (1..=65535).contains(&n) {
        Vec::new()
    } else {
        vec!["must be between 1 and 65535, inclusive".into()]
    }
}

/// upstream's IsValidPortName.
pub fn port_name(p: &str) -> Vec<String> {
    let mut out = Vec::new();
    if p.len() > 15 {
        out.push("must be no more than 15 characters".into());
    }
    if p.is_empty()
        || !p
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        out.push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)".into());
    }
    if !p.bytes().any(|b| b.is_ascii_lowercase()) {
        out.push("must contain at least one letter (a-z)".into());
    }
    if p.contains("--") {
        out.push("must not contain consecutive hyphens".into());
    }
    if p.starts_with('-') || p.ends_with('-') {
        out.push("must not begin or end with a hyphen".into());
    }
    out
}

/// upstream's IsValidPercent.
pub fn percent(p: &str) -> Vec<String> {
    let ok =
        p.len() > 1 && p.ends_with('%') && p[..p.len() - 1].bytes().all(|b| b.is_ascii_digit());
    if ok {
        Vec::new()
    } else {
        vec!["a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')".into()]
    }
}

/// upstream's ValidateLabelName (a qualified name).
pub fn label_name(key: &str, field: &str, errs: &mut Vec<FieldError>) {
    for m in validation::qualified_name(key) {
        errs.push(FieldError::invalid(field, json!(key), m));
    }
}

/// upstream's ValidateLabels.
pub fn validate_labels(labels: &Value, field: &str, errs: &mut Vec<FieldError>) {
    if let Some(m) = labels.as_object() {
        for (k, v) in m {
            label_name(k, field, errs);
            let v = v.as_str().unwrap_or("");
            for msg in validation::label_value(v) {
                errs.push(FieldError::invalid(field, json!(v), msg));
            }
        }
    }
}

/// upstream's ValidateLabelSelector (nothing for a missing selector).
pub fn validate_label_selector(sel: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if sel.is_null() {
        return errs;
    }
    validate_labels(
        &sel["matchLabels"],
        &format!("{path}.matchLabels"),
        &mut errs,
    );
    for (i, r) in items(&sel["matchExpressions"]).iter().enumerate() {
        let p = format!("{path}.matchExpressions[{i}]");
        let values = strings(&r["values"]);
        match s(r, "operator") {
            "In" | "NotIn" => {
                if values.is_empty() {
                    errs.push(FieldError::required(
                        format!("{p}.values"),
                        "must be specified when `operator` is 'In' or 'NotIn'",
                    ));
                }
            }
            "Exists" | "DoesNotExist" => {
                if !values.is_empty() {
                    errs.push(FieldError::forbidden(
                        format!("{p}.values"),
                        "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                    ));
                }
            }
            other => errs.push(FieldError::invalid(
                format!("{p}.operator"),
                json!(other),
                "not a valid selector operator",
            )),
        }
        label_name(s(r, "key"), &format!("{p}.key"), &mut errs);
        for (j, v) in values.iter().enumerate() {
            for msg in validation::label_value(v) {
                errs.push(FieldError::invalid(
                    format!("{p}.values[{j}]"),
                    json!(v),
                    msg,
                ));
            }
        }
    }
    errs
}

/// A label selector as a matcher; `None` when it cannot be converted
/// (upstream then skips the checks that need one).
pub fn selector_matches(sel: &Value, labels: &Value) -> Option<bool> {
    if sel.is_null() {
        return Some(false);
    }
    let parsed: k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector =
        serde_json::from_value(sel.clone()).ok()?;
    let s = crate::api::selector::LabelSelector::from_api(&parsed).ok()?;
    let map: std::collections::BTreeMap<String, String> = labels
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_string()))
                .collect()
        })
        .unwrap_or_default();
    Some(s.matches(&map))
}

/// metav1.FormatLabelSelector: requirements sorted by key, `<none>` when empty.
pub fn format_label_selector(sel: &Value) -> String {
    let mut reqs: Vec<(String, String)> = Vec::new();
    if let Some(m) = sel["matchLabels"].as_object() {
        for (k, v) in m {
            reqs.push((k.clone(), format!("{k}={}", v.as_str().unwrap_or(""))));
        }
    }
    for e in items(&sel["matchExpressions"]) {
        let key = s(&e, "key").to_string();
        let mut vals = strings(&e["values"]);
        vals.sort();
        vals.dedup();
        let text = match s(&e, "operator") {
            "In" => format!("{key} in ({})", vals.join(",")),
            "NotIn" => format!("{key} notin ({})", vals.join(",")),
            "Exists" => key.clone(),
            "DoesNotExist" => format!("!{key}"),
            _ => return "<error>".into(),
        };
        reqs.push((key, text));
    }
    reqs.sort_by(|a, b| a.0.cmp(&b.0));
    if reqs.is_empty() {
        "<none>".into()
    } else {
        reqs.into_iter()
            .map(|(_, t)| t)
            .collect::<Vec<_>>()
            .join(",")
    }
}

/// labels.FormatLabels: `k=v` sorted by key, `<none>` when empty.
pub fn format_labels(m: &Value) -> String {
    let parts: Vec<String> = m
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("")))
                .collect()
        })
        .unwrap_or_default();
    if parts.is_empty() {
        "<none>".into()
    } else {
        parts.join(",")
    }
}

/// The printers' layoutContainerCells of a pod spec: names and images.
pub fn container_cells(pod_spec: &Value) -> (String, String) {
    let cs = items(&pod_spec["containers"]);
    let names: Vec<&str> = cs.iter().map(|c| s(c, "name")).collect();
    let images: Vec<&str> = cs.iter().map(|c| s(c, "image")).collect();
    (names.join(","), images.join(","))
}

/// The printers' printBool / printBoolPtr.
pub fn bool_cell(v: &Value) -> Value {
    match v.as_bool() {
        Some(true) => json!("True"),
        Some(false) => json!("False"),
        None => json!("<unset>"),
    }
}

/// `<none>` for an empty string.
pub fn or_none(v: &str) -> Value {
    json!(if v.is_empty() { "<none>" } else { v })
}

/// Seconds between two RFC 3339 times (`to` - `from`).
pub fn seconds_between(from: &str, to: &str) -> Option<i64> {
    let a = chrono::DateTime::parse_from_rfc3339(from).ok()?;
    let b = chrono::DateTime::parse_from_rfc3339(to).ok()?;
    Some((b - a).num_seconds())
}

/// Whether `s` parses as an IP address (IPv4 with leading zeros allowed, as Go's sloppy parser does).
pub fn parse_ip(s: &str) -> Option<std::net::IpAddr> {
    if let Ok(ip) = s.parse::<std::net::IpAddr>() {
        return Some(ip);
    }
    let parts: Vec<&str> = s.split('.').collect();
    if parts.len() == 4 {
        let mut o = [0u8; 4];
        for (i, p) in parts.iter().enumerate() {
            if p.is_empty() || p.len() > 3 || !p.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            o[i] = p.parse().ok()?;
        }
        return Some(std::net::IpAddr::from(o));
    }
    None
}

/// Whether `s` parses as a CIDR (`ip/prefix`).
pub fn parse_cidr(s: &str) -> Option<(std::net::IpAddr, u8)> {
    let (ip, bits) = s.split_once('/')?;
    let ip = parse_ip(ip)?;
    let bits: u8 = bits.parse().ok()?;
    let max = if ip.is_ipv4() { 32 } else { 128 };
    (bits <= max).then_some((ip, bits))
}

/// upstream's IsDomainPrefixedPath (IngressClass controllers, Job managedBy).
pub fn domain_prefixed_path(field: &str, v: &str) -> Vec<FieldError> {
    if v.is_empty() {
        return vec![FieldError::required(field, "")];
    }
    let (host, path) = match v.split_once('/') {
        Some((h, p)) if !h.is_empty() && !p.is_empty() => (h, p),
        _ => {
            return vec![FieldError::invalid(
                field,
                json!(v),
                "must be a domain-prefixed path (such as \"acme.io/foo\")",
            )]
        }
    };
    let mut errs: Vec<FieldError> = validation::dns1123_subdomain(host)
        .into_iter()
        .map(|m| FieldError::invalid(field, json!(host), m))
        .collect();
    let ok = path
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"/-._~%!$&'()*+,;=:".contains(&b));
    if !ok {
        errs.push(FieldError::invalid(
            field,
            json!(path),
            "Invalid path (regex used for validation is '[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+')",
        ));
    }
    errs
}

// ---- resource.Quantity ----

/// A quantity's value in nano-units (`1` is 10^9), as far as i128 holds it;
/// `None` when the string is not a quantity.
pub fn parse_quantity(q: &str) -> Option<i128> {
    crate::api::quantity::Quantity::parse(q).map(|q| q.nanos)
}

/// A quantity field's value; `None` for a missing or malformed one.
pub fn quantity(v: &Value) -> Option<i128> {
    match v {
        Value::String(s) => parse_quantity(s),
        Value::Number(n) => n
            .as_i64()
            .map(|i| i as i128 * 1_000_000_000)
            .or_else(|| n.as_f64().map(|f| (f * 1e9) as i128)),
        _ => None,
    }
}

/// A quantity as upstream prints it in messages (the client's spelling).
pub fn quantity_str(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "0".into(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities() {
        assert_eq!(parse_quantity("1"), Some(1_000_000_000));
        assert_eq!(parse_quantity("1Gi"), Some((1i128 << 30) * 1_000_000_000));
        assert_eq!(parse_quantity("500m"), Some(500_000_000));
        assert_eq!(parse_quantity("1.5k"), Some(1_500_000_000_000));
        assert_eq!(parse_quantity("1e3"), Some(1_000_000_000_000));
        assert_eq!(parse_quantity("-2"), Some(-2_000_000_000));
        assert_eq!(parse_quantity("abc"), None);
        assert_eq!(parse_quantity("1Qi"), None);
        assert!(parse_quantity("2Gi") > parse_quantity("1500Mi"));
    }

    #[test]
    fn selectors_format_sorted() {
        let sel = json!({"matchLabels": {"b": "2", "a": "1"}, "matchExpressions": [{"key": "c", "operator": "In", "values": ["y", "x"]}]});
        assert_eq!(format_label_selector(&sel), "a=1,b=2,c in (x,y)");
        assert_eq!(format_label_selector(&json!({})), "<none>");
        assert_eq!(format_labels(&json!({"z": "1", "a": "2"})), "a=2,z=1");
        assert_eq!(format_labels(&Value::Null), "<none>");
    }

    #[test]
    fn selector_validation() {
        let sel = json!({"matchExpressions": [{"key": "a", "operator": "In"}, {"key": "b", "operator": "Bad"}]});
        let errs = validate_label_selector(&sel, "spec.selector");
        assert_eq!(errs[0].field, "spec.selector.matchExpressions[0].values");
        assert_eq!(
            errs[0].message(),
            "Required value: must be specified when `operator` is 'In' or 'NotIn'"
        );
        assert_eq!(errs[1].field, "spec.selector.matchExpressions[1].operator");
    }

    #[test]
    fn ports_and_percents() {
        assert!(port_num(80).is_empty());
        assert_eq!(port_num(0).len(), 1);
        assert!(port_name("http").is_empty());
        assert_eq!(port_name("HTTP").len(), 2);
        assert!(percent("10%").is_empty());
        assert_eq!(percent("x%").len(), 1);
    }

    #[test]
    fn raw_invalid_renders_like_go() {
        let e = invalid_raw("spec", "[]networking.IngressRule(nil)", "bad");
        assert_eq!(
            e.message(),
            "Invalid value: []networking.IngressRule(nil): bad"
        );
    }
}
