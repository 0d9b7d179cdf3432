//! REST handlers: one request on one resource, from the URL and query to
//! the registry and back, with upstream's content negotiation, list and
//! watch framing, Tables and error bodies.

pub mod componentstatus;
pub mod discovery;
pub mod negotiation;
pub mod openapi;
pub mod openapi_pb;
pub mod responses;
pub mod table;

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::Request;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use http::{header, HeaderValue, Method, StatusCode};
use serde_json::{json, Value};

use crate::api::catalog::{Owner, Resource};
use crate::api::request_info::{percent_decode, RequestInfo};
use crate::api::ApiError;
use crate::registry::{
    meta, DeleteOptions, FieldValidation, ListParams, PatchType, Registries, Registry,
    WriteOptions, Written,
};
use crate::storage::cacher::{json_watch_line, WatchMessage};
use crate::storage::store::Preconditions;
use negotiation::{BodyFormat, Encoding, Output, Serializers, Transform};

/// upstream's limit on request bodies.
pub const MAX_BODY_BYTES: usize = 3 * 1024 * 1024;

/// Items above which a list's body is built off the runtime thread.
const BIG_LIST: usize = 500;

/// Serves the resources of one server in the chain.
#[derive(Clone)]
pub struct ResourceHandler {
    pub registries: Registries,
    pub owner: Owner,
    pub stop: tokio_util::sync::CancellationToken,
    pub auth: crate::registry::reviews::AuthContext,
    /// `--min-request-timeout`: a watch without `timeoutSeconds` lasts
    /// between once and twice this, at random, as upstream spreads watch
    /// restarts.
    pub min_request_timeout: std::time::Duration,
}

/// All values of each query parameter.
struct Query(Vec<(String, String)>);

impl Query {
    fn parse(q: Option<&str>) -> Query {
        Query(
            q.unwrap_or("")
                .split('&')
                .filter(|p| !p.is_empty())
                .map(|p| {
                    let (k, v) = p.split_once('=').unwrap_or((p, ""));
                    (percent_decode(k), percent_decode(v))
                })
                .collect(),
        )
    }

    fn get(&self, k: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.as_str())
    }

    fn all(&self, k: &str) -> Vec<&str> {
        self.0
            .iter()
            .filter(|(key, _)| key == k)
            .map(|(_, v)| v.as_str())
            .collect()
    }

    fn flag(&self, k: &str) -> bool {
        self.get(k).is_some_and(|v| v == "true" || v == "1")
    }

    /// The parameters of a list, watch or delete-collection as upstream's
    /// parameter codec decodes them (400 for a value of the wrong type) and
    /// `ValidateListOptions` checks them (422).
    fn list_params(&self, watch: bool) -> Result<ListParams, ApiError> {
        let limit = match self.get("limit") {
            Some(v) => parse_int_param(v)?,
            None => 0,
        };
        for b in ["watch", "allowWatchBookmarks", "sendInitialEvents"] {
            if let Some(v) = self.get(b) {
                parse_bool_param(v)?;
            }
        }
        if let Some(v) = self.get("timeoutSeconds") {
            parse_int_param(v)?;
        }
        let p = ListParams {
            label_selector: self.get("labelSelector").map(String::from),
            field_selector: self.get("fieldSelector").map(String::from),
            limit,
            continue_token: self.get("continue").map(String::from),
            resource_version: self.get("resourceVersion").map(String::from),
            resource_version_match: self.get("resourceVersionMatch").map(String::from),
        };
        let send_initial_events = self
            .get("sendInitialEvents")
            .map(|v| parse_bool_param(v).unwrap_or(false));
        validate_list_options(&p, watch, send_initial_events)?;
        Ok(p)
    }

    /// A boolean parameter; absent is false, a malformed one was refused by
    /// `list_params` already.
    fn bool_param(&self, k: &str) -> bool {
        self.get(k)
            .is_some_and(|v| parse_bool_param(v).unwrap_or(false))
    }
}

/// upstream's `ValidateListOptions` (apimachinery meta/internalversion/validation).
fn validate_list_options(
    p: &ListParams,
    watch: bool,
    send_initial_events: Option<bool>,
) -> Result<(), ApiError> {
    use crate::registry::validation::FieldError;
    let mut errs = Vec::new();
    let rv = p.resource_version.as_deref().unwrap_or("");
    let cont = p.continue_token.as_deref().unwrap_or("");
    let m = p.resource_version_match.as_deref().unwrap_or("");
    if watch {
        if send_initial_events.is_some() && m != "NotOlderThan" {
            errs.push(FieldError::forbidden(
                "resourceVersionMatch",
                "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
            ));
        }
        if send_initial_events.is_some()
            && !crate::component_base::feature_gates::enabled("WatchList")
        {
            errs.push(FieldError::forbidden(
                "sendInitialEvents",
                "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled",
            ));
        }
        if !m.is_empty() {
            if send_initial_events.is_none() {
                errs.push(FieldError::forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
                ));
            }
            if m != "NotOlderThan" {
                errs.push(FieldError::not_supported(
                    "resourceVersionMatch",
                    json!(m),
                    &["NotOlderThan"],
                ));
            }
            if !cont.is_empty() {
                errs.push(FieldError::forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden when continue is provided",
                ));
            }
        }
    } else {
        if !m.is_empty() {
            if rv.is_empty() {
                errs.push(FieldError::forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden unless resourceVersion is provided",
                ));
            }
            if !cont.is_empty() {
                errs.push(FieldError::forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden when continue is provided",
                ));
            }
            if m != "Exact" && m != "NotOlderThan" {
                errs.push(FieldError::not_supported(
                    "resourceVersionMatch",
                    json!(m),
                    &["Exact", "NotOlderThan", ""],
                ));
            }
            if m == "Exact" && rv == "0" {
                errs.push(FieldError::forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
                ));
            }
        }
        if send_initial_events.is_some() {
            errs.push(FieldError::forbidden(
                "sendInitialEvents",
                "sendInitialEvents is forbidden for list",
            ));
        }
    }
    if errs.is_empty() {
        return Ok(());
    }
    Err(ApiError::invalid(
        "meta.k8s.io",
        "ListOptions",
        "",
        errs.iter()
            .map(crate::registry::validation::FieldError::to_cause)
            .collect(),
    ))
}

fn json_response(code: StatusCode, body: Bytes) -> Response {
    responses::json(code, body)
}

/// Which encodings a resource's endpoints produce: custom resources have
/// no protobuf, as upstream.
fn serializers_of(r: &Resource) -> Serializers {
    if r.custom.is_none() && crate::api::protobuf::has_message(&r.api_version(), &r.kind) {
        Serializers::ALL
    } else {
        Serializers::JSON_YAML
    }
}

/// A list's ListMeta as JSON, in Go's order.
fn list_meta(rv: i64, cont: Option<&str>, remaining: Option<i64>) -> Value {
    let mut meta = serde_json::Map::new();
    meta.insert("resourceVersion".into(), json!(rv.to_string()));
    if let Some(c) = cont {
        meta.insert("continue".into(), json!(c));
    }
    if let Some(n) = remaining {
        meta.insert("remainingItemCount".into(), json!(n));
    }
    Value::Object(meta)
}

fn with_warnings(mut resp: Response, warnings: &[String]) -> Response {
    for w in warnings {
        if let Ok(v) = HeaderValue::from_str(&format!("299 - {w:?}")) {
            resp.headers_mut().append(header::WARNING, v);
        }
    }
    resp
}

/// Validates `dryRun`: only `All` is known.
fn dry_run(q: &Query, options_kind: &str) -> Result<bool, ApiError> {
    let values = q.all("dryRun");
    for v in &values {
        if *v != "All" {
            let shown = crate::registry::validation::go_value(&serde_json::json!(values));
            let cause = k8s_openapi::apimachinery::pkg::apis::meta::v1::StatusCause {
                reason: Some("FieldValueNotSupported".into()),
                message: Some(format!(
                    "Unsupported value: {shown}: supported values: \"All\""
                )),
                field: Some("dryRun".into()),
            };
            return Err(ApiError::invalid(
                "meta.k8s.io",
                options_kind,
                "",
                vec![cause],
            ));
        }
    }
    Ok(!values.is_empty())
}

/// upstream's `ValidateFieldValidation`: an unknown value makes the
/// options object invalid (422).
fn field_validation(q: &Query, options_kind: &str) -> Result<FieldValidation, ApiError> {
    match q.get("fieldValidation").unwrap_or("") {
        "" | "Warn" => Ok(FieldValidation::Warn),
        "Strict" => Ok(FieldValidation::Strict),
        "Ignore" => Ok(FieldValidation::Ignore),
        other => Err(ApiError::invalid(
            "meta.k8s.io",
            options_kind,
            "",
            vec![crate::registry::validation::FieldError::not_supported(
                "fieldValidation",
                json!(other),
                &["Ignore", "Strict", "Warn"],
            )
            .to_cause()],
        )),
    }
}

