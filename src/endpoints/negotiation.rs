//! Content negotiation: which representation a client accepts and which
//! body formats a request carries, as upstream's negotiation package decides.

use crate::api::ApiError;

/// What the response should be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    Json,
    Yaml,
    Table { include_object: bool },
    PartialObjectMetadata,
}

/// One media range of an Accept header.
struct MediaRange<'a> {
    mime: &'a str,
    params: Vec<(&'a str, &'a str)>,
}

fn parse_ranges(accept: &str) -> Vec<MediaRange<'_>> {
    accept
        .split(',')
        .map(|r| {
            let mut parts = r.split(';').map(str::trim);
            let mime = parts.next().unwrap_or("");
            let params = parts
                .filter_map(|p| p.split_once('='))
                .map(|(k, v)| (k.trim(), v.trim()))
                .collect();
            MediaRange { mime, params }
        })
        .collect()
}

/// Picks the first representation of the Accept header kapi can produce.
/// `include_object` comes from `?includeObject=` for Tables.
pub fn output(accept: Option<&str>, include_object: bool) -> Result<Output, ApiError> {
    let Some(accept) = accept.filter(|a| !a.trim().is_empty()) else {
        return Ok(Output::Json);
    };
    for r in parse_ranges(accept) {
        let param = |k: &str| r.params.iter().find(|(pk, _)| *pk == k).map(|(_, v)| *v);
        let json_like = matches!(
            r.mime,
            "application/json" | "*/*" | "application/*" | "json"
        );
        match param("as") {
            Some("Table")
                if json_like
                    && param("g") == Some("meta.k8s.io")
                    && matches!(param("v"), Some("v1") | Some("v1beta1")) =>
            {
                return Ok(Output::Table { include_object });
            }
            Some("PartialObjectMetadata") | Some("PartialObjectMetadataList")
                if json_like
                    && param("g") == Some("meta.k8s.io")
                    && matches!(param("v"), Some("v1") | Some("v1beta1")) =>
            {
                return Ok(Output::PartialObjectMetadata);
            }
            Some(_) => continue,
            None => {}
        }
        if json_like {
            return Ok(Output::Json);
        }
        if matches!(r.mime, "application/yaml" | "text/yaml") {
            return Ok(Output::Yaml);
        }
    }
    Err(ApiError::not_acceptable())
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

    #[test]
    fn kubectl_accept_headers() {
        let table = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
        assert_eq!(
            output(Some(table), false).ok(),
            Some(Output::Table {
                include_object: false
            })
        );
        assert_eq!(
            output(Some("application/vnd.kubernetes.protobuf, */*"), false).ok(),
            Some(Output::Json)
        );
        assert_eq!(
            output(Some("application/yaml"), false).ok(),
            Some(Output::Yaml)
        );
        assert!(output(Some("text/html"), false).is_err());
        assert_eq!(output(None, false).ok(), Some(Output::Json));
        assert_eq!(
            body_format(Some("application/json; charset=utf-8")).ok(),
            Some(BodyFormat::Json)
        );
        assert!(body_format(Some("text/plain")).is_err());
    }
}
