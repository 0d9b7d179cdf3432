//! Content negotiation: which representation a client accepts and which
//! body formats a request carries, as upstream's negotiation package decides.

use crate::api::ApiError;

/// The media type of a response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    Json,
    Yaml,
    /// `application/vnd.kubernetes.protobuf`: built-in kinds only.
    Protobuf,
}

impl Encoding {
    pub fn content_type(self) -> &'static str {
        match self {
            Encoding::Json => "application/json",
            Encoding::Yaml => "application/yaml",
            Encoding::Protobuf => PROTOBUF,
        }
    }
}

pub const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";

/// What the object becomes before it is encoded (`;as=...` in Accept).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transform {
    None,
    /// meta.k8s.io Table: JSON or YAML only, as upstream.
    Table {
        include_object: bool,
    },
    /// meta.k8s.io PartialObjectMetadata(List): any encoding, custom
    /// resources included.
    PartialObjectMetadata,
}

/// What the response should be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Output {
    pub encoding: Encoding,
    pub transform: Transform,
}

impl Output {
    pub const JSON: Output = Output {
        encoding: Encoding::Json,
        transform: Transform::None,
    };
}

/// Which encodings an endpoint gives plain objects in. Custom resources
/// have no protobuf form, but upstream's CRD handler still lists protobuf
/// (for PartialObjectMetadata and Status errors), so the 406 message and
/// error negotiation are the same everywhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Serializers {
    pub protobuf: bool,
}

const ENCODINGS: [Encoding; 3] = [Encoding::Json, Encoding::Yaml, Encoding::Protobuf];

impl Serializers {
    pub const ALL: Serializers = Serializers { protobuf: true };
    pub const JSON_YAML: Serializers = Serializers { protobuf: false };

    /// upstream's 406 for a non-streaming request.
    pub fn not_acceptable() -> ApiError {
        let listed: Vec<&str> = ENCODINGS.iter().map(|e| e.content_type()).collect();
        ApiError::not_acceptable(&listed.join(", "))
    }

    /// upstream's 406 for a watch: only encodings with a stream framing.
    pub fn not_acceptable_stream() -> ApiError {
        ApiError::not_acceptable(&format!(
            "application/json;stream=watch, {PROTOBUF};stream=watch"
        ))
    }
}

/// One clause of an Accept header.
#[derive(Debug)]
struct Clause<'a> {
    kind: &'a str,
    subtype: &'a str,
    q: f64,
    params: Vec<(&'a str, &'a str)>,
}

/// goautoneg's ParseAccept: clauses sorted by q, then the more specific
/// first, otherwise in the client's order.
fn parse_accept(accept: &str) -> Vec<Clause<'_>> {
    let mut clauses: Vec<Clause<'_>> = accept
        .split(',')
        .filter_map(|r| {
            let mut parts = r.split(';').map(str::trim);
            let mime = parts.next().unwrap_or("");
            let (kind, subtype) = match mime.split_once('/') {
                Some((t, s)) => (t.trim(), s.trim()),
                None if mime == "*" => ("*", "*"),
                None => (mime, "*"),
            };
            if kind.is_empty() {
                return None;
            }
            let mut q = 1.0;
            let mut params = Vec::new();
            for p in parts {
                let Some((k, v)) = p.split_once('=') else {
                    continue;
                };
                let (k, v) = (k.trim(), v.trim().trim_matches('"'));
                if k == "q" {
                    q = v.parse().unwrap_or(0.0);
                } else {
                    params.push((k, v));
                }
            }
            Some(Clause {
                kind,
                subtype,
                q,
                params,
            })
        })
        .collect();
    let rank = |c: &Clause<'_>| (c.kind != "*") as u8 + (c.subtype != "*") as u8;
    clauses.sort_by(|a, b| {
        b.q.partial_cmp(&a.q)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then_with(|| rank(b).cmp(&rank(a)))
    });
    clauses
}

