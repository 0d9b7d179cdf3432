//! Validation of custom resources against a schema: kube-openapi's schema
//! validator as apiextensions-apiserver configures it (with the error
//! conversion of `kubeOpenAPIResultToFieldErrors`), then the embedded
//! resource checks and the list-type invariants the custom resource
//! strategy adds.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::gofmt::{self, quote};
use super::{
    additional, child, flag, float_of, formats, get, index, int_of, items, key, list, objectmeta,
    properties, str_list, str_of, type_of, Additional, INT_OR_STRING, LIST_MAP_KEYS, LIST_TYPE,
};
use crate::api::validation::{ErrorType, FieldError};

/// Validates `obj` against `schema` as upstream validates a custom resource
/// (CEL rules aside). `path` prefixes every field (empty for a custom
/// resource, where field paths start at the object: `spec.replicas`).
pub fn validate(obj: &Value, schema: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = openapi_errors(obj, schema, path);
    objectmeta::validate(path, obj, schema, false, &mut errs);
    if obj.is_object() {
        list_sets_and_maps(path, schema, obj, &mut errs);
    }
    errs
}

/// Only the kube-openapi part (what ValidateCustomResource returns).
pub(super) fn openapi_errors(obj: &Value, schema: &Value, path: &str) -> Vec<FieldError> {
    let res = validate_schema(schema, obj, "");
    res.errs
        .into_iter()
        .map(|e| e.into_field_error(path))
        .collect()
}

// ---------------------------------------------------------------------------
// kube-openapi

enum Code {
    Required,
    Enum(Vec<Value>),
    TooLong(i64),
    TooMany(usize, i64),
    InvalidType,
    Other,
    Composite,
}

/// One kube-openapi error: `name` is the data path in kube-openapi's
/// format (`spec.items[0].name`, `.key` below a root map).
struct OErr {
    code: Code,
    name: String,
    value: Option<Value>,
    msg: String,
}

impl OErr {
    fn new(code: Code, name: &str, value: Option<Value>, msg: String) -> Self {
        OErr {
            code,
            name: name.to_string(),
            value,
            msg,
        }
    }

    fn into_field_error(self, fld: &str) -> FieldError {
        let nil_or = |p: &str| {
            if p.is_empty() {
                "<nil>".to_string()
            } else {
                p.to_string()
            }
        };
        if let Code::Composite = self.code {
            return FieldError::invalid(nil_or(fld), Value::String(String::new()), self.msg);
        }
        let err_path = if !self.name.is_empty() && self.name != "." {
            child(fld, self.name.strip_prefix('.').unwrap_or(&self.name))
        } else {
            nil_or(fld)
        };
        let value = self.value.unwrap_or(Value::String(String::new()));
        match self.code {
            Code::Required => FieldError::required(err_path, ""),
            Code::Enum(values) => {
                let supported: Vec<String> = values
                    .iter()
                    .map(|v| match v {
                        Value::String(s) => s.clone(),
                        other => gofmt::json(other),
                    })
                    .collect();
                gofmt::not_supported(err_path, &value, &supported)
            }
            Code::TooLong(max) => gofmt::too_long(err_path, max),
            Code::TooMany(actual, max) => {
                FieldError::too_many(err_path, actual, usize::try_from(max).unwrap_or(0))
            }
            Code::InvalidType => {
                gofmt::with_value(ErrorType::TypeInvalid, err_path, &value, self.msg)
            }
            Code::Other | Code::Composite => gofmt::invalid(err_path, &value, self.msg),
        }
    }
}

#[derive(Default)]
struct Res {
    errs: Vec<OErr>,
    /// kube-openapi's MatchCount: how many checks passed, used to pick the
    /// anyOf/oneOf branch whose errors are reported.
    matches: usize,
}

impl Res {
    fn ok(&self) -> bool {
        self.errs.is_empty()
    }

    fn merge(&mut self, other: Res) {
        self.matches += other.matches;
        self.errs.extend(other.errs);
    }

    /// One applied validator's result.
    fn apply(&mut self, other: Res) {
        self.merge(other);
        self.matches += 1;
    }

