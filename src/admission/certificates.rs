//! upstream's certificates admission plugins (plugin/pkg/admission/certificates):
//! CertificateApproval (`approve` on the signer to change a CSR's approval),
//! CertificateSigning (`sign` on the signer to write its certificate) and
//! CertificateSubjectRestriction (no `system:masters` client certificates
//! from the kube-apiserver-client signer). All three only validate.

use std::sync::Arc;

use serde_json::Value;

use super::common::forbidden;
use super::{Attributes, Context, Operation, ValidatingPlugin};
use crate::api::ApiError;
use crate::auth::authorizer::{Attributes as AuthzAttributes, Authorizer, Decision};
use crate::auth::UserInfo;

pub const GROUP: &str = "certificates.k8s.io";
const CSRS: &str = "certificatesigningrequests";
/// certificatesv1.KubeAPIServerClientSignerName.
pub const KUBE_APISERVER_CLIENT_SIGNER: &str = "kubernetes.io/kube-apiserver-client";

fn is_csr(a: &Attributes<'_>) -> bool {
    a.resource.group == GROUP && a.resource.plural == CSRS
}

fn signer_name(csr: &Value) -> &str {
    csr["spec"]["signerName"].as_str().unwrap_or("")
}

/// The authorizer's decision, asked again once the policy index has caught
/// up when it does not allow: a role granted by the previous request must
/// count here as it does in the request's own authorization.
///
/// kapi's own controllers (the garbage collector...) write in-process as a
/// user with no name, which no request can be; upstream's run as service
/// accounts its bootstrap policy grants what these checks ask, so they are
/// allowed here.
pub(crate) async fn decide(authz: &dyn Authorizer, attrs: &AuthzAttributes<'_>) -> Decision {
    if attrs.user.is_some_and(|u| u.name.is_empty()) {
        return Decision::Allow("kapi's in-process controllers".into());
    }
    let first = authz.authorize_async(attrs).await;
    if matches!(first, Decision::Allow(_)) {
        return first;
    }
    authz.settle().await;
    authz.authorize_async(attrs).await
}

/// upstream's IsAuthorizedForSignerName: `verb` on the `signers` resource
/// named `signer`, or on `<domain>/*`.
async fn authorized_for_signer(
    authz: &dyn Authorizer,
    user: &UserInfo,
    verb: &str,
    signer: &str,
) -> bool {
    let wildcard = format!("{}/*", signer.split('/').next().unwrap_or(""));
    for name in [signer, wildcard.as_str()] {
        let attrs = AuthzAttributes {
            user: Some(user),
            verb,
            resource_request: true,
            api_group: GROUP,
            api_version: "*",
            resource: "signers",
            name,
            ..Default::default()
        };
        if matches!(decide(authz, &attrs).await, Decision::Allow(_)) {
            return true;
        }
    }
    false
}

/// Go's `%T` of a missing object, for upstream's "expected type" refusals.
fn expected_csr(a: &Attributes<'_>) -> ApiError {
    forbidden(a, "expected type CertificateSigningRequest, got: <nil>")
}

pub struct CertificateApproval {
    pub authorizer: Arc<dyn Authorizer>,
}

#[async_trait::async_trait]
impl ValidatingPlugin for CertificateApproval {
    fn name(&self) -> &'static str {
        "CertificateApproval"
    }

    async fn validate(&self, a: &Attributes<'_>, _ctx: &Context) -> Result<Vec<String>, ApiError> {
        if a.operation != Operation::Update || a.subresource != "approval" || !is_csr(a) {
            return Ok(Vec::new());
        }
        // The old object's signer: the approval endpoint cannot change it,
        // and a request trying to must not pick the signer it is judged by.
        let old = a.old_object.ok_or_else(|| expected_csr(a))?;
        let signer = signer_name(old);
        if !authorized_for_signer(self.authorizer.as_ref(), a.user, "approve", signer).await {
            return Err(forbidden(
                a,
                format!(
                    "user not permitted to approve requests with signerName {}",
                    crate::api::go_quote(signer)
                ),
            ));
        }
        Ok(Vec::new())
    }
}

pub struct CertificateSigning {
    pub authorizer: Arc<dyn Authorizer>,
}

/// Go's DeepEqual of two `[]byte` fields: a missing field (nil) differs
/// from an empty one.
fn same_bytes(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::String(x), Value::String(y)) => decode_bytes(x) == decode_bytes(y),
        _ => a == b,
    }
}

/// A `[]byte` field's bytes: JSON carries them as base64 (raw text when it
/// is not, as the registry reads it).
fn decode_bytes(s: &str) -> Vec<u8> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD
        .decode(s)
        .unwrap_or_else(|_| s.as_bytes().to_vec())
}

/// Semantic equality of two lists: a missing list and an empty one are equal.
fn same_list(a: &Value, b: &Value) -> bool {
    let empty = |v: &Value| v.is_null() || v.as_array().is_some_and(Vec::is_empty);
    (empty(a) && empty(b)) || a == b
}

