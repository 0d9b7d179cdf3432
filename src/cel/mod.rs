//! CRD validation rules: `x-kubernetes-validations` written in CEL, as
//! upstream's `apiextensions-apiserver/pkg/apiserver/schema/cel`, and the
//! CEL environment admission policies and webhook match conditions use
//! ([`admission`]). Its own module, below the registry and admission,
//! which both evaluate it.
//!
//! Two entry points. [`compile_schema_rules`] runs at CRD create/update and
//! reports what upstream reports there: malformed rules (no rule, bad
//! message, unsupported reason, invalid fieldPath), rules and
//! messageExpressions that do not parse or type-check against the schema,
//! and transition rules placed where `oldSelf` cannot be correlated.
//! [`validate`] runs on custom resource writes: it walks the schema and the
//! object together (properties, `items`, `additionalProperties`, `allOf`),
//! binds `self` (and `oldSelf` on updates) at every node with rules and
//! reports the failures as upstream does, including ratcheting: on update,
//! a rule that does not use `oldSelf` reports nothing for a value that did
//! not change.
//!
//! The interpreter is the `cel` crate with kube-cel's Kubernetes libraries
//! (`env.rs` adds `type`, `dyn`, `bool`, `cel.bind`, `optMap`, `sortBy` and
//! the two-variable comprehensions); the type checker standing in for
//! cel-go's is this module's own (`check.rs`). Cost is bounded by counting
//! comprehension steps (a per-rule limit and a per-object budget) instead of
//! cel-go's cost units, and no cost is estimated at CRD write time.

pub mod admission;
mod check;
mod env;
mod types;
mod value;

#[cfg(test)]
mod tests;

use serde_json::Value;

use crate::api::validation::{ErrorType, FieldError};
use kube_cel::cel::Value as Cel;

use types::{
    additional_properties, decl_type, is_embedded, items, list_map_keys, list_type,
    map_is_correlatable, properties, rules, ty_of, Ty,
};

/// Compiles every x-kubernetes-validations rule in a CRD version's schema;
/// errors as upstream reports them at CRD create/update, e.g.
/// `spec.validation.openAPIV3Schema.x-kubernetes-validations[0].rule: Invalid
/// value: apiextensions.ValidationRule{...}: compilation failed: ...`.
/// `path` is the path of the schema itself (`spec.versions[0].schema.openAPIV3Schema`).
pub fn compile_schema_rules(schema: &Value, path: &str) -> Vec<FieldError> {
    let mut c = Compiler {
        shape: Vec::new(),
        cel: Vec::new(),
    };
    c.node(schema, path, true, true, None);
    let mut out = c.shape;
    out.extend(c.cel);
    out
}

/// Evaluates the rules against an object (and the old object for updates:
/// transition rules using `oldSelf` only run when the old value exists at
/// that path), returning upstream's errors. `schema` is the version's
/// `openAPIV3Schema` and `obj` the whole custom resource.
pub fn validate(schema: &Value, obj: &Value, old: Option<&Value>) -> Vec<FieldError> {
    if !has_rules(schema) {
        return Vec::new();
    }
    let mut w = Walker {
        errs: Vec::new(),
        budget: env::RUNTIME_BUDGET,
        stopped: false,
    };
    let ratchet = Ratchet {
        current: old.map(|o| (obj, o)),
        parent: None,
    };
    w.node(schema, schema, &FPath::root(), obj, old, true, ratchet);
    w.errs
}

// ---------------------------------------------------------------------------
// Rules

const SUPPORTED_REASONS: &[&str] = &[
    "FieldValueDuplicate",
    "FieldValueForbidden",
    "FieldValueInvalid",
    "FieldValueRequired",
];

/// Upstream's limit on an evaluated messageExpression.
const MAX_MESSAGE_EXPRESSION_BYTES: usize = 5 * 1024;

/// One entry of `x-kubernetes-validations`.
struct Rule<'a> {
    rule: &'a str,
    message: &'a str,
    message_expression: &'a str,
    reason: Option<&'a str>,
    field_path: &'a str,
    optional_old_self: Option<bool>,
}

impl<'a> Rule<'a> {
    fn from_json(v: &'a Value) -> Self {
        let s = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("");
        Rule {
            rule: s("rule"),
            message: s("message"),
            message_expression: s("messageExpression"),
            reason: v.get("reason").and_then(Value::as_str),
            field_path: s("fieldPath"),
            optional_old_self: v.get("optionalOldSelf").and_then(Value::as_bool),
        }
    }

