//! CronJob (upstream's pkg/registry/batch/cronjob and ValidateCronJob*). What
//! is CronJob's own is the schedule (checked as robfig/cron parses it), the
//! time zone and its table; its jobTemplate is a JobSpec, checked by job.rs.

use serde_json::{json, Value};

use super::job::{
    default_template, spec_mut, template_containers, template_images, validate_job_spec_common,
    CONTAINERS_DESCRIPTION, IMAGES_DESCRIPTION, JOB_SELECTOR_DESCRIPTION,
};
use crate::registry::helpers::{self, format_label_selector, items, nonnegative, s};
use crate::registry::strategy::{
    age_column, human_age, name_column, set_default, Column, Strategy,
};
use crate::registry::validation::FieldError;

pub struct CronJobStrategy;

/// The time-zone names upstream's validateTimeZone accepts without
/// consulting the zone database.
fn validate_time_zone(tz: &Value, errs: &mut Vec<FieldError>) {
    let Some(z) = tz.as_str() else { return };
    if z.is_empty() {
        errs.push(FieldError::invalid(
            "spec.timeZone",
            json!(z),
            "timeZone must be nil or non-empty string",
        ));
        return;
    }
    for part in z.split('/') {
        let ok_chars = !part.is_empty()
            && part.len() <= 14
            && part
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._-+".contains(&b));
        if part == "." || part == ".." || part.starts_with('-') || !ok_chars {
            errs.push(FieldError::invalid(
                "spec.timeZone",
                json!(z),
                format!("unknown time zone {z}"),
            ));
            return;
        }
    }
    if z.eq_ignore_ascii_case("local") {
        errs.push(FieldError::invalid(
            "spec.timeZone",
            json!(z),
            "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones",
        ));
    }
}

/// Go's time.ParseDuration, for `@every`.
fn parse_go_duration(d: &str) -> Result<(), String> {
    let orig = d;
    let bad = || format!("time: invalid duration {orig:?}");
    let mut s = d;
    if let Some(r) = s.strip_prefix(['-', '+']) {
        s = r;
    }
    if s == "0" {
        return Ok(());
    }
    if s.is_empty() {
        return Err(bad());
    }
    while !s.is_empty() {
        let n = s
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(s.len());
        let num = &s[..n];
        if num.is_empty() || num == "." {
            return Err(bad());
        }
        s = &s[n..];
        let u = s
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(s.len());
        let unit = &s[..u];
        if unit.is_empty() {
            return Err(format!("time: missing unit in duration {orig:?}"));
        }
        if !["ns", "us", "µs", "μs", "ms", "s", "m", "h"].contains(&unit) {
            return Err(format!("time: unknown unit {unit:?} in duration {orig:?}"));
        }
        s = &s[u..];
    }
    Ok(())
}

const MONTHS: [&str; 12] = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];
const DAYS: [&str; 7] = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

fn cron_int(expr: &str) -> Result<u32, String> {
    let n: i64 = expr.parse().map_err(|_| {
        format!("failed to parse int from {expr}: strconv.Atoi: parsing {expr:?}: invalid syntax")
    })?;
    if n < 0 {
        return Err(format!("negative number ({n}) not allowed: {expr}"));
    }
    Ok(n as u32)
}

fn cron_int_or_name(expr: &str, names: &[&str], base: u32) -> Result<u32, String> {
    let lower = expr.to_ascii_lowercase();
    if let Some(i) = names.iter().position(|n| *n == lower) {
        return Ok(i as u32 + base);
    }
    cron_int(expr)
}

/// robfig/cron's getRange for one comma-separated part of a field.
fn cron_range(expr: &str, min: u32, max: u32, names: &[&str], base: u32) -> Result<(), String> {
    let range_and_step: Vec<&str> = expr.split('/').collect();
    let low_high: Vec<&str> = range_and_step[0].split('-').collect();
    let single = low_high.len() == 1;
    let (start, mut end);
    if low_high[0] == "*" || low_high[0] == "?" {
        start = min;
        end = max;
    } else {
        start = cron_int_or_name(low_high[0], names, base)?;
        end = match low_high.len() {
            1 => start,
            2 => cron_int_or_name(low_high[1], names, base)?,
            _ => return Err(format!("too many hyphens: {expr}")),
        };
    }
    let step = match range_and_step.len() {
        1 => 1,
        2 => {
            let st = cron_int(range_and_step[1])?;
            if single {
                end = max;
            }
            st
        }
        _ => return Err(format!("too many slashes: {expr}")),
    };
    if start < min {
        return Err(format!(
            "beginning of range ({start}) below minimum ({min}): {expr}"
        ));
    }
    if end > max {
        return Err(format!(
            "end of range ({end}) above maximum ({max}): {expr}"
        ));
    }
    if start > end {
        return Err(format!(
            "beginning of range ({start}) beyond end of range ({end}): {expr}"
        ));
    }
    if step == 0 {
        return Err(format!("step of range should be a positive number: {expr}"));
    }
    Ok(())
}