fn write_options(q: &Query, options_kind: &str) -> Result<WriteOptions, ApiError> {
    let field_manager = q.get("fieldManager").map(String::from);
    if let Some(m) = field_manager.as_deref() {
        if let Err(why) = crate::registry::fieldmanager::validate_field_manager(m) {
            let cause =
                crate::registry::validation::FieldError::invalid("fieldManager", json!(m), why)
                    .to_cause();
            return Err(ApiError::invalid(
                "meta.k8s.io",
                options_kind,
                "",
                vec![cause],
            ));
        }
    }
    let force = q.flag("force");
    if force && options_kind != "PatchOptions" {
        let cause = crate::registry::validation::FieldError::forbidden(
            "force",
            "may not be specified for non-apply patch",
        )
        .to_cause();
        return Err(ApiError::invalid(
            "meta.k8s.io",
            options_kind,
            "",
            vec![cause],
        ));
    }
    Ok(WriteOptions {
        dry_run: dry_run(q, options_kind)?,
        field_manager,
        field_validation: field_validation(q, options_kind)?,
        user_agent: None,
        force,
        force_applied: false,
        user: Default::default(),
    })
}

/// Who sent the request, for admission.
fn request_user(req: &Request) -> crate::auth::UserInfo {
    req.extensions()
        .get::<crate::auth::authenticator::Authenticated>()
        .map(|a| a.user.clone())
        .unwrap_or_default()
}

/// The write options of a request, with its User-Agent.
fn request_write_options(
    req: &Request,
    q: &Query,
    options_kind: &str,
) -> Result<WriteOptions, ApiError> {
    let mut o = write_options(q, options_kind)?;
    o.user_agent = req
        .headers()
        .get(header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .map(String::from);
    o.user = request_user(req);
    Ok(o)
}

/// A declared Content-Length over the limit is refused before any of the
/// body is read, as upstream's `limitedReadBody` does: a client that
/// announces 100 MB and sends nothing gets its 413 at once.
pub fn declared_too_large(headers: &http::HeaderMap) -> Option<ApiError> {
    let declared = headers
        .get(header::CONTENT_LENGTH)?
        .to_str()
        .ok()?
        .trim()
        .parse::<u64>()
        .ok()?;
    (declared > MAX_BODY_BYTES as u64).then(|| ApiError::too_large(MAX_BODY_BYTES))
}

async fn read_body(req: Request) -> Result<Bytes, ApiError> {
    if let Some(e) = declared_too_large(req.headers()) {
        return Err(e);
    }
    axum::body::to_bytes(req.into_body(), MAX_BODY_BYTES)
        .await
        .map_err(|e| {
            let text = e.to_string();
            if text.contains("length limit")
                || std::error::Error::source(&e)
                    .is_some_and(|s| s.to_string().contains("length limit"))
            {
                ApiError::too_large(MAX_BODY_BYTES)
            } else {
                ApiError::bad_request(format!("unable to read the request body: {text}"))
            }
        })
}

fn decode_body(bytes: &[u8], format: BodyFormat, expected_kind: &str) -> Result<Value, ApiError> {
    let parsed = match format {
        BodyFormat::Json => serde_json::from_slice::<Value>(bytes)
            .or_else(|e| match std::str::from_utf8(bytes) {
                // Go's decoder turns bytes that are not UTF-8 inside strings
                // into U+FFFD rather than refusing the body.
                Err(_) => serde_json::from_str::<Value>(&String::from_utf8_lossy(bytes)),
                Ok(_) => Err(e),
            })
            .map_err(|e| {
                crate::api::json_syntax::first_error(bytes).unwrap_or_else(|| e.to_string())
            }),
        BodyFormat::Yaml => serde_saphyr::from_slice::<Value>(bytes).map_err(|e| e.to_string()),
        BodyFormat::Protobuf => {
            let opts = crate::api::protobuf::DecodeOptions {
                omit_empty_strings: true,
            };
            crate::api::protobuf::decode_with(bytes, opts).map_err(|e| e.to_string())
        }
    };
    parsed.map_err(|e| {
        let shown: String = String::from_utf8_lossy(bytes).chars().take(64).collect();
        ApiError::bad_request(format!(
            "the object provided is unrecognized (must be of type {expected_kind}): couldn't get version/kind; json parse error: {e} ({shown})"
        ))
    })
}

/// `{"kind":"<X>List","apiVersion":..,"metadata":{..},"items":[..]}` written from stored bytes.
fn list_body(
    r: &Resource,
    items: &[Bytes],
    rv: i64,
    cont: Option<&str>,
    remaining: Option<i64>,
) -> Bytes {
    // ListMeta in Go's order: resourceVersion, continue, remainingItemCount.
    let mut meta = format!("{{\"resourceVersion\":{}", json!(rv.to_string()));
    if let Some(c) = cont {
        meta.push_str(&format!(",\"continue\":{}", json!(c)));
    }
    if let Some(n) = remaining {
        meta.push_str(&format!(",\"remainingItemCount\":{n}"));
    }
    meta.push('}');
    let head = format!(
        "{{\"kind\":{},\"apiVersion\":{},\"metadata\":{meta},\"items\":[",
        json!(r.list_kind),
        json!(r.api_version()),
    );
    let size = head.len() + items.iter().map(|i| i.len() + 1).sum::<usize>() + 2;
    let mut out = Vec::with_capacity(size);
    out.extend_from_slice(head.as_bytes());
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        // Upstream's items of a built-in list carry no kind or apiVersion
        // (the list's TypeMeta says it); custom resources keep theirs.
        match without_type_meta(item).filter(|_| r.custom.is_none()) {
            Some(rest) => {
                out.push(b'{');
                out.extend_from_slice(rest);
            }
            None => out.extend_from_slice(item),
        }
    }
    out.extend_from_slice(b"]}");
    Bytes::from(out)
}

/// An object's JSON after its leading `{"kind":"..","apiVersion":"..",`
/// (as built-ins are written, Go's field order), or `None` when it does not
/// start that way.
fn without_type_meta(item: &[u8]) -> Option<&[u8]> {
    fn string_field<'a>(b: &'a [u8], name: &[u8]) -> Option<&'a [u8]> {
        let rest = b.strip_prefix(name)?;
        // Kind and apiVersion hold no quotes or escapes.
        let end = rest.iter().position(|&c| c == b'"' || c == b'\\')?;
        (rest[end] == b'"').then(|| &rest[end + 1..])
    }
    let rest = string_field(item, b"{\"kind\":\"")?;
    let rest = string_field(rest, b",\"apiVersion\":\"")?;
    rest.strip_prefix(b",")
}

fn status_success(r: &Resource, obj: &[u8]) -> Bytes {
    let v: Value = serde_json::from_slice(obj).unwrap_or(json!({}));
    let mut details = serde_json::Map::new();
    details.insert("name".into(), json!(meta::name(&v)));
    if !r.group.is_empty() {
        details.insert("group".into(), json!(r.group));
    }
    details.insert("kind".into(), json!(r.plural));
    details.insert("uid".into(), json!(meta::str_field(&v, "uid")));
    Bytes::from(crate::api::go_json::to_vec(
        &json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details}),
    ))
}

/// One watch event as the stream carries it: a JSON line, or a
/// length-prefixed protobuf `WatchEvent` frame.
fn watch_event(
    encoding: Encoding,
    event_type: &str,
    object: &Bytes,
) -> Result<Bytes, crate::api::protobuf::EncodeError> {
    if encoding != Encoding::Protobuf {
        return Ok(json_watch_line(event_type, object));
    }
    let v: Value = serde_json::from_slice(object).unwrap_or(Value::Null);
    let encoded = crate::api::protobuf::encode(&v)?;
    Ok(Bytes::from(crate::api::protobuf::watch_frame(
        event_type, &encoded,
    )))
}

/// upstream's `path.IsValidPathSegmentName`, checked where a name from the
/// URL becomes a storage key: `.`, `..`, `/` and `%` have no place there.
fn valid_path_segment_name(name: &str) -> Result<(), ApiError> {
    let mut why = Vec::new();
    if name == "." || name == ".." {
        why.push(format!("may not be '{name}'"));
    }
    for c in ['/', '%'] {
        if name.contains(c) {
            why.push(format!("may not contain '{c}'"));
        }
    }
    if why.is_empty() {
        return Ok(());
    }
    Err(ApiError::bad_request(format!(
        "Name parameter invalid: {name:?}: {}",
        why.join(";")
    )))
}