    fn err(e: OErr) -> Res {
        Res {
            errs: vec![e],
            matches: 0,
        }
    }
}

/// The schema's types after conversion to go-openapi (int-or-string is
/// `integer,string`).
fn types(s: &Value) -> Vec<&str> {
    if flag(s, INT_OR_STRING) {
        vec!["integer", "string"]
    } else {
        match type_of(s) {
            "" => vec![],
            t => vec![t],
        }
    }
}

/// The format as the validator sees it (unsupported formats stripped).
fn format(s: &Value) -> &str {
    let f = str_of(s, "format");
    if formats::supported(f) {
        f
    } else {
        ""
    }
}

#[derive(Clone, Copy)]
enum Num {
    Int(i64),
    Float(f64),
}

fn num(n: &serde_json::Number) -> Num {
    match n.as_i64() {
        Some(i) => Num::Int(i),
        None => Num::Float(n.as_f64().unwrap_or(0.0)),
    }
}

fn num_str(n: Num) -> String {
    match n {
        Num::Int(i) => i.to_string(),
        Num::Float(f) => gofmt::float(f),
    }
}

/// swag.IsFloat64AJSONInteger.
fn is_json_integer(f: f64) -> bool {
    f.is_finite() && f.abs() <= 9_007_199_254_740_992.0 && f.trunc() == f
}

fn validate_schema(s: &Value, data: &Value, path: &str) -> Res {
    let mut res = Res::default();
    let tys = types(s);
    let fmt = format(s);
    let type_applies = !tys.is_empty() || !fmt.is_empty();

    if data.is_null() {
        if !tys.is_empty() && !tys.contains(&"null") && !flag(s, "nullable") {
            res.errs.push(invalid_type(path, &tys.join(","), "null"));
        }
        res.merge(enum_validator(s, data, path));
        return res;
    }

    if type_applies {
        res.apply(type_validator(s, &tys, fmt, data, path));
    }
    res.apply(junctors(s, data, path));
    if let Value::String(st) = data {
        res.apply(string_validator(s, st, path));
        if !fmt.is_empty() && !formats::check(fmt, st) {
            res.apply(Res::err(OErr::new(
                Code::InvalidType,
                path,
                Some(data.clone()),
                format!("{path} in body must be of type {fmt}: {}", quote(st)),
            )));
        } else if !fmt.is_empty() {
            res.apply(Res::default());
        }
    }
    if let Value::Number(n) = data {
        res.apply(number_validator(s, num(n), path));
    }
    if let Value::Array(a) = data {
        res.apply(slice_validator(s, a, path));
    }
    res.apply(enum_validator(s, data, path));
    if let Value::Object(m) = data {
        res.apply(object_validator(s, m, path));
    }
    res.matches += 1;
    res
}

fn invalid_type(path: &str, type_name: &str, value: &str) -> OErr {
    OErr::new(
        Code::InvalidType,
        path,
        Some(Value::String(value.to_string())),
        format!(
            "{path} in body must be of type {type_name}: {}",
            quote(value)
        ),
    )
}

fn type_validator(s: &Value, tys: &[&str], fmt: &str, data: &Value, path: &str) -> Res {
    let (sch_type, data_format) = match data {
        Value::Bool(_) => ("boolean", ""),
        Value::String(_) => ("string", ""),
        Value::Number(n) => match num(n) {
            Num::Int(_) => ("integer", "int64"),
            Num::Float(_) => ("number", "float64"),
        },
        Value::Array(_) => ("array", ""),
        Value::Object(_) => ("object", ""),
        Value::Null => ("null", ""),
    };
    let _ = s;
    let contains = |t: &str| tys.contains(&t);
    let is_float_int = match data {
        Value::Number(n) => match num(n) {
            Num::Float(f) => is_json_integer(f) && contains("integer"),
            Num::Int(_) => false,
        },
        _ => false,
    };
    let is_int_float = sch_type == "integer" && contains("number");
    let string_or_slice = matches!(data, Value::String(_) | Value::Array(_));
    let type_matches = contains(sch_type) || is_float_int || is_int_float;
    // a non-string value against a format: the format's type must match
    if !(string_or_slice || fmt.is_empty() || type_matches || data_format == fmt) {
        return Res::err(invalid_type(path, fmt, data_format));
    }
    // strings and slices with a format are not type-checked unless numeric
    if string_or_slice && !fmt.is_empty() && !(contains("number") || contains("integer")) {
        return Res::default();
    }
    if !type_matches {
        return Res::err(invalid_type(path, &tys.join(","), sch_type));
    }
    Res::default()
}

