//! CertificateSigningRequest (certificates.k8s.io/v1): upstream's
//! csrStrategy (pkg/registry/certificates/certificates and
//! pkg/apis/certificates/validation), and its `approval` subresource as
//! upstream's csrApprovalStrategy: an update through it changes
//! `status.conditions` and nothing else, stamps the conditions' times, and
//! checks them.

use serde_json::{json, Value};

use super::helpers::{or_none, s};
use super::meta::{self, NameRule};
use super::strategy::{age_column, human_duration, name_column, Column, Strategy};
use super::validation::{self, FieldError};

/// The conditions only one request may carry at a time.
const APPROVED: &str = "Approved";
const DENIED: &str = "Denied";
const FAILED: &str = "Failed";

/// The old CSR with the new one's conditions, their times filled in:
/// `lastUpdateTime` now when missing, `lastTransitionTime` kept from a
/// condition of the same type and status, else now.
pub fn approval_update(new: &Value, old: &Value) -> Value {
    let mut merged = old.clone();
    let now = meta::now_rfc3339();
    let mut conditions = new["status"]["conditions"].clone();
    if let Some(list) = conditions.as_array_mut() {
        for c in list.iter_mut() {
            let previous = old["status"]["conditions"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|p| p["type"] == c["type"]);
            if let Some(m) = c.as_object_mut() {
                if m.get("lastUpdateTime").is_none_or(Value::is_null) {
                    m.insert("lastUpdateTime".into(), json!(now));
                }
                if m.get("lastTransitionTime").is_none_or(Value::is_null) {
                    let kept = previous
                        .filter(|p| p["status"] == m["status"])
                        .map(|p| p["lastTransitionTime"].clone())
                        .filter(|t| !t.is_null());
                    m.insert("lastTransitionTime".into(), kept.unwrap_or(json!(now)));
                }
            }
        }
    }
    if let Some(m) = merged.as_object_mut() {
        let status = m.entry("status").or_insert_with(|| json!({}));
        if let Some(s) = status.as_object_mut() {
            if conditions.is_null() {
                s.remove("conditions");
            } else {
                s.insert("conditions".into(), conditions);
            }
        }
    }
    merged
}

