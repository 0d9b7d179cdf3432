//! Job (upstream's pkg/registry/batch/job, SetDefaults_Job and ValidateJob*),
//! with the JobSpec defaulting and validation a CronJob's jobTemplate shares:
//! the spec is Job's, so it is found here and cron_job.rs borrows it. Also
//! the generated selector and the job-name / controller-uid labels a Job's
//! pods are known by.

use serde_json::{json, Map, Value};

use crate::registry::core::{default_pod_spec, validate_pod_spec};
use crate::registry::helpers::{
    self, container_cells, format_label_selector, immutable, items, nonnegative, s,
};
use crate::registry::strategy::{
    age_column, human_age, human_duration, name_column, set_default, Column, Strategy,
};
use crate::registry::validation::{self, FieldError};

pub const JOB_NAME_LABEL: &str = "batch.kubernetes.io/job-name";
pub const CONTROLLER_UID_LABEL: &str = "batch.kubernetes.io/controller-uid";
pub const LEGACY_JOB_NAME_LABEL: &str = "job-name";
pub const LEGACY_CONTROLLER_UID_LABEL: &str = "controller-uid";

const MAX_PARALLELISM_FOR_INDEXED_JOB: i64 = 100_000;
const MAX_FAILED_INDEXES_FOR_INDEXED_JOB: i64 = 100_000;
const COMPLETIONS_SOFT_LIMIT: i64 = 100_000;
const PARALLELISM_LIMIT_FOR_HIGH_COMPLETIONS: i64 = 10_000;
const MAX_FAILED_INDEXES_LIMIT_FOR_HIGH_COMPLETIONS: i64 = 10_000;

pub(super) fn spec_mut(obj: &mut Value) -> Option<&mut Map<String, Value>> {
    obj.get_mut("spec").and_then(Value::as_object_mut)
}

/// Pod template defaults (SetDefaults_PodSpec and friends) of a template.
pub(super) fn default_template(template: Option<&mut Value>) {
    if let Some(ps) = template
        .and_then(|t| t.get_mut("spec"))
        .and_then(Value::as_object_mut)
    {
        default_pod_spec(ps);
    }
}

/// upstream's SetDefaults_Job for the spec (labels are handled by the caller).
fn default_job_spec(spec: &mut Map<String, Value>) {
    let unset = |m: &Map<String, Value>, k: &str| m.get(k).is_none_or(Value::is_null);
    if unset(spec, "completions") && unset(spec, "parallelism") {
        spec.insert("completions".into(), json!(1));
        spec.insert("parallelism".into(), json!(1));
    }
    set_default(spec, "parallelism", json!(1));
    let backoff = if unset(spec, "backoffLimitPerIndex") {
        6
    } else {
        i32::MAX as i64
    };
    set_default(spec, "backoffLimit", json!(backoff));
    set_default(spec, "completionMode", json!("NonIndexed"));
    set_default(spec, "suspend", json!(false));
    let has_pfp = !unset(spec, "podFailurePolicy");
    if let Some(rules) = spec
        .get_mut("podFailurePolicy")
        .and_then(|p| p.get_mut("rules"))
        .and_then(Value::as_array_mut)
    {
        for r in rules {
            if let Some(conds) = r.get_mut("onPodConditions").and_then(Value::as_array_mut) {
                for c in conds.iter_mut().filter_map(Value::as_object_mut) {
                    set_default(c, "status", json!("True"));
                }
            }
        }
    }
    set_default(
        spec,
        "podReplacementPolicy",
        json!(if has_pfp {
            "Failed"
        } else {
            "TerminatingOrFailed"
        }),
    );
    set_default(spec, "manualSelector", json!(false));
    default_template(spec.get_mut("template"));
}