fn matches(c: &Clause<'_>, e: Encoding) -> bool {
    let (t, s) = e
        .content_type()
        .split_once('/')
        .unwrap_or(("application", "json"));
    (c.kind == t && (c.subtype == s || c.subtype == "*")) || (c.kind == "*" && c.subtype == "*")
}

/// upstream's acceptMediaTypeOptions and AllowsMediaTypeTransform: the
/// output a clause asks of an encoding, if the endpoint can give it.
fn accept_clause(
    c: &Clause<'_>,
    e: Encoding,
    include_object: bool,
    stream: bool,
) -> Option<Output> {
    let param = |k: &str| {
        c.params
            .iter()
            .rev()
            .find(|(pk, _)| *pk == k)
            .map(|(_, v)| *v)
    };
    if let Some(s) = param("stream").filter(|s| !s.is_empty()) {
        // YAML has no stream framing; `watch` is the only stream schema.
        if e == Encoding::Yaml || s != "watch" {
            return None;
        }
    }
    if param("sv").is_some_and(|v| !v.is_empty()) {
        return None;
    }
    let convert = ["as", "g", "v"].iter().any(|k| param(k).is_some());
    let transform = if !convert {
        Transform::None
    } else {
        if !matches!(param("g"), Some("meta.k8s.io"))
            || !matches!(param("v"), Some("v1" | "v1beta1"))
        {
            return None;
        }
        match param("as") {
            Some("Table") if e != Encoding::Protobuf => Transform::Table { include_object },
            Some("PartialObjectMetadata" | "PartialObjectMetadataList") => {
                Transform::PartialObjectMetadata
            }
            _ => return None,
        }
    };
    // A watch in YAML is refused even without `stream=watch`.
    if stream && e == Encoding::Yaml {
        return None;
    }
    Some(Output {
        encoding: e,
        transform,
    })
}

/// upstream's NegotiateOutputMediaType: the first clause of the Accept
/// header, by preference, that the endpoint can produce. `include_object`
/// comes from `?includeObject=` for Tables; `stream` is set for watches.
pub fn output(
    accept: Option<&str>,
    include_object: bool,
    serializers: Serializers,
    stream: bool,
) -> Result<Output, ApiError> {
    let refuse = || {
        if stream {
            Serializers::not_acceptable_stream()
        } else {
            Serializers::not_acceptable()
        }
    };
    let Some(accept) = accept.filter(|a| !a.trim().is_empty()) else {
        return Ok(Output::JSON);
    };
    // What most clients send, answered without parsing it.
    if accept == "application/json" {
        return Ok(Output::JSON);
    }
    for c in parse_accept(accept) {
        if c.q <= 0.0 {
            continue;
        }
        for e in ENCODINGS {
            if !matches(&c, e) {
                continue;
            }
            match accept_clause(&c, e, include_object, stream) {
                // upstream's StandardSerializers: no protobuf objects of
                // custom resources.
                Some(o)
                    if o.encoding == Encoding::Protobuf
                        && o.transform == Transform::None
                        && !serializers.protobuf => {}
                Some(o) => return Ok(o),
                None => {}
            }
        }
    }
    Err(refuse())
}

/// The encoding of an error: upstream's `ErrorNegotiated`, which allows no
/// transformation; a Status has a protobuf form on every endpoint.
pub fn error_encoding(accept: Option<&str>) -> Encoding {
    let Some(accept) = accept.filter(|a| !a.trim().is_empty()) else {
        return Encoding::Json;
    };
    for c in parse_accept(accept) {
        // No transformation applies to a Status.
        if c.q <= 0.0 || c.params.iter().any(|(k, _)| matches!(*k, "as" | "g" | "v")) {
            continue;
        }
        for e in ENCODINGS {
            if matches(&c, e) && accept_clause(&c, e, false, false).is_some() {
                return e;
            }
        }
    }
    Encoding::Json
}

/// How a request body is encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyFormat {
    Json,
    Yaml,
    /// `application/vnd.kubernetes.protobuf`, as kubectl's typed clients send.
    Protobuf,
}

