//! Unit tests of the CertificateSigningRequest strategy and its approval
//! subresource.

use super::*;

#[test]
fn only_conditions_change_and_get_their_times() {
    let old = json!({"spec": {"signerName": "s"}, "status": {"certificate": "Y2VydA=="}});
    let new = json!({"spec": {"signerName": "changed"}, "status": {"conditions": [{"type": "Approved", "status": "True"}]}});
    let got = approval_update(&new, &old);
    assert_eq!(got["spec"]["signerName"], "s");
    assert_eq!(got["status"]["certificate"], "Y2VydA==");
    let c = &got["status"]["conditions"][0];
    assert!(c["lastUpdateTime"].is_string() && c["lastTransitionTime"].is_string());
    assert!(validate_approval(&got, &old).is_empty());
}

#[test]
fn approved_and_denied_exclude_each_other() {
    let new = json!({"status": {"conditions": [
        {"type": "Approved", "status": "True"}, {"type": "Denied", "status": "True"}]}});
    let errs = validate_approval(&new, &json!({}));
    assert!(
        errs.iter().any(|e| e.field == "status.conditions"),
        "{errs:?}"
    );
}

fn csr_pem() -> String {
    let key = rcgen::KeyPair::generate().expect("key");
    let params = rcgen::CertificateParams::new(vec!["node.example".into()]).expect("params");
    params
        .serialize_request(&key)
        .expect("csr")
        .pem()
        .expect("pem")
}

fn b64(b: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(b)
}

fn csr(spec: Value) -> Value {
    json!({"metadata": {"name": "c"}, "spec": spec})
}

fn msgs(v: Vec<FieldError>) -> Vec<(String, String)> {
    v.into_iter()
        .map(|e| (e.field.clone(), e.message()))
        .collect()
}

#[test]
fn a_signed_request_is_valid() {
    let o = csr(
        json!({"request": b64(csr_pem().as_bytes()), "signerName": "example.com/signer",
        "usages": ["digital signature", "client auth"], "expirationSeconds": 600}),
    );
    assert!(
        CertificateSigningRequestStrategy.validate(&o).is_empty(),
        "{:?}",
        CertificateSigningRequestStrategy.validate(&o)
    );
}

#[test]
fn the_request_must_be_a_verified_pem_csr() {
    let s = CertificateSigningRequestStrategy;
    let base = json!({"signerName": "example.com/s", "usages": ["any"]});
    let mut o = csr(base.clone());
    assert_eq!(
        msgs(s.validate(&o)),
        [(
            "spec.request".to_string(),
            "Invalid value: []byte(nil): PEM block type must be CERTIFICATE REQUEST".to_string()
        )]
    );
    o["spec"]["request"] = json!(b64(b"hi"));
    assert_eq!(
        msgs(s.validate(&o))[0].1,
        "Invalid value: []byte{0x68, 0x69}: PEM block type must be CERTIFICATE REQUEST"
    );
    o["spec"]["request"] = json!("");
    assert_eq!(
        msgs(s.validate(&o))[0].1,
        "Invalid value: []byte{}: PEM block type must be CERTIFICATE REQUEST"
    );
    // A certificate is not a request.
    let key = rcgen::KeyPair::generate().expect("key");
    let cert = rcgen::CertificateParams::new(vec!["x".into()])
        .expect("p")
        .self_signed(&key)
        .expect("cert");
    o["spec"]["request"] = json!(b64(cert.pem().as_bytes()));
    assert!(msgs(s.validate(&o))[0]
        .1
        .ends_with(": PEM block type must be CERTIFICATE REQUEST"));
    // A signature that does not verify.
    let pem = csr_pem();
    let (_, der) = x509_parser::pem::parse_x509_pem(pem.as_bytes()).expect("pem");
    let mut der = der.contents;
    let last = der.len() - 3;
    der[last] ^= 0xff;
    let tampered = format!(
        "-----BEGIN CERTIFICATE REQUEST-----\n{}\n-----END CERTIFICATE REQUEST-----\n",
        b64(&der)
    );
    o["spec"]["request"] = json!(b64(tampered.as_bytes()));
    assert!(
        msgs(s.validate(&o))[0]
            .1
            .ends_with(": x509: ECDSA verification failure"),
        "{:?}",
        msgs(s.validate(&o))
    );
    // Not DER inside.
    let junk = format!(
        "-----BEGIN CERTIFICATE REQUEST-----\n{}\n-----END CERTIFICATE REQUEST-----\n",
        b64(b"junk")
    );
    o["spec"]["request"] = json!(b64(junk.as_bytes()));
    assert!(msgs(s.validate(&o))[0].1.contains(": asn1: "));
}