/// What validateJobSpec checks (shared by Jobs and CronJobs' job templates).
pub(super) fn validate_job_spec_common(spec: &Value, path: &str, errs: &mut Vec<FieldError>) {
    for f in [
        "parallelism",
        "completions",
        "activeDeadlineSeconds",
        "backoffLimit",
        "ttlSecondsAfterFinished",
        "backoffLimitPerIndex",
    ] {
        nonnegative(&format!("{path}.{f}"), &spec[f], errs);
    }
    if !spec["maxFailedIndexes"].is_null() {
        nonnegative(
            &format!("{path}.maxFailedIndexes"),
            &spec["maxFailedIndexes"],
            errs,
        );
        if spec["backoffLimitPerIndex"].is_null() {
            errs.push(FieldError::required(
                format!("{path}.backoffLimitPerIndex"),
                "when maxFailedIndexes is specified",
            ));
        }
    }
    if let Some(mb) = spec["managedBy"].as_str() {
        errs.extend(helpers::domain_prefixed_path(
            &format!("{path}.managedBy"),
            mb,
        ));
        if mb.len() > 63 {
            errs.push(FieldError::too_long(format!("{path}.managedBy"), 63));
        }
    }
    let mode = spec["completionMode"].as_str();
    let completions = spec["completions"].as_i64();
    let parallelism = spec["parallelism"].as_i64();
    let mfi = spec["maxFailedIndexes"].as_i64();
    if let Some(m) = mode {
        if m != "NonIndexed" && m != "Indexed" {
            errs.push(FieldError::not_supported(
                format!("{path}.completionMode"),
                json!(m),
                &["NonIndexed", "Indexed"],
            ));
        }
        if m == "Indexed" {
            if completions.is_none() {
                errs.push(FieldError::required(
                    format!("{path}.completions"),
                    "when completion mode is Indexed",
                ));
            }
            if let Some(p) = parallelism.filter(|p| *p > MAX_PARALLELISM_FOR_INDEXED_JOB) {
                errs.push(FieldError::invalid(
                    format!("{path}.parallelism"),
                    json!(p),
                    format!("must be less than or equal to {MAX_PARALLELISM_FOR_INDEXED_JOB} when completion mode is Indexed"),
                ));
            }
            if let (Some(c), Some(f)) = (completions, mfi) {
                if f > c {
                    errs.push(FieldError::invalid(
                        format!("{path}.maxFailedIndexes"),
                        json!(f),
                        "must be less than or equal to completions",
                    ));
                }
            }
            if let Some(f) = mfi.filter(|f| *f > MAX_FAILED_INDEXES_FOR_INDEXED_JOB) {
                errs.push(FieldError::invalid(
                    format!("{path}.maxFailedIndexes"),
                    json!(f),
                    format!("must be less than or equal to {MAX_FAILED_INDEXES_FOR_INDEXED_JOB}"),
                ));
            }
            if completions.is_some_and(|c| c > COMPLETIONS_SOFT_LIMIT)
                && !spec["backoffLimitPerIndex"].is_null()
            {
                if mfi.is_none() {
                    errs.push(FieldError::required(
                        format!("{path}.maxFailedIndexes"),
                        format!(
                            "must be specified when completions is above {COMPLETIONS_SOFT_LIMIT}"
                        ),
                    ));
                }
                if let Some(p) = parallelism.filter(|p| *p > PARALLELISM_LIMIT_FOR_HIGH_COMPLETIONS)
                {
                    errs.push(FieldError::invalid(format!("{path}.parallelism"), json!(p), format!("must be less than or equal to {PARALLELISM_LIMIT_FOR_HIGH_COMPLETIONS} when completions are above {COMPLETIONS_SOFT_LIMIT} and used with backoff limit per index")));
                }
                if let Some(f) = mfi.filter(|f| *f > MAX_FAILED_INDEXES_LIMIT_FOR_HIGH_COMPLETIONS)
                {
                    errs.push(FieldError::invalid(format!("{path}.maxFailedIndexes"), json!(f), format!("must be less than or equal to {MAX_FAILED_INDEXES_LIMIT_FOR_HIGH_COMPLETIONS} when completions are above {COMPLETIONS_SOFT_LIMIT} and used with backoff limit per index")));
                }
            }
        }
    }
    if mode.is_none_or(|m| m == "NonIndexed") {
        if let Some(b) = spec["backoffLimitPerIndex"].as_i64() {
            errs.push(FieldError::invalid(
                format!("{path}.backoffLimitPerIndex"),
                json!(b),
                "requires indexed completion mode",
            ));
        }
        if let Some(f) = mfi {
            errs.push(FieldError::invalid(
                format!("{path}.maxFailedIndexes"),
                json!(f),
                "requires indexed completion mode",
            ));
        }
    }
    if !spec["podFailurePolicy"].is_null() {
        validate_pod_failure_policy(spec, &format!("{path}.podFailurePolicy"), errs);
    }
    if !spec["successPolicy"].is_null() {
        if mode != Some("Indexed") {
            errs.push(FieldError::invalid(
                format!("{path}.successPolicy"),
                spec["successPolicy"].clone(),
                "requires indexed completion mode",
            ));
        } else if items(&spec["successPolicy"]["rules"]).is_empty() {
            errs.push(FieldError::required(
                format!("{path}.successPolicy.rules"),
                "at least one rules must be specified when the successPolicy is specified",
            ));
        }
    }
    if let Some(p) = spec["podReplacementPolicy"].as_str() {
        if !spec["podFailurePolicy"].is_null() {
            if p != "Failed" {
                errs.push(FieldError::not_supported(
                    format!("{path}.podReplacementPolicy"),
                    json!(p),
                    &["Failed"],
                ));
            }
        } else if p != "Failed" && p != "TerminatingOrFailed" {
            errs.push(FieldError::not_supported(
                format!("{path}.podReplacementPolicy"),
                json!(p),
                &["Failed", "TerminatingOrFailed"],
            ));
        }
    }
    let template = &spec["template"];
    helpers::validate_labels(
        &template["metadata"]["labels"],
        &format!("{path}.template.metadata.labels"),
        errs,
    );
    errs.extend(validate_pod_spec(
        &template["spec"],
        &format!("{path}.template.spec"),
    ));
    let rp = template["spec"]["restartPolicy"].as_str().unwrap_or("");
    let rp_path = format!("{path}.template.spec.restartPolicy");
    if rp == "Always" || rp.is_empty() {
        errs.push(FieldError::required(
            rp_path,
            "valid values: \"OnFailure\", \"Never\"",
        ));
    } else if rp != "OnFailure" && rp != "Never" {
        errs.push(FieldError::not_supported(
            rp_path,
            json!(rp),
            &["OnFailure", "Never"],
        ));
    } else if !spec["podFailurePolicy"].is_null() && rp != "Never" {
        errs.push(FieldError::invalid(
            rp_path,
            json!(rp),
            "only \"Never\" is supported when podFailurePolicy is specified",
        ));
    }
}