/// upstream's validateConditions for an approval update.
pub fn validate_approval(new: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let path = "status.conditions";
    let list: Vec<&Value> = new["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .collect();
    let mut seen: Vec<&str> = Vec::new();
    for (i, c) in list.iter().enumerate() {
        let at = format!("{path}[{i}]");
        let ty = c["type"].as_str().unwrap_or("");
        if ty.is_empty() {
            errs.push(FieldError::required(format!("{at}.type"), ""));
        }
        let status = c["status"].as_str().unwrap_or("");
        match status {
            "" => errs.push(FieldError::required(format!("{at}.status"), "")),
            "True" | "False" | "Unknown" => {}
            other => errs.push(FieldError::not_supported(
                format!("{at}.status"),
                json!(other),
                &["False", "True", "Unknown"],
            )),
        }
        if matches!(ty, APPROVED | DENIED | FAILED) {
            if !status.is_empty() && status != "True" {
                errs.push(FieldError::not_supported(
                    format!("{at}.status"),
                    json!(status),
                    &["True"],
                ));
            }
            if seen.contains(&ty) {
                errs.push(FieldError::duplicate(format!("{at}.type"), json!(ty)));
            }
            seen.push(ty);
        }
    }
    if seen.contains(&APPROVED) && seen.contains(&DENIED) {
        errs.push(FieldError::invalid(
            path,
            new["status"]["conditions"].clone(),
            "Approved and Denied conditions are mutually exclusive",
        ));
    }
    for ty in [APPROVED, DENIED] {
        let had = old["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| c["type"] == ty);
        if had && !seen.contains(&ty) {
            errs.push(FieldError::forbidden(
                path,
                format!("updates may not remove a condition of type {ty:?}"),
            ));
        }
    }
    errs
}

// ---- the CertificateSigningRequest strategy (upstream's csrStrategy) ----

const LEGACY_UNKNOWN_SIGNER: &str = "kubernetes.io/legacy-unknown";

/// upstream's allValidUsages, in sets.List() (sorted) order.
const VALID_USAGES: [&str; 23] = [
    "any",
    "cert sign",
    "client auth",
    "code signing",
    "content commitment",
    "crl sign",
    "data encipherment",
    "decipher only",
    "digital signature",
    "email protection",
    "encipher only",
    "ipsec end system",
    "ipsec tunnel",
    "ipsec user",
    "key agreement",
    "key encipherment",
    "microsoft sgc",
    "netscape sgc",
    "ocsp signing",
    "s/mime",
    "server auth",
    "signing",
    "timestamping",
];

pub struct CertificateSigningRequestStrategy;

/// What upstream tolerates in an update because the stored object already
/// has it (getValidationOptions); all false on create.
#[derive(Default)]
struct Tolerate {
    both_approved_and_denied: bool,
    legacy_signer: bool,
    duplicate_condition_types: bool,
    empty_condition_type: bool,
    arbitrary_certificate: bool,
    unknown_usages: bool,
    duplicate_usages: bool,
}

fn conditions(csr: &Value) -> Vec<Value> {
    csr["status"]["conditions"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn condition_type(c: &Value) -> &str {
    c["type"].as_str().unwrap_or("")
}

fn has_duplicates<'a>(xs: impl Iterator<Item = &'a str>) -> bool {
    let mut seen: Vec<&str> = Vec::new();
    for x in xs {
        if seen.contains(&x) {
            return true;
        }
        seen.push(x);
    }
    false
}

fn usages(csr: &Value) -> Vec<String> {
    super::helpers::strings(&csr["spec"]["usages"])
}

/// A `[]byte` field's bytes: JSON carries them as base64; `None` when absent.
fn bytes_field(v: &Value) -> Option<Vec<u8>> {
    use base64::Engine;
    let s = v.as_str()?;
    Some(
        base64::engine::general_purpose::STANDARD
            .decode(s)
            .unwrap_or_else(|_| s.as_bytes().to_vec()),
    )
}

impl Tolerate {
    fn for_update(new: &Value, old: &Value) -> Self {
        let old_conditions = conditions(old);
        let has = |t: &str| old_conditions.iter().any(|c| condition_type(c) == t);
        let old_usages = usages(old);
        let old_cert = bytes_field(&old["status"]["certificate"]).unwrap_or_default();
        let new_cert = bytes_field(&new["status"]["certificate"]).unwrap_or_default();
        Tolerate {
            both_approved_and_denied: has(APPROVED) && has(DENIED),
            legacy_signer: old["spec"]["signerName"].as_str() == Some(LEGACY_UNKNOWN_SIGNER),
            duplicate_condition_types: has_duplicates(old_conditions.iter().map(condition_type)),
            empty_condition_type: old_conditions.iter().any(|c| condition_type(c).is_empty()),
            arbitrary_certificate: new_cert == old_cert || check_certificate(&old_cert).is_err(),
            unknown_usages: old_usages
                .iter()
                .any(|u| !VALID_USAGES.contains(&u.as_str())),
            duplicate_usages: has_duplicates(old_usages.iter().map(String::as_str)),
        }
    }
}

/// Go's `%#v` of a `[]byte`, which is how upstream quotes a bad request.
fn go_bytes(b: Option<&[u8]>) -> String {
    match b {
        None => "[]byte(nil)".into(),
        Some(b) => {
            let inner: Vec<String> = b.iter().map(|x| format!("{x:#x}")).collect();
            format!("[]byte{{{}}}", inner.join(", "))
        }
    }
}

/// One PEM block as Go's encoding/pem decodes it.
struct PemBlock {
    label: String,
    has_headers: bool,
    der: Vec<u8>,
}

/// Go's getLine: up to the next newline, trailing spaces, tabs and CRs trimmed.
fn get_line(data: &[u8]) -> (&[u8], &[u8]) {
    let (line, rest) = match data.iter().position(|b| *b == b'\n') {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &data[data.len()..]),
    };
    let end = line
        .iter()
        .rposition(|b| !matches!(b, b' ' | b'\t' | b'\r'))
        .map_or(0, |i| i + 1);
    (&line[..end], rest)
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Go's pem.Decode: the first well-formed block and what follows it.
fn pem_decode(data: &[u8]) -> Option<(PemBlock, &[u8])> {
    use base64::Engine;
    const START: &[u8] = b"\n-----BEGIN ";
    const END: &[u8] = b"\n-----END ";
    const DASHES: &[u8] = b"-----";
    let mut rest = data;
    loop {
        if rest.starts_with(&START[1..]) {
            rest = &rest[START.len() - 1..];
        } else {
            let i = find(rest, START)?;
            rest = &rest[i + START.len()..];
        }
        let (type_line, after) = get_line(rest);
        rest = after;
        let Some(label) = type_line.strip_suffix(DASHES) else {
            continue;
        };
        let mut has_headers = false;
        loop {
            if rest.is_empty() {
                return None;
            }
            let (line, next) = get_line(rest);
            if !line.contains(&b':') {
                break;
            }
            has_headers = true;
            rest = next;
        }
        let (end, trailer_at) = if !has_headers && rest.starts_with(&END[1..]) {
            (0, END.len() - 1)
        } else {
            match find(rest, END) {
                Some(i) => (i, i + END.len()),
                None => continue,
            }
        };
        let trailer = &rest[trailer_at..];
        let trailer_len = label.len() + DASHES.len();
        if trailer.len() < trailer_len {
            continue;
        }
        let (head, tail) = trailer.split_at(trailer_len);
        if !head.starts_with(label) || !head.ends_with(DASHES) || !get_line(tail).0.is_empty() {
            continue;
        }
        let body: Vec<u8> = rest[..end]
            .iter()
            .copied()
            .filter(|b| !matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
            .collect();
        let Ok(der) = base64::engine::general_purpose::STANDARD.decode(&body) else {
            continue;
        };
        let (_, after) = get_line(&rest[end + END.len() - 1..]);
        let block = PemBlock {
            label: String::from_utf8_lossy(label).into_owned(),
            has_headers,
            der,
        };
        return Some((block, after));
    }
}

/// Go's error text for DER that does not parse (encoding/asn1's wording).
fn asn1_error(e: &x509_parser::nom::Err<x509_parser::error::X509Error>) -> String {
    match e {
        x509_parser::nom::Err::Incomplete(_) => "asn1: syntax error: data truncated".into(),
        x509_parser::nom::Err::Error(x) | x509_parser::nom::Err::Failure(x) => {
            format!("asn1: structure error: {x}")
        }
    }
}

/// upstream's validateCSR: a PEM CERTIFICATE REQUEST whose signature verifies.
fn check_request(pem: &[u8]) -> Result<(), String> {
    use x509_parser::prelude::FromDer;
    let block = pem_decode(pem)
        .map(|(b, _)| b)
        .filter(|b| b.label == "CERTIFICATE REQUEST")
        .ok_or_else(|| "PEM block type must be CERTIFICATE REQUEST".to_string())?;
    let (rest, csr) =
        x509_parser::certification_request::X509CertificationRequest::from_der(&block.der)
            .map_err(|e| asn1_error(&e))?;
    if !rest.is_empty() {
        return Err("asn1: syntax error: trailing data".into());
    }
    let algorithm = csr.signature_algorithm.algorithm.to_id_string();
    csr.verify_signature().map_err(|e| match e {
        x509_parser::error::X509Error::SignatureUnsupportedAlgorithm => {
            "x509: cannot verify signature: algorithm unimplemented".to_string()
        }
        // Go's wording per key type: RSA (PKCS#1 v1.5 and PSS), ECDSA, Ed25519.
        _ if algorithm.starts_with("1.2.840.113549.1.1.") => {
            "crypto/rsa: verification error".into()
        }
        _ if algorithm.starts_with("1.2.840.10045.4.") => "x509: ECDSA verification failure".into(),
        _ => "x509: Ed25519 verification failure".into(),
    })
}

/// upstream's validateCertificate for `status.certificate`.
fn check_certificate(mut pem: &[u8]) -> Result<(), String> {
    use x509_parser::prelude::FromDer;
    if pem.is_empty() {
        return Ok(());
    }
    let mut blocks = 0;
    while let Some((block, rest)) = pem_decode(pem) {
        if block.label != "CERTIFICATE" {
            return Err(format!(
                "only CERTIFICATE PEM blocks are allowed, found {:?}",
                block.label
            ));
        }
        if block.has_headers {
            return Err("no PEM block headers are permitted".into());
        }
        blocks += 1;
        let mut der: &[u8] = &block.der;
        if der.is_empty() {
            return Err("found CERTIFICATE PEM block containing 0 certificates".into());
        }
        while !der.is_empty() {
            let (rest, _) = x509_parser::certificate::X509Certificate::from_der(der)
                .map_err(|e| format!("x509: malformed certificate: {}", asn1_error(&e)))?;
            der = rest;
        }
        pem = rest;
    }
    if blocks == 0 {
        return Err("must contain at least one CERTIFICATE PEM block".into());
    }
    Ok(())
}

/// upstream's ValidateSignerName.
pub fn validate_signer_name(path: &str, name: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if name.is_empty() {
        errs.push(FieldError::required(path, ""));
        return errs;
    }
    let segments: Vec<&str> = name.split('/').collect();
    if segments.len() != 2 {
        errs.push(FieldError::invalid(
            path,
            json!(name),
            "must be a fully qualified domain and path of the form 'example.com/signer-name'",
        ));
        return errs;
    }
    let (domain, rest) = (segments[0], segments[1]);
    if domain.len() > 253 {
        errs.push(FieldError::too_long(path, 253));
    }
    let labels: Vec<&str> = domain.split('.').collect();
    for l in &labels {
        let msgs = validation::dns1123_label(l);
        if !msgs.is_empty() {
            for m in msgs {
                errs.push(FieldError::invalid(
                    path,
                    json!(domain),
                    format!("validating label {l:?}: {m}"),
                ));
            }
            break;
        }
    }
    if labels.len() < 2 {
        errs.push(FieldError::invalid(
            path,
            json!(domain),
            "should be a domain with at least two segments separated by dots",
        ));
    }
    for l in rest.split('.') {
        let msgs = validation::dns1123_subdomain(l);
        if !msgs.is_empty() {
            for m in msgs {
                errs.push(FieldError::invalid(
                    path,
                    json!(rest),
                    format!("validating label {l:?}: {m}"),
                ));
            }
            break;
        }
    }
    let max = 253 + (253 + 63 + 1) + 1;
    if name.len() > max {
        errs.push(FieldError::too_long(path, max));
    }
    errs
}

/// upstream's validateConditions.
fn validate_conditions(csr: &Value, t: &Tolerate, errs: &mut Vec<FieldError>) {
    let mut seen: Vec<String> = Vec::new();
    let (mut approved, mut denied) = (false, false);
    for (i, c) in conditions(csr).iter().enumerate() {
        let at = format!("status.conditions[{i}]");
        let ty = condition_type(c);
        if !t.empty_condition_type && ty.is_empty() {
            errs.push(FieldError::required(format!("{at}.type"), ""));
        }
        let status = c["status"].as_str().unwrap_or("");
        let allowed: &[&str] = if matches!(ty, APPROVED | DENIED | FAILED) {
            &["True"]
        } else {
            &["False", "True", "Unknown"]
        };
        if status.is_empty() {
            errs.push(FieldError::required(format!("{at}.status"), ""));
        } else if !allowed.contains(&status) {
            errs.push(FieldError::not_supported(
                format!("{at}.status"),
                json!(status),
                allowed,
            ));
        }
        if !t.both_approved_and_denied {
            let clash = match ty {
                APPROVED => {
                    approved = true;
                    denied
                }
                DENIED => {
                    denied = true;
                    approved
                }
                _ => false,
            };
            if clash {
                errs.push(FieldError::invalid(
                    format!("{at}.type"),
                    json!(ty),
                    "Approved and Denied conditions are mutually exclusive",
                ));
            }
        }
        if !t.duplicate_condition_types {
            if seen.iter().any(|x| x == ty) {
                errs.push(FieldError::duplicate(format!("{at}.type"), json!(ty)));
            }
            seen.push(ty.to_string());
        }
    }
}

/// upstream's validateCertificateSigningRequest.
fn validate_csr(csr: &Value, t: &Tolerate) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let spec = &csr["spec"];
    let request = bytes_field(&spec["request"]);
    if let Err(e) = check_request(request.as_deref().unwrap_or_default()) {
        errs.push(super::helpers::invalid_raw(
            "spec.request",
            &go_bytes(request.as_deref()),
            &e,
        ));
    }
    let us = usages(csr);
    if us.is_empty() {
        errs.push(FieldError::required("spec.usages", ""));
    }
    if !t.unknown_usages {
        for (i, u) in us.iter().enumerate() {
            if !VALID_USAGES.contains(&u.as_str()) {
                errs.push(FieldError::not_supported(
                    format!("spec.usages[{i}]"),
                    json!(u),
                    &VALID_USAGES,
                ));
            }
        }
    }
    if !t.duplicate_usages {
        for (i, u) in us.iter().enumerate() {
            if us[..i].contains(u) {
                errs.push(FieldError::duplicate(format!("spec.usages[{i}]"), json!(u)));
            }
        }
    }
    let signer = spec["signerName"].as_str().unwrap_or("");
    if !t.legacy_signer && signer == LEGACY_UNKNOWN_SIGNER {
        errs.push(FieldError::invalid(
            "spec.signerName",
            json!(signer),
            "the legacy signerName is not allowed via this API version",
        ));
    } else {
        errs.extend(validate_signer_name("spec.signerName", signer));
    }
    if let Some(secs) = spec["expirationSeconds"].as_i64().filter(|s| *s < 600) {
        errs.push(FieldError::invalid(
            "spec.expirationSeconds",
            json!(secs),
            "may not specify a duration less than 600 seconds (10 minutes)",
        ));
    }
    validate_conditions(csr, t, &mut errs);
    if !t.arbitrary_certificate {
        let cert = bytes_field(&csr["status"]["certificate"]).unwrap_or_default();
        if let Err(e) = check_certificate(&cert) {
            errs.push(FieldError::invalid(
                "status.certificate",
                json!("<certificate data>"),
                e,
            ));
        }
    }
    errs
}

/// What an update may not do to the conditions and the certificate. Only
/// the status subresource changes status (the main resource keeps the
/// stored one), so these are the status update's rules.
fn validate_status_changes(new: &Value, old: &Value, errs: &mut Vec<FieldError>) {
    let (new_c, old_c) = (conditions(new), conditions(old));
    let count = |cs: &[Value], t: &str| cs.iter().filter(|c| condition_type(c) == t).count();
    for t in [APPROVED, DENIED, FAILED] {
        if count(&new_c, t) < count(&old_c, t) {
            errs.push(FieldError::forbidden(
                "status.conditions",
                format!("updates may not remove a condition of type {t:?}"),
            ));
        }
    }
    for t in [APPROVED, DENIED] {
        let (n, o) = (count(&new_c, t), count(&old_c, t));
        let of = |cs: &[Value]| -> Vec<Value> {
            cs.iter()
                .filter(|c| condition_type(c) == t)
                .cloned()
                .collect()
        };
        if n > o {
            errs.push(FieldError::forbidden(
                "status.conditions",
                format!("updates may not add a condition of type {t:?}"),
            ));
        } else if n == o && of(&new_c) != of(&old_c) {
            errs.push(FieldError::forbidden(
                "status.conditions",
                format!("updates may not modify a condition of type {t:?}"),
            ));
        }
    }
    let new_cert = bytes_field(&new["status"]["certificate"]).unwrap_or_default();
    let old_cert = bytes_field(&old["status"]["certificate"]).unwrap_or_default();
    if new_cert != old_cert && !old_cert.is_empty() {
        errs.push(FieldError::forbidden(
            "status.certificate",
            "updates may not modify existing certificate content",
        ));
    }
}

/// upstream's extractCSRStatus.
fn csr_condition_cell(o: &Value) -> Value {
    let cs = conditions(o);
    let has = |t: &str| cs.iter().any(|c| condition_type(c) == t);
    let mut status = if has(DENIED) {
        "Denied".to_string()
    } else if has(APPROVED) {
        "Approved".to_string()
    } else {
        "Pending".to_string()
    };
    if has(FAILED) {
        status.push_str(",Failed");
    }
    if o["status"]["certificate"]
        .as_str()
        .is_some_and(|c| !c.is_empty())
    {
        status.push_str(",Issued");
    }
    json!(status)
}

static CSR_COLUMNS: std::sync::LazyLock<Vec<Column>> = std::sync::LazyLock::new(|| {
    vec![
        name_column(),
        age_column(),
        Column { name: "SignerName", kind: "string", format: "", description: "Requested signer for the request. It is a qualified name in the form: `scope-hostname.io/name`. If empty, it will be defaulted:\n 1. If it's a kubelet client certificate, it is assigned\n    \"kubernetes.io/kube-apiserver-client-kubelet\".\n 2. If it's a kubelet serving certificate, it is assigned\n    \"kubernetes.io/kubelet-serving\".\n 3. Otherwise, it is assigned \"kubernetes.io/legacy-unknown\".\nDistribution of trust for signers happens out of band. You can select on this field using `spec.signerName`.", priority: 0, cell: |o| or_none(s(&o["spec"], "signerName")) },
        Column { name: "Requestor", kind: "string", format: "", description: "Base64-encoded PKCS#10 CSR data", priority: 0, cell: |o| json!(s(&o["spec"], "username")) },
        Column { name: "RequestedDuration", kind: "string", format: "", description: "expirationSeconds is the requested duration of validity of the issued certificate. The certificate signer may issue a certificate with a different validity duration so a client must check the delta between the notBefore and and notAfter fields in the issued certificate to determine the actual duration.\n\nThe v1.22+ in-tree implementations of the well-known Kubernetes signers will honor this field as long as the requested duration is not greater than the maximum duration they will honor per the --cluster-signing-duration CLI flag to the Kubernetes controller manager.\n\nCertificate signers may not honor this field for various reasons:\n\n  1. Old signer that is unaware of the field (such as the in-tree\n     implementations prior to v1.22)\n  2. Signer whose configured maximum is shorter than the requested duration\n  3. Signer whose configured minimum is longer than the requested duration\n\nThe minimum valid value for expirationSeconds is 600, i.e. 10 minutes.", priority: 0, cell: |o| {
            json!(o["spec"]["expirationSeconds"].as_i64().map_or("<none>".to_string(), human_duration))
        } },
        Column { name: "Condition", kind: "string", format: "", description: "Conditions applied to the request, such as approval or denial.", priority: 0, cell: csr_condition_cell },
    ]
});

impl Strategy for CertificateSigningRequestStrategy {
    /// The request records who asked: the fields a client sent are
    /// replaced by the authenticated user's.
    fn prepare_for_create_by(&self, obj: &mut Value, user: &crate::authentication::UserInfo) {
        let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) else {
            return;
        };
        for f in ["username", "uid", "groups", "extra"] {
            spec.remove(f);
        }
        if !user.name.is_empty() {
            spec.insert("username".into(), json!(user.name));
        }
        if !user.uid.is_empty() {
            spec.insert("uid".into(), json!(user.uid));
        }
        if !user.groups.is_empty() {
            spec.insert("groups".into(), json!(user.groups));
        }
        if !user.extra.is_empty() {
            spec.insert("extra".into(), json!(user.extra));
        }
    }

    /// ValidateCertificateRequestName accepts any name: only the generic path-segment rule applies.
    fn name_rule(&self) -> NameRule {
        NameRule::PathSegment
    }

    /// The requester's identity is the server's to set (upstream fills it
    /// from the request's user, which strategies here are not given), and
    /// upstream's CSR has no generation.
    fn prepare_for_create(&self, obj: &mut Value) {
        if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
            for f in ["username", "uid", "groups", "extra"] {
                spec.remove(f);
            }
        }
        meta::meta_mut(obj).remove("generation");
    }

    /// An update of the main resource changes neither spec nor status.
    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        if let Some(m) = new.as_object_mut() {
            for f in ["spec", "status"] {
                match old.get(f) {
                    Some(v) => m.insert(f.into(), v.clone()),
                    None => m.remove(f),
                };
            }
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_csr(obj, &Tolerate::default())
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = validate_csr(new, &Tolerate::for_update(new, old));
        validate_status_changes(new, old, &mut errs);
        errs
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&CSR_COLUMNS)
    }
}

#[cfg(test)]
mod tests;