    /// How Go's `%#v` prints the internal `apiextensions.ValidationRule`
    /// (pointers print as addresses, which differ run to run upstream too).
    fn go_repr(&self) -> String {
        let ptr = |set: bool, ty: &str| {
            if set {
                format!("(*{ty})(0xc000a1e000)")
            } else {
                format!("(*{ty})(nil)")
            }
        };
        format!(
            "apiextensions.ValidationRule{{Rule:{}, Message:{}, MessageExpression:{}, Reason:{}, FieldPath:{}, OptionalOldSelf:{}}}",
            go_quote(self.rule),
            go_quote(self.message),
            go_quote(self.message_expression),
            ptr(self.reason.is_some(), "apiextensions.FieldValueErrorReason"),
            go_quote(self.field_path),
            ptr(self.optional_old_self.is_some(), "bool"),
        )
    }

    /// Upstream's `ruleErrorString`: the message if any, else the rule.
    fn error_string(&self) -> &str {
        if self.message.is_empty() {
            self.rule.trim()
        } else {
            self.message.trim()
        }
    }

    /// Upstream's `ruleMessageOrDefault`.
    fn message_or_default(&self) -> String {
        if self.message.is_empty() {
            format!("failed rule: {}", self.error_string())
        } else {
            self.message.trim().to_string()
        }
    }
}

use crate::api::go_quote;

fn has_newlines(s: &str) -> bool {
    s.contains('\n') || s.contains('\r')
}

/// An Invalid error whose bad value is printed verbatim (Go's `%#v` of a struct).
fn invalid_raw(field: String, repr: &str, detail: &str) -> FieldError {
    FieldError {
        kind: ErrorType::Invalid,
        field,
        value: None,
        detail: format!("{repr}: {detail}"),
    }
}

// ---------------------------------------------------------------------------
// Field paths

/// A `field.Path`; `None` is the nil path a custom resource is validated
/// from (which prints `<nil>` when an error is reported at the root).
#[derive(Clone, Debug)]
struct FPath(Option<String>);

impl FPath {
    fn root() -> Self {
        FPath(None)
    }

    fn child(&self, name: &str) -> Self {
        FPath(Some(match &self.0 {
            Some(p) => format!("{p}.{name}"),
            None => name.to_string(),
        }))
    }

    fn key(&self, k: &str) -> Self {
        FPath(Some(format!("{}[{k}]", self.0.as_deref().unwrap_or(""))))
    }

    fn index(&self, i: usize) -> Self {
        FPath(Some(format!("{}[{i}]", self.0.as_deref().unwrap_or(""))))
    }

    fn render(&self) -> String {
        self.0.clone().unwrap_or_else(|| "<nil>".to_string())
    }
}

/// Upstream's `ValidFieldPath`: checks a rule's `fieldPath` (`.a.b`,
/// `.m['k']`) against the schema and returns it normalized (`a.b`, `m[k]`).
fn valid_field_path(json_path: &str, schema: &Value) -> Result<String, String> {
    let tokens = tokenize_field_path(json_path);
    let mut out = FPath::root();
    let mut s = schema;
    let mut it = tokens.into_iter();
    let named = |s: &Value| -> Result<bool, String> {
        if properties(s).is_some() {
            Ok(true)
        } else if s.get("additionalProperties").is_some() {
            Ok(false)
        } else {
            Err("does not refer to a valid field".into())
        }
    };
    while let Some(tok) = it.next() {
        match tok.as_str() {
            "[" => {
                let tok = it.next().ok_or("unexpected end of JSON path")?;
                if tok.len() < 2 || !tok.starts_with('\'') || !tok.ends_with('\'') {
                    return Err(format!("expected single quoted string but got {tok}"));
                }
                let unescaped = unescape_single_quote(&tok[1..tok.len() - 1])
                    .map_err(|e| format!("invalid string literal: {e}"))?;
                let is_named = named(s)?;
                s = field_path_step(&mut out, s, &unescaped, is_named)?;
                let close = it.next().ok_or("unexpected end of JSON path")?;
                if close != "]" {
                    return Err(format!("expected ] but got {close}"));
                }
            }
            "." => {
                let tok = it.next().ok_or("unexpected end of JSON path")?;
                let is_named = named(s)?;
                s = field_path_step(&mut out, s, &tok, is_named)?;
            }
            other => return Err(format!("expected [ or . but got: {other}")),
        }
    }
    Ok(out.0.unwrap_or_default())
}