type MetaDeleteOptions = k8s_openapi::apimachinery::pkg::apis::meta::v1::DeleteOptions;

/// Query parameters decoded as upstream's parameter codec does: a value that
/// does not parse as the field's type is a 400 naming it.
fn delete_options_from_query(q: &Query) -> Result<MetaDeleteOptions, ApiError> {
    let mut o = MetaDeleteOptions::default();
    if let Some(v) = q.get("gracePeriodSeconds") {
        o.grace_period_seconds = Some(parse_int_param(v)?);
    }
    if let Some(v) = q.get("orphanDependents") {
        o.orphan_dependents = Some(parse_bool_param(v)?);
    }
    if let Some(v) = q.get("propagationPolicy") {
        o.propagation_policy = Some(v.to_string());
    }
    let dry: Vec<String> = q.all("dryRun").into_iter().map(String::from).collect();
    if !dry.is_empty() {
        o.dry_run = Some(dry);
    }
    if let Some(v) = q.get("ignoreStoreReadErrorWithClusterBreakingPotential") {
        o.ignore_store_read_error_with_cluster_breaking_potential = Some(parse_bool_param(v)?);
    }
    Ok(o)
}

/// Go's `strconv.ParseInt(v, 10, 64)`, with its error text.
pub(crate) fn parse_int_param(v: &str) -> Result<i64, ApiError> {
    v.parse::<i64>().map_err(|e| {
        let why = match e.kind() {
            std::num::IntErrorKind::PosOverflow | std::num::IntErrorKind::NegOverflow => {
                "value out of range"
            }
            _ => "invalid syntax",
        };
        ApiError::bad_request(format!("strconv.ParseInt: parsing {v:?}: {why}"))
    })
}

/// Go's `strconv.ParseBool`, with its error text.
pub(crate) fn parse_bool_param(v: &str) -> Result<bool, ApiError> {
    match v {
        "1" | "t" | "T" | "true" | "TRUE" | "True" => Ok(true),
        "0" | "f" | "F" | "false" | "FALSE" | "False" => Ok(false),
        _ => Err(ApiError::bad_request(format!(
            "strconv.ParseBool: parsing {v:?}: invalid syntax"
        ))),
    }
}

/// A DeleteOptions body (JSON, YAML or protobuf). Its kind, when given,
/// must be DeleteOptions: anything else is not registered for meta.k8s.io.
fn delete_options_from_body(
    bytes: &[u8],
    format: BodyFormat,
) -> Result<MetaDeleteOptions, ApiError> {
    let v: Value = match format {
        BodyFormat::Json => serde_json::from_slice(bytes).map_err(|e| {
            crate::api::json_syntax::first_error(bytes).unwrap_or_else(|| e.to_string())
        }),
        BodyFormat::Yaml => serde_saphyr::from_slice(bytes).map_err(|e| e.to_string()),
        BodyFormat::Protobuf => crate::api::protobuf::decode_with(
            bytes,
            crate::api::protobuf::DecodeOptions {
                omit_empty_strings: true,
            },
        )
        .map_err(|e| e.to_string()),
    }
    .map_err(|e| {
        ApiError::bad_request(format!("couldn't get version/kind; json parse error: {e}"))
    })?;
    let Value::Object(map) = &v else {
        return Err(ApiError::bad_request(format!(
            "couldn't get version/kind; json parse error: json: cannot unmarshal {} into Go value of type struct {{ APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string \"json:\\\"kind,omitempty\\\"\" }}",
            crate::api::json_type_name(&v)
        )));
    };
    let kind = map.get("kind").and_then(Value::as_str).unwrap_or("");
    if !kind.is_empty() && kind != "DeleteOptions" {
        let version = map
            .get("apiVersion")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .unwrap_or("meta.k8s.io/v1");
        return Err(ApiError::bad_request(format!(
            "no kind {kind:?} is registered for version {version:?} in scheme \"pkg/runtime/scheme.go:100\""
        )));
    }
    serde_json::from_value::<MetaDeleteOptions>(v)
        .map_err(|e| ApiError::bad_request(format!("unable to decode DeleteOptions: {e}")))
}

/// upstream's `ValidateDeleteOptions` (apimachinery meta/v1/validation).
fn validate_delete_options(o: &MetaDeleteOptions) -> Result<(), ApiError> {
    use crate::registry::validation::FieldError;
    let mut errs = Vec::new();
    if let (Some(_), Some(p)) = (o.orphan_dependents, o.propagation_policy.as_ref()) {
        errs.push(FieldError::invalid(
            "propagationPolicy",
            json!(p),
            "orphanDependents and deletionPropagation cannot be both set",
        ));
    }
    if let Some(p) = o.propagation_policy.as_deref() {
        if !matches!(p, "Foreground" | "Background" | "Orphan") {
            errs.push(FieldError::not_supported(
                "propagationPolicy",
                json!(p),
                &["Foreground", "Background", "Orphan", "nil"],
            ));
        }
    }
    let dry = o.dry_run.as_deref().unwrap_or(&[]);
    if dry.len() > 1 || dry.iter().any(|d| d != "All") {
        errs.push(FieldError::not_supported("dryRun", json!(dry), &["All"]));
    }
    if o.ignore_store_read_error_with_cluster_breaking_potential == Some(true) {
        let why = "cannot be set together with ignoreStoreReadErrorWithClusterBreakingPotential";
        if !dry.is_empty() {
            errs.push(FieldError::invalid("dryRun", json!(dry), why));
        }
        if let Some(p) = &o.propagation_policy {
            errs.push(FieldError::invalid("propagationPolicy", json!(p), why));
        }
        if let Some(g) = o.grace_period_seconds.filter(|g| *g != 0) {
            errs.push(FieldError::invalid("gracePeriodSeconds", json!(g), why));
        }
        if o.preconditions.is_some() {
            errs.push(FieldError::invalid(
                "preconditions",
                json!(o.preconditions),
                why,
            ));
        }
    }
    if errs.is_empty() {
        return Ok(());
    }
    Err(ApiError::invalid(
        "meta.k8s.io",
        "DeleteOptions",
        "",
        errs.iter().map(FieldError::to_cause).collect(),
    ))
}

impl ResourceHandler {
    /// Whether this server answers the request.
    pub fn owns(&self, info: &RequestInfo) -> Option<Arc<Resource>> {
        if !info.is_resource_request {
            return None;
        }
        let r = self
            .registries
            .catalog
            .get(&info.api_group, &info.api_version, &info.resource)?;
        (r.owner == self.owner).then_some(r)
    }

    pub async fn serve(&self, req: Request, info: Arc<RequestInfo>) -> Response {
        let encoding = negotiation::error_encoding(
            req.headers()
                .get(header::ACCEPT)
                .and_then(|v| v.to_str().ok()),
        );
        match self.handle(req, &info).await {
            Ok(resp) => resp,
            Err(e) => responses::error(e, encoding),
        }
    }