fn validate_pod_failure_policy(spec: &Value, path: &str, errs: &mut Vec<FieldError>) {
    let rules = items(&spec["podFailurePolicy"]["rules"]);
    let rules_path = format!("{path}.rules");
    if rules.len() > 20 {
        errs.push(FieldError {
            kind: validation::ErrorType::Invalid,
            field: rules_path.clone(),
            value: None,
            detail: format!("Too many: {}: must have at most 20 items", rules.len()),
        });
    }
    let mut names: Vec<String> = Vec::new();
    for key in ["containers", "initContainers"] {
        for c in items(&spec["template"]["spec"][key]) {
            names.push(s(&c, "name").to_string());
        }
    }
    const ACTIONS: [&str; 4] = ["Count", "FailIndex", "FailJob", "Ignore"];
    for (i, r) in rules.iter().enumerate() {
        let rp = format!("{rules_path}[{i}]");
        match s(r, "action") {
            "" => errs.push(FieldError::required(
                format!("{rp}.action"),
                "valid values: [\"Count\" \"FailIndex\" \"FailJob\" \"Ignore\"]",
            )),
            "FailIndex" => {
                if spec["backoffLimitPerIndex"].is_null() {
                    errs.push(FieldError::invalid(
                        format!("{rp}.action"),
                        json!("FailIndex"),
                        "requires the backoffLimitPerIndex to be set",
                    ));
                }
            }
            a if !ACTIONS.contains(&a) => errs.push(FieldError::not_supported(
                format!("{rp}.action"),
                json!(a),
                &ACTIONS,
            )),
            _ => {}
        }
        let exit = &r["onExitCodes"];
        let conds = items(&r["onPodConditions"]);
        if !exit.is_null() {
            let ep = format!("{rp}.onExitCodes");
            let op = s(exit, "operator");
            if op.is_empty() {
                errs.push(FieldError::required(
                    format!("{ep}.operator"),
                    "valid values: [\"In\" \"NotIn\"]",
                ));
            } else if op != "In" && op != "NotIn" {
                errs.push(FieldError::not_supported(
                    format!("{ep}.operator"),
                    json!(op),
                    &["In", "NotIn"],
                ));
            }
            if let Some(c) = exit["containerName"].as_str() {
                if !names.iter().any(|n| n == c) {
                    errs.push(FieldError::invalid(
                        format!("{ep}.containerName"),
                        json!(c),
                        "must be one of the container or initContainer names in the pod template",
                    ));
                }
            }
            let values: Vec<i64> = items(&exit["values"])
                .iter()
                .filter_map(Value::as_i64)
                .collect();
            if values.is_empty() {
                errs.push(FieldError::invalid(
                    format!("{ep}.values"),
                    json!([]),
                    "at least one value is required",
                ));
            }
            let mut seen = std::collections::HashSet::new();
            for (j, v) in values.iter().enumerate() {
                if op == "In" && *v == 0 {
                    errs.push(FieldError::invalid(
                        format!("{ep}.values[{j}]"),
                        json!(v),
                        "must not be 0 for the In operator",
                    ));
                }
                if !seen.insert(*v) {
                    errs.push(FieldError::duplicate(format!("{ep}.values[{j}]"), json!(v)));
                }
            }
            if values.windows(2).any(|w| w[0] > w[1]) {
                errs.push(FieldError::invalid(
                    format!("{ep}.values"),
                    json!(values),
                    "must be ordered",
                ));
            }
        }
        for (j, c) in conds.iter().enumerate() {
            let cp = format!("{rp}.onPodConditions[{j}]");
            for m in validation::qualified_name(s(c, "type")) {
                errs.push(FieldError::invalid(
                    format!("{cp}.type"),
                    json!(s(c, "type")),
                    m,
                ));
            }
            match s(c, "status") {
                "" => errs.push(FieldError::required(
                    format!("{cp}.status"),
                    "valid values: [\"False\" \"True\" \"Unknown\"]",
                )),
                "True" | "False" | "Unknown" => {}
                other => errs.push(FieldError::not_supported(
                    format!("{cp}.status"),
                    json!(other),
                    &["False", "True", "Unknown"],
                )),
            }
        }
        if !exit.is_null() && !conds.is_empty() {
            errs.push(FieldError {
                kind: validation::ErrorType::Invalid,
                field: rp.clone(),
                value: None,
                detail: "specifying both OnExitCodes and OnPodConditions is not supported".into(),
            });
        }
        if exit.is_null() && conds.is_empty() {
            errs.push(FieldError {
                kind: validation::ErrorType::Invalid,
                field: rp.clone(),
                value: None,
                detail: "specifying one of OnExitCodes and OnPodConditions is required".into(),
            });
        }
    }
}

