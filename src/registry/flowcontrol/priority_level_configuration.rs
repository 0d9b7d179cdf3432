//! PriorityLevelConfiguration (upstream's
//! pkg/registry/flowcontrol/prioritylevelconfiguration).

use serde_json::{json, Map, Value};

use super::{int, mandatory_priority_level, present, semantic, spec_value, validate_conditions};
use crate::registry::helpers::{invalid_raw, obj_mut, s};
use crate::registry::strategy::{age_column, name_column, set_default, Column, Strategy};
use crate::registry::validation::FieldError;

const MAX_QUEUES: i64 = 10_000_000;
/// shufflesharding.MaxHashBits.
const MAX_HASH_BITS: f64 = 60.0;
pub(super) const PRESERVE_ZERO_SHARES_ANNOTATION: &str =
    "flowcontrol.k8s.io/v1beta3-preserve-zero-concurrency-shares";

pub struct PriorityLevelConfigurationStrategy;

fn validate_percent(v: &Value, path: String, errs: &mut Vec<FieldError>) {
    if let Some(p) = v.as_i64() {
        if !(0..=100).contains(&p) {
            errs.push(FieldError::invalid(
                path,
                json!(p),
                "must be between 0 and 100, inclusive",
            ));
        }
    }
}

fn validate_queuing(q: &Value, errs: &mut Vec<FieldError>) {
    let p = "spec.limited.limitResponse.queuing";
    let qll = int(&q["queueLengthLimit"]);
    if qll <= 0 {
        errs.push(FieldError::invalid(
            format!("{p}.queueLengthLimit"),
            json!(qll),
            "must be positive",
        ));
    }
    let queues = int(&q["queues"]);
    if queues <= 0 {
        errs.push(FieldError::invalid(
            format!("{p}.queues"),
            json!(queues),
            "must be positive",
        ));
    } else if queues > MAX_QUEUES {
        errs.push(FieldError::invalid(
            format!("{p}.queues"),
            json!(queues),
            format!("must not be greater than {MAX_QUEUES}"),
        ));
    }
    let hand = int(&q["handSize"]);
    let entropy = ((queues as f64).log2() * hand as f64).ceil();
    if hand <= 0 {
        errs.push(FieldError::invalid(
            format!("{p}.handSize"),
            json!(hand),
            "must be positive",
        ));
    } else if hand > queues {
        errs.push(FieldError::invalid(
            format!("{p}.handSize"),
            json!(hand),
            format!("should not be greater than queues ({queues})"),
        ));
    } else if entropy > MAX_HASH_BITS {
        errs.push(FieldError::invalid(
            format!("{p}.handSize"),
            json!(hand),
            format!("required entropy bits of deckSize {queues} and handSize {hand} should not be greater than 60"),
        ));
    }
}

fn validate_limited(l: &Value, errs: &mut Vec<FieldError>) {
    let p = "spec.limited";
    let ncs = int(&l["nominalConcurrencyShares"]);
    if ncs < 0 {
        errs.push(FieldError::invalid(
            format!("{p}.nominalConcurrencyShares"),
            json!(ncs),
            "must be a non-negative integer",
        ));
    }
    let lr = &l["limitResponse"];
    match s(lr, "type") {
        "Reject" => {
            if present(lr, "queuing") {
                errs.push(FieldError::forbidden(
                    format!("{p}.limitResponse.queuing"),
                    "must be nil if limited.limitResponse.type is not Limited",
                ));
            }
        }
        "Queue" => {
            if present(lr, "queuing") {
                validate_queuing(&lr["queuing"], errs);
            } else {
                errs.push(FieldError::required(
                    format!("{p}.limitResponse.queuing"),
                    "must not be empty if limited.limitResponse.type is Limited",
                ));
            }
        }
        other => errs.push(FieldError::not_supported(
            format!("{p}.limitResponse.type"),
            json!(other),
            &["Queue", "Reject"],
        )),
    }
    validate_percent(&l["lendablePercent"], format!("{p}.lendablePercent"), errs);
    if let Some(b) = l["borrowingLimitPercent"].as_i64() {
        if b < 0 {
            errs.push(FieldError::invalid(
                format!("{p}.borrowingLimitPercent"),
                json!(b),
                "if specified, must be a non-negative integer",
            ));
        }
    }
}