    /// The route of `r` the request takes (the one `kapi routes` lists),
    /// recorded as the trace's routing stage.
    fn route<'a>(
        &self,
        r: &'a Resource,
        method: &Method,
        info: &RequestInfo,
    ) -> Result<&'a crate::api::routes::Route, ApiError> {
        let began = crate::trace::start();
        let resolved = crate::api::routes::resolve(r, method, info);
        match &resolved {
            Ok(route) => crate::trace::stage(began, "routing", "ok", || {
                json!({
                    "server": route.server,
                    "method": route.method,
                    "route": route.path,
                    "verb": route.verb,
                })
            }),
            Err(refusal) => crate::trace::stage(began, "routing", "error", || {
                json!({
                    "server": crate::api::routes::server_name(self.owner),
                    "method": method.as_str(),
                    "status": refusal.status(),
                    "reason": refusal.reason(),
                })
            }),
        }
        resolved.map_err(crate::api::routes::Refusal::into_error)
    }

    async fn handle(&self, req: Request, info: &RequestInfo) -> Result<Response, ApiError> {
        let registry = self
            .registries
            .get(&info.api_group, &info.api_version, &info.resource)
            .ok_or_else(ApiError::resource_not_found)?;
        let r = registry.resource.clone();
        let q = Query::parse(req.uri().query());
        let accept = req
            .headers()
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .map(String::from);
        let output = negotiation::output(
            accept.as_deref(),
            q.get("includeObject").is_some_and(|v| v == "Object"),
            serializers_of(&r),
            info.verb == "watch",
        )?;
        let route = self.route(&r, req.method(), info)?;
        let ns = info.namespace.as_str();
        if !route.subresource.is_empty() {
            return self
                .subresource(&registry, req, info, &route.subresource, &q, output)
                .await;
        }
        let name = info.name.as_str();
        if !name.is_empty() {
            let decoded = percent_decode(name);
            // An encoded slash makes another path upstream, which no route takes.
            if decoded.contains('/') {
                return Err(ApiError::resource_not_found());
            }
            valid_path_segment_name(&decoded)?;
        }
        if r.kind == "ComponentStatus" && r.group.is_empty() {
            // upstream's deprecation warning for the whole API.
            let warning = ["v1 ComponentStatus is deprecated in v1.19+".to_string()];
            let resp = self
                .component_statuses(&registry, &info.verb, name, output)
                .await?;
            return Ok(with_warnings(resp, &warning));
        }
        match route.verb.as_str() {
            "get" => {
                let obj = crate::trace::request_read(registry.get_object(
                    ns,
                    name,
                    q.get("resourceVersion"),
                ))
                .await?;
                Ok(self.object_response(&registry, StatusCode::OK, obj, output))
            }
            "list" => {
                let params = q.list_params(false)?;
                let list = crate::trace::request_read(registry.list(ns, &params)).await?;
                // A big list's body is CPU work of milliseconds: off the
                // runtime thread, so other requests (a system:masters get
                // during a flood of lists) are not queued behind it.
                let multi_thread = tokio::runtime::Handle::current().runtime_flavor()
                    == tokio::runtime::RuntimeFlavor::MultiThread;
                if multi_thread && list.items.len() > BIG_LIST {
                    Ok(tokio::task::block_in_place(|| {
                        self.list_response(&registry, list, output)
                    }))
                } else {
                    Ok(self.list_response(&registry, list, output))
                }
            }
            "watch" => self.watch(&registry, info, &q, output).await,
            "create" if !r.is_stored() => {
                let user = request_user(&req);
                write_options(&q, "CreateOptions")?;
                let body = self.body(req, &r.kind).await?;
                let (_, decode_warnings) =
                    registry.decode(body.clone(), ns, &WriteOptions::default())?;
                let answer = if r.kind == "Binding" {
                    self.bind(ns, body, &user).await?
                } else {
                    crate::registry::reviews::create(&self.auth, &r.kind, ns, body, &user).await?
                };
                let bytes = Bytes::from(crate::api::go_json::to_vec(&answer));
                Ok(with_warnings(
                    self.object_response(&registry, StatusCode::CREATED, bytes, output),
                    &decode_warnings,
                ))
            }
            "create" => {
                let opts = request_write_options(&req, &q, "CreateOptions")?;
                let (body, dups) = self.strict_body(req, &r, &opts).await?;
                let written = registry.create(ns, body, &opts).await?;
                Ok(with_warnings(
                    self.written(&registry, StatusCode::CREATED, written, output),
                    &dups,
                ))
            }
            "update" => {
                let opts = request_write_options(&req, &q, "UpdateOptions")?;
                let (body, dups) = self.strict_body(req, &r, &opts).await?;
                let written = registry.update(ns, name, body, None, &opts).await?;
                Ok(with_warnings(
                    self.written(&registry, StatusCode::OK, written, output),
                    &dups,
                ))
            }
            "patch" => {
                let (pt, body, opts) = self.patch_parts(req, &q).await?;
                let written = registry.patch(ns, name, pt, &body, None, &opts).await?;
                Ok(self.written(&registry, StatusCode::OK, written, output))
            }
            "delete" => {
                let opts = self.delete_options(req, &q).await?;
                let (obj, gone) = registry.delete(ns, name, &opts).await?;
                if gone && !registry.strategy.returns_deleted_object() {
                    Ok(responses::object(
                        StatusCode::OK,
                        status_success(&r, &obj),
                        output.encoding,
                    ))
                } else {
                    Ok(self.object_response(&registry, StatusCode::OK, obj, output))
                }
            }
            "deletecollection" => {
                let opts = self.delete_options(req, &q).await?;
                let list = registry
                    .delete_collection(ns, &q.list_params(false)?, &opts)
                    .await?;
                let output = Output {
                    encoding: output.encoding,
                    transform: Transform::None,
                };
                Ok(self.list_response(&registry, list, output))
            }
            _ => Err(ApiError::method_not_allowed()),
        }
    }

    async fn body(&self, req: Request, kind: &str) -> Result<Value, ApiError> {
        let format = negotiation::body_format(
            req.headers()
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok()),
        )?;
        let began = crate::trace::start();
        let content_type = began.and_then(|_| {
            req.headers()
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .map(String::from)
        });
        let bytes = read_body(req).await?;
        let decoded = decode_body(&bytes, format, kind);
        crate::trace::result(
            began,
            "read body",
            &decoded,
            || json!({"contentType": content_type.unwrap_or_default(), "bytes": bytes.len()}),
        );
        decoded
    }

    /// A create or update body with strict decoding's duplicate-field check:
    /// refused under `Strict`, the duplicates as warnings under `Warn`.
    async fn strict_body(
        &self,
        req: Request,
        r: &Resource,
        opts: &WriteOptions,
    ) -> Result<(Value, Vec<String>), ApiError> {
        let is_json = matches!(
            negotiation::body_format(
                req.headers()
                    .get(header::CONTENT_TYPE)
                    .and_then(|v| v.to_str().ok())
            ),
            Ok(BodyFormat::Json)
        );
        if !is_json || opts.field_validation == FieldValidation::Ignore {
            return Ok((self.body(req, &r.kind).await?, Vec::new()));
        }
        let (parts, body) = req.into_parts();
        let bytes = read_body(Request::from_parts(parts.clone(), body)).await?;
        let dups: Vec<String> = crate::api::strict::duplicate_fields(&bytes)
            .into_iter()
            .map(|f| format!("json: duplicate field {f:?}"))
            .collect();
        if !dups.is_empty() && opts.field_validation == FieldValidation::Strict {
            return Err(ApiError::bad_request(format!(
                "{} in version {:?} cannot be handled as a {}: strict decoding error: {}",
                r.kind,
                r.version,
                r.kind,
                dups.join(", ")
            )));
        }
        let value = self
            .body(Request::from_parts(parts, Body::from(bytes)), &r.kind)
            .await?;
        Ok((value, dups))
    }

    async fn patch_parts(
        &self,
        req: Request,
        q: &Query,
    ) -> Result<(PatchType, Bytes, WriteOptions), ApiError> {
        let ct = req
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_string();
        let pt = match ct.as_str() {
            "application/json-patch+json" => PatchType::Json,
            "application/merge-patch+json" => PatchType::Merge,
            "application/strategic-merge-patch+json" => PatchType::StrategicMerge,
            "application/apply-patch+yaml" | "application/apply-patch+cbor" => PatchType::Apply,
            _ => {
                return Err(ApiError::new(
                    415,
                    crate::api::Reason::UnsupportedMediaType,
                    format!("the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json (got {ct:?})"),
                ))
            }
        };
        let opts = request_write_options(&req, q, "PatchOptions")?;
        let began = crate::trace::start();
        let body = read_body(req).await?;
        crate::trace::stage(
            began,
            "read body",
            "ok",
            || json!({"contentType": ct, "patchType": format!("{pt:?}"), "bytes": body.len()}),
        );
        Ok((pt, body, opts))
    }

    /// `DeleteOptions` as upstream's delete handler reads them: from the body
    /// when there is one (its query is then ignored), else from the query;
    /// an undecodable body or parameter is 400, an invalid option 422, and
    /// either way nothing is deleted.
    async fn delete_options(&self, req: Request, q: &Query) -> Result<DeleteOptions, ApiError> {
        let content_type = req
            .headers()
            .get(header::CONTENT_TYPE)
            .map(|v| v.to_str().map(String::from))
            .transpose()
            .map_err(|_| ApiError::unsupported_media_type())?;
        let user = request_user(&req);
        let bytes = read_body(req).await?;
        let given = if bytes.is_empty() {
            delete_options_from_query(q)?
        } else {
            let format = negotiation::body_format(content_type.as_deref())?;
            delete_options_from_body(&bytes, format)?
        };
        validate_delete_options(&given)?;
        let preconditions = given.preconditions.clone().unwrap_or_default();
        Ok(DeleteOptions {
            preconditions: Preconditions {
                uid: preconditions.uid,
                resource_version: preconditions.resource_version,
            },
            propagation_policy: given.propagation_policy.clone().or_else(|| {
                given
                    .orphan_dependents
                    .map(|o| if o { "Orphan" } else { "Background" }.to_string())
            }),
            dry_run: given.dry_run.as_ref().is_some_and(|d| !d.is_empty()),
            grace_period_seconds: given.grace_period_seconds,
            user,
        })
    }

    fn written(
        &self,
        registry: &Registry,
        code: StatusCode,
        w: Written,
        output: Output,
    ) -> Response {
        let code = if w.created { StatusCode::CREATED } else { code };
        with_warnings(
            self.object_response(registry, code, w.object, output),
            &w.warnings,
        )
    }

    fn object_response(
        &self,
        registry: &Registry,
        code: StatusCode,
        obj: Bytes,
        output: Output,
    ) -> Response {
        match output.transform {
            Transform::None => responses::object(code, obj, output.encoding),
            Transform::Table { include_object } => {
                let v: Value = serde_json::from_slice(&obj).unwrap_or(json!({}));
                let rv = meta::str_field(&v, "resourceVersion").to_string();
                let t = table::table(registry, &[v], &rv, None, None, include_object);
                responses::object(code, t, output.encoding)
            }
            Transform::PartialObjectMetadata => {
                let v: Value = serde_json::from_slice(&obj).unwrap_or(json!({}));
                responses::value(code, &table::partial(&v), output.encoding)
            }
        }
    }

    fn list_response(
        &self,
        registry: &Registry,
        list: crate::registry::ListOut,
        output: Output,
    ) -> Response {
        let r = &registry.resource;
        let cont = list.continue_token.as_deref();
        match (output.transform, output.encoding) {
            (Transform::None, Encoding::Protobuf) => responses::protobuf_list(
                &r.api_version(),
                &r.kind,
                &r.list_kind,
                &list_meta(list.resource_version, cont, list.remaining_item_count),
                &list.items,
                &list.cached,
            ),
            (Transform::None, encoding) => responses::object(
                StatusCode::OK,
                list_body(
                    r,
                    &list.items,
                    list.resource_version,
                    cont,
                    list.remaining_item_count,
                ),
                encoding,
            ),
            (Transform::Table { include_object }, encoding) => {
                let objs: Vec<Value> = list
                    .items
                    .iter()
                    .filter_map(|b| serde_json::from_slice(b).ok())
                    .collect();
                let t = table::table(
                    registry,
                    &objs,
                    &list.resource_version.to_string(),
                    cont,
                    list.remaining_item_count,
                    include_object,
                );
                responses::object(StatusCode::OK, t, encoding)
            }
            (Transform::PartialObjectMetadata, encoding) => {
                let items: Vec<Value> = list
                    .items
                    .iter()
                    .filter_map(|b| serde_json::from_slice::<Value>(b).ok())
                    .map(|v| table::partial(&v))
                    .collect();
                let meta = list_meta(list.resource_version, cont, list.remaining_item_count);
                if encoding == Encoding::Protobuf {
                    let items: Vec<Bytes> = items
                        .iter()
                        .map(|v| Bytes::from(serde_json::to_vec(v).unwrap_or_default()))
                        .collect();
                    return responses::protobuf_list(
                        "meta.k8s.io/v1",
                        "PartialObjectMetadata",
                        "PartialObjectMetadataList",
                        &meta,
                        &items,
                        &[],
                    );
                }
                let body = json!({"kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1", "metadata": meta, "items": items});
                responses::value(StatusCode::OK, &body, encoding)
            }
        }
    }

    async fn watch(
        &self,
        registry: &Registry,
        info: &RequestInfo,
        q: &Query,
        output: Output,
    ) -> Result<Response, ApiError> {
        let params = q.list_params(true)?;
        let name = (!info.name.is_empty()).then_some(info.name.as_str());
        // A name from the path narrows the watch; one from a field selector is already in `params`.
        let path_name = if info.parts.len() >= 2 { name } else { None };
        // upstream's ListResource: a watch of one named object takes no
        // field selector but one that requires that very name.
        if let (Some(n), Some(sel)) = (path_name, params.field_selector.as_deref()) {
            let selected = sel.split(',').find_map(|t| {
                t.trim()
                    .strip_prefix("metadata.name=")
                    .map(|v| v.trim_start_matches('='))
            });
            if !sel.trim().is_empty() && selected != Some(n) {
                return Err(ApiError::bad_request(
                    "fieldSelector metadata.name doesn't match requested name",
                ));
            }
        }
        // As upstream: 0 or absent means the default; a negative timeout has
        // already passed, so the watch ends at once.
        let timeout = match q.get("timeoutSeconds").map(parse_int_param).transpose()? {
            None | Some(0) => {
                let base = self.min_request_timeout.as_secs_f64();
                (base * (1.0 + rand::random::<f64>())) as u64
            }
            Some(t) if t < 0 => 0,
            Some(t) => t as u64,
        };
        // A timeout past what the clock can hold (a client may send
        // i64::MAX) is as good as never.
        let now = tokio::time::Instant::now();
        let deadline = now
            .checked_add(Duration::from_secs(timeout))
            .unwrap_or_else(|| now + Duration::from_secs(100 * 365 * 86_400));
        let rx = registry
            .watch(
                &info.namespace,
                path_name,
                &params,
                q.bool_param("sendInitialEvents"),
                q.bool_param("allowWatchBookmarks"),
                Some(deadline),
            )
            .await;
        let r = registry.resource.clone();
        let stop = self.stop.clone();
        let table_registry =
            (output.transform != Transform::None).then(|| registry.resource.clone());
        let encoding = output.encoding;
        let (api_version, item_kind) = (
            registry.resource.api_version(),
            registry.resource.kind.clone(),
        );
        let registries = self.registries.clone();
        let converting = crate::registry::conversion::needed(&registry.resource)
            .then(|| {
                registries.get(
                    &registry.resource.group,
                    &registry.resource.version,
                    &registry.resource.plural,
                )
            })
            .flatten();
        let bookmark = move |rv: i64, initial_end: bool| -> Bytes {
            // No `creationTimestamp: null` since v1.34 (omitzero).
            let mut meta = json!({"resourceVersion": rv.to_string()});
            if initial_end {
                meta["annotations"] = json!({"k8s.io/initial-events-end": "true"});
            }
            Bytes::from(crate::api::go_json::to_vec(
                &json!({"kind": r.kind, "apiVersion": r.api_version(), "metadata": meta}),
            ))
        };
        let (tx, body_rx) = tokio::sync::mpsc::channel::<Result<Bytes, std::io::Error>>(64);
        match rx {
            Err(e) if e.code == 410 => {
                // upstream answers an expired watch with one ERROR event, not an HTTP error.
                if let Ok(frame) = watch_event(encoding, "ERROR", &Bytes::from(e.status_json())) {
                    let _ = tx.try_send(Ok(frame));
                }
                drop(tx);
            }
            Err(e) => return Err(e),
            Ok(mut rx) => {
                tokio::spawn(async move {
                    let deadline = tokio::time::sleep_until(deadline);
                    tokio::pin!(deadline);
                    // Cut off by the cache for falling behind: end now, so
                    // its stale backlog is neither sent nor kept.
                    let terminated = rx.terminated().cancelled_owned();
                    tokio::pin!(terminated);
                    loop {
                        let msg = tokio::select! {
                            _ = &mut deadline => break,
                            _ = stop.cancelled() => break,
                            _ = &mut terminated => break,
                            _ = tx.closed() => break,
                            m = rx.recv() => match m { Some(m) => m, None => break },
                        };
                        let encoded = match (&table_registry, &msg) {
                            (Some(res), WatchMessage::Event { kind, object, .. }) => {
                                let Some(reg) =
                                    registries.get(&res.group, &res.version, &res.plural)
                                else {
                                    break;
                                };
                                let v: Value =
                                    serde_json::from_slice(&object.json).unwrap_or(json!({}));
                                let obj = match output.transform {
                                    Transform::PartialObjectMetadata => Bytes::from(
                                        crate::api::go_json::to_vec(&table::partial(&v)),
                                    ),
                                    _ => table::table(
                                        &reg,
                                        &[v],
                                        &object.resource_version.to_string(),
                                        None,
                                        None,
                                        true,
                                    ),
                                };
                                watch_event(encoding, kind.as_str(), &obj)
                            }
                            // The message kept on the cached object serves
                            // every protobuf watcher and list.
                            (None, WatchMessage::Event { kind, object, .. })
                                if converting.is_none() && encoding == Encoding::Protobuf =>
                            {
                                let kept = object.protobuf.get_or_init(|| {
                                    let v: Value =
                                        serde_json::from_slice(&object.json).unwrap_or(Value::Null);
                                    crate::api::protobuf::encode_kind_body(
                                        &api_version,
                                        &item_kind,
                                        &v,
                                    )
                                    .ok()
                                    .map(Bytes::from)
                                });
                                match kept {
                                    Some(body) => {
                                        let enveloped = crate::api::protobuf::envelope(
                                            &api_version,
                                            &item_kind,
                                            body,
                                        );
                                        Ok(Bytes::from(crate::api::protobuf::watch_frame(
                                            kind.as_str(),
                                            &enveloped,
                                        )))
                                    }
                                    None => watch_event(encoding, kind.as_str(), &object.json),
                                }
                            }
                            // One JSON line per event, shared by every
                            // watcher that gets it as this type: a thousand
                            // watchers hold one copy, not a thousand.
                            (
                                None,
                                WatchMessage::Event {
                                    kind,
                                    object,
                                    lines,
                                },
                            ) if converting.is_none() => {
                                let encode = || json_watch_line(kind.as_str(), &object.json);
                                Ok(match lines {
                                    Some(lines) => lines.get_or_encode(*kind, encode),
                                    None => encode(),
                                })
                            }
                            (None, WatchMessage::Event { kind, object, .. }) => {
                                let served = converting.as_ref().map_or_else(
                                    || object.json.clone(),
                                    |reg| reg.served(object.json.clone()),
                                );
                                watch_event(encoding, kind.as_str(), &served)
                            }
                            (_, WatchMessage::Bookmark(rv)) => {
                                watch_event(encoding, "BOOKMARK", &bookmark(*rv, false))
                            }
                            (_, WatchMessage::InitialEventsEnd(rv)) => {
                                watch_event(encoding, "BOOKMARK", &bookmark(*rv, true))
                            }
                        };
                        let line = match encoded {
                            Ok(line) => line,
                            Err(e) => {
                                tracing::warn!(error = %e, "a watch event could not be encoded; the watch ends");
                                break;
                            }
                        };
                        // A client that stops reading must not hold this task
                        // past its timeout or the server's stop.
                        let sent = tokio::select! {
                            r = tx.send(Ok(line)) => r.is_ok(),
                            _ = &mut deadline => false,
                            _ = stop.cancelled() => false,
                            _ = &mut terminated => false,
                        };
                        if !sent {
                            break;
                        }
                    }
                });
            }
        }
        let stream = futures::stream::unfold(body_rx, |mut rx| async move {
            rx.recv().await.map(|item| (item, rx))
        });
        let mut resp = Response::new(Body::from_stream(stream));
        let content_type = match encoding {
            Encoding::Protobuf => "application/vnd.kubernetes.protobuf;stream=watch",
            _ => "application/json",
        };
        resp.headers_mut()
            .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
        resp.headers_mut().insert(
            header::TRANSFER_ENCODING,
            HeaderValue::from_static("chunked"),
        );
        Ok(resp)
    }

    /// componentstatuses: probed on each request, never stored.
    async fn component_statuses(
        &self,
        registry: &Registry,
        verb: &str,
        name: &str,
        output: Output,
    ) -> Result<Response, ApiError> {
        let store = self.registries.store();
        let to_bytes = |v: &Value| Bytes::from(crate::api::go_json::to_vec(v));
        match verb {
            "get" => {
                let v = componentstatus::get(store, name)
                    .await
                    .ok_or_else(|| ApiError::not_found("", "componentstatus", name))?;
                Ok(self.object_response(registry, StatusCode::OK, to_bytes(&v), output))
            }
            "list" => {
                let items: Vec<Bytes> = componentstatus::list(store)
                    .await
                    .iter()
                    .map(to_bytes)
                    .collect();
                if output == Output::JSON {
                    let mut body = b"{\"kind\":\"ComponentStatusList\",\"apiVersion\":\"v1\",\"metadata\":{},\"items\":[".to_vec();
                    for (i, item) in items.iter().enumerate() {
                        if i > 0 {
                            body.push(b',');
                        }
                        body.extend_from_slice(item);
                    }
                    body.extend_from_slice(b"]}");
                    return Ok(json_response(StatusCode::OK, Bytes::from(body)));
                }
                let list = crate::registry::ListOut {
                    items,
                    ..Default::default()
                };
                Ok(self.list_response(registry, list, output))
            }
            _ => Err(ApiError::method_not_allowed()),
        }
    }

    async fn subresource(
        &self,
        registry: &Registry,
        req: Request,
        info: &RequestInfo,
        sub: &str,
        q: &Query,
        output: Output,
    ) -> Result<Response, ApiError> {
        let r = registry.resource.clone();
        let (ns, name) = (info.namespace.as_str(), info.name.as_str());
        match sub {
            // Each takes one part of the object (upstream's status,
            // ephemeral-containers and CSR-approval strategies); a GET is the
            // whole object.
            "status" | "ephemeralcontainers" | "approval" | "resize" => match info.verb.as_str() {
                "get" => Ok(self.object_response(
                    registry,
                    StatusCode::OK,
                    crate::trace::request_read(registry.get_object(
                        ns,
                        name,
                        q.get("resourceVersion"),
                    ))
                    .await?,
                    output,
                )),
                "update" => {
                    let opts = request_write_options(&req, q, "UpdateOptions")?;
                    let body = self.body(req, &r.kind).await?;
                    Ok(self.written(
                        registry,
                        StatusCode::OK,
                        registry.update(ns, name, body, Some(sub), &opts).await?,
                        output,
                    ))
                }
                "patch" => {
                    let (pt, body, opts) = self.patch_parts(req, q).await?;
                    Ok(self.written(
                        registry,
                        StatusCode::OK,
                        registry
                            .patch(ns, name, pt, &body, Some(sub), &opts)
                            .await?,
                        output,
                    ))
                }
                _ => Err(ApiError::method_not_allowed()),
            },
            "scale" => self.scale(registry, req, info, q, output.encoding).await,
            "token" if r.kind == "ServiceAccount" => {
                let body = self.body(req, "TokenRequest").await?;
                let answer = self.token_request(ns, name, body).await?;
                Ok(responses::value(
                    StatusCode::CREATED,
                    &answer,
                    output.encoding,
                ))
            }
            "binding" => {
                let user = request_user(&req);
                let mut body = self.body(req, "Binding").await?;
                let Some(obj) = body.as_object_mut() else {
                    return Err(ApiError::bad_request("a Binding must be a JSON object"));
                };
                let meta = obj.entry("metadata").or_insert_with(|| json!({}));
                if !meta.is_object() {
                    *meta = json!({});
                }
                meta["name"] = json!(name);
                let answer = self.bind(ns, body, &user).await?;
                Ok(responses::value(
                    StatusCode::CREATED,
                    &answer,
                    output.encoding,
                ))
            }
            "eviction" => {
                let user = request_user(&req);
                let body = self.body(req, "Eviction").await?;
                let mut opts = DeleteOptions {
                    dry_run: dry_run(q, "CreateOptions")?,
                    user,
                    ..Default::default()
                };
                opts.preconditions = Preconditions {
                    uid: body["deleteOptions"]["preconditions"]["uid"]
                        .as_str()
                        .map(String::from),
                    resource_version: body["deleteOptions"]["preconditions"]["resourceVersion"]
                        .as_str()
                        .map(String::from),
                };
                // The eviction's own DeleteOptions: grace period, propagation,
                // and a dry run asked in the body or the query (they must
                // agree, as upstream's propagateDryRun).
                let d = &body["deleteOptions"];
                if let Some(g) = d["gracePeriodSeconds"].as_i64() {
                    opts.grace_period_seconds = Some(g);
                }
                opts.propagation_policy = d["propagationPolicy"].as_str().map(String::from);
                let body_dry = d["dryRun"].as_array().is_some_and(|a| !a.is_empty());
                if d["dryRun"].is_array() && q.all("dryRun").is_empty() {
                    opts.dry_run = body_dry;
                } else if d["dryRun"].is_array() && body_dry != opts.dry_run {
                    return Err(ApiError::bad_request(
                        "request dryRun and eviction deleteOptions.dryRun must match",
                    ));
                }
                crate::registry::eviction::evict(&self.registries, ns, name, &opts).await?;
                let ok = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201});
                Ok(responses::value(StatusCode::CREATED, &ok, output.encoding))
            }
            "finalize" => {
                let opts = request_write_options(&req, q, "UpdateOptions")?;
                let body = self.body(req, &r.kind).await?;
                let written = registry
                    .update(ns, name, body, Some("finalize"), &opts)
                    .await?;
                Ok(self.written(registry, StatusCode::OK, written, output))
            }
            "proxy" if r.kind == "Service" && r.group.is_empty() => {
                self.service_proxy_location(ns, name).await
            }
            "proxy" if r.kind == "Pod" && r.group.is_empty() => {
                // upstream's pod ResourceLocation: `name`, `name:port` or
                // `scheme:name:port`; the pod's IP must be one a proxy may
                // dial before anything else is looked at.
                let (pod, _) = split_scheme_name_port(name)?;
                let obj = registry.get_object(ns, pod, None).await?;
                let v: Value = serde_json::from_slice(&obj).unwrap_or(json!({}));
                let ip = v["status"]["podIP"].as_str().unwrap_or("");
                if !ip.parse::<std::net::IpAddr>().is_ok_and(is_global_unicast) {
                    return Err(ApiError::bad_request("address not allowed"));
                }
                Err(ApiError::service_unavailable(format!(
                    "kapi runs no pod network: pods/proxy of {pod} needs to reach {ip}, which this server does not do"
                )))
            }
            "log" | "exec" | "attach" | "portforward" | "proxy" => {
                let obj = registry.get_object(ns, name, None).await?;
                let v: Value = serde_json::from_slice(&obj).unwrap_or(json!({}));
                let node = v["spec"]["nodeName"].as_str().unwrap_or("");
                if r.kind == "Pod" && node.is_empty() {
                    if sub == "log" {
                        // upstream: an unscheduled pod has no log yet.
                        return Ok(StatusCode::NO_CONTENT.into_response());
                    }
                    return Err(ApiError::bad_request(format!(
                        "pod {name} does not have a host assigned"
                    )));
                }
                Err(ApiError::service_unavailable(format!(
                    "kapi runs no kubelets: {}/{sub} of {name} needs a node agent, which this server does not have",
                    r.plural
                )))
            }
            _ => Err(ApiError::new(
                405,
                crate::api::Reason::MethodNotAllowed,
                format!("{}/{sub} is not served by kapi yet", r.plural),
            )),
        }
    }

    /// Where `services/{id}/proxy` goes, as upstream's service
    /// ResourceLocation decides: a numbered port must be one of the
    /// Service's, and its Endpoints must exist and hold an address.
    async fn service_proxy_location(&self, ns: &str, id: &str) -> Result<Response, ApiError> {
        let (name, port) = split_scheme_name_port(id)?;
        if let Ok(number) = port.parse::<i64>() {
            let services = self
                .registries
                .get("", "v1", "services")
                .ok_or_else(ApiError::resource_not_found)?;
            let svc: Value = serde_json::from_slice(&services.get_object(ns, name, None).await?)
                .unwrap_or(json!({}));
            let declared = svc["spec"]["ports"]
                .as_array()
                .is_some_and(|ps| ps.iter().any(|p| p["port"].as_i64() == Some(number)));
            if !declared {
                return Err(ApiError::service_unavailable(format!(
                    "no service port {number} found for service {}",
                    crate::api::go_quote(name)
                )));
            }
        }
        let endpoints = self
            .registries
            .get("", "v1", "endpoints")
            .ok_or_else(ApiError::resource_not_found)?;
        let eps: Value = serde_json::from_slice(&endpoints.get_object(ns, name, None).await?)
            .unwrap_or(json!({}));
        let subsets = eps["subsets"].as_array().cloned().unwrap_or_default();
        let ready = subsets.iter().any(|s| {
            s["addresses"].as_array().is_some_and(|a| !a.is_empty())
                && s["ports"].as_array().is_some_and(|p| !p.is_empty())
        });
        // upstream names the Service when there are no subsets at all, and
        // the whole id when none of them serves the port.
        if !ready {
            let named = if subsets.is_empty() { name } else { id };
            return Err(ApiError::service_unavailable(format!(
                "no endpoints available for service {}",
                crate::api::go_quote(named)
            )));
        }
        Err(ApiError::service_unavailable(format!(
            "kapi does not proxy to services yet: services/{name}/proxy has endpoints, which this server does not dial"
        )))
    }

    async fn scale(
        &self,
        registry: &Registry,
        req: Request,
        info: &RequestInfo,
        q: &Query,
        encoding: Encoding,
    ) -> Result<Response, ApiError> {
        let (ns, name) = (info.namespace.as_str(), info.name.as_str());
        let to_scale = |obj: &Value| -> Value {
            let m = &obj["metadata"];
            let selector = obj["spec"]["selector"]["matchLabels"]
                .as_object()
                .map(|l| {
                    l.iter()
                        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("")))
                        .collect::<Vec<_>>()
                        .join(",")
                })
                .or_else(|| {
                    obj["spec"]["selector"]
                        .as_object()
                        .filter(|_| registry.resource.kind == "ReplicationController")
                        .map(|l| {
                            l.iter()
                                .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("")))
                                .collect::<Vec<_>>()
                                .join(",")
                        })
                })
                .unwrap_or_default();
            // Custom resources name their own paths (subresources.scale).
            let custom = registry
                .resource
                .custom
                .as_ref()
                .and_then(|c| c.scale.clone());
            let (spec_replicas, status_replicas, selector) = match &custom {
                Some(sc) => (
                    crate::api::jsonpath::get(obj, &sc.spec_replicas_path)
                        .and_then(Value::as_i64)
                        .unwrap_or(0),
                    crate::api::jsonpath::get(obj, &sc.status_replicas_path)
                        .and_then(Value::as_i64)
                        .unwrap_or(0),
                    sc.label_selector_path
                        .as_deref()
                        .and_then(|p| crate::api::jsonpath::get(obj, p))
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                ),
                None => (
                    obj["spec"]["replicas"].as_i64().unwrap_or(0),
                    obj["status"]["replicas"].as_i64().unwrap_or(0),
                    selector,
                ),
            };
            json!({
                "kind": "Scale", "apiVersion": "autoscaling/v1",
                "metadata": {"name": m["name"], "namespace": m["namespace"], "uid": m["uid"], "resourceVersion": m["resourceVersion"], "creationTimestamp": m["creationTimestamp"]},
                "spec": {"replicas": spec_replicas},
                "status": {"replicas": status_replicas, "selector": selector}
            })
        };
        let respond = |obj: &Bytes| {
            let v: Value = serde_json::from_slice(obj).unwrap_or(json!({}));
            responses::value(StatusCode::OK, &to_scale(&v), encoding)
        };
        match info.verb.as_str() {
            "get" => Ok(respond(&registry.get_object(ns, name, None).await?)),
            "update" | "patch" => {
                let is_patch = info.verb == "patch";
                // A patch body is JSON or YAML; an update's is any body
                // format, protobuf included.
                let (pt, given, opts) = if is_patch {
                    let (pt, body, opts) = self.patch_parts(req, q).await?;
                    let given: Value = serde_json::from_slice(&body)
                        .or_else(|_| serde_saphyr::from_slice::<Value>(&body))
                        .map_err(|e| {
                            ApiError::bad_request(format!("unable to decode Scale: {e}"))
                        })?;
                    (pt, given, opts)
                } else {
                    let opts = write_options(q, "UpdateOptions")?;
                    (PatchType::Merge, self.body(req, "Scale").await?, opts)
                };
                let current = registry.get_object(ns, name, None).await?;
                let cur: Value = serde_json::from_slice(&current).unwrap_or(json!({}));
                let mut scale = to_scale(&cur);
                if is_patch {
                    match pt {
                        PatchType::Json => {
                            crate::registry::patch::json::apply_request(&mut scale, &given)?
                        }
                        _ => json_patch::merge(&mut scale, &given),
                    }
                } else {
                    scale = given;
                }
                let replicas = scale["spec"]["replicas"].as_i64().unwrap_or(0);
                if replicas < 0 {
                    let cause = crate::registry::validation::FieldError::invalid(
                        "spec.replicas",
                        json!(replicas),
                        "must be greater than or equal to 0",
                    )
                    .to_cause();
                    return Err(ApiError::invalid("autoscaling", "Scale", name, vec![cause]));
                }
                let rv = scale["metadata"]["resourceVersion"]
                    .as_str()
                    .unwrap_or("")
                    .to_string();
                let mut patch = json!({});
                let replicas_path = registry
                    .resource
                    .custom
                    .as_ref()
                    .and_then(|c| c.scale.as_ref())
                    .map_or(".spec.replicas".to_string(), |s| {
                        s.spec_replicas_path.clone()
                    });
                crate::api::jsonpath::set(&mut patch, &replicas_path, json!(replicas));
                if !rv.is_empty() {
                    patch["metadata"] = json!({"resourceVersion": rv});
                }
                let written = registry
                    .patch(
                        ns,
                        name,
                        PatchType::Merge,
                        &serde_json::to_vec(&patch).unwrap_or_default(),
                        Some("scale"),
                        &opts,
                    )
                    .await?;
                Ok(respond(&written.object))
            }
            _ => Err(ApiError::method_not_allowed()),
        }
    }
}