pub struct JobStrategy;

fn has_condition(o: &Value, ty: &str) -> bool {
    items(&o["status"]["conditions"])
        .iter()
        .find(|c| s(c, "type") == ty)
        .is_some_and(|c| s(c, "status") == "True")
}

fn job_status_cell(o: &Value) -> Value {
    let st = if has_condition(o, "Complete") {
        "Complete"
    } else if has_condition(o, "Failed") {
        "Failed"
    } else if crate::registry::meta::is_deleting(o) {
        "Terminating"
    } else if has_condition(o, "Suspended") {
        "Suspended"
    } else if has_condition(o, "FailureTarget") {
        "FailureTarget"
    } else {
        "Running"
    };
    json!(st)
}

fn job_completions_cell(o: &Value) -> Value {
    let succeeded = o["status"]["succeeded"].as_i64().unwrap_or(0);
    json!(match o["spec"]["completions"].as_i64() {
        Some(c) => format!("{succeeded}/{c}"),
        None => {
            let p = o["spec"]["parallelism"].as_i64().unwrap_or(0);
            if p > 1 {
                format!("{succeeded}/1 of {p}")
            } else {
                format!("{succeeded}/1")
            }
        }
    })
}

fn job_duration_cell(o: &Value) -> Value {
    let Some(start) = o["status"]["startTime"].as_str() else {
        return json!("");
    };
    match o["status"]["completionTime"].as_str() {
        None => json!(human_age(start)),
        Some(end) => json!(helpers::seconds_between(start, end)
            .map(human_duration)
            .unwrap_or_else(|| "<unknown>".into())),
    }
}

pub(super) fn template_containers(spec: &Value) -> Value {
    json!(container_cells(&spec["template"]["spec"]).0)
}

pub(super) fn template_images(spec: &Value) -> Value {
    json!(container_cells(&spec["template"]["spec"]).1)
}

pub(super) const CONTAINERS_DESCRIPTION: &str = "Names of each container in the template.";
pub(super) const IMAGES_DESCRIPTION: &str = "Images referenced by each container in the template.";
pub(super) const JOB_SELECTOR_DESCRIPTION: &str = "A label query over pods that should match the pod count. Normally, the system sets this field for you. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors";