fn junctors(s: &Value, data: &Value, path: &str) -> Res {
    let mut main = Res::default();

    let any_of = list(s, "anyOf");
    if !any_of.is_empty() {
        let mut best: Option<Res> = None;
        let mut first_success: Option<Res> = None;
        for sub in any_of {
            let r = validate_schema(sub, data, path);
            if r.ok() {
                best = None;
                first_success = Some(r);
                break;
            }
            if best.as_ref().is_none_or(|b| r.matches > b.matches) {
                best = Some(r);
            }
        }
        if first_success.is_none() {
            main.errs.push(OErr::new(
                Code::Composite,
                path,
                None,
                format!("{} must validate at least one schema (anyOf)", quote(path)),
            ));
        }
        if let Some(b) = best {
            main.merge(b);
        } else if let Some(f) = first_success {
            main.merge(f);
        }
    }

    let one_of = list(s, "oneOf");
    if !one_of.is_empty() {
        let mut best: Option<Res> = None;
        let mut first_success: Option<Res> = None;
        let mut validated = 0;
        for sub in one_of {
            let r = validate_schema(sub, data, path);
            if r.ok() {
                validated += 1;
                best = None;
                if first_success.is_none() {
                    first_success = Some(r);
                }
                continue;
            }
            if validated == 0 && best.as_ref().is_none_or(|b| r.matches > b.matches) {
                best = Some(r);
            }
        }
        if validated != 1 {
            let additional = if validated == 0 {
                "Found none valid".to_string()
            } else {
                format!("Found {validated} valid alternatives")
            };
            main.errs.push(OErr::new(
                Code::Composite,
                path,
                None,
                format!(
                    "{} must validate one and only one schema (oneOf). {additional}",
                    quote(path)
                ),
            ));
            if let Some(b) = best {
                main.merge(b);
            }
        } else if let Some(f) = first_success {
            main.merge(f);
        }
    }

    let all_of = list(s, "allOf");
    if !all_of.is_empty() {
        let mut validated = 0;
        for sub in all_of {
            let r = validate_schema(sub, data, path);
            if r.ok() {
                validated += 1;
            }
            main.merge(r);
        }
        if validated != all_of.len() {
            let additional = if validated == 0 {
                ". None validated"
            } else {
                ""
            };
            main.errs.push(OErr::new(
                Code::Composite,
                path,
                None,
                format!(
                    "{} must validate all the schemas (allOf){additional}",
                    quote(path)
                ),
            ));
        }
    }

    if let Some(not) = get(s, "not") {
        if validate_schema(not, data, path).ok() {
            main.errs.push(OErr::new(
                Code::Composite,
                path,
                None,
                format!("{} must not validate the schema (not)", quote(path)),
            ));
        }
    }

    main.matches += 1;
    main
}

fn string_validator(s: &Value, data: &str, path: &str) -> Res {
    let value = || Some(Value::String(data.to_string()));
    let len = data.chars().count() as i64;
    if let Some(max) = int_of(s, "maxLength") {
        if len > max {
            return Res::err(OErr::new(
                Code::TooLong(max),
                path,
                value(),
                format!("{path} in body should be at most {max} chars long"),
            ));
        }
    }
    if let Some(min) = int_of(s, "minLength") {
        if len < min {
            return Res::err(OErr::new(
                Code::Other,
                path,
                value(),
                format!("{path} in body should be at least {min} chars long"),
            ));
        }
    }
    let pattern = str_of(s, "pattern");
    if !pattern.is_empty() {
        match formats::regex(pattern) {
            Err(e) => {
                return Res::err(OErr::new(
                    Code::Other,
                    path,
                    value(),
                    format!("{path} in body should match '{pattern}, but pattern is invalid: {e}'"),
                ))
            }
            Ok(re) if !re.is_match(data) => {
                return Res::err(OErr::new(
                    Code::Other,
                    path,
                    value(),
                    format!("{path} in body should match '{pattern}'"),
                ))
            }
            Ok(_) => {}
        }
    }
    Res::default()
}

