//! The scale subresource over HTTP: the request's Scale (or patch of it)
//! read and handed to [`crate::registry::scale`], the answer encoded.

use axum::extract::Request;
use axum::response::Response;
use http::StatusCode;
use serde_json::Value;

use super::negotiation::Encoding;
use super::query::{write_options, Query};
use super::{responses, ResourceHandler};
use crate::api::request_info::RequestInfo;
use crate::api::ApiError;
use crate::registry::scale::{self, Change};
use crate::registry::Registry;

impl ResourceHandler {
    pub(super) async fn scale(
        &self,
        registry: &Registry,
        req: Request,
        info: &RequestInfo,
        q: &Query,
        encoding: Encoding,
    ) -> Result<Response, ApiError> {
        let (ns, name) = (info.namespace.as_str(), info.name.as_str());
        let answer = match info.verb.as_str() {
            "get" => scale::get(registry, ns, name).await?,
            "patch" => {
                // A patch body is JSON or YAML.
                let (pt, body, opts) = self.patch_parts(req, q).await?;
                let given: Value = serde_json::from_slice(&body)
                    .or_else(|_| serde_saphyr::from_slice::<Value>(&body))
                    .map_err(|e| ApiError::bad_request(format!("unable to decode Scale: {e}")))?;
                let change = Change::Patch(pt, given);
                scale::write(registry, ns, name, change, &opts).await?
            }
            "update" => {
                // An update's body is any body format, protobuf included.
                let opts = write_options(q, "UpdateOptions")?;
                let given = self.body(req, "Scale").await?;
                scale::write(registry, ns, name, Change::Update(given), &opts).await?
            }
            _ => return Err(ApiError::method_not_allowed()),
        };
        Ok(responses::value(StatusCode::OK, &answer, encoding))
    }
}