static JOB_COLUMNS: std::sync::LazyLock<Vec<Column>> = std::sync::LazyLock::new(|| {
    vec![
        name_column(),
        Column { name: "Status", kind: "string", format: "", description: "Status of the job.", priority: 0, cell: job_status_cell },
        Column { name: "Completions", kind: "string", format: "", description: "The number of pods which reached phase Succeeded. The value increases monotonically for a given spec. However, it may decrease in reaction to scale down of elastic indexed jobs.", priority: 0, cell: job_completions_cell },
        Column { name: "Duration", kind: "string", format: "", description: "Time required to complete the job.", priority: 0, cell: job_duration_cell },
        age_column(),
        Column { name: "Containers", kind: "string", format: "", description: CONTAINERS_DESCRIPTION, priority: 1, cell: |o| template_containers(&o["spec"]) },
        Column { name: "Images", kind: "string", format: "", description: IMAGES_DESCRIPTION, priority: 1, cell: |o| template_images(&o["spec"]) },
        Column { name: "Selector", kind: "string", format: "", description: JOB_SELECTOR_DESCRIPTION, priority: 1, cell: |o| json!(format_label_selector(&o["spec"]["selector"])) },
    ]
});

/// Adds the generated selector and labels (upstream's generateSelector).
fn generate_selector(obj: &mut Value) {
    let name = crate::registry::meta::name(obj).to_string();
    let uid = crate::registry::meta::str_field(obj, "uid").to_string();
    let wanted = [
        (LEGACY_JOB_NAME_LABEL, &name),
        (JOB_NAME_LABEL, &name),
        (LEGACY_CONTROLLER_UID_LABEL, &uid),
        (CONTROLLER_UID_LABEL, &uid),
    ];
    // upstream's defaulting copies the template's label map into the Job's
    // metadata by reference, so the Job gets the generated labels too.
    let shared = {
        let ml = &obj["metadata"]["labels"];
        ml.is_object() && *ml == obj["spec"]["template"]["metadata"]["labels"]
    };
    let Some(spec) = spec_mut(obj) else { return };
    let template = helpers::ensure_obj(spec, "template");
    let tmeta = helpers::ensure_obj(template, "metadata");
    let labels = helpers::ensure_obj(tmeta, "labels");
    for (k, v) in wanted {
        labels.entry(k).or_insert_with(|| json!(v));
    }
    let sel = helpers::ensure_obj(spec, "selector");
    let ml = helpers::ensure_obj(sel, "matchLabels");
    ml.entry(CONTROLLER_UID_LABEL)
        .or_insert_with(|| json!(uid.clone()));
    if shared {
        let meta = crate::registry::meta::meta_mut(obj);
        let labels = helpers::ensure_obj(meta, "labels");
        for (k, v) in wanted {
            labels.entry(k).or_insert_with(|| json!(v));
        }
    }
}

/// upstream's ValidateHasLabel.
fn has_label(labels: &Value, key: &str, expected: &str, errs: &mut Vec<FieldError>) {
    let field = format!("spec.template.metadata.labels[{key}]");
    match labels.get(key).and_then(Value::as_str) {
        None => errs.push(FieldError::required(field, expected)),
        Some(v) if v != expected => errs.push(FieldError::invalid(
            field,
            labels.clone(),
            format!("must be '{expected}'"),
        )),
        _ => {}
    }
}