/// robfig/cron v3's ParseStandard, for its error (the message upstream returns).
pub fn parse_cron(spec: &str) -> Result<(), String> {
    if spec.is_empty() {
        return Err("empty spec string".into());
    }
    let mut spec = spec.to_string();
    if spec.starts_with("TZ=") || spec.starts_with("CRON_TZ=") {
        let eq = spec.find('=').unwrap_or(0);
        match spec.find(' ') {
            Some(i) if i > eq => spec = spec[i..].trim().to_string(),
            _ => {
                return Err(format!(
                    "provided bad location {}: unknown time zone {}",
                    &spec[eq + 1..],
                    &spec[eq + 1..]
                ))
            }
        }
    }
    if spec.starts_with('@') {
        return match spec.as_str() {
            "@yearly" | "@annually" | "@monthly" | "@weekly" | "@daily" | "@midnight"
            | "@hourly" => Ok(()),
            d if d.starts_with("@every ") => parse_go_duration(&d["@every ".len()..])
                .map_err(|e| format!("failed to parse duration {d}: {e}")),
            d => Err(format!("unrecognized descriptor: {d}")),
        };
    }
    let fields: Vec<&str> = spec.split_whitespace().collect();
    if fields.len() != 5 {
        return Err(format!(
            "expected exactly 5 fields, found {}: [{}]",
            fields.len(),
            fields.join(" ")
        ));
    }
    let bounds: [(u32, u32, &[&str], u32); 5] = [
        (0, 59, &[], 0),
        (0, 23, &[], 0),
        (1, 31, &[], 0),
        (1, 12, &MONTHS, 1),
        (0, 6, &DAYS, 0),
    ];
    for (f, (min, max, names, base)) in fields.iter().zip(bounds) {
        for part in f.split(',').filter(|p| !p.is_empty()) {
            cron_range(part, min, max, names, base)?;
        }
    }
    Ok(())
}

fn validate_cron_job_spec(spec: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let schedule = spec["schedule"].as_str().unwrap_or("");
    if schedule.is_empty() {
        errs.push(FieldError::required("spec.schedule", ""));
    } else {
        let allow_tz = old.is_some_and(|o| s(o, "schedule").contains("TZ"));
        if let Err(e) = parse_cron(schedule) {
            errs.push(FieldError::invalid("spec.schedule", json!(schedule), e));
        }
        if allow_tz && schedule.contains("TZ") && !spec["timeZone"].is_null() {
            errs.push(FieldError::invalid(
                "spec.schedule",
                json!(schedule),
                "cannot use both timeZone field and TZ or CRON_TZ in schedule",
            ));
        } else if !allow_tz && schedule.contains("TZ") {
            errs.push(FieldError::invalid(
                "spec.schedule",
                json!(schedule),
                "cannot use TZ or CRON_TZ in schedule, use timeZone field instead",
            ));
        }
    }
    nonnegative(
        "spec.startingDeadlineSeconds",
        &spec["startingDeadlineSeconds"],
        &mut errs,
    );
    if old.is_none_or(|o| o["timeZone"] != spec["timeZone"]) {
        validate_time_zone(&spec["timeZone"], &mut errs);
    }
    match spec["concurrencyPolicy"].as_str().unwrap_or("") {
        "Allow" | "Forbid" | "Replace" => {}
        "" => errs.push(FieldError::required("spec.concurrencyPolicy", "")),
        other => errs.push(FieldError::not_supported(
            "spec.concurrencyPolicy",
            json!(other),
            &["Allow", "Forbid", "Replace"],
        )),
    }
    // ValidateJobTemplateSpec
    let jspec = &spec["jobTemplate"]["spec"];
    validate_job_spec_common(jspec, "spec.jobTemplate.spec", &mut errs);
    if !jspec["selector"].is_null() {
        errs.push(FieldError::invalid(
            "spec.jobTemplate.spec.selector",
            jspec["selector"].clone(),
            "`selector` will be auto-generated",
        ));
    }
    if jspec["manualSelector"].as_bool() == Some(true) {
        errs.push(FieldError::not_supported(
            "spec.jobTemplate.spec.manualSelector",
            json!(true),
            &["nil", "false"],
        ));
    }
    nonnegative(
        "spec.successfulJobsHistoryLimit",
        &spec["successfulJobsHistoryLimit"],
        &mut errs,
    );
    nonnegative(
        "spec.failedJobsHistoryLimit",
        &spec["failedJobsHistoryLimit"],
        &mut errs,
    );
    errs
}

