use super::resource_claim::{claim_state, CLAIM_COLUMNS, STATE_DESCRIPTION};
use super::resource_slice::SLICE_COLUMNS;
use super::*;
use crate::registry::strategy::Strategy;
use crate::registry::validation::FieldError;

fn msgs(errs: &[FieldError]) -> Vec<(String, String)> {
    errs.iter()
        .map(|e| (e.field.clone(), e.message()))
        .collect()
}

fn fields(errs: &[FieldError]) -> Vec<String> {
    errs.iter().map(|e| e.field.clone()).collect()
}

fn claim(devices: Value) -> Value {
    json!({"metadata": {"name": "c", "namespace": "ns"}, "spec": {"devices": devices}})
}

/// A claim as the registry would store it: defaulted and prepared.
fn created_claim(devices: Value) -> Value {
    let mut c = claim(devices);
    ResourceClaimStrategy.default(&mut c);
    ResourceClaimStrategy.prepare_for_create(&mut c);
    c
}

const DNS_LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const DNS_SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

#[test]
fn claim_defaults() {
    let c = created_claim(json!({"requests": [
        {"name": "a", "exactly": {"deviceClassName": "gpu", "tolerations": [{"key": "k"}]}},
        {"name": "b", "exactly": {"deviceClassName": "gpu", "allocationMode": "All"}},
        {"name": "c", "firstAvailable": [{"name": "x", "deviceClassName": "gpu", "count": 2}]}
    ]}));
    let reqs = &c["spec"]["devices"]["requests"];
    assert_eq!(reqs[0]["exactly"]["allocationMode"], "ExactCount");
    assert_eq!(reqs[0]["exactly"]["count"], 1);
    assert!(reqs[1]["exactly"].get("count").is_none());
    assert_eq!(reqs[2]["firstAvailable"][0]["allocationMode"], "ExactCount");
    assert_eq!(reqs[2]["firstAvailable"][0]["count"], 2);
    // DRADeviceTaints is off in 1.34: tolerations are dropped after defaulting.
    assert!(reqs[0]["exactly"].get("tolerations").is_none());
    assert!(c["metadata"].get("generation").is_none());
    let mut t = json!({"metadata": {"name": "t"}, "spec": {"spec": {"devices": {"requests": [{"name": "a", "exactly": {"deviceClassName": "gpu"}}]}}}});
    ResourceClaimTemplateStrategy.default(&mut t);
    assert_eq!(
        t["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"],
        1
    );
}

#[test]
fn claim_drops_disabled_fields_unless_in_use() {
    let devices = json!({"requests": [{"name": "a", "exactly": {"deviceClassName": "gpu", "capacity": {"requests": {"mem": "1Gi"}}, "adminAccess": true}}],
        "constraints": [{"matchAttribute": "d.io/m", "distinctAttribute": "d.io/x"}]});
    let c = created_claim(devices.clone());
    let e = &c["spec"]["devices"]["requests"][0]["exactly"];
    assert!(e.get("capacity").is_none());
    // DRAAdminAccess is on in 1.34.
    assert_eq!(e["adminAccess"], true);
    assert!(c["spec"]["devices"]["constraints"][0]
        .get("distinctAttribute")
        .is_none());
    let old = claim(devices.clone());
    let mut new = claim(devices);
    ResourceClaimStrategy.prepare_for_update(&mut new, &old);
    assert!(new["spec"]["devices"]["requests"][0]["exactly"]
        .get("capacity")
        .is_some());
}

