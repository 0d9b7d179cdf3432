//! upstream's ValidateWebhookURL, over the parts of Go's `net/url.Parse` it
//! depends on: the scheme, userinfo, host (with its port check), query and
//! fragment, and Go's parse errors (`parse "...": missing protocol scheme`).

use serde_json::json;

use crate::api::go_quote;
use crate::registry::validation::FieldError;

#[derive(Debug, Default, PartialEq)]
struct GoUrl {
    scheme: String,
    user: Option<String>,
    host: String,
    raw_query: String,
    fragment: String,
}

const FORM: &str = "; desired format: https://host[/path]";

/// upstream's webhook.ValidateWebhookURL with forceHttps.
pub fn validate_webhook_url(path: &str, raw: &str, errs: &mut Vec<FieldError>) {
    let u = match parse(raw) {
        Ok(u) => u,
        Err(e) => {
            errs.push(FieldError::required(
                path,
                format!("url must be a valid URL: {e}{FORM}"),
            ));
            return;
        }
    };
    if u.scheme != "https" {
        errs.push(FieldError::invalid(
            path,
            json!(u.scheme),
            format!("'https' is the only allowed URL scheme{FORM}"),
        ));
    }
    if u.host.is_empty() {
        errs.push(FieldError::invalid(
            path,
            json!(u.host),
            format!("host must be specified{FORM}"),
        ));
    }
    if let Some(user) = u.user {
        errs.push(FieldError::invalid(
            path,
            json!(user),
            "user information is not permitted in the URL",
        ));
    }
    if !u.fragment.is_empty() {
        errs.push(FieldError::invalid(
            path,
            json!(u.fragment),
            "fragments are not permitted in the URL",
        ));
    }
    if !u.raw_query.is_empty() {
        errs.push(FieldError::invalid(
            path,
            json!(u.raw_query),
            "query parameters are not permitted in the URL",
        ));
    }
}

/// Go's `url.Parse`; the error is `*url.Error`'s text.
fn parse(raw: &str) -> Result<GoUrl, String> {
    let (u, frag) = raw.split_once('#').unwrap_or((raw, ""));
    let mut url = parse_no_fragment(u).map_err(|e| format!("parse {}: {e}", go_quote(u)))?;
    if !frag.is_empty() {
        url.fragment = unescape(frag).map_err(|e| format!("parse {}: {e}", go_quote(raw)))?;
    }
    Ok(url)
}

fn parse_no_fragment(raw: &str) -> Result<GoUrl, String> {
    if raw.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return Err("net/url: invalid control character in URL".into());
    }
    let mut url = GoUrl::default();
    if raw == "*" {
        return Ok(url);
    }
    let (scheme, rest) = scheme(raw)?;
    url.scheme = scheme.to_ascii_lowercase();
    let mut rest = rest;
    if rest.ends_with('?') && rest.matches('?').count() == 1 {
        rest = &rest[..rest.len() - 1];
    } else if let Some((r, q)) = rest.split_once('?') {
        rest = r;
        url.raw_query = q.to_string();
    }
    if !rest.starts_with('/') {
        if !url.scheme.is_empty() {
            // An opaque URL (`https:host`): no host.
            return Ok(url);
        }
        let segment = rest.split('/').next().unwrap_or("");
        if segment.contains(':') {
            return Err("first path segment in URL cannot contain colon".into());
        }
    }
    if (!url.scheme.is_empty() || !rest.starts_with("///")) && rest.starts_with("//") {
        let authority = &rest[2..];
        let (authority, path) = match authority.find('/') {
            Some(i) => (&authority[..i], &authority[i..]),
            None => (authority, ""),
        };
        let (user, host) = authority_parts(authority)?;
        url.user = user;
        url.host = host;
        rest = path;
    }
    unescape(rest)?;
    Ok(url)
}