/// How often a bind reads the pod again after a concurrent write.
const BIND_ATTEMPTS: usize = 20;

impl ResourceHandler {
    /// `bindings` and `pods/binding`: assign a pod to a node, once.
    async fn bind(
        &self,
        namespace: &str,
        body: Value,
        user: &crate::auth::UserInfo,
    ) -> Result<Value, ApiError> {
        let opts = WriteOptions {
            user: user.clone(),
            ..Default::default()
        };
        let pod = body["metadata"]["name"].as_str().unwrap_or("").to_string();
        let node = body["target"]["name"].as_str().unwrap_or("").to_string();
        if node.is_empty() {
            let cause =
                crate::registry::validation::FieldError::required("target.name", "").to_cause();
            return Err(ApiError::invalid("", "Binding", &pod, vec![cause]));
        }
        let pods = self
            .registries
            .get("", "v1", "pods")
            .ok_or_else(ApiError::resource_not_found)?;
        // Read, check and write as one compare-and-swap: of two binds of
        // the same pod one wins and the other sees it assigned (upstream's
        // assignPod runs inside GuaranteedUpdate).
        let mut attempts = 0;
        loop {
            attempts += 1;
            let current = pods.get_object(namespace, &pod, None).await?;
            let mut cur: Value = serde_json::from_slice(&current).unwrap_or(json!({}));
            if crate::registry::meta::is_deleting(&cur) {
                return Err(ApiError::conflict(
                    "",
                    "pods/binding",
                    &pod,
                    &format!("pod {pod} is being deleted, cannot be assigned to a host"),
                ));
            }
            if let Some(existing) = cur["spec"]["nodeName"].as_str().filter(|n| !n.is_empty()) {
                return Err(ApiError::conflict(
                    "",
                    "pods/binding",
                    &pod,
                    &format!(
                        "pod {pod} is already assigned to node {}",
                        crate::api::go_quote(existing)
                    ),
                ));
            }
            // The binding subresource takes the node and the annotations
            // only; its UID precondition, when given, must name this pod.
            if let Some(uid) = body["metadata"]["uid"].as_str().filter(|u| !u.is_empty()) {
                if cur["metadata"]["uid"].as_str() != Some(uid) {
                    return Err(ApiError::conflict(
                        "",
                        "pods",
                        &pod,
                        &format!(
                            "Precondition failed: UID in precondition: {uid}, UID in object meta: {}",
                            cur["metadata"]["uid"].as_str().unwrap_or("")
                        ),
                    ));
                }
            }
            cur["spec"]["nodeName"] = json!(node);
            if let Some(ann) = body["metadata"]
                .get("annotations")
                .filter(|a| a.is_object())
            {
                cur["metadata"]["annotations"] = ann.clone();
            }
            // The read's resourceVersion rides along: a write in between
            // answers 409, and the pod is read again.
            match pods
                .update(namespace, &pod, cur, Some("binding"), &opts)
                .await
            {
                Ok(_) => break,
                // A write in between (the only 409 worth another read; a
                // webhook's 409 repeats the same way, so tries are bounded).
                Err(e) if e.code == 409 && attempts < BIND_ATTEMPTS => continue,
                Err(e) => return Err(e),
            }
        }
        Ok(
            json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}),
        )
    }
}