pub fn body_format(content_type: Option<&str>) -> Result<BodyFormat, ApiError> {
    // No Content-Type means JSON; one that names no media type (";;;") is
    // what Go's mime.ParseMediaType refuses: 415.
    let given = content_type.map(str::trim).filter(|c| !c.is_empty());
    let mime = given
        .unwrap_or("application/json")
        .split(';')
        .next()
        .unwrap_or("")
        .trim();
    match mime {
        "application/json" | "*/*" => Ok(BodyFormat::Json),
        "application/yaml" | "text/yaml" | "application/x-yaml" => Ok(BodyFormat::Yaml),
        "application/vnd.kubernetes.protobuf" => Ok(BodyFormat::Protobuf),
        _ => Err(ApiError::unsupported_media_type()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out(accept: &str, protobuf: bool) -> Option<Output> {
        output(Some(accept), false, Serializers { protobuf }, false).ok()
    }

    fn enc(e: Encoding) -> Option<Output> {
        Some(Output {
            encoding: e,
            transform: Transform::None,
        })
    }

    #[test]
    fn kubectl_accept_headers() {
        let table = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
        assert_eq!(
            out(table, true),
            Some(Output {
                encoding: Encoding::Json,
                transform: Transform::Table {
                    include_object: false
                }
            })
        );
        assert_eq!(out("application/yaml", true), enc(Encoding::Yaml));
        assert!(out("text/html", true).is_none());
        assert_eq!(
            output(None, false, Serializers::ALL, false).ok(),
            Some(Output::JSON)
        );
        assert_eq!(
            body_format(Some("application/json; charset=utf-8")).ok(),
            Some(BodyFormat::Json)
        );
        assert!(body_format(Some("text/plain")).is_err());
    }

    #[test]
    fn protobuf_for_built_in_kinds_json_fallback_for_custom_ones() {
        let client_go = "application/vnd.kubernetes.protobuf, application/json";
        assert_eq!(out(client_go, true), enc(Encoding::Protobuf));
        assert_eq!(out(client_go, false), enc(Encoding::Json));
        assert!(out(PROTOBUF, false).is_none());
        assert_eq!(
            out("application/vnd.kubernetes.protobuf, */*", true),
            enc(Encoding::Protobuf)
        );
        assert_eq!(out("*/*", true), enc(Encoding::Json));
        assert_eq!(out("application/*", true), enc(Encoding::Json));
    }

    #[test]
    fn q_values_and_specificity_order_the_clauses() {
        assert_eq!(
            out(
                "application/json;q=0.5, application/vnd.kubernetes.protobuf",
                true
            ),
            enc(Encoding::Protobuf)
        );
        assert_eq!(
            out(
                "application/vnd.kubernetes.protobuf;q=0.1, application/json;q=0.9",
                true
            ),
            enc(Encoding::Json)
        );
        assert_eq!(out("*/*, application/yaml", true), enc(Encoding::Yaml));
        assert!(out("application/json;q=0", true).is_none());
    }

    #[test]
    fn transforms_as_upstream_allows_them() {
        let table_pb = "application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io";
        assert!(out(table_pb, true).is_none());
        let pom = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;v=v1;g=meta.k8s.io";
        assert_eq!(
            out(pom, false),
            Some(Output {
                encoding: Encoding::Protobuf,
                transform: Transform::PartialObjectMetadata
            })
        );
        assert!(out("application/json;as=Pod;v=v1;g=", true).is_none());
        assert!(out("application/json;as=Table;v=v2;g=meta.k8s.io", true).is_none());
    }

    #[test]
    fn watches_refuse_yaml() {
        assert!(output(Some("application/yaml"), false, Serializers::ALL, true).is_err());
        assert_eq!(
            output(
                Some("application/vnd.kubernetes.protobuf;stream=watch"),
                false,
                Serializers::ALL,
                true
            )
            .ok(),
            enc(Encoding::Protobuf)
        );
        let e = output(Some("application/yaml"), false, Serializers::ALL, true)
            .err()
            .map(|e| e.message)
            .unwrap_or_default();
        assert!(e.contains("application/json;stream=watch"), "{e}");
    }
}