#[async_trait::async_trait]
impl ValidatingPlugin for CertificateSigning {
    fn name(&self) -> &'static str {
        "CertificateSigning"
    }

    async fn validate(&self, a: &Attributes<'_>, _ctx: &Context) -> Result<Vec<String>, ApiError> {
        if a.operation != Operation::Update || a.subresource != "status" || !is_csr(a) {
            return Ok(Vec::new());
        }
        let old = a.old_object.ok_or_else(|| expected_csr(a))?;
        let new = a.object.as_ref().ok_or_else(|| expected_csr(a))?;
        let (os, ns) = (&old["status"], &new["status"]);
        if same_bytes(&os["certificate"], &ns["certificate"])
            && same_list(&os["conditions"], &ns["conditions"])
        {
            return Ok(Vec::new());
        }
        let signer = signer_name(old);
        if !authorized_for_signer(self.authorizer.as_ref(), a.user, "sign", signer).await {
            return Err(forbidden(
                a,
                format!(
                    "user not permitted to sign requests with signerName {}",
                    crate::api::go_quote(signer)
                ),
            ));
        }
        Ok(Vec::new())
    }
}

pub struct CertificateSubjectRestriction {
    pub authorizer: Arc<dyn Authorizer>,
}

#[async_trait::async_trait]
impl ValidatingPlugin for CertificateSubjectRestriction {
    fn name(&self) -> &'static str {
        "CertificateSubjectRestriction"
    }

    async fn validate(&self, a: &Attributes<'_>, _ctx: &Context) -> Result<Vec<String>, ApiError> {
        if a.operation != Operation::Create || !a.subresource.is_empty() || !is_csr(a) {
            return Ok(Vec::new());
        }
        let csr = a.object.as_ref().ok_or_else(|| expected_csr(a))?;
        if signer_name(csr) != KUBE_APISERVER_CLIENT_SIGNER {
            return Ok(Vec::new());
        }
        let subject = parse_csr(&csr["spec"]["request"])
            .map_err(|e| forbidden(a, format!("failed to parse CSR: {e}")))?;
        if subject.organizations.iter().any(|o| o == "system:masters") {
            return Err(forbidden(
                a,
                format!(
                    "use of {KUBE_APISERVER_CLIENT_SIGNER} signer with system:masters group is not allowed"
                ),
            ));
        }
        Ok(Vec::new())
    }
}

/// The parts of a certificate request's subject the plugins look at, as
/// Go's pkix.Name fills them: every O, and the last CN.
#[derive(Debug, Default, PartialEq)]
pub struct Subject {
    pub common_name: String,
    pub organizations: Vec<String>,
}

/// upstream's certificates.ParseCSR over `spec.request` (base64 of a PEM
/// CERTIFICATE REQUEST), with Go's error texts where kapi can match them.
pub fn parse_csr(request: &Value) -> Result<Subject, String> {
    use x509_parser::certification_request::X509CertificationRequest;
    use x509_parser::prelude::FromDer;
    let pem = request.as_str().map(decode_bytes).unwrap_or_default();
    let der = first_pem_block(&pem)
        .filter(|(label, _)| label == "CERTIFICATE REQUEST")
        .map(|(_, der)| der)
        .ok_or_else(|| "PEM block type must be CERTIFICATE REQUEST".to_string())?;
    let (rest, csr) = X509CertificationRequest::from_der(&der).map_err(|e| match e {
        x509_parser::nom::Err::Incomplete(_) => "asn1: syntax error: data truncated".to_string(),
        x509_parser::nom::Err::Error(x) | x509_parser::nom::Err::Failure(x) => {
            format!("asn1: structure error: {x}")
        }
    })?;
    if !rest.is_empty() {
        return Err("asn1: syntax error: trailing data".into());
    }
    let name = &csr.certification_request_info.subject;
    Ok(Subject {
        common_name: name
            .iter_common_name()
            .filter_map(attribute_text)
            .last()
            .unwrap_or_default(),
        organizations: name
            .iter_organization()
            .filter_map(attribute_text)
            .collect(),
    })
}

/// A name attribute's text for the string types Go's asn1 decodes (x509-parser
/// reads all but BMPString and T61String).
fn attribute_text(attr: &x509_parser::x509::AttributeTypeAndValue<'_>) -> Option<String> {
    use x509_parser::asn1_rs::Tag;
    if let Ok(s) = attr.as_str() {
        return Some(s.to_string());
    }
    let raw = attr.as_slice();
    match attr.attr_value().tag() {
        Tag::BmpString => {
            let units: Vec<u16> = raw
                .chunks_exact(2)
                .map(|c| u16::from_be_bytes([c[0], c[1]]))
                .collect();
            String::from_utf16(&units).ok()
        }
        Tag::T61String => Some(raw.iter().map(|b| char::from(*b)).collect()),
        _ => None,
    }
}