fn validate_priority_level_spec(name: &str, spec: &Value, errs: &mut Vec<FieldError>) {
    let ty = s(spec, "type");
    if (name == "exempt") != (ty == "Exempt") {
        errs.push(FieldError::invalid(
            "spec.type",
            json!(ty),
            "type must be 'Exempt' if and only if name is 'exempt'",
        ));
    }
    match ty {
        "Exempt" => {
            if present(spec, "limited") {
                errs.push(FieldError::forbidden(
                    "spec.limited",
                    "must be nil if the type is not Limited",
                ));
            }
            let e = &spec["exempt"];
            if let Some(n) = e["nominalConcurrencyShares"].as_i64().filter(|n| *n < 0) {
                errs.push(FieldError::invalid(
                    "spec.exempt.nominalConcurrencyShares",
                    json!(n),
                    "must be a non-negative integer",
                ));
            }
            validate_percent(
                &e["lendablePercent"],
                "spec.exempt.lendablePercent".into(),
                errs,
            );
        }
        "Limited" => {
            if present(spec, "exempt") {
                errs.push(FieldError::forbidden(
                    "spec.exempt",
                    "must be nil if the type is Limited",
                ));
            }
            if present(spec, "limited") {
                validate_limited(&spec["limited"], errs);
            } else {
                errs.push(FieldError::required(
                    "spec.limited",
                    "must not be empty when type is Limited",
                ));
            }
        }
        other => errs.push(FieldError::not_supported(
            "spec.type",
            json!(other),
            &["Exempt", "Limited"],
        )),
    }
}

fn validate_priority_level(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let name = crate::registry::meta::name(obj);
    if obj["metadata"]["annotations"]
        .get(PRESERVE_ZERO_SHARES_ANNOTATION)
        .is_some()
    {
        errs.push(FieldError::forbidden(
            "metadata.annotations",
            format!("annotation '{PRESERVE_ZERO_SHARES_ANNOTATION}' is forbidden"),
        ));
    }
    let spec = &obj["spec"];
    validate_priority_level_spec(name, spec, &mut errs);
    if let Some(fixed) = mandatory_priority_level(name) {
        // Of the exempt level only `spec.exempt` may differ from the fixed value.
        let (mut have, mut want) = (semantic(spec), semantic(&fixed));
        let detail = if name == "exempt" {
            for v in [&mut have, &mut want] {
                if let Some(m) = v.as_object_mut() {
                    m.remove("exempt");
                }
            }
            format!("spec of '{name}' except the 'spec.exempt' field must equal the fixed value")
        } else {
            format!("spec of '{name}' must equal the fixed value")
        };
        if have != want {
            errs.push(invalid_raw("spec", &spec_value(spec), &detail));
        }
    }
    validate_conditions(&obj["status"], &mut errs);
    errs
}

/// A cell of the limited level (`<none>` for an exempt one).
fn limited_cell(o: &Value, f: fn(&Value) -> Option<i64>) -> Value {
    let l = &o["spec"]["limited"];
    if l.is_null() {
        return json!("<none>");
    }
    f(l).map_or(json!("<none>"), |n| json!(n))
}

fn queuing_int(l: &Value, key: &str) -> Option<i64> {
    let q = &l["limitResponse"]["queuing"];
    (!q.is_null()).then(|| int(&q[key]))
}