#[test]
fn claim_request_rules() {
    let c = created_claim(json!({"requests": [
        {"name": "Bad_Name"},
        {"name": "both", "exactly": {"deviceClassName": "gpu"}, "firstAvailable": [{"name": "x", "deviceClassName": "gpu"}]},
        {"name": "noclass", "exactly": {"count": -1}},
        {"name": "all", "exactly": {"deviceClassName": "Not.Valid", "allocationMode": "All", "count": 2}},
        {"name": "both", "firstAvailable": [{"name": "x", "deviceClassName": "gpu"}, {"name": "x", "deviceClassName": "gpu", "allocationMode": "Some"}]}
    ]}));
    let got = msgs(&ResourceClaimStrategy.validate(&c));
    let want: Vec<(String, String)> = vec![
        ("spec.devices.requests[0].name".into(), format!("Invalid value: \"Bad_Name\": {DNS_LABEL_MSG}")),
        ("spec.devices.requests[0]".into(), "Required value: exactly one of `exactly` or `firstAvailable` is required".into()),
        ("spec.devices.requests[1]".into(), "Invalid value: null: exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set".into()),
        ("spec.devices.requests[2].exactly.deviceClassName".into(), "Required value".into()),
        ("spec.devices.requests[2].exactly.count".into(), "Invalid value: -1: must be greater than zero".into()),
        ("spec.devices.requests[3].exactly.deviceClassName".into(), format!("Invalid value: \"Not.Valid\": {DNS_SUBDOMAIN_MSG}")),
        ("spec.devices.requests[3].exactly.count".into(), "Invalid value: 2: must not be specified when allocationMode is 'All'".into()),
        ("spec.devices.requests[4].firstAvailable[1].allocationMode".into(), "Unsupported value: \"Some\": supported values: \"All\", \"ExactCount\"".into()),
        ("spec.devices.requests[4].firstAvailable[1].name".into(), "Duplicate value: \"x\"".into()),
        ("spec.devices.requests[4].name".into(), "Duplicate value: \"both\"".into()),
    ];
    assert_eq!(got, want);
}

#[test]
fn claim_selector_constraint_and_config_rules() {
    let c = created_claim(json!({
        "requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu", "selectors": [{}, {"cel": {"expression": "device.driver =="}}, {"cel": {"expression": "device.driver == 'x'"}}]}}],
        "constraints": [{"requests": ["gpu", "nope", "gpu"]}, {"matchAttribute": "model"}],
        "config": [{"requests": ["gpu/sub"]}, {"opaque": {"driver": "", "parameters": [1]}}, {"opaque": {"driver": "d.example.com"}}]
    }));
    let errs = ResourceClaimStrategy.validate(&c);
    let got = msgs(&errs);
    assert_eq!(
        got[0],
        (
            "spec.devices.requests[0].exactly.selectors[0].cel".into(),
            "Required value".into()
        )
    );
    assert_eq!(
        got[1].0,
        "spec.devices.requests[0].exactly.selectors[1].cel.expression"
    );
    assert!(
        got[1].1.starts_with(
            "Invalid value: \"device.driver ==\": compilation failed: ERROR: <input>:1:"
        ),
        "{}",
        got[1].1
    );
    let rest: Vec<(String, String)> = got[2..].to_vec();
    let req_ref = "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'";
    assert_eq!(
        rest,
        vec![
            (
                "spec.devices.constraints[0].requests[1]".into(),
                format!("Invalid value: \"nope\": {req_ref}")
            ),
            (
                "spec.devices.constraints[0].requests[2]".into(),
                "Duplicate value: \"gpu\"".into()
            ),
            (
                "spec.devices.constraints[0].matchAttribute".into(),
                "Required value".into()
            ),
            (
                "spec.devices.constraints[1].matchAttribute".into(),
                "Invalid value: \"model\": must include a domain".into()
            ),
            (
                "spec.devices.config[0].requests[0]".into(),
                format!("Invalid value: \"gpu/sub\": {req_ref}")
            ),
            (
                "spec.devices.config[0].opaque".into(),
                "Required value".into()
            ),
            (
                "spec.devices.config[1].opaque.driver".into(),
                "Required value".into()
            ),
            (
                "spec.devices.config[1].opaque.driver".into(),
                format!("Invalid value: \"\": {DNS_SUBDOMAIN_MSG}")
            ),
            (
                "spec.devices.config[1].opaque.parameters".into(),
                "Invalid value: \"<value omitted>\": parameters must be a valid JSON object".into()
            ),
            (
                "spec.devices.config[2].opaque.parameters".into(),
                "Required value".into()
            ),
        ]
    );
}

#[test]
fn claim_limits() {
    let many: Vec<Value> = (0..33)
        .map(|i| json!({"name": format!("r{i}"), "exactly": {"deviceClassName": "gpu"}}))
        .collect();
    let c = created_claim(json!({"requests": many}));
    assert_eq!(
        msgs(&ResourceClaimStrategy.validate(&c)),
        [(
            "spec.devices.requests".into(),
            "Too many: 33: must have at most 32 items".into()
        )]
    );
    let subs: Vec<Value> = (0..9)
        .map(|i| json!({"name": format!("s{i}"), "deviceClassName": "gpu"}))
        .collect();
    let c = created_claim(json!({"requests": [{"name": "r", "firstAvailable": subs}]}));
    assert_eq!(
        fields(&ResourceClaimStrategy.validate(&c)),
        ["spec.devices.requests[0].firstAvailable"]
    );
}

