//! The CEL environment: parsing (with cel-go's optional syntax and the
//! `cel.bind`/`optMap` macros), the function library (the `cel` crate's
//! standard functions, kube-cel's Kubernetes libraries, and `type`/`dyn`/
//! `bool` added here), evaluation that never panics, and cel-go's error texts.

use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};

use kube_cel::cel::common::ast::{CallExpr, ComprehensionExpr, EntryExpr, Expr, LiteralValue};
use kube_cel::cel::objects::{Key, Map as CelMap, Opaque};
use kube_cel::cel::parser::{Expression, ParseErrors, Parser};
use kube_cel::cel::{Context, ExecutionError, Value as Cel};
use kube_cel::KubeCelExt;

/// A parsed (and macro-expanded) expression.
pub(crate) struct Parsed {
    pub expr: Expression,
    /// Whether `oldSelf` is referenced (outside a comprehension that shadows it).
    pub uses_old_self: bool,
}

/// Parses with upstream's syntax, or returns cel-go's rendering of the
/// syntax errors (`ERROR: <input>:1:5: ...` with the source snippet).
pub(crate) fn parse(src: &str) -> Arc<Result<Parsed, String>> {
    static CACHE: Mutex<Option<HashMap<String, Arc<Result<Parsed, String>>>>> = Mutex::new(None);
    if let Ok(mut guard) = CACHE.lock() {
        let cache = guard.get_or_insert_with(HashMap::new);
        if let Some(hit) = cache.get(src) {
            return hit.clone();
        }
        let parsed = Arc::new(parse_uncached(src));
        if cache.len() >= 4096 {
            cache.clear();
        }
        cache.insert(src.to_string(), parsed.clone());
        return parsed;
    }
    Arc::new(parse_uncached(src))
}

fn parse_uncached(src: &str) -> Result<Parsed, String> {
    let result = catch_unwind(AssertUnwindSafe(|| {
        Parser::new()
            .enable_optional_syntax(true)
            .parse(src)
    }));
    match result {
        Ok(Ok(mut expr)) => {
            rewrite(&mut expr);
            let uses_old_self = references(&expr, "oldSelf");
            Ok(Parsed {
                expr,
                uses_old_self,
            })
        }
        Ok(Err(errs)) => Err(render_parse_errors(src, &errs)),
        Err(_) => Err(render_error(src, 0, "internal error parsing expression")),
    }
}

fn render_parse_errors(src: &str, errs: &ParseErrors) -> String {
    let mut out = Vec::new();
    for e in &errs.errors {
        let (line, col) = e.pos;
        let line = line.max(1) as usize;
        let col = (col.max(1) as usize) - 1;
        out.push(render_at(src, line, col, &e.msg));
    }
    if out.is_empty() {
        out.push(render_error(src, 0, "syntax error"));
    }
    out.join("\n")
}