impl ResourceHandler {
    /// `serviceaccounts/<name>/token`: a signed, expiring, optionally bound token.
    async fn token_request(
        &self,
        namespace: &str,
        name: &str,
        body: Value,
    ) -> Result<Value, ApiError> {
        use crate::auth::serviceaccount::{
            Binding, DEFAULT_EXPIRATION_SECONDS, MIN_EXPIRATION_SECONDS,
        };
        use crate::registry::validation::FieldError;
        let issuer = self
            .auth
            .tokens
            .clone()
            .ok_or_else(|| ApiError::internal("token issuing is not configured"))?;
        if body["kind"].as_str().unwrap_or("TokenRequest") != "TokenRequest" {
            return Err(ApiError::bad_request(format!(
                "{} in version {:?} cannot be handled as a TokenRequest",
                body["kind"].as_str().unwrap_or(""),
                body["apiVersion"].as_str().unwrap_or("")
            )));
        }
        let spec = &body["spec"];
        let seconds = spec["expirationSeconds"]
            .as_i64()
            .unwrap_or(DEFAULT_EXPIRATION_SECONDS);
        let invalid = |e: FieldError| {
            ApiError::invalid(
                "authentication.k8s.io",
                "TokenRequest",
                name,
                vec![e.to_cause()],
            )
        };
        if seconds < MIN_EXPIRATION_SECONDS {
            return Err(invalid(FieldError::invalid(
                "spec.expirationSeconds",
                json!(seconds),
                "may not specify a duration less than 10 minutes",
            )));
        }
        if seconds > 1 << 32 {
            return Err(invalid(FieldError::invalid(
                "spec.expirationSeconds",
                json!(seconds),
                "may not specify a duration larger than 2^32 seconds",
            )));
        }
        let sas = self
            .registries
            .get("", "v1", "serviceaccounts")
            .ok_or_else(ApiError::resource_not_found)?;
        let sa: Value = serde_json::from_slice(&sas.get_object(namespace, name, None).await?)
            .unwrap_or(json!({}));
        let sa_uid = sa["metadata"]["uid"].as_str().unwrap_or("").to_string();
        let mut bound = None;
        let bref = &spec["boundObjectRef"];
        if !bref.is_null() {
            let kind = bref["kind"].as_str().unwrap_or("").to_string();
            let plural = match kind.as_str() {
                "Pod" => "pods",
                "Secret" => "secrets",
                "Node" => "nodes",
                _ => {
                    return Err(invalid(FieldError::not_supported(
                        "spec.boundObjectRef.kind",
                        json!(kind),
                        &["Pod", "Secret", "Node"],
                    )))
                }
            };
            let bname = bref["name"].as_str().unwrap_or("").to_string();
            let reg = self
                .registries
                .get("", "v1", plural)
                .ok_or_else(ApiError::resource_not_found)?;
            let obj: Value = serde_json::from_slice(
                &reg.get_object(if plural == "nodes" { "" } else { namespace }, &bname, None)
                    .await?,
            )
            .unwrap_or(json!({}));
            let uid = obj["metadata"]["uid"].as_str().unwrap_or("").to_string();
            if let Some(want) = bref["uid"].as_str().filter(|u| !u.is_empty()) {
                if want != uid {
                    return Err(ApiError::conflict("", plural, &bname, &format!("the UID in the bound object reference ({want}) does not match the UID in record. The object might have been deleted and then recreated")));
                }
            }
            bound = Some(Binding {
                kind,
                name: bname,
                uid,
            });
        }
        let audiences: Vec<String> = spec["audiences"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default();
        let (token, exp) = issuer
            .issue(
                namespace,
                name,
                &sa_uid,
                &audiences,
                seconds,
                bound.as_ref(),
            )
            .map_err(ApiError::internal)?;
        let exp_ts = chrono::DateTime::from_timestamp(exp, 0)
            .map(|t| t.format("%Y-%m-%dT%H:%M:%SZ").to_string())
            .unwrap_or_default();
        let mut out = body.clone();
        out["apiVersion"] = json!("authentication.k8s.io/v1");
        out["kind"] = json!("TokenRequest");
        out["metadata"] = json!({"name": name, "namespace": namespace, "creationTimestamp": crate::registry::meta::now_rfc3339()});
        out["spec"]["audiences"] = json!(if audiences.is_empty() {
            issuer.api_audiences.clone()
        } else {
            audiences
        });
        out["spec"]["expirationSeconds"] = json!(seconds);
        out["status"] = json!({"token": token, "expirationTimestamp": exp_ts});
        Ok(out)
    }
}

/// upstream's `SplitSchemeNamePort`: `name`, `name:port` or
/// `scheme:name:port` (scheme http or https), as a proxy subresource's id.
fn split_scheme_name_port(id: &str) -> Result<(&str, &str), ApiError> {
    let parts: Vec<&str> = id.split(':').collect();
    let (scheme, name, port) = match parts.as_slice() {
        [name] => ("", *name, ""),
        [name, port] => ("", *name, *port),
        [scheme, name, port] => (*scheme, *name, *port),
        _ => ("", "", ""),
    };
    if name.is_empty() || !matches!(scheme, "" | "http" | "https") {
        return Err(ApiError::bad_request(format!(
            "invalid request {}",
            crate::api::go_quote(id)
        )));
    }
    Ok((name, port))
}

/// Go's `net.IP.IsGlobalUnicast`: not unspecified, loopback, multicast,
/// link-local or the IPv4 broadcast address.
fn is_global_unicast(ip: std::net::IpAddr) -> bool {
    match ip {
        std::net::IpAddr::V4(v4) => {
            !(v4.is_unspecified()
                || v4.is_loopback()
                || v4.is_multicast()
                || v4.is_link_local()
                || v4.is_broadcast())
        }
        std::net::IpAddr::V6(v6) => {
            !(v6.is_unspecified()
                || v6.is_loopback()
                || v6.is_multicast()
                || (v6.segments()[0] & 0xffc0) == 0xfe80)
        }
    }
}