fn number_validator(s: &Value, n: Num, path: &str) -> Res {
    let mut res = Res::default();
    let data = || {
        Some(Value::from(match n {
            Num::Int(i) => serde_json::Number::from(i),
            Num::Float(f) => {
                serde_json::Number::from_f64(f).unwrap_or_else(|| serde_json::Number::from(0))
            }
        }))
    };
    let as_float = match n {
        Num::Int(i) => i as f64,
        Num::Float(f) => f,
    };

    if let Some(factor) = float_of(s, "multipleOf") {
        let int_factor = factor as i64;
        match n {
            Num::Int(i) if int_factor != 0 => {
                if int_factor < 0 {
                    res.errs.push(OErr::new(
                        Code::Other,
                        path,
                        Some(Value::from(int_factor)),
                        format!(
                            "factor MultipleOf declared for {path} must be positive: {int_factor}"
                        ),
                    ));
                } else if (i / int_factor) * int_factor != i {
                    res.errs.push(OErr::new(
                        Code::Other,
                        path,
                        data(),
                        format!("{path} in body should be a multiple of {int_factor}"),
                    ));
                }
            }
            _ => {
                if factor < 0.0 {
                    res.errs.push(OErr::new(
                        Code::Other,
                        path,
                        Some(Value::from(factor)),
                        format!(
                            "factor MultipleOf declared for {path} must be positive: {}",
                            gofmt::float(factor)
                        ),
                    ));
                } else {
                    let mult = if factor < 1.0 {
                        1.0 / factor * as_float
                    } else {
                        as_float / factor
                    };
                    if !is_json_integer(mult) {
                        res.errs.push(OErr::new(
                            Code::Other,
                            path,
                            data(),
                            format!(
                                "{path} in body should be a multiple of {}",
                                gofmt::float(factor)
                            ),
                        ));
                    }
                }
            }
        }
    }

    if let Some(min) = float_of(s, "minimum") {
        let exclusive = flag(s, "exclusiveMinimum");
        let (fails, bound) = match n {
            Num::Int(i) => {
                let m = min as i64;
                ((!exclusive && i < m) || (exclusive && i <= m), Num::Int(m))
            }
            Num::Float(f) => (
                (!exclusive && f < min) || (exclusive && f <= min),
                Num::Float(min),
            ),
        };
        if fails {
            let rel = if exclusive {
                "greater than"
            } else {
                "greater than or equal to"
            };
            res.errs.push(OErr::new(
                Code::Other,
                path,
                data(),
                format!("{path} in body should be {rel} {}", num_str(bound)),
            ));
        }
    }

    if let Some(max) = float_of(s, "maximum") {
        let exclusive = flag(s, "exclusiveMaximum");
        let (fails, bound) = match n {
            Num::Int(i) => {
                let m = max as i64;
                ((!exclusive && i > m) || (exclusive && i >= m), Num::Int(m))
            }
            Num::Float(f) => (
                (!exclusive && f > max) || (exclusive && f >= max),
                Num::Float(max),
            ),
        };
        if fails {
            let rel = if exclusive {
                "less than"
            } else {
                "less than or equal to"
            };
            res.errs.push(OErr::new(
                Code::Other,
                path,
                data(),
                format!("{path} in body should be {rel} {}", num_str(bound)),
            ));
        }
    }
    res
}

fn slice_validator(s: &Value, a: &[Value], path: &str) -> Res {
    let mut res = Res::default();
    if let Some(it) = items(s) {
        for (i, v) in a.iter().enumerate() {
            res.merge(validate_schema(it, v, &index(path, i)));
        }
    }
    let size = a.len() as i64;
    if let Some(min) = int_of(s, "minItems") {
        if size < min {
            res.errs.push(OErr::new(
                Code::Other,
                path,
                Some(Value::from(size)),
                format!("{path} in body should have at least {min} items"),
            ));
        }
    }
    if let Some(max) = int_of(s, "maxItems") {
        if size > max {
            res.errs.push(OErr::new(
                Code::TooMany(a.len(), max),
                path,
                Some(Value::from(size)),
                format!("{path} in body should have at most {max} items"),
            ));
        }
    }
    if flag(s, "uniqueItems") {
        let dup = a.iter().enumerate().any(|(i, x)| a[..i].contains(x));
        if dup {
            res.errs.push(OErr::new(
                Code::Other,
                path,
                None,
                format!("{path} in body shouldn't contain duplicates"),
            ));
        }
    }
    res
}

