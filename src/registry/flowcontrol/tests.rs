//! Unit tests of the flowcontrol strategies: defaults, each validation rule
//! (field path and message) and the printer cells.

use super::flow_schema::FLOW_SCHEMA_COLUMNS;
use super::priority_level_configuration::{
    PRESERVE_ZERO_SHARES_ANNOTATION, PRIORITY_LEVEL_COLUMNS,
};
use super::*;
use crate::registry::strategy::Strategy;

fn errs(v: Vec<FieldError>) -> Vec<(String, String)> {
    v.into_iter()
        .map(|e| (e.field.clone(), e.message()))
        .collect()
}

fn fs(name: &str, spec: Value) -> Value {
    json!({"metadata": {"name": name}, "spec": spec})
}

fn good_rule() -> Value {
    json!({"subjects": [{"kind": "User", "user": {"name": "alice"}}],
        "resourceRules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "namespaces": ["*"]}]})
}

#[test]
fn flow_schema_defaults_and_valid() {
    let mut o = fs(
        "fs",
        json!({"priorityLevelConfiguration": {"name": "pl"}, "rules": [good_rule()]}),
    );
    FlowSchemaStrategy.default(&mut o);
    assert_eq!(o["spec"]["matchingPrecedence"], 1000);
    assert!(FlowSchemaStrategy.validate(&o).is_empty());
    let mut zero = fs("fs", json!({"matchingPrecedence": 0}));
    FlowSchemaStrategy.default(&mut zero);
    assert_eq!(zero["spec"]["matchingPrecedence"], 1000);
    let mut none = json!({"metadata": {"name": "x"}});
    FlowSchemaStrategy.default(&mut none);
    assert_eq!(none["spec"]["matchingPrecedence"], 1000);
}

#[test]
fn flow_schema_spec_rules() {
    let o = fs(
        "fs",
        json!({"matchingPrecedence": 1, "distinguisherMethod": {"type": "ByFoo"}}),
    );
    assert_eq!(
        errs(FlowSchemaStrategy.validate(&o)),
        [
            ("spec.matchingPrecedence".into(), "Invalid value: 1: only the schema named 'exempt' may have matchingPrecedence 1".into()),
            ("spec.distinguisherMethod.type".into(), "Unsupported value: flowcontrol.FlowDistinguisherMethod{Type:\"ByFoo\"}: supported values: \"ByNamespace\", \"ByUser\"".into()),
            ("spec.priorityLevelConfiguration.name".into(), "Required value: must reference a priority level".into()),
        ]
    );
    let o = fs(
        "fs",
        json!({"matchingPrecedence": 10001, "priorityLevelConfiguration": {"name": "Bad"}}),
    );
    let got = errs(FlowSchemaStrategy.validate(&o));
    assert_eq!(
        got[0],
        (
            "spec.matchingPrecedence".into(),
            "Invalid value: 10001: must not be greater than 10000".into()
        )
    );
    assert_eq!(got[1].0, "spec.priorityLevelConfiguration.name");
    let o = fs(
        "fs",
        json!({"matchingPrecedence": -3, "priorityLevelConfiguration": {"name": "p"}}),
    );
    assert_eq!(
        errs(FlowSchemaStrategy.validate(&o))[0].1,
        "Invalid value: -3: must be a positive value"
    );
}

#[test]
fn flow_schema_subjects_and_rules() {
    let rule = json!({
        "subjects": [
            {"kind": "ServiceAccount", "serviceAccount": {"name": "*"}, "user": {"name": "u"}},
            {"kind": "Group"},
            {"kind": "Robot"},
        ],
        "resourceRules": [{"verbs": ["get", "fly"], "apiGroups": ["*", "apps"], "resources": [], "namespaces": ["Bad_NS"]}],
        "nonResourceRules": [{"verbs": ["*", "get"], "nonResourceURLs": ["healthz", "/a//b", "/a*", "/ok/*"]}],
    });
    let o = fs(
        "fs",
        json!({"matchingPrecedence": 5, "priorityLevelConfiguration": {"name": "p"}, "rules": [rule, {}]}),
    );
    let got = errs(FlowSchemaStrategy.validate(&o));
    let want: Vec<(String, String)> = [
        ("spec.rules[0].subjects[0].serviceAccount.namespace", "Required value: must specify namespace for service account"),
        ("spec.rules[0].subjects[0].user", "Forbidden: user is forbidden when subject kind is not 'User'"),
        ("spec.rules[0].subjects[1].group", "Required value: group is required when subject kind is 'Group'"),
        ("spec.rules[0].subjects[2].kind", "Unsupported value: \"Robot\": supported values: \"Group\", \"ServiceAccount\", \"User\""),
        ("spec.rules[0].resourceRules[0].verbs", "Unsupported value: [\"get\",\"fly\"]: supported values: \"create\", \"delete\", \"deletecollection\", \"get\", \"list\", \"patch\", \"proxy\", \"update\", \"watch\""),
        ("spec.rules[0].resourceRules[0].apiGroups", "Invalid value: [\"*\",\"apps\"]: if '*' is present, must not specify other api groups"),
        ("spec.rules[0].resourceRules[0].resources", "Required value: resource rules must supply at least one resource"),
        ("spec.rules[0].resourceRules[0].namespaces[0]", "Invalid value: \"Bad_NS\": each member of this list must be '*' or a DNS-1123 label; a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"),
        ("spec.rules[0].nonResourceRules[0].verbs", "Invalid value: [\"*\",\"get\"]: if '*' is present, must not specify other verbs"),
        ("spec.rules[0].nonResourceRules[0].nonResourceURLs[0]", "Invalid value: \"healthz\": must start with slash"),
        ("spec.rules[0].nonResourceRules[0].nonResourceURLs[1]", "Invalid value: \"/a//b\": must not contain double slash"),
        ("spec.rules[0].nonResourceRules[0].nonResourceURLs[2]", "Invalid value: \"/a*\": wildcard can only do suffix matching"),
        ("spec.rules[1].subjects", "Required value: subjects must contain at least one value"),
        ("spec.rules[1]", "Required value: at least one of resourceRules and nonResourceRules has to be non-empty"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(got, want);
    let cluster = json!({"subjects": [{"kind": "User", "user": {"name": ""}}],
        "resourceRules": [{"verbs": [], "apiGroups": [], "resources": ["*"], "clusterScope": false}]});
    let o = fs(
        "fs",
        json!({"matchingPrecedence": 5, "priorityLevelConfiguration": {"name": "p"}, "rules": [cluster]}),
    );
    let fields: Vec<String> = errs(FlowSchemaStrategy.validate(&o))
        .into_iter()
        .map(|e| e.0)
        .collect();
    assert_eq!(
        fields,
        [
            "spec.rules[0].subjects[0].user.name",
            "spec.rules[0].resourceRules[0].verbs",
            "spec.rules[0].resourceRules[0].apiGroups",
            "spec.rules[0].resourceRules[0].namespaces",
        ]
    );
}

#[test]
fn mandatory_flow_schemas_are_fixed() {
    let mut exempt = fs(
        "exempt",
        mandatory_flow_schema("exempt").unwrap_or_default(),
    );
    FlowSchemaStrategy.default(&mut exempt);
    assert!(
        FlowSchemaStrategy.validate(&exempt).is_empty(),
        "{:?}",
        FlowSchemaStrategy.validate(&exempt)
    );
    exempt["spec"]["matchingPrecedence"] = json!(2);
    let got = errs(FlowSchemaStrategy.validate(&exempt));
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].0, "spec");
    assert!(
        got[0]
            .1
            .ends_with("spec of 'exempt' must equal the fixed value"),
        "{got:?}"
    );
    let catch_all = fs(
        "catch-all",
        mandatory_flow_schema("catch-all").unwrap_or_default(),
    );
    assert!(FlowSchemaStrategy.validate(&catch_all).is_empty());
}

#[test]
fn status_conditions() {
    let mut o = fs(
        "fs",
        json!({"matchingPrecedence": 5, "priorityLevelConfiguration": {"name": "p"}}),
    );
    o["status"] = json!({"conditions": [{"type": "Dangling"}, {"type": "Dangling"}, {}]});
    assert_eq!(
        errs(FlowSchemaStrategy.validate(&o)),
        [
            (
                "status.conditions[1].type".to_string(),
                "Duplicate value: \"Dangling\"".to_string()
            ),
            (
                "status.conditions[2].type".to_string(),
                "Required value: must not be empty".to_string()
            ),
        ]
    );
}

fn plc(name: &str, spec: Value) -> Value {
    json!({"metadata": {"name": name}, "spec": spec})
}

#[test]
fn priority_level_defaults() {
    let mut o = plc(
        "p",
        json!({"type": "Limited", "limited": {"limitResponse": {"type": "Queue", "queuing": {}}}}),
    );
    PriorityLevelConfigurationStrategy.default(&mut o);
    let l = &o["spec"]["limited"];
    assert_eq!(l["nominalConcurrencyShares"], 30);
    assert_eq!(l["lendablePercent"], 0);
    assert!(l.get("borrowingLimitPercent").is_none());
    assert_eq!(
        l["limitResponse"]["queuing"],
        json!({"handSize": 8, "queues": 64, "queueLengthLimit": 50})
    );
    assert!(PriorityLevelConfigurationStrategy.validate(&o).is_empty());
    // An explicit zero stays: v1's field is a pointer.
    let mut z = plc(
        "p",
        json!({"type": "Limited", "limited": {"nominalConcurrencyShares": 0, "limitResponse": {"type": "Reject"}}}),
    );
    PriorityLevelConfigurationStrategy.default(&mut z);
    assert_eq!(z["spec"]["limited"]["nominalConcurrencyShares"], 0);
    assert!(PriorityLevelConfigurationStrategy.validate(&z).is_empty());
    let mut e = plc("exempt", json!({"type": "Exempt", "exempt": {}}));
    PriorityLevelConfigurationStrategy.default(&mut e);
    assert_eq!(
        e["spec"]["exempt"],
        json!({"nominalConcurrencyShares": 0, "lendablePercent": 0})
    );
    assert!(PriorityLevelConfigurationStrategy.validate(&e).is_empty());
}

#[test]
fn priority_level_validation() {
    let o = plc(
        "p",
        json!({"type": "Limited", "exempt": {}, "limited": {"nominalConcurrencyShares": -1, "lendablePercent": 101, "borrowingLimitPercent": -2,
        "limitResponse": {"type": "Queue", "queuing": {"queues": 4, "handSize": 5, "queueLengthLimit": 0}}}}),
    );
    assert_eq!(
        errs(PriorityLevelConfigurationStrategy.validate(&o)),
        [
            (
                "spec.exempt".to_string(),
                "Forbidden: must be nil if the type is Limited".to_string()
            ),
            (
                "spec.limited.nominalConcurrencyShares".into(),
                "Invalid value: -1: must be a non-negative integer".into()
            ),
            (
                "spec.limited.limitResponse.queuing.queueLengthLimit".into(),
                "Invalid value: 0: must be positive".into()
            ),
            (
                "spec.limited.limitResponse.queuing.handSize".into(),
                "Invalid value: 5: should not be greater than queues (4)".into()
            ),
            (
                "spec.limited.lendablePercent".into(),
                "Invalid value: 101: must be between 0 and 100, inclusive".into()
            ),
            (
                "spec.limited.borrowingLimitPercent".into(),
                "Invalid value: -2: if specified, must be a non-negative integer".into()
            ),
        ]
    );
    let o = plc(
        "p",
        json!({"type": "Limited", "limited": {"nominalConcurrencyShares": 1, "limitResponse": {"type": "Queue", "queuing": {"queues": 128, "handSize": 9, "queueLengthLimit": 1}}}}),
    );
    assert_eq!(errs(PriorityLevelConfigurationStrategy.validate(&o)), [(
        "spec.limited.limitResponse.queuing.handSize".to_string(),
        "Invalid value: 9: required entropy bits of deckSize 128 and handSize 9 should not be greater than 60".to_string()
    )]);
    let o = plc("exempt", json!({"type": "Limited"}));
    assert_eq!(
        errs(PriorityLevelConfigurationStrategy.validate(&o))[..2],
        [
            (
                "spec.type".to_string(),
                "Invalid value: \"Limited\": type must be 'Exempt' if and only if name is 'exempt'"
                    .to_string()
            ),
            (
                "spec.limited".into(),
                "Required value: must not be empty when type is Limited".into()
            ),
        ]
    );
    let o = plc("p", json!({"type": "Sometimes"}));
    assert_eq!(
        errs(PriorityLevelConfigurationStrategy.validate(&o)),
        [(
            "spec.type".to_string(),
            "Unsupported value: \"Sometimes\": supported values: \"Exempt\", \"Limited\""
                .to_string()
        )]
    );
    let o = plc(
        "p",
        json!({"type": "Limited", "limited": {"limitResponse": {"type": "Reject", "queuing": {}}}}),
    );
    assert_eq!(
        errs(PriorityLevelConfigurationStrategy.validate(&o))[0].0,
        "spec.limited.limitResponse.queuing"
    );
    let o = plc(
        "p",
        json!({"type": "Limited", "limited": {"limitResponse": {}}}),
    );
    assert_eq!(
        errs(PriorityLevelConfigurationStrategy.validate(&o))[0].1,
        "Unsupported value: \"\": supported values: \"Queue\", \"Reject\""
    );
    let mut o = plc(
        "p",
        json!({"type": "Limited", "limited": {"limitResponse": {"type": "Reject"}}}),
    );
    o["metadata"]["annotations"] = json!({PRESERVE_ZERO_SHARES_ANNOTATION: ""});
    assert_eq!(
        errs(PriorityLevelConfigurationStrategy.validate(&o))[0].0,
        "metadata.annotations"
    );
}

#[test]
fn mandatory_priority_levels() {
    let mut e = plc(
        "exempt",
        json!({"type": "Exempt", "exempt": {"nominalConcurrencyShares": 10, "lendablePercent": 20}}),
    );
    PriorityLevelConfigurationStrategy.default(&mut e);
    assert!(PriorityLevelConfigurationStrategy.validate(&e).is_empty());
    let mut c = plc(
        "catch-all",
        json!({"type": "Limited", "limited": {"nominalConcurrencyShares": 6, "limitResponse": {"type": "Reject"}}}),
    );
    PriorityLevelConfigurationStrategy.default(&mut c);
    let got = errs(PriorityLevelConfigurationStrategy.validate(&c));
    assert_eq!(got.len(), 1);
    assert!(got[0]
        .1
        .ends_with("spec of 'catch-all' must equal the fixed value"));
    c["spec"]["limited"]["nominalConcurrencyShares"] = json!(5);
    assert!(PriorityLevelConfigurationStrategy.validate(&c).is_empty());
}

#[test]
fn cells() {
    let o = json!({"spec": {"priorityLevelConfiguration": {"name": "pl"}, "matchingPrecedence": 500}, "status": {"conditions": [{"type": "Dangling", "status": "False"}]}});
    let cells: Vec<Value> = FLOW_SCHEMA_COLUMNS.iter().map(|c| (c.cell)(&o)).collect();
    assert_eq!(cells[1..4], [json!("pl"), json!(500), json!("<none>")]);
    assert_eq!(cells[5], "False");
    assert_eq!((FLOW_SCHEMA_COLUMNS[5].cell)(&json!({})), "?");
    let o = json!({"spec": {"type": "Limited", "limited": {"nominalConcurrencyShares": 30, "limitResponse": {"type": "Queue", "queuing": {"queues": 64, "handSize": 8, "queueLengthLimit": 50}}}}});
    let cells: Vec<Value> = PRIORITY_LEVEL_COLUMNS
        .iter()
        .map(|c| (c.cell)(&o))
        .collect();
    assert_eq!(
        cells[1..6],
        [json!("Limited"), json!(30), json!(64), json!(8), json!(50)]
    );
    let o = json!({"spec": {"type": "Exempt", "exempt": {}}});
    let cells: Vec<Value> = PRIORITY_LEVEL_COLUMNS
        .iter()
        .map(|c| (c.cell)(&o))
        .collect();
    assert_eq!(
        cells[2..6],
        [
            json!("<none>"),
            json!("<none>"),
            json!("<none>"),
            json!("<none>")
        ]
    );
}