fn field_path_step<'a>(
    out: &mut FPath,
    s: &'a Value,
    name: &str,
    is_named: bool,
) -> Result<&'a Value, String> {
    let next = if is_named {
        *out = out.child(name);
        properties(s).and_then(|p| p.get(name))
    } else {
        *out = out.key(name);
        additional_properties(s)
    };
    next.ok_or_else(|| "does not refer to a valid field".to_string())
}

/// The token stream of upstream's field path scanner: `.`, `[`, `]` alone,
/// single-quoted strings whole, other text between delimiters.
fn tokenize_field_path(p: &str) -> Vec<String> {
    let b = p.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    while start < b.len() {
        let data = &b[start..];
        let mut len = data.len();
        for i in 0..data.len() {
            if data[0] == b'\'' {
                if i > 0 && data[i] == b'\'' && data[i - 1] != b'\\' {
                    len = i + 1;
                    break;
                }
                continue;
            }
            if matches!(data[i], b'.' | b'[' | b']') {
                len = if i == 0 { 1 } else { i };
                break;
            }
        }
        out.push(String::from_utf8_lossy(&data[..len]).into_owned());
        start += len;
    }
    out
}

fn unescape_single_quote(s: &str) -> Result<String, String> {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('a') => out.push('\u{7}'),
            Some('b') => out.push('\u{8}'),
            Some('f') => out.push('\u{c}'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('t') => out.push('\t'),
            Some('v') => out.push('\u{b}'),
            Some('\'') => out.push('\''),
            Some('\\') => out.push('\\'),
            Some(other) => return Err(format!("invalid escape char \\{other}")),
            None => out.push('\\'),
        }
    }
    Ok(out)
}

// ---------------------------------------------------------------------------
// Compilation (CRD create/update)

struct Compiler {
    /// Malformed rules (upstream's SchemaErrors), reported first.
    shape: Vec<FieldError>,
    /// CEL compilation errors (upstream's CELErrors).
    cel: Vec<FieldError>,
}

impl Compiler {
    /// Walks as `ValidateCustomResourceDefinitionOpenAPISchema` does. `cel`
    /// is false under allOf/anyOf/oneOf/not/definitions, where upstream
    /// checks the rules' shape but compiles nothing. `uncorrelatable` is the
    /// highest list or map above this node whose old values cannot be found.
    fn node(
        &mut self,
        s: &Value,
        path: &str,
        is_root: bool,
        cel: bool,
        uncorrelatable: Option<&str>,
    ) {
        if !s.is_object() {
            return;
        }
        let shape_before = self.shape.len();
        if let Some(ap) = additional_properties(s) {
            self.node(
                ap,
                &format!("{path}.additionalProperties"),
                false,
                cel,
                uncorrelatable,
            );
        }
        if let Some(props) = properties(s) {
            let sub = match uncorrelatable {
                Some(u) => Some(u.to_string()),
                None if !map_is_correlatable(s) => Some(path.to_string()),
                None => None,
            };
            for (name, p) in props {
                self.node(
                    p,
                    &format!("{path}.properties[{name}]"),
                    false,
                    cel,
                    sub.as_deref(),
                );
            }
        }
        if let Some(not) = s.get("not") {
            self.node(not, &format!("{path}.not"), false, false, uncorrelatable);
        }
        for key in ["allOf", "oneOf", "anyOf"] {
            if let Some(branches) = s.get(key).and_then(Value::as_array) {
                for (i, b) in branches.iter().enumerate() {
                    self.node(
                        b,
                        &format!("{path}.{key}[{i}]"),
                        false,
                        false,
                        uncorrelatable,
                    );
                }
            }
        }
        if let Some(defs) = s.get("definitions").and_then(Value::as_object) {
            for (name, d) in defs {
                self.node(
                    d,
                    &format!("{path}.definitions[{name}]"),
                    false,
                    false,
                    uncorrelatable,
                );
            }
        }
        if let Some(it) = s.get("items") {
            let sub = match uncorrelatable {
                Some(u) => Some(u.to_string()),
                None if list_type(s) != "map" => Some(path.to_string()),
                None => None,
            };
            match it {
                Value::Array(schemas) => {
                    for (i, x) in schemas.iter().enumerate() {
                        self.node(x, &format!("{path}.items[{i}]"), false, cel, sub.as_deref());
                    }
                }
                x => self.node(x, &format!("{path}.items"), false, cel, sub.as_deref()),
            }
        }

        let rules = rules(s);
        if rules.is_empty() {
            return;
        }
        let base = format!("{path}.x-kubernetes-validations");
        for (i, rv) in rules.iter().enumerate() {
            self.check_shape(s, &Rule::from_json(rv), &format!("{base}[{i}]"));
        }
        // Upstream compiles only when this node and its descendants have no
        // schema errors.
        if !cel || self.shape.len() != shape_before {
            return;
        }
        let self_ty = decl_type(s, is_root || is_embedded(s)).unwrap_or(Ty::Dyn);
        for (i, rv) in rules.iter().enumerate() {
            let rule = Rule::from_json(rv);
            self.compile_rule(&rule, &self_ty, &format!("{base}[{i}]"), uncorrelatable);
        }
    }