#[test]
fn usages_signer_and_expiration() {
    let s = CertificateSigningRequestStrategy;
    let req = b64(csr_pem().as_bytes());
    let o = csr(
        json!({"request": req, "signerName": "kubernetes.io/legacy-unknown", "expirationSeconds": 599}),
    );
    assert_eq!(msgs(s.validate(&o)), [
        ("spec.usages".to_string(), "Required value".to_string()),
        ("spec.signerName".into(), "Invalid value: \"kubernetes.io/legacy-unknown\": the legacy signerName is not allowed via this API version".into()),
        ("spec.expirationSeconds".into(), "Invalid value: 599: may not specify a duration less than 600 seconds (10 minutes)".into()),
    ]);
    let o = csr(json!({"request": req, "usages": ["fly", "any", "any"]}));
    let got = msgs(s.validate(&o));
    assert_eq!(got[0].0, "spec.usages[0]");
    assert!(
        got[0].1.starts_with(
            "Unsupported value: \"fly\": supported values: \"any\", \"cert sign\", \"client auth\""
        ),
        "{}",
        got[0].1
    );
    assert!(got[0]
        .1
        .ends_with("\"s/mime\", \"server auth\", \"signing\", \"timestamping\""));
    assert_eq!(
        got[1],
        (
            "spec.usages[2]".to_string(),
            "Duplicate value: \"any\"".to_string()
        )
    );
    assert_eq!(
        got[2],
        ("spec.signerName".to_string(), "Required value".to_string())
    );
}

#[test]
fn signer_names() {
    let one = |n: &str| msgs(validate_signer_name("spec.signerName", n));
    assert!(one("example.com/my-signer").is_empty());
    assert!(one("example.com/ns.name").is_empty());
    assert_eq!(one("nodomain"), [("spec.signerName".to_string(), "Invalid value: \"nodomain\": must be a fully qualified domain and path of the form 'example.com/signer-name'".to_string())]);
    assert_eq!(one("local/x"), [("spec.signerName".to_string(), "Invalid value: \"local\": should be a domain with at least two segments separated by dots".to_string())]);
    let got = one("Ex.com/Bad");
    assert_eq!(got.len(), 2, "{got:?}");
    assert!(got[0].1.starts_with(
        "Invalid value: \"Ex.com\": validating label \"Ex\": a lowercase RFC 1123 label"
    ));
    assert!(got[1].1.starts_with(
        "Invalid value: \"Bad\": validating label \"Bad\": a lowercase RFC 1123 subdomain"
    ));
    let long = format!("example.com/{}", "a".repeat(600));
    let got = one(&long);
    assert_eq!(
        got.last().map(|e| e.1.as_str()),
        Some("Too long: may not be more than 571 bytes")
    );
}