#[test]
fn claim_updates() {
    let old = created_claim(
        json!({"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}),
    );
    assert!(ResourceClaimStrategy.validate_update(&old, &old).is_empty());
    let mut new = old.clone();
    new["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] = json!("other");
    assert_eq!(
        msgs(&ResourceClaimStrategy.validate_update(&new, &old)),
        [(
            "spec".into(),
            "Invalid value: {\"Devices\":{\"Requests\":[{\"Name\":\"gpu\",\"Exactly\":{\"DeviceClassName\":\"other\",\"Selectors\":null,\"AllocationMode\":\"ExactCount\",\"Count\":1,\"AdminAccess\":null,\"Tolerations\":null,\"Capacity\":null},\"FirstAvailable\":null}],\"Constraints\":null,\"Config\":null}}: field is immutable".into()
        )]
    );
    // The spec is checked twice on update (create's checks, then as stored).
    let mut bad = old.clone();
    bad["spec"]["devices"]["requests"][0]["name"] = json!("X");
    assert_eq!(
        fields(&ResourceClaimStrategy.validate_update(&bad, &old)),
        [
            "spec.devices.requests[0].name",
            "spec",
            "spec.devices.requests[0].name"
        ]
    );
    // A status write: reservations need an allocation.
    let mut st = old.clone();
    st["status"] = json!({"reservedFor": [{"resource": "pods", "name": "p", "uid": "u"}, {"resource": "pods", "name": "q", "uid": "u"}]});
    assert_eq!(
        msgs(&ResourceClaimStrategy.validate_update(&st, &old)),
        [
            (
                "status.reservedFor[1].uid".into(),
                "Duplicate value: \"u\"".into()
            ),
            (
                "status.reservedFor".into(),
                "Forbidden: may not be specified when `allocated` is not set".into()
            ),
        ]
    );
    st["status"] = json!({"allocation": {"devices": {"results": [{"request": "gpu", "driver": "d.example.com", "pool": "p", "device": "dev-0"}]}}, "reservedFor": [{"resource": "pods", "name": "p", "uid": "u"}]});
    assert!(ResourceClaimStrategy.validate_update(&st, &old).is_empty());
    st["status"]["allocation"]["devices"]["results"][0]["request"] = json!("other");
    assert_eq!(
        fields(&ResourceClaimStrategy.validate_update(&st, &old)),
        ["status.allocation.devices.results[0].request"]
    );
}

#[test]
fn claim_state_cell() {
    let mut c = created_claim(json!({"requests": []}));
    assert_eq!(claim_state(&c), "pending");
    c["status"] = json!({"allocation": {}, "reservedFor": [{"uid": "u"}]});
    assert_eq!(claim_state(&c), "allocated,reserved");
    c["metadata"]["deletionTimestamp"] = json!("2025-01-01T00:00:00Z");
    assert_eq!(claim_state(&c), "deleted,allocated,reserved");
    c["status"] = json!({});
    assert_eq!(claim_state(&c), "deleted");
    assert_eq!(CLAIM_COLUMNS[1].description, STATE_DESCRIPTION);
}

#[test]
fn template_rules() {
    let mut t = json!({"metadata": {"name": "t", "namespace": "ns"}, "spec": {
        "metadata": {"name": "x", "uid": "u", "labels": {"ok": "-bad-"}, "annotations": {"a": "b"}},
        "spec": {"devices": {"requests": [{"name": "gpu"}]}}}});
    ResourceClaimTemplateStrategy.default(&mut t);
    ResourceClaimTemplateStrategy.prepare_for_create(&mut t);
    assert_eq!(
        fields(&ResourceClaimTemplateStrategy.validate(&t)),
        [
            "spec.metadata.labels",
            "spec.metadata.name",
            "spec.metadata.uID",
            "spec.spec.devices.requests[0]"
        ]
    );
    let mut ok = t.clone();
    ok["spec"]["metadata"] = json!({"labels": {"app": "x"}});
    ok["spec"]["spec"]["devices"]["requests"][0]["exactly"] =
        json!({"deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1});
    assert!(ResourceClaimTemplateStrategy.validate(&ok).is_empty());
    let mut changed = ok.clone();
    changed["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"] = json!(2);
    let errs = ResourceClaimTemplateStrategy.validate_update(&changed, &ok);
    assert_eq!(fields(&errs), ["spec"]);
    assert!(
        errs[0].message().starts_with("Invalid value: {\"creationTimestamp\":null,\"labels\":{\"app\":\"x\"},\"Spec\":{\"Devices\":"),
        "{}",
        errs[0].message()
    );
}

#[test]
fn device_class_rules() {
    let mut c = json!({"metadata": {"name": "gpu"}, "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.example.com'"}}], "extendedResourceName": "example.com/gpu"}});
    DeviceClassStrategy.prepare_for_create(&mut c);
    assert_eq!(c["metadata"]["generation"], 1);
    // DRAExtendedResource is off in 1.34.
    assert!(c["spec"].get("extendedResourceName").is_none());
    assert!(DeviceClassStrategy.validate(&c).is_empty());
    let bad = json!({"metadata": {"name": "gpu"}, "spec": {"selectors": [{"cel": {}}, {}], "config": [{"opaque": {"driver": "Gpu.Example.com", "parameters": {"a": 1}}}]}});
    assert_eq!(
        fields(&DeviceClassStrategy.validate(&bad)),
        ["spec.selectors[0].cel.expression", "spec.selectors[1].cel"]
    );
    // Update: the class's checks, then the spec's again.
    assert_eq!(DeviceClassStrategy.validate_update(&bad, &c).len(), 4);
}

fn slice(spec: Value) -> Value {
    let mut s = json!({"metadata": {"name": "s"}, "spec": spec});
    ResourceSliceStrategy.prepare_for_create(&mut s);
    s
}

#[test]
fn slice_rules() {
    let good = slice(
        json!({"driver": "gpu.example.com", "pool": {"name": "node-1", "generation": 0, "resourceSliceCount": 1}, "nodeName": "node-1",
        "devices": [{"name": "gpu-0", "attributes": {"model": {"string": "a100"}, "gpu.example.com/version": {"version": "1.2.3"}}, "capacity": {"memory": {"value": "40Gi"}}}]}),
    );
    assert_eq!(good["metadata"]["generation"], 1);
    assert!(ResourceSliceStrategy.validate(&good).is_empty());
    let bad = slice(
        json!({"driver": "Bad_Driver", "pool": {"name": "a/B", "generation": -1, "resourceSliceCount": 0},
        "devices": [{"name": "d", "attributes": {"1bad": {"string": "x"}, "/": {"int": 1}, "both": {"int": 1, "bool": true}, "none": {}, "ver": {"version": "1.2"}}},
                    {"name": "d"}]}),
    );
    let got = msgs(&ResourceSliceStrategy.validate(&bad));
    let c_ident = "a valid C identifier must start with alphabetic character or '_', followed by a string of alphanumeric characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex used for validation is '[A-Za-z_][A-Za-z0-9_]*')";
    let want: Vec<(String, String)> = vec![
        ("spec.driver".into(), format!("Invalid value: \"Bad_Driver\": {DNS_SUBDOMAIN_MSG}")),
        ("spec.pool.name".into(), format!("Invalid value: \"B\": {DNS_SUBDOMAIN_MSG}")),
        ("spec.pool.resourceSliceCount".into(), "Invalid value: 0: must be greater than zero".into()),
        ("spec.pool.generation".into(), "Invalid value: -1: must be greater than or equal to zero".into()),
        ("spec".into(), "Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required".into()),
        ("spec.devices[0].attributes[/]".into(), "Required value: the domain must not be empty".into()),
        ("spec.devices[0].attributes[/]".into(), "Required value: the name must not be empty".into()),
        ("spec.devices[0].attributes[1bad]".into(), format!("Invalid value: \"1bad\": {c_ident}")),
        ("spec.devices[0].attributes[both]".into(), "Invalid value: {\"IntValue\":1,\"BoolValue\":true,\"StringValue\":null,\"VersionValue\":null}: exactly one value must be specified".into()),
        ("spec.devices[0].attributes[none]".into(), "Required value: exactly one value must be specified".into()),
        ("spec.devices[0].attributes[ver].version".into(), "Invalid value: \"1.2\": must be a string compatible with semver.org spec 2.0.0".into()),
        ("spec.devices[1].name".into(), "Duplicate value: \"d\"".into()),
    ];
    assert_eq!(got, want);
    assert_eq!(bad.pointer("/spec/devices/0/name"), Some(&json!("d")));
}

#[test]
fn slice_node_selection_and_updates() {
    let base = json!({"driver": "d.example.com", "pool": {"name": "p", "resourceSliceCount": 1}});
    let mut two = base.clone();
    two["nodeName"] = json!("n");
    two["allNodes"] = json!(true);
    assert_eq!(
        msgs(&ResourceSliceStrategy.validate(&slice(two))),
        [("spec".into(), "Invalid value: \"{`nodeName`, `allNodes`}\": exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required, but multiple fields are set".into())]
    );
    let mut sel = base.clone();
    sel["nodeSelector"] = json!({"nodeSelectorTerms": []});
    sel["allNodes"] = json!(false);
    assert_eq!(
        msgs(&ResourceSliceStrategy.validate(&slice(sel))),
        [
            (
                "spec.nodeSelector.nodeSelectorTerms".into(),
                "Required value: must have at least one node selector term".into()
            ),
            (
                "spec.nodeSelector.nodeSelectorTerms".into(),
                "Invalid value: []: must have exactly one node selector term".into()
            ),
            (
                "spec.allNodes".into(),
                "Invalid value: false: must be either unset or set to true".into()
            ),
        ]
    );
    let mut terms = base.clone();
    terms["nodeSelector"] = json!({"nodeSelectorTerms": [{"matchExpressions": [{"key": "k", "operator": "In", "values": ["-1"]}], "matchFields": [{"key": "spec.x", "operator": "Exists"}]}]});
    assert_eq!(
        fields(&ResourceSliceStrategy.validate(&slice(terms))),
        [
            "spec.nodeSelector.nodeSelectorTerms[0].matchExpressions[0].values[0]",
            "spec.nodeSelector.nodeSelectorTerms[0].matchFields[0].operator",
            "spec.nodeSelector.nodeSelectorTerms[0].matchFields[0].key",
        ]
    );
    let mut empty = base.clone();
    empty["nodeName"] = json!("");
    assert_eq!(
        fields(&ResourceSliceStrategy.validate(&slice(empty))),
        ["spec.nodeName", "spec"]
    );
    let mut old = base.clone();
    old["nodeName"] = json!("n");
    let old = slice(old);
    let mut new = old.clone();
    new["spec"]["driver"] = json!("e.example.com");
    new["spec"]["pool"]["name"] = json!("q");
    new["spec"]["nodeName"] = json!("m");
    assert_eq!(
        msgs(&ResourceSliceStrategy.validate_update(&new, &old)),
        [
            (
                "spec.pool.name".into(),
                "Invalid value: \"q\": field is immutable".into()
            ),
            (
                "spec.driver".into(),
                "Invalid value: \"e.example.com\": field is immutable".into()
            ),
            (
                "spec.nodeName".into(),
                "Invalid value: \"m\": field is immutable".into()
            ),
        ]
    );
    let many: Vec<Value> = (0..129).map(|i| json!({"name": format!("d{i}")})).collect();
    let mut big = base;
    big["allNodes"] = json!(true);
    big["devices"] = json!(many);
    assert_eq!(
        msgs(&ResourceSliceStrategy.validate(&slice(big))),
        [(
            "spec.devices".into(),
            "Too many: 129: must have at most 128 items".into()
        )]
    );
}

#[test]
fn slice_drops_gated_fields_and_prints() {
    let s = slice(
        json!({"driver": "d.example.com", "pool": {"name": "p", "resourceSliceCount": 1}, "allNodes": true,
        "sharedCounters": [{"name": "c"}], "perDeviceNodeSelection": true,
        "devices": [{"name": "d", "taints": [{"key": "k", "effect": "NoSchedule"}], "nodeName": "n", "bindsToNode": true,
                     "allowMultipleAllocations": true, "capacity": {"m": {"value": "1", "requestPolicy": {"default": "1"}}}}]}),
    );
    let spec = &s["spec"];
    assert!(spec.get("sharedCounters").is_none() && spec.get("perDeviceNodeSelection").is_none());
    let d = &spec["devices"][0];
    for k in [
        "taints",
        "nodeName",
        "bindsToNode",
        "allowMultipleAllocations",
    ] {
        assert!(d.get(k).is_none(), "{k} kept");
    }
    assert!(d["capacity"]["m"].get("requestPolicy").is_none());
    assert!(ResourceSliceStrategy.validate(&s).is_empty());
    let cells: Vec<Value> = SLICE_COLUMNS.iter().take(4).map(|c| (c.cell)(&s)).collect();
    assert_eq!(
        cells,
        [json!("s"), Value::Null, json!("d.example.com"), json!("p")]
    );
    let names: Vec<&str> = SLICE_COLUMNS.iter().map(|c| c.name).collect();
    assert_eq!(names, ["Name", "Node", "Driver", "Pool", "Age"]);
}