    fn check_shape(&mut self, s: &Value, rule: &Rule, at: &str) {
        let trimmed_rule = rule.rule.trim();
        let trimmed_msg = rule.message.trim();
        if trimmed_rule.is_empty() {
            self.shape.push(FieldError::required(
                format!("{at}.rule"),
                "rule is not specified",
            ));
        } else if !rule.message.is_empty() && trimmed_msg.is_empty() {
            self.shape.push(FieldError::invalid(
                format!("{at}.message"),
                Value::String(rule.message.into()),
                "message must be non-empty if specified",
            ));
        } else if has_newlines(trimmed_msg) {
            self.shape.push(FieldError::invalid(
                format!("{at}.message"),
                Value::String(rule.message.into()),
                "message must not contain line breaks",
            ));
        } else if has_newlines(trimmed_rule) && trimmed_msg.is_empty() {
            self.shape.push(FieldError::required(
                format!("{at}.message"),
                "message must be specified if rule contains line breaks",
            ));
        }
        if !rule.message_expression.is_empty() && rule.message_expression.trim().is_empty() {
            self.shape.push(FieldError::required(
                format!("{at}.messageExpression"),
                "messageExpression must be non-empty if specified",
            ));
        }
        if let Some(reason) = rule.reason {
            if !SUPPORTED_REASONS.contains(&reason) {
                self.shape.push(FieldError::not_supported(
                    format!("{at}.reason"),
                    Value::String(reason.into()),
                    SUPPORTED_REASONS,
                ));
            }
        }
        let fp = rule.field_path;
        if !fp.is_empty() && fp.trim().is_empty() {
            self.shape.push(FieldError::invalid(
                format!("{at}.fieldPath"),
                Value::String(fp.into()),
                "fieldPath must be non-empty if specified",
            ));
        }
        if has_newlines(fp) {
            self.shape.push(FieldError::invalid(
                format!("{at}.fieldPath"),
                Value::String(fp.into()),
                "fieldPath must not contain line breaks",
            ));
        }
        if !fp.is_empty() && valid_field_path(fp, s).is_err() {
            self.shape.push(FieldError::invalid(
                format!("{at}.fieldPath"),
                Value::String(fp.into()),
                "fieldPath must be a valid path",
            ));
        }
    }

    fn compile_rule(&mut self, rule: &Rule, self_ty: &Ty, at: &str, uncorrelatable: Option<&str>) {
        let old_ty = if rule.optional_old_self == Some(true) {
            Ty::Opt(Box::new(self_ty.clone()))
        } else {
            self_ty.clone()
        };
        let vars = check::Vars {
            self_ty: self_ty.clone(),
            old_self_ty: old_ty,
        };
        let mut uses_old_self = false;
        if !rule.rule.trim().is_empty() {
            match compile_expr(rule.rule, &vars) {
                Err(detail) => {
                    self.cel.push(invalid_raw(
                        format!("{at}.rule"),
                        &rule.go_repr(),
                        &format!("compilation failed: {detail}"),
                    ));
                }
                Ok((ty, uses)) if ty.is_known() && ty != Ty::Bool => {
                    let _ = uses;
                    self.cel.push(invalid_raw(
                        format!("{at}.rule"),
                        &rule.go_repr(),
                        "cel expression must evaluate to a bool",
                    ));
                }
                Ok((_, uses)) => {
                    uses_old_self = uses;
                    if !rule.message_expression.is_empty() {
                        match compile_expr(rule.message_expression, &vars) {
                            Err(detail) => self.cel.push(invalid_raw(
                                format!("{at}.messageExpression"),
                                &rule.go_repr(),
                                &format!("messageExpression compilation failed: {detail}"),
                            )),
                            Ok((ty, _)) if ty.is_known() && ty != Ty::String => {
                                self.cel.push(invalid_raw(
                                    format!("{at}.messageExpression"),
                                    &rule.go_repr(),
                                    "messageExpression must evaluate to a string",
                                ))
                            }
                            Ok(_) => {}
                        }
                    }
                }
            }
        }
        if uses_old_self {
            if let Some(u) = uncorrelatable {
                self.cel.push(FieldError::invalid(
                    format!("{at}.rule"),
                    Value::String(rule.rule.into()),
                    format!("oldSelf cannot be used on the uncorrelatable portion of the schema within {u}"),
                ));
            }
        } else if let Some(v) = rule.optional_old_self {
            self.cel.push(FieldError::invalid(
                format!("{at}.optionalOldSelf"),
                Value::Bool(v),
                "may not be set if oldSelf is not used in rule",
            ));
        }
    }
}