/// Whether the data matches one enum value as kube-openapi compares them
/// (Go conversion of the data to the enum value's type, then DeepEqual).
fn enum_match(data: &Value, e: &Value) -> bool {
    match (data, e) {
        (Value::Null, _) | (_, Value::Null) => false,
        (Value::Number(d), Value::Number(x)) => match (num(d), num(x)) {
            (Num::Int(a), Num::Int(b)) => a == b,
            (Num::Float(a), Num::Int(b)) => a as i64 == b,
            (Num::Int(a), Num::Float(b)) => a as f64 == b,
            (Num::Float(a), Num::Float(b)) => a == b,
        },
        // Go converts an integer to the string of that code point.
        (Value::Number(d), Value::String(x)) => match num(d) {
            Num::Int(i) => {
                let c = u32::try_from(i)
                    .ok()
                    .and_then(char::from_u32)
                    .unwrap_or('\u{fffd}');
                c.to_string() == *x
            }
            Num::Float(_) => false,
        },
        (a, b) => a == b,
    }
}

fn enum_validator(s: &Value, data: &Value, path: &str) -> Res {
    let values = list(s, "enum");
    if values.is_empty() || values.iter().any(|e| enum_match(data, e)) {
        return Res::default();
    }
    Res::err(OErr::new(
        Code::Enum(values.to_vec()),
        path,
        Some(data.clone()),
        format!("{path} in body should be one of {}", enum_list(values)),
    ))
}

/// `%v` of the enum values ([a b c]).
fn enum_list(values: &[Value]) -> String {
    let parts: Vec<String> = values
        .iter()
        .map(|v| match v {
            Value::String(s) => s.clone(),
            Value::Number(n) => gofmt::number(n),
            Value::Null => "<nil>".into(),
            other => other.to_string(),
        })
        .collect();
    format!("[{}]", parts.join(" "))
}

fn object_validator(s: &Value, m: &Map<String, Value>, path: &str) -> Res {
    let n = m.len() as i64;
    if let Some(min) = int_of(s, "minProperties") {
        if n < min {
            return Res::err(OErr::new(
                Code::Other,
                path,
                Some(Value::from(n)),
                format!("{path} in body should have at least {min} properties"),
            ));
        }
    }
    if let Some(max) = int_of(s, "maxProperties") {
        if n > max {
            return Res::err(OErr::new(
                Code::TooMany(m.len(), max),
                path,
                Some(Value::from(n)),
                format!("{path} in body should have at most {max} properties"),
            ));
        }
    }
    let mut res = Res::default();
    let props = properties(s);
    let is_prop = |k: &str| props.is_some_and(|p| p.contains_key(k));
    match additional(s) {
        Additional::Bool(false) => {
            for k in m.keys() {
                if !is_prop(k) {
                    res.errs.push(OErr::new(
                        Code::Other,
                        path,
                        Some(Value::String(k.clone())),
                        format!("{path}.{k} in body is a forbidden property"),
                    ));
                }
            }
        }
        Additional::Schema(ap) => {
            for (k, v) in m {
                if !is_prop(k) {
                    res.merge(validate_schema(ap, v, &format!("{path}.{k}")));
                }
            }
        }
        _ => {}
    }
    if let Some(props) = props {
        for (p, ps) in props {
            if let Some(v) = m.get(p) {
                let name = if path.is_empty() {
                    p.clone()
                } else {
                    format!("{path}.{p}")
                };
                res.merge(validate_schema(ps, v, &name));
            }
        }
    }
    for k in str_list(s, "required") {
        if !m.contains_key(k) {
            let name = format!("{path}.{k}");
            res.errs.push(OErr::new(
                Code::Required,
                &name,
                None,
                format!("{name} in body is required"),
            ));
        }
    }
    res
}

