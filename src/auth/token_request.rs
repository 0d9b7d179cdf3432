//! `serviceaccounts/<name>/token`: TokenRequest (upstream's
//! `serviceaccount/storage/token.go`), a signed, expiring, optionally bound
//! service account token from the server's issuer.

use serde_json::{json, Value};

use super::reviews::AuthContext;
use crate::api::ApiError;
use crate::registry::Registries;

/// `serviceaccounts/<name>/token`: a signed, expiring, optionally bound token.
pub async fn create(
    ctx: &AuthContext,
    registries: &Registries,
    namespace: &str,
    name: &str,
    body: Value,
) -> Result<Value, ApiError> {
    use crate::auth::serviceaccount::{
        Binding, DEFAULT_EXPIRATION_SECONDS, MIN_EXPIRATION_SECONDS,
    };
    use crate::registry::validation::FieldError;
    let issuer = ctx
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
    let sas = registries
        .get("", "v1", "serviceaccounts")
        .ok_or_else(ApiError::resource_not_found)?;
    let sa: Value =
        serde_json::from_slice(&sas.get_object(namespace, name, None).await?).unwrap_or(json!({}));
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
        let reg = registries
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
    // Never stored, so never created: no creationTimestamp (a zero one,
    // which v1.34's omitzero leaves out).
    out["metadata"] = json!({"name": name, "namespace": namespace});
    out["spec"]["audiences"] = json!(if audiences.is_empty() {
        issuer.api_audiences.clone()
    } else {
        audiences
    });
    out["spec"]["expirationSeconds"] = json!(seconds);
    out["status"] = json!({"token": token, "expirationTimestamp": exp_ts});
    Ok(out)
}