/// Parses and type-checks an expression: its type and whether it uses `oldSelf`.
fn compile_expr(src: &str, vars: &check::Vars) -> Result<(Ty, bool), String> {
    let parsed = env::parse(src);
    let p = match &*parsed {
        Ok(p) => p,
        Err(e) => return Err(e.clone()),
    };
    let ty = check::check(src, &p.expr, vars)?;
    Ok((ty, p.uses_old_self))
}

// ---------------------------------------------------------------------------
// Validation (custom resource writes)

fn has_rules(s: &Value) -> bool {
    if !rules(s).is_empty() {
        return true;
    }
    if items(s).map(has_rules).unwrap_or(false)
        || additional_properties(s).map(has_rules).unwrap_or(false)
        || properties(s)
            .map(|p| p.values().any(has_rules))
            .unwrap_or(false)
    {
        return true;
    }
    s.get("allOf")
        .and_then(Value::as_array)
        .map(|a| a.iter().any(has_rules))
        .unwrap_or(false)
}

/// Upstream's ratcheting options: the correlated (new, old) pair at this
/// node, if any, and the nearest correlated ancestor's.
#[derive(Clone, Copy)]
struct Ratchet<'a> {
    current: Option<(&'a Value, &'a Value)>,
    parent: Option<(&'a Value, &'a Value)>,
}

impl<'a> Ratchet<'a> {
    /// Errors of rules that do not use `oldSelf` become warnings (dropped
    /// here) when the value, or its nearest correlated ancestor, is unchanged.
    fn should(&self) -> bool {
        match (self.current, self.parent) {
            (Some((n, o)), _) => n == o,
            (None, Some((n, o))) => n == o,
            (None, None) => false,
        }
    }

    fn key(self, field: &str) -> Self {
        let Some((n, o)) = self.current else {
            return self;
        };
        if self.parent.is_none() && (field == "apiVersion" || field == "kind") {
            return Ratchet {
                current: None,
                parent: None,
            };
        }
        let current = match (n.get(field), o.get(field)) {
            (Some(a), Some(b)) if n.is_object() && o.is_object() => Some((a, b)),
            _ => None,
        };
        Ratchet {
            current,
            parent: Some((n, o)),
        }
    }

    fn index(self, i: usize, list_schema: &Value) -> Self {
        let Some((n, o)) = self.current else {
            return self;
        };
        let current = match (n.as_array(), o.as_array()) {
            (Some(na), Some(oa)) => na.get(i).and_then(|e| {
                let old = match list_type(list_schema) {
                    "map" => map_list_find(list_schema, oa, e),
                    "set" => oa.iter().find(|x| *x == e),
                    _ => None,
                };
                old.map(|old| (e, old))
            }),
            _ => None,
        };
        Ratchet {
            current,
            parent: Some((n, o)),
        }
    }
}

/// The element of a `x-kubernetes-list-type: map` list with the same keys as `e`.
fn map_list_find<'a>(list_schema: &Value, old: &'a [Value], e: &Value) -> Option<&'a Value> {
    let keys = list_map_keys(list_schema);
    if keys.is_empty() || !e.is_object() {
        return None;
    }
    let key_of = |x: &Value| -> Vec<Value> {
        keys.iter()
            .map(|k| x.get(*k).cloned().unwrap_or(Value::Null))
            .collect()
    };
    let want = key_of(e);
    old.iter().find(|x| x.is_object() && key_of(x) == want)
}

