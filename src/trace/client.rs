//! The client half of `kapi trace-request`: sends one request for a
//! manifest with the trace header and returns what the server recorded.

use serde_json::Value;

use super::{parse_header, Report, REQUEST_HEADER, RESPONSE_HEADER};
use crate::clientcmd::Remote;

/// What to do with the manifest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    Create,
    Update,
    Apply,
    Get,
    Delete,
}

impl Verb {
    pub fn as_str(self) -> &'static str {
        match self {
            Verb::Create => "create",
            Verb::Update => "update",
            Verb::Apply => "apply",
            Verb::Get => "get",
            Verb::Delete => "delete",
        }
    }
}

/// A traced request and what came back.
#[derive(Debug)]
pub struct Traced {
    pub method: String,
    pub url: String,
    pub status: u16,
    /// The response body (the object, or a `Status`).
    pub body: Value,
    pub report: Report,
}

/// Where a manifest's object lives: its collection path and its name.
async fn locate(remote: &Remote, manifest: &Value) -> Result<(String, String), String> {
    let api_version = manifest
        .get("apiVersion")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .ok_or("the manifest has no apiVersion")?;
    let kind = manifest
        .get("kind")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .ok_or("the manifest has no kind")?;
    let name = manifest
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let prefix = if api_version.contains('/') {
        format!("/apis/{api_version}")
    } else {
        format!("/api/{api_version}")
    };
    let list = remote
        .get_json(&prefix, "application/json")
        .await
        .map_err(|e| e.0)?;
    let resource = list
        .get("resources")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|r| {
            r.get("kind").and_then(Value::as_str) == Some(kind)
                && !r
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .contains('/')
        })
        .ok_or_else(|| format!("the server does not serve kind {kind:?} in {api_version}"))?;
    let plural = resource
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let namespaced = resource
        .get("namespaced")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let collection = if namespaced {
        let ns = manifest
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .unwrap_or("default");
        format!("{prefix}/namespaces/{ns}/{plural}")
    } else {
        format!("{prefix}/{plural}")
    };
    Ok((collection, name))
}

/// One request to trace.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: http::Method,
    /// Path, with a query if any (dryRun is added for writes unless committed).
    pub path: String,
    /// The body and its content type.
    pub body: Option<(Vec<u8>, String)>,
}

/// The request that does `verb` with `manifest`.
pub async fn manifest_request(
    remote: &Remote,
    manifest: &Value,
    verb: Verb,
    force_conflicts: bool,
) -> Result<Request, String> {
    let (collection, name) = locate(remote, manifest).await?;
    if name.is_empty() && verb != Verb::Create {
        return Err(format!(
            "{} needs metadata.name in the manifest",
            verb.as_str()
        ));
    }
    let item = format!("{collection}/{name}");
    let (method, mut path, content_type) = match verb {
        Verb::Create => (http::Method::POST, collection, "application/json"),
        Verb::Update => (http::Method::PUT, item, "application/json"),
        Verb::Apply => (http::Method::PATCH, item, "application/apply-patch+yaml"),
        Verb::Get => (http::Method::GET, item, "application/json"),
        Verb::Delete => (http::Method::DELETE, item, "application/json"),
    };
    if verb == Verb::Apply {
        path.push_str("?fieldManager=kapi-trace-request");
        if force_conflicts {
            path.push_str("&force=true");
        }
    }
    let body = if matches!(verb, Verb::Create | Verb::Update | Verb::Apply) {
        let bytes = serde_json::to_vec(manifest).map_err(|e| e.to_string())?;
        Some((bytes, content_type.to_string()))
    } else {
        None
    };
    Ok(Request { method, path, body })
}

/// Sends `req` with the trace header; a write is a dry run unless `commit`.
pub async fn trace(remote: &Remote, req: Request, commit: bool) -> Result<Traced, String> {
    let Request { method, path, body } = req;
    if !path.starts_with('/') {
        return Err(format!("the path {path:?} does not start with /"));
    }
    let writes = !matches!(method, http::Method::GET | http::Method::HEAD);
    let mut url = format!("{}{path}", remote.server);
    if writes && !commit {
        url.push(if path.contains('?') { '&' } else { '?' });
        url.push_str("dryRun=All");
    }
    let mut req = remote
        .client
        .request(method.clone(), &url)
        .header(REQUEST_HEADER, "1")
        .header(http::header::ACCEPT, "application/json");
    if let Some(t) = &remote.token {
        req = req.bearer_auth(t);
    }
    if let Some((bytes, content_type)) = body {
        req = req
            .header(http::header::CONTENT_TYPE, content_type)
            .body(bytes);
    }
    let resp = req
        .send()
        .await
        .map_err(|e| crate::clientcmd::request_error(&method, &url, &e))?;
    let status = resp.status().as_u16();
    let header = resp
        .headers()
        .get(RESPONSE_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let bytes = resp
        .bytes()
        .await
        .map_err(|e| crate::clientcmd::request_error(&method, &url, &e))?;
    let body = serde_json::from_slice(&bytes)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()));
    let report = match header {
        Some(h) => parse_header(&h)?,
        None => {
            return Err(format!(
                "{method} {url} answered {status} without a {RESPONSE_HEADER} header: the server is not a kapi, or too old to trace"
            ))
        }
    };
    Ok(Traced {
        method: method.to_string(),
        url,
        status,
        body,
        report,
    })
}