pub(super) static PRIORITY_LEVEL_COLUMNS: std::sync::LazyLock<Vec<Column>> =
    std::sync::LazyLock::new(|| {
        vec![
        name_column(),
        Column { name: "Type", kind: "string", format: "", description: "`type` indicates whether this priority level is subject to limitation on request execution.  A value of `\"Exempt\"` means that requests of this priority level are not subject to a limit (and thus are never queued) and do not detract from the capacity made available to other priority levels.  A value of `\"Limited\"` means that (a) requests of this priority level _are_ subject to limits and (b) some of the server's limited capacity is made available exclusively to this priority level. Required.", priority: 0, cell: |o| json!(s(&o["spec"], "type")) },
        Column { name: "NominalConcurrencyShares", kind: "string", format: "", description: "`nominalConcurrencyShares` (NCS) contributes to the computation of the NominalConcurrencyLimit (NominalCL) of this level. This is the number of execution seats available at this priority level. This is used both for requests dispatched from this priority level as well as requests dispatched from other priority levels borrowing seats from this level. The server's concurrency limit (ServerCL) is divided among the Limited priority levels in proportion to their NCS values:\n\nNominalCL(i)  = ceil( ServerCL * NCS(i) / sum_ncs ) sum_ncs = sum[priority level k] NCS(k)\n\nBigger numbers mean a larger nominal concurrency limit, at the expense of every other priority level.\n\nIf not specified, this field defaults to a value of 30.\n\nSetting this field to zero supports the construction of a \"jail\" for this priority level that is used to hold some request(s)", priority: 0, cell: |o| limited_cell(o, |l| Some(int(&l["nominalConcurrencyShares"]))) },
        Column { name: "Queues", kind: "string", format: "", description: "`queues` is the number of queues for this priority level. The queues exist independently at each apiserver. The value must be positive.  Setting it to 1 effectively precludes shufflesharding and thus makes the distinguisher method of associated flow schemas irrelevant.  This field has a default value of 64.", priority: 0, cell: |o| limited_cell(o, |l| queuing_int(l, "queues")) },
        Column { name: "HandSize", kind: "string", format: "", description: "`handSize` is a small positive number that configures the shuffle sharding of requests into queues.  When enqueuing a request at this priority level the request's flow identifier (a string pair) is hashed and the hash value is used to shuffle the list of queues and deal a hand of the size specified here.  The request is put into one of the shortest queues in that hand. `handSize` must be no larger than `queues`, and should be significantly smaller (so that a few heavy flows do not saturate most of the queues).  See the user-facing documentation for more extensive guidance on setting this field.  This field has a default value of 8.", priority: 0, cell: |o| limited_cell(o, |l| queuing_int(l, "handSize")) },
        Column { name: "QueueLengthLimit", kind: "string", format: "", description: "`queueLengthLimit` is the maximum number of requests allowed to be waiting in a given queue of this priority level at a time; excess requests are rejected.  This value must be positive.  If not specified, it will be defaulted to 50.", priority: 0, cell: |o| limited_cell(o, |l| queuing_int(l, "queueLengthLimit")) },
        age_column(),
    ]
    });

/// SetDefaults_QueuingConfiguration: zero means unset.
fn default_queuing(q: &mut Map<String, Value>) {
    for (key, value) in [("handSize", 8), ("queues", 64), ("queueLengthLimit", 50)] {
        if int(q.get(key).unwrap_or(&Value::Null)) == 0 {
            q.insert(key.into(), json!(value));
        }
    }
}

impl Strategy for PriorityLevelConfigurationStrategy {
    fn default(&self, obj: &mut Value) {
        let Some(spec) = obj_mut(obj, "spec") else {
            return;
        };
        if let Some(l) = spec.get_mut("limited").and_then(Value::as_object_mut) {
            // v1's nominalConcurrencyShares is a pointer: only a missing one defaults.
            set_default(l, "nominalConcurrencyShares", json!(30));
            set_default(l, "lendablePercent", json!(0));
            if let Some(q) = l
                .get_mut("limitResponse")
                .and_then(|r| r.get_mut("queuing"))
                .and_then(Value::as_object_mut)
            {
                default_queuing(q);
            }
        }
        if let Some(e) = spec.get_mut("exempt").and_then(Value::as_object_mut) {
            set_default(e, "nominalConcurrencyShares", json!(0));
            set_default(e, "lendablePercent", json!(0));
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_priority_level(obj)
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&PRIORITY_LEVEL_COLUMNS)
    }
}