/// Go's getScheme.
fn scheme(raw: &str) -> Result<(&str, &str), String> {
    for (i, c) in raw.bytes().enumerate() {
        match c {
            b'a'..=b'z' | b'A'..=b'Z' => {}
            b'0'..=b'9' | b'+' | b'-' | b'.' if i > 0 => {}
            b':' if i == 0 => return Err("missing protocol scheme".into()),
            b':' => return Ok((&raw[..i], &raw[i + 1..])),
            _ => return Ok(("", raw)),
        }
    }
    Ok(("", raw))
}

/// Go's parseAuthority: userinfo (as `Userinfo.String` shows it) and host.
fn authority_parts(authority: &str) -> Result<(Option<String>, String), String> {
    let (userinfo, host) = match authority.rfind('@') {
        Some(i) => (Some(&authority[..i]), &authority[i + 1..]),
        None => (None, authority),
    };
    let host = parse_host(host)?;
    let Some(userinfo) = userinfo else {
        return Ok((None, host));
    };
    let valid = userinfo
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"-._:~!$&'()*+,;=%@".contains(&b));
    if !valid {
        return Err("net/url: invalid userinfo".into());
    }
    unescape(userinfo)?;
    Ok((Some(userinfo.to_string()), host))
}

/// Go's parseHost: the port after the last ':' must be digits.
fn parse_host(host: &str) -> Result<String, String> {
    let port_part = if let Some(stripped) = host.strip_prefix('[') {
        let Some(end) = stripped.find(']') else {
            return Err("missing ']' in host".into());
        };
        &stripped[end + 1..]
    } else {
        host.rfind(':').map(|i| &host[i..]).unwrap_or("")
    };
    let port_ok = port_part.is_empty()
        || port_part
            .strip_prefix(':')
            .is_some_and(|p| p.bytes().all(|b| b.is_ascii_digit()));
    if !port_ok {
        return Err(format!("invalid port {} after host", go_quote(port_part)));
    }
    for c in host.chars() {
        let ok =
            !c.is_ascii() || c.is_ascii_alphanumeric() || "-._~!$&'()*+,;=:[]<>\"%".contains(c);
        if !ok {
            return Err(format!(
                "invalid character {} in host name",
                go_quote(&c.to_string())
            ));
        }
    }
    unescape(host)
}

/// Go's unescape: `%XX` must be two hex digits.
fn unescape(s: &str) -> Result<String, String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = |x: Option<&u8>| x.is_some_and(u8::is_ascii_hexdigit);
            if !hex(b.get(i + 1)) || !hex(b.get(i + 2)) {
                let end = (i + 3).min(b.len());
                let bad = String::from_utf8_lossy(&b[i..end]).into_owned();
                return Err(format!("invalid URL escape {bad:?}"));
            }
            let v = u8::from_str_radix(&s[i + 1..i + 3], 16).unwrap_or(b'?');
            out.push(v);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(u: &str) -> Vec<String> {
        let mut errs = Vec::new();
        validate_webhook_url("u", u, &mut errs);
        errs.iter().map(FieldError::message).collect()
    }

    #[test]
    fn urls() {
        assert!(check("https://hook.example.com:8443/validate").is_empty());
        assert_eq!(
            check("http://hook.example.com"),
            ["Invalid value: \"http\": 'https' is the only allowed URL scheme; desired format: https://host[/path]"]
        );
        assert_eq!(
            check("hook.example.com/x"),
            [
                "Invalid value: \"\": 'https' is the only allowed URL scheme; desired format: https://host[/path]",
                "Invalid value: \"\": host must be specified; desired format: https://host[/path]",
            ]
        );
        assert_eq!(
            check("https://me:pw@h/x?a=b#frag"),
            [
                "Invalid value: \"me:pw\": user information is not permitted in the URL",
                "Invalid value: \"frag\": fragments are not permitted in the URL",
                "Invalid value: \"a=b\": query parameters are not permitted in the URL",
            ]
        );
        assert_eq!(
            check("://x"),
            ["Required value: url must be a valid URL: parse \"://x\": missing protocol scheme; desired format: https://host[/path]"]
        );
        assert_eq!(
            check("https://h:port/"),
            ["Required value: url must be a valid URL: parse \"https://h:port/\": invalid port \":port\" after host; desired format: https://host[/path]"]
        );
    }
}