/// cel-go's `Error.ToDisplayString` for an error at byte offset `offset`.
pub(crate) fn render_error(src: &str, offset: usize, msg: &str) -> String {
    let offset = offset.min(src.len());
    let before = &src[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map(|i| i + 1).unwrap_or(0);
    let col = src[line_start..offset].chars().count();
    render_at(src, line, col, msg)
}

/// `line` is 1-based, `col` 0-based in characters.
fn render_at(src: &str, line: usize, col: usize, msg: &str) -> String {
    let mut out = format!("ERROR: <input>:{line}:{}: {msg}", col + 1);
    if let Some(snippet) = src.split('\n').nth(line - 1) {
        let snippet = snippet.replace('\t', " ");
        out.push_str("\n | ");
        out.push_str(&snippet);
        out.push_str("\n | ");
        let mut chars = snippet.chars();
        for _ in 0..col {
            match chars.next() {
                Some(c) if c.len_utf8() > 1 => out.push('\u{FF0E}'),
                Some(_) => out.push('.'),
                None => break,
            }
        }
        match chars.next() {
            Some(c) if c.len_utf8() > 1 => out.push('\u{FF3E}'),
            _ => out.push('^'),
        }
    }
    out
}

// ---------------------------------------------------------------------------
// Macro rewriting

fn ident(name: &str) -> Expression {
    Expression {
        id: 0,
        expr: Expr::Ident(name.to_string()),
    }
}

fn call(name: &str, target: Option<Expression>, args: Vec<Expression>) -> Expression {
    Expression {
        id: 0,
        expr: Expr::Call(CallExpr {
            func_name: name.to_string(),
            target: target.map(Box::new),
            args,
        }),
    }
}

/// `cel.bind(v, init, body)` as cel-go expands it: a comprehension over an
/// empty list whose accumulator is `v`.
fn bind(var: String, init: Expression, body: Expression) -> Expression {
    Expression {
        id: 0,
        expr: Expr::Comprehension(Box::new(ComprehensionExpr {
            iter_range: Expression {
                id: 0,
                expr: Expr::List(Default::default()),
            },
            iter_var: "#unused".to_string(),
            iter_var2: None,
            accu_var: var.clone(),
            accu_init: init,
            loop_cond: Expression {
                id: 0,
                expr: Expr::Literal(LiteralValue::Boolean(false.into())),
            },
            loop_step: ident(&var),
            result: body,
        })),
    }
}

/// Expands the macros the `cel` crate lacks: `cel.bind`, `optMap`, `optFlatMap`.
fn rewrite(e: &mut Expression) {
    match &mut e.expr {
        Expr::Call(c) => {
            if let Some(t) = c.target.as_mut() {
                rewrite(t);
            }
            for a in c.args.iter_mut() {
                rewrite(a);
            }
            let target_is = |name: &str| {
                matches!(c.target.as_deref(), Some(Expression { expr: Expr::Ident(n), .. }) if n == name)
            };
            let first_ident = match c.args.first() {
                Some(Expression {
                    expr: Expr::Ident(v),
                    ..
                }) => Some(v.clone()),
                _ => None,
            };
            if c.func_name == "bind" && target_is("cel") && c.args.len() == 3 {
                if let Some(var) = first_ident {
                    let body = c.args.remove(2);
                    let init = c.args.remove(1);
                    *e = bind(var, init, body);
                }
            } else if (c.func_name == "optMap" || c.func_name == "optFlatMap")
                && c.args.len() == 2
                && c.target.is_some()
            {
                if let (Some(var), Some(target)) = (first_ident, c.target.take()) {
                    let body = c.args.remove(1);
                    let value = call("value", Some((*target).clone()), vec![]);
                    let bound = bind(var, value, body);
                    let then = if c.func_name == "optMap" {
                        call("optional.of", None, vec![bound])
                    } else {
                        bound
                    };
                    let cond = call("hasValue", Some(*target), vec![]);
                    *e = call(
                        "_?_:_",
                        None,
                        vec![cond, then, call("optional.none", None, vec![])],
                    );
                }
            }
        }
        Expr::Comprehension(c) => {
            rewrite(&mut c.iter_range);
            rewrite(&mut c.accu_init);
            rewrite(&mut c.loop_cond);
            rewrite(&mut c.loop_step);
            rewrite(&mut c.result);
        }
        Expr::List(l) => l.elements.iter_mut().for_each(rewrite),
        Expr::Map(m) => {
            for en in m.entries.iter_mut() {
                match &mut en.expr {
                    EntryExpr::MapEntry(me) => {
                        rewrite(&mut me.key);
                        rewrite(&mut me.value);
                    }
                    EntryExpr::StructField(sf) => rewrite(&mut sf.value),
                }
            }
        }
        Expr::Select(s) => rewrite(&mut s.operand),
        Expr::Struct(s) => {
            for en in s.entries.iter_mut() {
                if let EntryExpr::StructField(sf) = &mut en.expr {
                    rewrite(&mut sf.value);
                }
            }
        }
        Expr::Ident(_) | Expr::Literal(_) | Expr::Unspecified => {}
    }
}

/// Whether the free identifier `name` occurs in `e`.
pub(crate) fn references(e: &Expression, name: &str) -> bool {
    match &e.expr {
        Expr::Ident(n) => n == name,
        Expr::Call(c) => {
            c.target.as_deref().map(|t| references(t, name)).unwrap_or(false)
                || c.args.iter().any(|a| references(a, name))
        }
        Expr::Comprehension(c) => {
            references(&c.iter_range, name)
                || references(&c.accu_init, name)
                || ((c.iter_var != name
                    && c.accu_var != name
                    && c.iter_var2.as_deref() != Some(name))
                    && (references(&c.loop_cond, name)
                        || references(&c.loop_step, name)
                        || references(&c.result, name)))
        }
        Expr::List(l) => l.elements.iter().any(|x| references(x, name)),
        Expr::Map(m) => m.entries.iter().any(|en| match &en.expr {
            EntryExpr::MapEntry(me) => references(&me.key, name) || references(&me.value, name),
            EntryExpr::StructField(sf) => references(&sf.value, name),
        }),
        Expr::Select(s) => references(&s.operand, name),
        Expr::Struct(s) => s.entries.iter().any(|en| match &en.expr {
            EntryExpr::StructField(sf) => references(&sf.value, name),
            EntryExpr::MapEntry(me) => references(&me.value, name),
        }),
        Expr::Literal(_) | Expr::Unspecified => false,
    }
}

/// Expressions the interpreter cannot evaluate (it would panic on them).
fn unsupported(e: &Expression) -> bool {
    match &e.expr {
        Expr::Struct(_) | Expr::Unspecified => true,
        Expr::Call(c) => {
            c.target.as_deref().map(unsupported).unwrap_or(false) || c.args.iter().any(unsupported)
        }
        Expr::Comprehension(c) => {
            unsupported(&c.iter_range)
                || unsupported(&c.accu_init)
                || unsupported(&c.loop_cond)
                || unsupported(&c.loop_step)
                || unsupported(&c.result)
        }
        Expr::List(l) => l.elements.iter().any(unsupported),
        Expr::Map(m) => m.entries.iter().any(|en| match &en.expr {
            EntryExpr::MapEntry(me) => unsupported(&me.key) || unsupported(&me.value),
            EntryExpr::StructField(_) => true,
        }),
        Expr::Select(s) => unsupported(&s.operand),
        Expr::Ident(_) | Expr::Literal(_) => false,
    }
}

// ---------------------------------------------------------------------------
// Type values

/// A CEL type as a runtime value (`type(x)`, `int`, `string`…).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct TypeVal(pub String);

impl Opaque for TypeVal {
    fn runtime_type_name(&self) -> &str {
        "type"
    }
}

fn type_value(name: &str) -> Cel {
    Cel::Opaque(Arc::new(TypeVal(name.to_string())))
}

/// The names of the type identifiers CEL predeclares.
pub(crate) const TYPE_IDENTS: &[&str] = &[
    "int", "uint", "double", "bool", "string", "bytes", "list", "map", "null_type", "type",
];

fn runtime_type_name(v: &Cel) -> String {
    match v {
        Cel::List(_) => "list".into(),
        Cel::Map(_) => "map".into(),
        Cel::Function(..) => "function".into(),
        Cel::Int(_) => "int".into(),
        Cel::UInt(_) => "uint".into(),
        Cel::Float(_) => "double".into(),
        Cel::String(_) => "string".into(),
        Cel::Bytes(_) => "bytes".into(),
        Cel::Bool(_) => "bool".into(),
        Cel::Duration(_) => "google.protobuf.Duration".into(),
        Cel::Timestamp(_) => "google.protobuf.Timestamp".into(),
        Cel::Opaque(o) if o.runtime_type_name() == "optional_type" => "optional_type".into(),
        Cel::Opaque(o) => o.runtime_type_name().to_string(),
        Cel::Null => "null_type".into(),
    }
}

fn cel_type(v: Cel) -> Cel {
    type_value(&runtime_type_name(&v))
}

fn cel_dyn(v: Cel) -> Cel {
    v
}

fn cel_bool(v: Cel) -> Result<Cel, ExecutionError> {
    match v {
        Cel::Bool(b) => Ok(Cel::Bool(b)),
        Cel::String(s) => match s.as_str() {
            "1" | "t" | "T" | "TRUE" | "true" | "True" => Ok(Cel::Bool(true)),
            "0" | "f" | "F" | "FALSE" | "false" | "False" => Ok(Cel::Bool(false)),
            _ => Err(ExecutionError::function_error(
                "bool",
                format!("type conversion error from 'string' to 'bool': {s}"),
            )),
        },
        _ => Err(ExecutionError::NoSuchOverload),
    }
}

fn base_context() -> Context<'static> {
    let mut ctx = Context::default().with_all();
    ctx.add_function("type", cel_type);
    ctx.add_function("dyn", cel_dyn);
    ctx.add_function("bool", cel_bool);
    for name in TYPE_IDENTS {
        ctx.add_variable_from_value(*name, type_value(name));
    }
    let protobuf: HashMap<Key, Cel> = [
        ("Timestamp", type_value("google.protobuf.Timestamp")),
        ("Duration", type_value("google.protobuf.Duration")),
    ]
    .into_iter()
    .map(|(k, v)| (Key::from(k), v))
    .collect();
    let google: HashMap<Key, Cel> = [(
        Key::from("protobuf"),
        Cel::Map(CelMap {
            map: Arc::new(protobuf),
        }),
    )]
    .into_iter()
    .collect();
    ctx.add_variable_from_value(
        "google",
        Cel::Map(CelMap {
            map: Arc::new(google),
        }),
    );
    ctx
}