struct Walker {
    errs: Vec<FieldError>,
    /// What is left of the runtime budget for this object.
    budget: u64,
    /// Set once a limit stopped evaluation: no further rules run.
    stopped: bool,
}

const OUT_OF_BUDGET: &str =
    "validation failed due to running out of cost budget, no further validation rules will be run";

impl Walker {
    /// Validates `obj` at `path`: `vs` supplies the rules and the structure
    /// to descend (an allOf branch, or the node's own schema), `ns` the
    /// node's schema, which types the data.
    #[allow(clippy::too_many_arguments)]
    fn node(
        &mut self,
        vs: &Value,
        ns: &Value,
        path: &FPath,
        obj: &Value,
        old: Option<&Value>,
        resource_root: bool,
        r: Ratchet<'_>,
    ) {
        if obj.is_null() || self.stopped {
            return;
        }
        let old = old.filter(|o| !o.is_null());
        self.rules(vs, ns, path, obj, old, resource_root, r);

        if let Some(branches) = vs.get("allOf").and_then(Value::as_array) {
            for b in branches {
                if has_rules(b) {
                    let r = Ratchet {
                        current: None,
                        parent: r.parent,
                    };
                    self.node(b, ns, path, obj, old, resource_root, r);
                }
            }
        }

        match obj {
            Value::Array(a) => {
                let (Some(vi), Some(ni)) = (items(vs), items(ns)) else {
                    return;
                };
                if !has_rules(vi) {
                    return;
                }
                let old_list = old.and_then(Value::as_array);
                for (i, e) in a.iter().enumerate() {
                    // Only map lists correlate old and new elements.
                    let old_e = match (list_type(ns), old_list) {
                        ("map", Some(ol)) => map_list_find(ns, ol, e),
                        _ => None,
                    };
                    self.node(
                        vi,
                        ni,
                        &path.index(i),
                        e,
                        old_e,
                        is_embedded(ni),
                        r.index(i, ns),
                    );
                }
            }
            Value::Object(m) => {
                let correlatable = map_is_correlatable(ns);
                let old_field = |k: &str| {
                    if correlatable {
                        old.and_then(|o| o.get(k))
                    } else {
                        None
                    }
                };
                if let (Some(va), Some(na)) = (additional_properties(vs), additional_properties(ns))
                {
                    if has_rules(va) {
                        for (k, v) in m {
                            self.node(
                                va,
                                na,
                                &path.key(k),
                                v,
                                old_field(k),
                                is_embedded(na),
                                r.key(k),
                            );
                        }
                    }
                }
                if let (Some(vp), Some(np)) = (properties(vs), properties(ns)) {
                    for (k, v) in m {
                        let (Some(vps), Some(nps)) = (vp.get(k), np.get(k)) else {
                            continue;
                        };
                        // Properties of unknown type are not visible to CEL.
                        if !has_rules(vps) || decl_type(nps, is_embedded(nps)).is_none() {
                            continue;
                        }
                        self.node(
                            vps,
                            nps,
                            &path.child(k),
                            v,
                            old_field(k),
                            is_embedded(nps),
                            r.key(k),
                        );
                    }
                }
            }
            _ => {}
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn rules(
        &mut self,
        vs: &Value,
        ns: &Value,
        path: &FPath,
        obj: &Value,
        old: Option<&Value>,
        resource_root: bool,
        r: Ratchet<'_>,
    ) {
        let rules = rules(vs);
        if rules.is_empty() {
            return;
        }
        let sts_type = Value::String(ty_of(ns).to_string());
        let self_val = value::to_cel(obj, ns, resource_root);
        let old_val = old.map(|o| value::to_cel(o, ns, resource_root));
        let invalid =
            |p: &FPath, detail: String| FieldError::invalid(p.render(), sts_type.clone(), detail);

        for rv in rules {
            if self.stopped {
                return;
            }
            let rule = Rule::from_json(rv);
            if rule.rule.trim().is_empty() {
                continue;
            }
            if self.budget == 0 {
                self.errs.push(invalid(path, OUT_OF_BUDGET.to_string()));
                self.stopped = true;
                return;
            }
            let parsed = env::parse(rule.rule);
            let p = match &*parsed {
                Ok(p) => p,
                Err(e) => {
                    self.errs.push(invalid(
                        path,
                        format!("rule compile error: compilation failed: {e}"),
                    ));
                    continue;
                }
            };
            let optional_old_self = rule.optional_old_self == Some(true);
            if p.uses_old_self && old.is_none() && !optional_old_self {
                // Transition rules run only when there is an old value.
                continue;
            }
            let mut vars: Vec<(&str, Cel)> = vec![("self", self_val.clone())];
            if optional_old_self {
                vars.push(("oldSelf", env::optional(old_val.clone())));
            } else if let Some(o) = &old_val {
                vars.push(("oldSelf", o.clone()));
            }
            match env::eval(p, &vars, &mut self.budget) {
                Ok(Cel::Bool(true)) => continue,
                Ok(Cel::Bool(false)) => {}
                Ok(_) => {
                    self.errs.push(invalid(path, overload_detail(&rule)));
                    continue;
                }
                Err(e) => {
                    let (overload, text) = env::runtime_error(&e);
                    if text == env::COST_EXCEEDED {
                        let detail = if self.budget == 0 {
                            OUT_OF_BUDGET.to_string()
                        } else {
                            format!(
                                "'{text}': no further validation rules will be run due to call cost exceeds limit for rule: {}",
                                rule.error_string()
                            )
                        };
                        self.errs.push(invalid(path, detail));
                        self.stopped = true;
                        return;
                    }
                    let detail = if overload {
                        overload_detail(&rule)
                    } else {
                        format!("{text} evaluating rule: {}", rule.error_string())
                    };
                    self.errs.push(invalid(path, detail));
                    continue;
                }
            }

            // The rule failed: where, and with which message.
            let err_path = if rule.field_path.is_empty() {
                path.clone()
            } else {
                match valid_field_path(rule.field_path, ns) {
                    Ok(fp) if !fp.is_empty() => path.child(&fp),
                    _ => path.clone(),
                }
            };
            let detail = match self.message_expression(&rule, &self_val, old_val.as_ref()) {
                Ok(Some(m)) => m,
                Ok(None) => rule.message_or_default(),
                Err(stop) => {
                    self.errs.push(invalid(&err_path, stop));
                    self.stopped = true;
                    return;
                }
            };
            if !p.uses_old_self && r.should() {
                continue;
            }
            let field = err_path.render();
            self.errs.push(match rule.reason {
                Some("FieldValueForbidden") => FieldError::forbidden(field, detail),
                Some("FieldValueRequired") => FieldError::required(field, detail),
                Some("FieldValueDuplicate") => FieldError::duplicate(field, sts_type.clone()),
                _ => FieldError::invalid(field, sts_type.clone(), detail),
            });
        }
    }

    /// The evaluated messageExpression, or `None` to fall back to the
    /// message (upstream logs why and does the same); `Err` when a limit
    /// stopped it, which stops validation.
    fn message_expression(
        &mut self,
        rule: &Rule,
        self_val: &Cel,
        old_val: Option<&Cel>,
    ) -> Result<Option<String>, String> {
        if rule.message_expression.is_empty() {
            return Ok(None);
        }
        let parsed = env::parse(rule.message_expression);
        let Ok(p) = parsed.as_ref() else {
            return Ok(None);
        };
        let mut vars: Vec<(&str, Cel)> = vec![("self", self_val.clone())];
        if let Some(o) = old_val {
            vars.push(("oldSelf", o.clone()));
        }
        match env::eval(p, &vars, &mut self.budget) {
            Ok(Cel::String(s)) => {
                let t = s.trim();
                if t.is_empty() || t.len() > MAX_MESSAGE_EXPRESSION_BYTES || t.contains('\n') {
                    Ok(None)
                } else {
                    Ok(Some(t.to_string()))
                }
            }
            Err(e) if env::runtime_error(&e).1 == env::COST_EXCEEDED => Err(if self.budget == 0 {
                "messageExpression evaluation failed due to running out of cost budget, no further validation rules will be run".to_string()
            } else {
                format!(
                    "no further validation rules will be run due to call cost exceeds limit for messageExpression: {}",
                    go_quote(rule.message_expression)
                )
            }),
            _ => Ok(None),
        }
    }
}

fn overload_detail(rule: &Rule) -> String {
    format!(
        "'no such overload': call arguments did not match a supported operator, function or macro signature for rule: {}",
        rule.error_string()
    )
}