static CRONJOB_COLUMNS: std::sync::LazyLock<Vec<Column>> = std::sync::LazyLock::new(|| {
    vec![
        name_column(),
        Column { name: "Schedule", kind: "string", format: "", description: "The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron.", priority: 0, cell: |o| json!(s(&o["spec"], "schedule")) },
        Column { name: "Timezone", kind: "string", format: "", description: "The time zone name for the given schedule, see https://en.wikipedia.org/wiki/List_of_tz_database_time_zones. If not specified, this will default to the time zone of the kube-controller-manager process. The set of valid time zone names and the time zone offset is loaded from the system-wide time zone database by the API server during CronJob validation and the controller manager during execution. If no system-wide time zone database can be found a bundled version of the database is used instead. If the time zone name becomes invalid during the lifetime of a CronJob or due to a change in host configuration, the controller will stop creating new new Jobs and will create a system event with the reason UnknownTimeZone. More information can be found in https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/#time-zones", priority: 0, cell: |o| json!(o["spec"]["timeZone"].as_str().unwrap_or("<none>")) },
        Column { name: "Suspend", kind: "boolean", format: "", description: "This flag tells the controller to suspend subsequent executions, it does not apply to already started executions.  Defaults to false.", priority: 0, cell: |o| helpers::bool_cell(&o["spec"]["suspend"]) },
        Column { name: "Active", kind: "integer", format: "", description: "A list of pointers to currently running jobs.", priority: 0, cell: |o| json!(items(&o["status"]["active"]).len()) },
        Column { name: "Last Schedule", kind: "string", format: "", description: "Information when was the last time the job was successfully scheduled.", priority: 0, cell: |o| json!(o["status"]["lastScheduleTime"].as_str().map(human_age).unwrap_or_else(|| "<none>".into())) },
        age_column(),
        Column { name: "Containers", kind: "string", format: "", description: CONTAINERS_DESCRIPTION, priority: 1, cell: |o| template_containers(&o["spec"]["jobTemplate"]["spec"]) },
        Column { name: "Images", kind: "string", format: "", description: IMAGES_DESCRIPTION, priority: 1, cell: |o| template_images(&o["spec"]["jobTemplate"]["spec"]) },
        Column { name: "Selector", kind: "string", format: "", description: JOB_SELECTOR_DESCRIPTION, priority: 1, cell: |o| json!(format_label_selector(&o["spec"]["jobTemplate"]["spec"]["selector"])) },
    ]
});

impl Strategy for CronJobStrategy {
    fn status_update(&self) -> crate::registry::strategy::StatusUpdate {
        crate::registry::strategy::StatusUpdate::AllButSpec
    }