thread_local! {
    static BASE: Context<'static> = base_context();
}

/// Evaluates `expr` with the given variables bound.
pub(crate) fn eval(expr: &Expression, vars: &[(&str, Cel)]) -> Result<Cel, ExecutionError> {
    if unsupported(expr) {
        return Err(ExecutionError::function_error(
            "eval",
            "expression not supported by this implementation",
        ));
    }
    BASE.with(|base| {
        let mut ctx = base.new_inner_scope();
        for (name, v) in vars {
            ctx.add_variable_from_value(*name, v.clone());
        }
        match catch_unwind(AssertUnwindSafe(|| Cel::resolve(expr, &ctx))) {
            Ok(r) => r,
            Err(_) => Err(ExecutionError::function_error(
                "eval",
                "internal error evaluating expression",
            )),
        }
    })
}

/// An optional value (`optional.of(v)` / `optional.none()`), as `oldSelf`
/// is bound for rules with `optionalOldSelf`.
pub(crate) fn optional(v: Option<Cel>) -> Cel {
    use kube_cel::cel::objects::OptionalValue;
    Cel::Opaque(Arc::new(match v {
        Some(v) => OptionalValue::of(v),
        None => OptionalValue::none(),
    }))
}

/// How a runtime error reads in upstream's messages; `true` when cel-go
/// would have reported it as `no such overload`.
pub(crate) fn runtime_error(e: &ExecutionError) -> (bool, String) {
    use ExecutionError as E;
    match e {
        E::NoSuchKey(k) => (false, format!("no such key: {k}")),
        E::IndexOutOfBounds(v) => (false, format!("index out of bounds: {}", scalar(v))),
        E::DivisionByZero(_) => (false, "division by zero".into()),
        E::RemainderByZero(_) => (false, "modulus by zero".into()),
        E::Overflow(_, Cel::UInt(_), _) => (false, "unsigned integer overflow".into()),
        E::Overflow(..) => (false, "integer overflow".into()),
        E::UndeclaredReference(n) => (false, format!("undeclared reference to '{n}'")),
        E::FunctionError { message, .. } => (false, message.clone()),
        E::NoSuchOverload
        | E::UnsupportedBinaryOperator(..)
        | E::UnsupportedUnaryOperator(..)
        | E::ValuesNotComparable(..)
        | E::UnexpectedType { .. }
        | E::UnsupportedTargetType { .. }
        | E::NotSupportedAsMethod { .. }
        | E::UnsupportedMapIndex(_)
        | E::UnsupportedListIndex(_)
        | E::UnsupportedIndex(..)
        | E::UnsupportedKeyType(_)
        | E::InvalidArgumentCount { .. }
        | E::MissingArgumentOrTarget => (true, "no such overload".into()),
        other => (false, other.to_string()),
    }
}

fn scalar(v: &Cel) -> String {
    match v {
        Cel::Int(i) => i.to_string(),
        Cel::UInt(u) => u.to_string(),
        Cel::Float(f) => f.to_string(),
        Cel::String(s) => s.to_string(),
        Cel::Bool(b) => b.to_string(),
        other => format!("{other:?}"),
    }
}