fn validate_job(obj: &Value, require_prefixed: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let spec = &obj["spec"];
    let name = crate::registry::meta::name(obj);
    let uid = crate::registry::meta::str_field(obj, "uid");
    // validateGeneratedSelector
    if spec["manualSelector"].as_bool() != Some(true) && !spec["selector"].is_null() {
        if uid.is_empty() {
            errs.push(FieldError::required("metadata.uid", ""));
        }
        let labels = &spec["template"]["metadata"]["labels"];
        has_label(labels, LEGACY_CONTROLLER_UID_LABEL, uid, &mut errs);
        has_label(labels, LEGACY_JOB_NAME_LABEL, name, &mut errs);
        let mut expected = json!({LEGACY_CONTROLLER_UID_LABEL: uid, LEGACY_JOB_NAME_LABEL: name});
        if require_prefixed {
            has_label(labels, CONTROLLER_UID_LABEL, uid, &mut errs);
            has_label(labels, JOB_NAME_LABEL, name, &mut errs);
            expected[CONTROLLER_UID_LABEL] = json!(uid);
            expected[JOB_NAME_LABEL] = json!(name);
        }
        if helpers::selector_matches(&spec["selector"], &expected) == Some(false) {
            errs.push(FieldError::invalid(
                "spec.selector",
                spec["selector"].clone(),
                "`selector` not auto-generated",
            ));
        }
    }
    // ValidateJobSpec
    validate_job_spec_common(spec, "spec", &mut errs);
    if spec["selector"].is_null() {
        errs.push(FieldError::required("spec.selector", ""));
    } else {
        errs.extend(helpers::validate_label_selector(
            &spec["selector"],
            "spec.selector",
        ));
    }
    let tlabels = &spec["template"]["metadata"]["labels"];
    if helpers::selector_matches(&spec["selector"], tlabels) == Some(false)
        && !spec["selector"].is_null()
    {
        errs.push(FieldError::invalid(
            "spec.template.metadata.labels",
            if tlabels.is_null() {
                json!({})
            } else {
                tlabels.clone()
            },
            "`selector` does not match template `labels`",
        ));
    }
    if spec["completionMode"].as_str() == Some("Indexed") {
        if let Some(c) = spec["completions"].as_i64().filter(|c| *c > 0) {
            let host = format!("{name}-{}", c - 1);
            if !validation::dns1123_label(&host).is_empty() {
                errs.push(FieldError::invalid(
                    "metadata.name",
                    json!(name),
                    format!("will not able to create pod with invalid DNS label: {host}"),
                ));
            }
        }
    }
    errs
}

/// The template as compared on update: upstream lets suspended Jobs that
/// never started change their scheduling directives.
fn comparable_template(t: &Value, mutable_scheduling: bool) -> Value {
    let mut t = t.clone();
    if mutable_scheduling {
        if let Some(m) = t.get_mut("metadata").and_then(Value::as_object_mut) {
            m.remove("labels");
            m.remove("annotations");
        }
        if let Some(ps) = t.get_mut("spec").and_then(Value::as_object_mut) {
            for k in ["nodeSelector", "tolerations", "schedulingGates"] {
                ps.remove(k);
            }
            if let Some(a) = ps.get_mut("affinity").and_then(Value::as_object_mut) {
                a.remove("nodeAffinity");
                if a.is_empty() {
                    ps.remove("affinity");
                }
            }
        }
    }
    t
}

impl Strategy for JobStrategy {
    fn status_update(&self) -> crate::registry::strategy::StatusUpdate {
        crate::registry::strategy::StatusUpdate::AllButSpec
    }