    fn default(&self, obj: &mut Value) {
        let Some(spec) = spec_mut(obj) else { return };
        set_default(spec, "concurrencyPolicy", json!("Allow"));
        set_default(spec, "suspend", json!(false));
        set_default(spec, "successfulJobsHistoryLimit", json!(3));
        set_default(spec, "failedJobsHistoryLimit", json!(1));
        if let Some(jspec) = spec
            .get_mut("jobTemplate")
            .and_then(|t| t.get_mut("spec"))
            .and_then(Value::as_object_mut)
        {
            if let Some(rules) = jspec
                .get_mut("podFailurePolicy")
                .and_then(|p| p.get_mut("rules"))
                .and_then(Value::as_array_mut)
            {
                for r in rules {
                    if let Some(c) = r.get_mut("onPodConditions").and_then(Value::as_array_mut) {
                        for c in c.iter_mut().filter_map(Value::as_object_mut) {
                            set_default(c, "status", json!("True"));
                        }
                    }
                }
            }
            default_template(jspec.get_mut("template"));
        }
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        if let Some(m) = obj.as_object_mut() {
            m.insert("status".into(), json!({}));
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = validate_cron_job_spec(&obj["spec"], None);
        let name = crate::registry::meta::name(obj);
        if name.len() > 52 {
            errs.push(FieldError::invalid(
                "metadata.name",
                json!(name),
                "must be no more than 52 characters",
            ));
        }
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        validate_cron_job_spec(&new["spec"], Some(&old["spec"]))
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&CRONJOB_COLUMNS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cron_schedules() {
        assert!(parse_cron("*/5 * * * *").is_ok());
        assert!(parse_cron("0 0 1 jan-mar mon,FRI").is_ok());
        assert!(parse_cron("@hourly").is_ok());
        assert!(parse_cron("@every 1h30m").is_ok());
        assert_eq!(
            parse_cron("* * *").unwrap_err(),
            "expected exactly 5 fields, found 3: [* * *]"
        );
        assert_eq!(
            parse_cron("61 * * * *").unwrap_err(),
            "end of range (61) above maximum (59): 61"
        );
        assert_eq!(
            parse_cron("x * * * *").unwrap_err(),
            "failed to parse int from x: strconv.Atoi: parsing \"x\": invalid syntax"
        );
        assert_eq!(
            parse_cron("@often").unwrap_err(),
            "unrecognized descriptor: @often"
        );
        assert_eq!(
            parse_cron("* * * * 7").unwrap_err(),
            "end of range (7) above maximum (6): 7"
        );
        assert_eq!(parse_cron("").unwrap_err(), "empty spec string");
    }

    fn cronjob() -> Value {
        json!({
            "apiVersion": "batch/v1", "kind": "CronJob",
            "metadata": {"name": "hello", "namespace": "default"},
            "spec": {"schedule": "*/1 * * * *", "jobTemplate": {"spec": {"template": {"spec": {"restartPolicy": "OnFailure", "containers": [{"name": "c", "image": "busybox"}]}}}}}
        })
    }

    #[test]
    fn cronjob_defaults_and_validation() {
        let mut o = cronjob();
        CronJobStrategy.default(&mut o);
        CronJobStrategy.prepare_for_create(&mut o);
        assert_eq!(o["spec"]["concurrencyPolicy"], "Allow");
        assert_eq!(o["spec"]["suspend"], false);
        assert_eq!(o["spec"]["successfulJobsHistoryLimit"], 3);
        assert_eq!(o["spec"]["failedJobsHistoryLimit"], 1);
        assert_eq!(
            o["spec"]["jobTemplate"]["spec"]["template"]["spec"]["schedulerName"],
            "default-scheduler"
        );
        assert!(o["spec"]["jobTemplate"]["spec"]["backoffLimit"].is_null());
        assert!(CronJobStrategy.validate(&o).is_empty());

        let mut bad = o.clone();
        bad["spec"]["schedule"] = json!("not a cron");
        let errs = CronJobStrategy.validate(&bad);
        assert_eq!(errs[0].field, "spec.schedule");
        assert_eq!(
            errs[0].message(),
            "Invalid value: \"not a cron\": expected exactly 5 fields, found 3: [not a cron]"
        );
        let mut bad = o.clone();
        bad["spec"]["schedule"] = json!("CRON_TZ=UTC 0 * * * *");
        let errs = CronJobStrategy.validate(&bad);
        assert_eq!(errs.len(), 1);
        assert_eq!(
            errs[0].detail,
            "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"
        );
        let mut bad = o.clone();
        bad["spec"]["schedule"] = json!("");
        bad["spec"]["concurrencyPolicy"] = json!("Sometimes");
        bad["spec"]["timeZone"] = json!("Local");
        bad["spec"]["jobTemplate"]["spec"]["selector"] = json!({"matchLabels": {"a": "b"}});
        bad["metadata"]["name"] = json!("a".repeat(53));
        let fields: Vec<String> = CronJobStrategy
            .validate(&bad)
            .iter()
            .map(|e| e.field.clone())
            .collect();
        assert_eq!(
            fields,
            [
                "spec.schedule",
                "spec.timeZone",
                "spec.concurrencyPolicy",
                "spec.jobTemplate.spec.selector",
                "metadata.name"
            ]
        );
    }

    #[test]
    fn cronjob_cells() {
        let mut o = cronjob();
        CronJobStrategy.default(&mut o);
        let cells: Vec<Value> = CRONJOB_COLUMNS.iter().map(|c| (c.cell)(&o)).collect();
        assert_eq!(cells[1], "*/1 * * * *");
        assert_eq!(cells[2], "<none>");
        assert_eq!(cells[3], "False");
        assert_eq!(cells[4], 0);
        assert_eq!(cells[5], "<none>");
        assert_eq!(cells[7], "c");
        assert_eq!(cells[8], "busybox");
        assert_eq!(cells[9], "<none>");
    }
}