// ---------------------------------------------------------------------------
// x-kubernetes-list-type: set and map (upstream's listtype.ValidateListSetsAndMaps)

fn list_sets_and_maps(fld: &str, s: &Value, obj: &Value, errs: &mut Vec<FieldError>) {
    let Value::Object(m) = obj else {
        return;
    };
    if let Additional::Schema(ap) = additional(s) {
        for (k, v) in m {
            list_value(&key(fld, k), ap, v, errs);
        }
    }
    if let Some(props) = properties(s) {
        for (k, v) in m {
            if let Some(p) = props.get(k) {
                list_value(&child(fld, k), p, v, errs);
            }
        }
    }
}

fn list_value(fld: &str, s: &Value, x: &Value, errs: &mut Vec<FieldError>) {
    match x {
        Value::Array(a) => list_array(fld, s, a, errs),
        Value::Object(_) => list_sets_and_maps(fld, s, x, errs),
        _ => {}
    }
}

fn list_array(fld: &str, s: &Value, a: &[Value], errs: &mut Vec<FieldError>) {
    match str_of(s, LIST_TYPE) {
        "set" => {
            for i in non_unique(a.iter().map(Some)) {
                errs.push(gofmt::with_value(
                    ErrorType::Duplicate,
                    index(fld, i),
                    &a[i],
                    "",
                ));
            }
        }
        "map" => list_map(fld, s, a, errs),
        _ => {}
    }
    if let Some(it) = items(s) {
        for (i, v) in a.iter().enumerate() {
            list_value(&index(fld, i), it, v, errs);
        }
    }
}

/// The indices of the second appearance of every repeated value (`None`
/// stands for an unspecified key, equal only to itself).
fn non_unique<'a>(values: impl Iterator<Item = Option<&'a Value>>) -> Vec<usize> {
    let keys: Vec<Option<String>> = values
        .map(|v| {
            v.map(|v| match v {
                // scalars compare with their Go types: int64 1 is not float64 1
                Value::Number(n) if n.as_i64().is_none() => {
                    format!("f:{}", gofmt::float(n.as_f64().unwrap_or(0.0)))
                }
                other => other.to_string(),
            })
        })
        .collect();
    let mut seen: HashMap<&Option<String>, usize> = HashMap::with_capacity(keys.len());
    let mut out = Vec::new();
    for (i, k) in keys.iter().enumerate() {
        let times = seen.entry(k).or_insert(0);
        *times += 1;
        if *times == 2 {
            out.push(i);
        }
    }
    out
}

fn list_map(fld: &str, s: &Value, a: &[Value], errs: &mut Vec<FieldError>) {
    for (i, x) in a.iter().enumerate() {
        if !x.is_null() && !x.is_object() {
            errs.push(gofmt::invalid(
                index(fld, i),
                x,
                "must be an object for an array of list-type map",
            ));
            return;
        }
    }
    if a.len() <= 1 {
        return;
    }
    let key_fields = str_list(s, LIST_MAP_KEYS);
    if key_fields.len() == 1 {
        let kf = key_fields[0];
        let keys: Vec<Option<&Value>> = a.iter().map(|x| x.get(kf)).collect();
        for i in non_unique(keys.iter().copied()) {
            let mut m = Map::new();
            if let Some(k) = keys[i] {
                m.insert(kf.to_string(), k.clone());
            }
            errs.push(gofmt::with_value(
                ErrorType::Duplicate,
                index(fld, i),
                &Value::Object(m),
                "",
            ));
        }
        return;
    }
    let keys: Vec<Value> = a
        .iter()
        .map(|x| {
            let mut m = Map::new();
            for kf in &key_fields {
                if let Some(k) = x.get(*kf) {
                    m.insert((*kf).to_string(), k.clone());
                }
            }
            Value::Object(m)
        })
        .collect();
    for i in non_unique(keys.iter().map(Some)) {
        errs.push(gofmt::with_value(
            ErrorType::Duplicate,
            index(fld, i),
            &keys[i],
            "",
        ));
    }
}