/// Go's pem.Decode, reduced to what the plugins need: the first block
/// whose BEGIN and END lines agree and whose body is base64, as its label
/// and bytes (header lines skipped).
fn first_pem_block(data: &[u8]) -> Option<(String, Vec<u8>)> {
    use base64::Engine;
    const BEGIN: &[u8] = b"-----BEGIN ";
    let text = data;
    let mut from = 0;
    while from < text.len() {
        let at = find(&text[from..], BEGIN)? + from;
        from = at + BEGIN.len();
        if at != 0 && text[at - 1] != b'\n' {
            continue;
        }
        let line_end = find(&text[from..], b"\n").map_or(text.len(), |i| from + i);
        let type_line = trim_end(&text[from..line_end]);
        let Some(label) = type_line.strip_suffix(b"-----") else {
            continue;
        };
        let body_start = (line_end + 1).min(text.len());
        let mut end_marker = b"\n-----END ".to_vec();
        end_marker.extend_from_slice(label);
        end_marker.extend_from_slice(b"-----");
        let end = if text[body_start..].starts_with(&end_marker[1..]) {
            body_start
        } else {
            match find(&text[body_start..], &end_marker) {
                Some(i) => body_start + i,
                None => continue,
            }
        };
        let body: Vec<u8> = text[body_start..end]
            .split(|b| *b == b'\n')
            .filter(|l| !l.contains(&b':'))
            .flatten()
            .copied()
            .filter(|b| !b.is_ascii_whitespace())
            .collect();
        let Ok(der) = base64::engine::general_purpose::STANDARD.decode(&body) else {
            continue;
        };
        return Some((String::from_utf8_lossy(label).into_owned(), der));
    }
    None
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn trim_end(line: &[u8]) -> &[u8] {
    let end = line
        .iter()
        .rposition(|b| !matches!(b, b' ' | b'\t' | b'\r'))
        .map_or(0, |i| i + 1);
    &line[..end]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn request_for(cn: &str, orgs: &[&str]) -> Value {
        use base64::Engine;
        let mut params = rcgen::CertificateParams::default();
        params.distinguished_name = rcgen::DistinguishedName::new();
        for o in orgs {
            params
                .distinguished_name
                .push(rcgen::DnType::OrganizationName, *o);
        }
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, cn);
        let key = rcgen::KeyPair::generate().expect("key");
        let pem = params
            .serialize_request(&key)
            .expect("csr")
            .pem()
            .expect("pem");
        json!(base64::engine::general_purpose::STANDARD.encode(pem))
    }

    #[test]
    fn subject_of_a_request() {
        let s = parse_csr(&request_for("system:node:n1", &["system:masters"])).expect("parses");
        assert_eq!(s.common_name, "system:node:n1");
        assert_eq!(s.organizations, vec!["system:masters"]);
        let s = parse_csr(&request_for("bob", &[])).expect("parses");
        assert!(s.organizations.is_empty());
    }

    #[test]
    fn requests_that_are_not_pem() {
        for bad in [json!(null), json!("aGk="), json!("")] {
            assert_eq!(
                parse_csr(&bad),
                Err("PEM block type must be CERTIFICATE REQUEST".to_string())
            );
        }
        use base64::Engine;
        let cert = "-----BEGIN CERTIFICATE-----\naGk=\n-----END CERTIFICATE-----\n";
        let v = json!(base64::engine::general_purpose::STANDARD.encode(cert));
        assert_eq!(
            parse_csr(&v),
            Err("PEM block type must be CERTIFICATE REQUEST".to_string())
        );
        let junk = "-----BEGIN CERTIFICATE REQUEST-----\naGk=\n-----END CERTIFICATE REQUEST-----\n";
        let v = json!(base64::engine::general_purpose::STANDARD.encode(junk));
        assert!(parse_csr(&v).expect_err("not DER").starts_with("asn1: "));
    }

    #[test]
    fn pem_blocks_as_go_finds_them() {
        let text = b"junk\n-----BEGIN A-----\nno end\n-----BEGIN B-----\naGk=\n-----END B-----\n";
        assert_eq!(
            first_pem_block(text),
            Some(("B".to_string(), b"hi".to_vec()))
        );
        assert_eq!(
            first_pem_block(b"-----BEGIN A-----\n-----END A-----"),
            Some(("A".into(), vec![]))
        );
        assert_eq!(
            first_pem_block(b"x-----BEGIN A-----\naGk=\n-----END A-----"),
            None
        );
    }

    #[test]
    fn byte_and_list_equality() {
        assert!(same_bytes(&json!(null), &json!(null)));
        assert!(!same_bytes(&json!(null), &json!("")));
        assert!(same_bytes(&json!("aGk="), &json!("aGk=")));
        assert!(same_list(&json!(null), &json!([])));
        assert!(!same_list(&json!(null), &json!([{"type": "Approved"}])));
    }
}