#[test]
fn create_and_update_rules() {
    let s = CertificateSigningRequestStrategy;
    let mut o = json!({"metadata": {"name": "c", "generation": 1}, "spec": {"username": "mallory", "uid": "1", "groups": ["system:masters"], "extra": {"a": ["b"]}, "signerName": "example.com/s"}});
    s.prepare_for_create(&mut o);
    assert_eq!(o["spec"], json!({"signerName": "example.com/s"}));
    assert!(o["metadata"].get("generation").is_none());
    assert_eq!(s.name_rule(), NameRule::PathSegment);
    let old = csr(
        json!({"request": b64(csr_pem().as_bytes()), "signerName": "example.com/s", "usages": ["any"], "username": "alice"}),
    );
    let mut new = csr(json!({"signerName": "example.com/other"}));
    new["status"] = json!({"certificate": "eA=="});
    s.prepare_for_update(&mut new, &old);
    assert_eq!(new["spec"], old["spec"]);
    assert!(new.get("status").is_none());
    assert!(s.validate_update(&new, &old).is_empty());
    // Through the status subresource: conditions and certificate rules.
    let mut approved = old.clone();
    approved["status"] = json!({"conditions": [{"type": "Approved", "status": "True"}]});
    let mut removed = old.clone();
    removed["status"] = json!({"conditions": []});
    assert_eq!(
        msgs(s.validate_update(&removed, &approved)),
        [(
            "status.conditions".to_string(),
            "Forbidden: updates may not remove a condition of type \"Approved\"".to_string()
        )]
    );
    assert_eq!(
        msgs(s.validate_update(&approved, &old)),
        [(
            "status.conditions".to_string(),
            "Forbidden: updates may not add a condition of type \"Approved\"".to_string()
        )]
    );
    let mut garbage = approved.clone();
    garbage["status"]["certificate"] = json!(b64(b"not a cert"));
    assert_eq!(msgs(s.validate_update(&garbage, &approved)), [("status.certificate".to_string(), "Invalid value: \"<certificate data>\": must contain at least one CERTIFICATE PEM block".to_string())]);
    let key = rcgen::KeyPair::generate().expect("key");
    let cert = rcgen::CertificateParams::new(vec!["x".into()])
        .expect("p")
        .self_signed(&key)
        .expect("cert");
    let mut issued = approved.clone();
    issued["status"]["certificate"] = json!(b64(cert.pem().as_bytes()));
    assert!(
        s.validate_update(&issued, &approved).is_empty(),
        "{:?}",
        s.validate_update(&issued, &approved)
    );
    let mut reissued = issued.clone();
    let cert2 = rcgen::CertificateParams::new(vec!["y".into()])
        .expect("p")
        .self_signed(&key)
        .expect("cert");
    reissued["status"]["certificate"] = json!(b64(cert2.pem().as_bytes()));
    assert_eq!(
        msgs(s.validate_update(&reissued, &issued)),
        [(
            "status.certificate".to_string(),
            "Forbidden: updates may not modify existing certificate content".to_string()
        )]
    );
    let mut both = approved.clone();
    both["status"]["conditions"] = json!([{"type": "Approved", "status": "True"}, {"type": "Denied", "status": "False"}, {"type": "Approved", "status": "True"}, {"status": "True"}]);
    let fields: Vec<(String, String)> = msgs(validate_csr(&both, &Tolerate::default()))
        .into_iter()
        .collect();
    assert_eq!(
        fields,
        [
            (
                "status.conditions[1].status".to_string(),
                "Unsupported value: \"False\": supported values: \"True\"".to_string()
            ),
            (
                "status.conditions[1].type".into(),
                "Invalid value: \"Denied\": Approved and Denied conditions are mutually exclusive"
                    .into()
            ),
            (
                "status.conditions[2].type".into(),
                "Invalid value: \"Approved\": Approved and Denied conditions are mutually exclusive"
                    .into()
            ),            (
                "status.conditions[2].type".into(),
                "Duplicate value: \"Approved\"".into()
            ),
            ("status.conditions[3].type".into(), "Required value".into()),
        ]
    );
}

#[test]
fn pem_blocks_as_go_decodes_them() {
    let data = b"junk\n-----BEGIN FOO-----\nA: b\n\naGk=\n-----END FOO-----\ntail";
    let (block, rest) = pem_decode(data).expect("block");
    assert_eq!(
        (
            block.label.as_str(),
            block.has_headers,
            block.der.as_slice()
        ),
        ("FOO", true, &b"hi"[..])
    );
    assert_eq!(rest, b"tail");
    assert!(pem_decode(b"-----BEGIN FOO-----\naGk=\n-----END BAR-----\n").is_none());
    assert_eq!(
        check_certificate(b"-----BEGIN FOO-----\naGk=\n-----END FOO-----\n"),
        Err("only CERTIFICATE PEM blocks are allowed, found \"FOO\"".to_string())
    );
}

#[test]
fn csr_cells() {
    let o = json!({"spec": {"signerName": "example.com/s", "username": "alice", "expirationSeconds": 3600},
        "status": {"conditions": [{"type": "Approved", "status": "True"}, {"type": "Failed", "status": "True"}], "certificate": "eA=="}});
    let cells: Vec<Value> = CSR_COLUMNS.iter().map(|c| (c.cell)(&o)).collect();
    assert_eq!(
        cells[2..],
        [
            json!("example.com/s"),
            json!("alice"),
            json!("60m"),
            json!("Approved,Failed,Issued")
        ]
    );
    let cells: Vec<Value> = CSR_COLUMNS.iter().map(|c| (c.cell)(&json!({}))).collect();
    assert_eq!(
        cells[2..],
        [
            json!("<none>"),
            json!(""),
            json!("<none>"),
            json!("Pending")
        ]
    );
}
