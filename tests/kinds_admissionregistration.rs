//! admissionregistration.k8s.io/v1 end to end: a MutatingWebhookConfiguration,
//! a ValidatingWebhookConfiguration, a ValidatingAdmissionPolicy and its
//! binding created with `kubectl create -f`, upstream's defaults read back
//! with `kubectl get -o json`, the printer columns and cells `kubectl get`
//! shows, generation bumps on update, and upstream's 422s (fields and
//! messages) for invalid objects of each kind sent over raw HTTPS.

mod common;

use common::kubectl::{kubectl_create, kubectl_ok, run_limited, CMD_LIMIT};

use common::{runtime, Kapi};
use serde_json::{json, Value};

const GV: &str = "admissionregistration.k8s.io/v1";

/// `kubectl get -o json` of one (cluster-scoped) object.
fn get_json(k: &Kapi, resource: &str, name: &str) -> Value {
    let out = kubectl_ok(k, &["get", resource, name, "-o", "json"]);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{resource}/{name}: {e}: {out}"))
}

/// The column headers `kubectl get` prints.
fn headers(k: &Kapi, resource: &str, name: &str) -> Vec<String> {
    let out = kubectl_ok(k, &["get", resource, name]);
    let first = out.lines().next().unwrap_or("").to_string();
    first
        .split("  ")
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

/// The cells of the one row `kubectl get` prints (cells hold no spaces here).
fn row(k: &Kapi, resource: &str, name: &str) -> Vec<String> {
    let out = kubectl_ok(k, &["get", resource, name, "--no-headers"]);
    out.split_whitespace().map(String::from).collect()
}

// The webhooks match a resource nothing serves, so no request ever calls them.
const OBJECTS: &str = r#"
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: kar-mutate
webhooks:
- name: mutate.widgets.example.com
  clientConfig:
    service:
      namespace: default
      name: widget-hooks
      path: /mutate
  rules:
  - operations: ["CREATE"]
    apiGroups: ["example.com"]
    apiVersions: ["v1"]
    resources: ["widgets"]
  sideEffects: None
  admissionReviewVersions: ["v1"]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: kar-validate
webhooks:
- name: validate.widgets.example.com
  clientConfig:
    url: https://widgets.example.com/validate
  rules:
  - operations: ["CREATE", "UPDATE"]
    apiGroups: ["example.com"]
    apiVersions: ["v1"]
    resources: ["widgets"]
    scope: Namespaced
  sideEffects: NoneOnDryRun
  admissionReviewVersions: ["v1", "v1beta1"]
  timeoutSeconds: 5
- name: second.widgets.example.com
  clientConfig:
    url: https://widgets.example.com/second
  sideEffects: None
  admissionReviewVersions: ["v1"]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: kar-widget-size
spec:
  paramKind:
    apiVersion: v1
    kind: ConfigMap
  matchConstraints:
    resourceRules:
    - apiGroups: ["example.com"]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["widgets"]
  validations:
  - expression: "object.spec.size <= int(params.data.max)"
    message: widgets must be small
  - expression: "has(object.spec.color)"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: kar-widget-size
spec:
  policyName: kar-widget-size
  paramRef:
    name: limits
    namespace: default
    parameterNotFoundAction: Allow
  matchResources:
    namespaceSelector:
      matchLabels:
        widgets: "on"
  validationActions: ["Audit"]
"#;

#[test]
fn admissionregistration_kinds_default_print_and_validate() {
    let k = Kapi::start(&[]);
    let out = kubectl_create(&k, OBJECTS);
    for made in [
        "mutatingwebhookconfiguration.admissionregistration.k8s.io/kar-mutate created",
        "validatingwebhookconfiguration.admissionregistration.k8s.io/kar-validate created",
        "validatingadmissionpolicy.admissionregistration.k8s.io/kar-widget-size created",
        "validatingadmissionpolicybinding.admissionregistration.k8s.io/kar-widget-size created",
    ] {
        assert!(out.contains(made), "{out}");
    }

    // ---- defaults ----
    let m = get_json(&k, "mutatingwebhookconfigurations", "kar-mutate");
    assert_eq!(m["metadata"]["generation"], 1);
    let h = &m["webhooks"][0];
    assert_eq!(h["failurePolicy"], "Fail");
    assert_eq!(h["matchPolicy"], "Equivalent");
    assert_eq!(h["namespaceSelector"], json!({}));
    assert_eq!(h["objectSelector"], json!({}));
    assert_eq!(h["timeoutSeconds"], 10);
    assert_eq!(h["reinvocationPolicy"], "Never");
    assert_eq!(h["sideEffects"], "None");
    assert_eq!(h["clientConfig"]["service"]["port"], 443);
    assert_eq!(h["rules"][0]["scope"], "*");

    let v = get_json(&k, "validatingwebhookconfigurations", "kar-validate");
    let h = &v["webhooks"][0];
    assert_eq!(h["failurePolicy"], "Fail");
    assert_eq!(h["matchPolicy"], "Equivalent");
    assert_eq!(h["timeoutSeconds"], 5, "a given timeout is kept");
    assert_eq!(
        h["rules"][0]["scope"], "Namespaced",
        "a given scope is kept"
    );
    assert!(h.get("reinvocationPolicy").is_none(), "{h}");
    assert_eq!(v["webhooks"][1]["timeoutSeconds"], 10);
    assert!(v["webhooks"][1].get("rules").is_none(), "{v}");

    let p = get_json(&k, "validatingadmissionpolicies", "kar-widget-size");
    assert_eq!(p["metadata"]["generation"], 1);
    assert_eq!(p["spec"]["failurePolicy"], "Fail");
    let mc = &p["spec"]["matchConstraints"];
    assert_eq!(mc["matchPolicy"], "Equivalent");
    assert_eq!(mc["namespaceSelector"], json!({}));
    assert_eq!(mc["objectSelector"], json!({}));
    assert_eq!(mc["resourceRules"][0]["scope"], "*");
    assert_eq!(p["status"], json!({}), "{p}");

    let b = get_json(&k, "validatingadmissionpolicybindings", "kar-widget-size");
    let mr = &b["spec"]["matchResources"];
    assert_eq!(mr["matchPolicy"], "Equivalent");
    assert_eq!(mr["objectSelector"], json!({}));
    assert_eq!(mr["namespaceSelector"]["matchLabels"]["widgets"], "on");
    assert_eq!(b["spec"]["paramRef"]["parameterNotFoundAction"], "Allow");

    // ---- columns and cells as kubectl prints them ----
    let expect: &[(&str, &str, &[&str])] = &[
        (
            "mutatingwebhookconfigurations",
            "kar-mutate",
            &["NAME", "WEBHOOKS", "AGE"],
        ),
        (
            "validatingwebhookconfigurations",
            "kar-validate",
            &["NAME", "WEBHOOKS", "AGE"],
        ),
        (
            "validatingadmissionpolicies",
            "kar-widget-size",
            &["NAME", "VALIDATIONS", "PARAMKIND", "AGE"],
        ),
        (
            "validatingadmissionpolicybindings",
            "kar-widget-size",
            &["NAME", "POLICYNAME", "PARAMREF", "AGE"],
        ),
    ];
    for (resource, name, want) in expect {
        assert_eq!(&headers(&k, resource, name), want, "kubectl get {resource}");
    }
    let r = row(&k, "mutatingwebhookconfigurations", "kar-mutate");
    assert_eq!(r[..2], ["kar-mutate", "1"], "{r:?}");
    let r = row(&k, "validatingwebhookconfigurations", "kar-validate");
    assert_eq!(r[..2], ["kar-validate", "2"], "{r:?}");
    let r = row(&k, "validatingadmissionpolicies", "kar-widget-size");
    assert_eq!(r[..3], ["kar-widget-size", "2", "v1/ConfigMap"], "{r:?}");
    let r = row(&k, "validatingadmissionpolicybindings", "kar-widget-size");
    assert_eq!(
        r[..3],
        ["kar-widget-size", "kar-widget-size", "default/limits"],
        "{r:?}"
    );

    // ---- generation: bumped by a change to the webhooks or the spec only ----
    let patch = |resource: &str, name: &str, p: &str| {
        kubectl_ok(&k, &["patch", resource, name, "--type=json", "-p", p])
    };
    patch(
        "mutatingwebhookconfigurations",
        "kar-mutate",
        r#"[{"op":"replace","path":"/webhooks/0/timeoutSeconds","value":7}]"#,
    );
    patch(
        "mutatingwebhookconfigurations",
        "kar-mutate",
        r#"[{"op":"add","path":"/metadata/labels","value":{"a":"b"}}]"#,
    );
    let m = get_json(&k, "mutatingwebhookconfigurations", "kar-mutate");
    assert_eq!(m["webhooks"][0]["timeoutSeconds"], 7);
    assert_eq!(m["metadata"]["generation"], 2, "{m}");
    patch(
        "validatingadmissionpolicies",
        "kar-widget-size",
        r#"[{"op":"replace","path":"/spec/failurePolicy","value":"Ignore"}]"#,
    );
    let p = get_json(&k, "validatingadmissionpolicies", "kar-widget-size");
    assert_eq!(p["metadata"]["generation"], 2, "{p}");

    // ---- upstream's 422s ----
    let url = |plural: &str| format!("{}/apis/{GV}/{plural}", k.url);
    let hook = |name: &str| {
        json!({"name": name, "clientConfig": {"url": "https://hooks.example.com/x"},
               "sideEffects": "None", "admissionReviewVersions": ["v1"]})
    };
    let mut http_hook = hook("a.example.com");
    http_hook["clientConfig"]["url"] = json!("http://hooks.example.com/x");
    http_hook["timeoutSeconds"] = json!(60);
    let cases: Vec<(String, Value, Vec<(&str, &str)>)> = vec![
        (
            url("mutatingwebhookconfigurations"),
            json!({"apiVersion": GV, "kind": "MutatingWebhookConfiguration", "metadata": {"name": "bad"},
                   "webhooks": [{"name": "hook", "clientConfig": {"url": "https://hooks.example.com/x"}}]}),
            vec![
                ("webhooks[0].name", "Invalid value: \"hook\": should be a domain with at least three segments separated by dots"),
                ("webhooks[0].sideEffects", "Required value: must specify one of None, NoneOnDryRun"),
                ("webhooks[0].admissionReviewVersions", "Required value: must specify one of v1, v1beta1"),
            ],
        ),
        (
            url("validatingwebhookconfigurations"),
            json!({"apiVersion": GV, "kind": "ValidatingWebhookConfiguration", "metadata": {"name": "bad"},
                   "webhooks": [http_hook, hook("a.example.com")]}),
            vec![
                ("webhooks[0].timeoutSeconds", "Invalid value: 60: the timeout value must be between 1 and 30 seconds"),
                ("webhooks[0].clientConfig.url", "Invalid value: \"http\": 'https' is the only allowed URL scheme; desired format: https://host[/path]"),
                ("webhooks[1].name", "Duplicate value: \"a.example.com\""),
            ],
        ),
        (
            url("validatingadmissionpolicies"),
            json!({"apiVersion": GV, "kind": "ValidatingAdmissionPolicy", "metadata": {"name": "bad"},
                   "spec": {"matchConstraints": {"resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["deployments"]}]},
                            "validations": [{"expression": "object.spec.replicas <= params.max"}, {"expression": "'ok'"}]}}),
            vec![
                ("spec.validations[0].expression", "Invalid value: \"object.spec.replicas <= params.max\": compilation failed: ERROR: <input>:1:25: undeclared reference to 'params' (in container '')\n | object.spec.replicas <= params.max\n | ........................^"),
                ("spec.validations[1].expression", "Invalid value: \"'ok'\": must evaluate to bool but got string"),
            ],
        ),
        (
            url("validatingadmissionpolicies"),
            json!({"apiVersion": GV, "kind": "ValidatingAdmissionPolicy", "metadata": {"name": "bad"}, "spec": {}}),
            vec![
                ("spec.matchConstraints", "Required value"),
                ("spec.validations", "Required value: validations or auditAnnotations must contain at least one item"),
                ("spec.auditAnnotations", "Required value: validations or auditAnnotations must contain at least one item"),
            ],
        ),
        (
            url("validatingadmissionpolicybindings"),
            json!({"apiVersion": GV, "kind": "ValidatingAdmissionPolicyBinding", "metadata": {"name": "bad"},
                   "spec": {"paramRef": {"name": "limits"}, "validationActions": ["Deny", "Warn"],
                            "matchResources": {"matchPolicy": "Loose"}}}),
            vec![
                ("spec.policyName", "Required value"),
                ("spec.paramRef.parameterNotFoundAction", "Required value"),
                ("spec.matchResouces.matchPolicy", "Unsupported value: \"Loose\": supported values: \"Equivalent\", \"Exact\""),
                ("spec.validationActions", "Invalid value: [\"Deny\",\"Warn\"]: must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)"),
            ],
        ),
    ];
    let c = k.admin_client();
    runtime().block_on(async {
        for (url, body, want) in &cases {
            let r = c
                .post(url)
                .header("Content-Type", "application/json")
                .body(serde_json::to_vec(body).expect("json"))
                .send()
                .await
                .unwrap_or_else(|e| panic!("POST {url}: {e}"));
            let code = r.status().as_u16();
            let text = r.text().await.expect("body");
            assert_eq!(code, 422, "POST {url}: {text}");
            let v: Value = serde_json::from_str(&text).expect("status json");
            assert_eq!(v["reason"], "Invalid", "{text}");
            let got: Vec<(String, String)> = v["details"]["causes"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .map(|c| {
                            (
                                c["field"].as_str().unwrap_or("").to_string(),
                                c["message"].as_str().unwrap_or("").to_string(),
                            )
                        })
                        .collect()
                })
                .unwrap_or_default();
            let want: Vec<(String, String)> = want
                .iter()
                .map(|(f, m)| (f.to_string(), m.to_string()))
                .collect();
            assert_eq!(got, want, "POST {url}: {text}");
        }
    });

    // An update may not bring in what a create may not.
    let o = run_limited(
        k.kubectl().args([
            "patch",
            "validatingwebhookconfigurations",
            "kar-validate",
            "--type=json",
            "-p",
            r#"[{"op":"replace","path":"/webhooks/1/sideEffects","value":"Some"}]"#,
        ]),
        CMD_LIMIT,
    );
    assert!(
        !o.ok
            && o.stderr
                .contains("webhooks[1].sideEffects: Unsupported value: \"Some\""),
        "{}",
        o.stderr
    );
}