    fn default(&self, obj: &mut Value) {
        let template_labels = obj["spec"]["template"]["metadata"]["labels"].clone();
        if template_labels.is_object()
            && obj["metadata"]["labels"]
                .as_object()
                .is_none_or(|m| m.is_empty())
        {
            crate::registry::meta::meta_mut(obj).insert("labels".into(), template_labels);
        }
        if let Some(spec) = spec_mut(obj) {
            default_job_spec(spec);
        }
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        if obj["spec"]["manualSelector"].as_bool() != Some(true) {
            generate_selector(obj);
        }
        if let Some(m) = obj.as_object_mut() {
            m.insert("status".into(), json!({}));
        }
        // Upstream's SetDefaults_Job runs again when the stored Job is
        // read back, after the generated labels joined the template: a Job
        // without labels of its own shows the template's, uid included.
        self.default(obj);
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_job(obj, true)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let ol = &old["spec"]["template"]["metadata"]["labels"];
        let require_prefixed =
            ol.get(JOB_NAME_LABEL).is_some() && ol.get(CONTROLLER_UID_LABEL).is_some();
        let mut errs = validate_job(new, require_prefixed);
        let (ns, os) = (&new["spec"], &old["spec"]);
        if ns["completionMode"].as_str() == Some("Indexed") {
            if ns["completions"] != os["completions"]
                && ns["completions"].as_i64().is_some()
                && ns["completions"] != ns["parallelism"]
            {
                errs.push(FieldError::invalid(
                    "spec.completions",
                    ns["completions"].clone(),
                    "can only be modified in tandem with spec.parallelism",
                ));
            }
        } else {
            immutable(
                "spec.completions",
                &ns["completions"],
                &os["completions"],
                &mut errs,
            );
        }
        immutable("spec.selector", &ns["selector"], &os["selector"], &mut errs);
        let mutable_scheduling =
            os["suspend"].as_bool() == Some(true) && old["status"]["startTime"].is_null();
        if comparable_template(&ns["template"], mutable_scheduling)
            != comparable_template(&os["template"], mutable_scheduling)
        {
            errs.push(FieldError::invalid(
                "spec.template",
                ns["template"].clone(),
                "field is immutable",
            ));
        }
        for f in [
            "completionMode",
            "podFailurePolicy",
            "backoffLimitPerIndex",
            "managedBy",
            "successPolicy",
        ] {
            immutable(&format!("spec.{f}"), &ns[f], &os[f], &mut errs);
        }
        errs
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&JOB_COLUMNS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job() -> Value {
        json!({
            "apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "pi", "namespace": "default"},
            "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "pi", "image": "perl:5.34"}]}}}
        })
    }

    fn created(mut o: Value) -> Value {
        JobStrategy.default(&mut o);
        crate::registry::meta::prepare_create(&mut o);
        JobStrategy.prepare_for_create(&mut o);
        o
    }

    #[test]
    fn job_defaults_match_upstream() {
        let o = created(job());
        let spec = &o["spec"];
        assert_eq!(spec["completions"], 1);
        assert_eq!(spec["parallelism"], 1);
        assert_eq!(spec["backoffLimit"], 6);
        assert_eq!(spec["completionMode"], "NonIndexed");
        assert_eq!(spec["suspend"], false);
        assert_eq!(spec["manualSelector"], false);
        assert_eq!(spec["podReplacementPolicy"], "TerminatingOrFailed");
        assert_eq!(spec["template"]["spec"]["dnsPolicy"], "ClusterFirst");
        let uid = o["metadata"]["uid"].as_str().unwrap();
        assert_eq!(spec["selector"]["matchLabels"][CONTROLLER_UID_LABEL], uid);
        let labels = &spec["template"]["metadata"]["labels"];
        assert_eq!(labels[CONTROLLER_UID_LABEL], uid);
        assert_eq!(labels[LEGACY_CONTROLLER_UID_LABEL], uid);
        assert_eq!(labels[JOB_NAME_LABEL], "pi");
        assert_eq!(labels[LEGACY_JOB_NAME_LABEL], "pi");
        assert_eq!(o["status"], json!({}));
        // No labels of its own: it shows the template's, as a Job read
        // back from upstream's storage does (defaulted again on read).
        assert_eq!(o["metadata"]["labels"], *labels);
        assert!(
            JobStrategy.validate(&o).is_empty(),
            "{:?}",
            JobStrategy.validate(&o)
        );
    }

    #[test]
    fn job_labels_follow_template_labels() {
        let mut j = job();
        j["spec"]["template"]["metadata"] = json!({"labels": {"app": "pi"}});
        j["spec"]["parallelism"] = json!(3);
        j["spec"]["podFailurePolicy"] = json!({"rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]});
        let o = created(j);
        assert_eq!(o["metadata"]["labels"]["app"], "pi");
        assert_eq!(o["metadata"]["labels"][JOB_NAME_LABEL], "pi");
        assert!(o["spec"]["completions"].is_null());
        assert_eq!(o["spec"]["podReplacementPolicy"], "Failed");
        assert_eq!(
            o["spec"]["podFailurePolicy"]["rules"][0]["onPodConditions"][0]["status"],
            "True"
        );
        assert!(JobStrategy.validate(&o).is_empty());
    }

    #[test]
    fn job_restart_policy_rules() {
        let mut j = job();
        j["spec"]["template"]["spec"]
            .as_object_mut()
            .unwrap()
            .remove("restartPolicy");
        let errs = JobStrategy.validate(&created(j));
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert_eq!(errs[0].field, "spec.template.spec.restartPolicy");
        assert_eq!(
            errs[0].message(),
            "Required value: valid values: \"OnFailure\", \"Never\""
        );
        let mut j = job();
        j["spec"]["template"]["spec"]["restartPolicy"] = json!("Sometimes");
        let errs = JobStrategy.validate(&created(j));
        // As upstream: the pod template's own check, then the Job's.
        assert_eq!(errs.len(), 2, "{errs:?}");
        assert_eq!(
            errs[1].message(),
            "Unsupported value: \"Sometimes\": supported values: \"OnFailure\", \"Never\""
        );
    }

    #[test]
    fn job_spec_rules() {
        let mut j = job();
        j["spec"]["parallelism"] = json!(-1);
        j["spec"]["completionMode"] = json!("Indexed");
        j["spec"]["completions"] = Value::Null;
        j["spec"]["maxFailedIndexes"] = json!(1);
        let errs = JobStrategy.validate(&created(j));
        let fields: Vec<(&str, String)> = errs
            .iter()
            .map(|e| (e.field.as_str(), e.message()))
            .collect();
        assert!(fields.contains(&(
            "spec.parallelism",
            "Invalid value: -1: must be greater than or equal to 0".into()
        )));
        assert!(fields.contains(&(
            "spec.backoffLimitPerIndex",
            "Required value: when maxFailedIndexes is specified".into()
        )));
        assert!(fields.contains(&(
            "spec.completions",
            "Required value: when completion mode is Indexed".into()
        )));
        let mut j = job();
        j["spec"]["manualSelector"] = json!(true);
        let errs = JobStrategy.validate(&created(j));
        assert_eq!(errs[0].field, "spec.selector");
        assert_eq!(errs[0].message(), "Required value");
        let mut j = job();
        j["spec"]["manualSelector"] = json!(true);
        j["spec"]["selector"] = json!({"matchLabels": {"a": "b"}});
        j["spec"]["template"]["metadata"] = json!({"labels": {"a": "c"}});
        let errs = JobStrategy.validate(&created(j));
        assert_eq!(errs[0].field, "spec.template.metadata.labels");
        assert_eq!(
            errs[0].message(),
            "Invalid value: {\"a\":\"c\"}: `selector` does not match template `labels`"
        );
    }

    #[test]
    fn job_wrong_generated_label() {
        let mut j = job();
        j["spec"]["template"]["metadata"] = json!({"labels": {"controller-uid": "nope"}});
        let o = created(j);
        let uid = o["metadata"]["uid"].as_str().unwrap();
        let errs = JobStrategy.validate(&o);
        assert_eq!(
            errs[0].field,
            "spec.template.metadata.labels[controller-uid]"
        );
        assert_eq!(errs[0].detail, format!("must be '{uid}'"));
        assert_eq!(errs.len(), 1, "{errs:?}");
    }

    #[test]
    fn job_template_immutable() {
        let old = created(job());
        let mut new = old.clone();
        new["spec"]["template"]["spec"]["containers"][0]["image"] = json!("perl:5.36");
        let errs = JobStrategy.validate_update(&new, &old);
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert_eq!(errs[0].field, "spec.template");
        assert!(errs[0].message().ends_with(": field is immutable"));
        let mut new = old.clone();
        new["spec"]["completions"] = json!(2);
        let errs = JobStrategy.validate_update(&new, &old);
        assert_eq!(errs[0].field, "spec.completions");
        assert_eq!(errs[0].message(), "Invalid value: 2: field is immutable");
        // Suspended Jobs that never ran may change scheduling directives.
        let mut old = created(job());
        old["spec"]["suspend"] = json!(true);
        let mut new = old.clone();
        new["spec"]["template"]["spec"]["nodeSelector"] = json!({"disk": "ssd"});
        assert!(JobStrategy.validate_update(&new, &old).is_empty());
    }

    #[test]
    fn job_cells() {
        let mut o = created(job());
        assert_eq!(job_status_cell(&o), "Running");
        assert_eq!(job_completions_cell(&o), "0/1");
        assert_eq!(job_duration_cell(&o), "");
        o["status"] = json!({"succeeded": 1, "startTime": "2024-01-01T00:00:00Z", "completionTime": "2024-01-01T00:00:42Z", "conditions": [{"type": "Complete", "status": "True"}]});
        assert_eq!(job_status_cell(&o), "Complete");
        assert_eq!(job_completions_cell(&o), "1/1");
        assert_eq!(job_duration_cell(&o), "42s");
        o["spec"]["completions"] = Value::Null;
        o["spec"]["parallelism"] = json!(4);
        assert_eq!(job_completions_cell(&o), "1/1 of 4");
        let names: Vec<&str> = JOB_COLUMNS.iter().map(|c| c.name).collect();
        assert_eq!(
            names,
            [
                "Name",
                "Status",
                "Completions",
                "Duration",
                "Age",
                "Containers",
                "Images",
                "Selector"
            ]
        );
        let sel = (JOB_COLUMNS[7].cell)(&o);
        assert!(sel.as_str().unwrap().starts_with(CONTROLLER_UID_LABEL));
        assert_eq!((JOB_COLUMNS[5].cell)(&json!({})), "");
    }
}
