//! The CEL environment: parsing (with cel-go's optional syntax and the
//! `cel.bind`/`optMap` macros), the function library (the `cel` crate's
//! standard functions, kube-cel's Kubernetes libraries, and `type`/`dyn`/
//! `bool` added here), evaluation that never panics, and cel-go's error texts.

use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};

use kube_cel::cel::common::ast::{CallExpr, ComprehensionExpr, EntryExpr, Expr, LiteralValue};
use kube_cel::cel::extractors::Arguments;
use kube_cel::cel::objects::{Key, Map as CelMap, Opaque};
use kube_cel::cel::parser::{Expression, ParseErrors, Parser};
use kube_cel::cel::{Context, ExecutionError, Value as Cel};
use kube_cel::KubeCelExt;

/// A parsed (and macro-expanded) expression.
pub(crate) struct Parsed {
    pub expr: Expression,
    /// Whether `oldSelf` is referenced (outside a comprehension that shadows it).
    pub uses_old_self: bool,
    /// False for expressions the interpreter cannot evaluate (struct literals).
    evaluable: bool,
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
        Parser::new().enable_optional_syntax(true).parse(src)
    }));
    match result {
        Ok(Ok(mut expr)) => {
            rewrite(&mut expr);
            instrument(&mut expr);
            let uses_old_self = references(&expr, "oldSelf");
            let evaluable = !unsupported(&expr);
            Ok(Parsed {
                expr,
                uses_old_self,
                evaluable,
            })
        }
        Ok(Err(errs)) => Err(render_parse_errors(src, &errs)),
        Err(_) => Err(render_error(src, 0, "internal error parsing expression")),
    }
}

fn render_parse_errors(src: &str, errs: &ParseErrors) -> String {
    let mut out = Vec::new();
    for e in &errs.errors {
        if e.msg == "invalid argument to has() macro" {
            // cel-go reports macro errors at the call's parenthesis.
            if let Some(off) = src.find("has(").or_else(|| src.find("has")) {
                out.push(render_error(src, off + 3, &e.msg));
                continue;
            }
        }
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

fn lit_bool(b: bool) -> Expression {
    Expression {
        id: 0,
        expr: Expr::Literal(LiteralValue::Boolean(b.into())),
    }
}

fn lit_int(i: i64) -> Expression {
    Expression {
        id: 0,
        expr: Expr::Literal(LiteralValue::Int(i.into())),
    }
}

fn list_of(elements: Vec<Expression>) -> Expression {
    Expression {
        id: 0,
        expr: Expr::List(kube_cel::cel::common::ast::ListExpr::new(elements)),
    }
}

/// A comprehension over `range` binding `iter`, as the standard macros expand.
fn comprehension(
    range: Expression,
    iter: &str,
    init: Expression,
    cond: Expression,
    step: Expression,
    result: Expression,
) -> Expression {
    Expression {
        id: 0,
        expr: Expr::Comprehension(Box::new(ComprehensionExpr {
            iter_range: range,
            iter_var: iter.to_string(),
            iter_var2: None,
            accu_var: ACCU.to_string(),
            accu_init: init,
            loop_cond: cond,
            loop_step: step,
            result,
        })),
    }
}

const ACCU: &str = "@result";

/// Pairs `[index or key, value]` of a list or map: how the two-variable
/// comprehensions iterate here.
pub(crate) const PAIRS: &str = "@pairs";

/// `lists.@sortByAssociatedKeys`: sorts a list by a parallel list of keys.
pub(crate) const SORT_BY: &str = "@sort_by";

fn pairs(Arguments(args): Arguments) -> Result<Cel, ExecutionError> {
    let out: Vec<Cel> = match args.first() {
        Some(Cel::List(l)) => l
            .iter()
            .enumerate()
            .map(|(i, v)| Cel::List(Arc::new(vec![Cel::Int(i as i64), v.clone()])))
            .collect(),
        Some(Cel::Map(m)) => m
            .map
            .iter()
            .map(|(k, v)| Cel::List(Arc::new(vec![Cel::from(k.clone()), v.clone()])))
            .collect(),
        _ => return Err(ExecutionError::NoSuchOverload),
    };
    Ok(Cel::List(Arc::new(out)))
}

fn sort_by(Arguments(args): Arguments) -> Result<Cel, ExecutionError> {
    let (Some(Cel::List(list)), Some(Cel::List(keys))) = (args.first(), args.get(1)) else {
        return Err(ExecutionError::NoSuchOverload);
    };
    let mut idx: Vec<usize> = (0..list.len().min(keys.len())).collect();
    let mut incomparable = false;
    idx.sort_by(|a, b| {
        keys[*a].partial_cmp(&keys[*b]).unwrap_or_else(|| {
            incomparable = true;
            std::cmp::Ordering::Equal
        })
    });
    if incomparable {
        return Err(ExecutionError::NoSuchOverload);
    }
    Ok(Cel::List(Arc::new(
        idx.into_iter().map(|i| list[i].clone()).collect(),
    )))
}

/// The two-variable comprehensions (`all(i, v, p)`, `exists`, `existsOne`,
/// `transformList`) over the pairs of the range.
fn two_var(
    kind: &str,
    range: Expression,
    i: String,
    v: String,
    args: Vec<Expression>,
) -> Option<Expression> {
    let pair = "#pair";
    let with_vars = |e: Expression| {
        let key = call("_[_]", None, vec![ident(pair), lit_int(0)]);
        let val = call("_[_]", None, vec![ident(pair), lit_int(1)]);
        bind(i.clone(), key, bind(v.clone(), val, e))
    };
    let range = call(PAIRS, None, vec![range]);
    let accu = || ident(ACCU);
    let mut args = args.into_iter();
    Some(match kind {
        "all" => {
            let p = with_vars(args.next()?);
            comprehension(
                range,
                pair,
                lit_bool(true),
                call("@not_strictly_false", None, vec![accu()]),
                call("_&&_", None, vec![accu(), p]),
                accu(),
            )
        }
        "exists" => {
            let p = with_vars(args.next()?);
            comprehension(
                range,
                pair,
                lit_bool(false),
                call(
                    "@not_strictly_false",
                    None,
                    vec![call("!_", None, vec![accu()])],
                ),
                call("_||_", None, vec![accu(), p]),
                accu(),
            )
        }
        "existsOne" | "exists_one" => {
            let p = with_vars(args.next()?);
            comprehension(
                range,
                pair,
                lit_int(0),
                lit_bool(true),
                call(
                    "_?_:_",
                    None,
                    vec![p, call("_+_", None, vec![accu(), lit_int(1)]), accu()],
                ),
                call("_==_", None, vec![accu(), lit_int(1)]),
            )
        }
        "transformList" => {
            let first = args.next()?;
            let (filter, e) = match args.next() {
                Some(e) => (Some(with_vars(first)), with_vars(e)),
                None => (None, with_vars(first)),
            };
            let append = call("_+_", None, vec![accu(), list_of(vec![e])]);
            let step = match filter {
                Some(f) => call("_?_:_", None, vec![f, append, accu()]),
                None => append,
            };
            comprehension(range, pair, list_of(vec![]), lit_bool(true), step, accu())
        }
        _ => return None,
    })
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

/// The function `x.?f` is rewritten to (the interpreter's own nests
/// optionals and fails on absent fields).
pub(crate) const OPT_SELECT: &str = "@opt_select";

fn opt_select(Arguments(args): Arguments) -> Result<Cel, ExecutionError> {
    use kube_cel::cel::objects::OptionalValue;
    let (Some(x), Some(Cel::String(field))) = (args.first(), args.get(1)) else {
        return Err(ExecutionError::NoSuchOverload);
    };
    let base = match x {
        Cel::Opaque(o) if o.runtime_type_name() == "optional_type" => {
            match o
                .downcast_ref::<OptionalValue>()
                .and_then(OptionalValue::value)
            {
                Some(v) => v.clone(),
                None => return Ok(optional(None)),
            }
        }
        other => other.clone(),
    };
    match base {
        Cel::Map(m) => Ok(optional(m.get(&Key::from(field.as_str())).cloned())),
        _ => Err(ExecutionError::NoSuchOverload),
    }
}

/// Expands the macros the `cel` crate lacks (`cel.bind`, `optMap`,
/// `optFlatMap`) and swaps in a working optional selection.
fn rewrite(e: &mut Expression) {
    match &mut e.expr {
        Expr::Call(c) => {
            if let Some(t) = c.target.as_mut() {
                rewrite(t);
            }
            for a in c.args.iter_mut() {
                rewrite(a);
            }
            let target_is = |name: &str| matches!(c.target.as_deref(), Some(Expression { expr: Expr::Ident(n), .. }) if n == name);
            let first_ident = match c.args.first() {
                Some(Expression {
                    expr: Expr::Ident(v),
                    ..
                }) => Some(v.clone()),
                _ => None,
            };
            let second_ident = match c.args.get(1) {
                Some(Expression {
                    expr: Expr::Ident(v),
                    ..
                }) => Some(v.clone()),
                _ => None,
            };
            if c.func_name == "_?._" && c.args.len() == 2 {
                c.func_name = OPT_SELECT.to_string();
            } else if matches!(
                c.func_name.as_str(),
                "all" | "exists" | "existsOne" | "exists_one" | "transformList"
            ) && (c.args.len() == 3
                || (c.func_name == "transformList" && c.args.len() == 4))
                && c.target.is_some()
                && first_ident.is_some()
                && second_ident.is_some()
            {
                if let (Some(i), Some(v), Some(target)) =
                    (first_ident, second_ident, c.target.take())
                {
                    let rest: Vec<Expression> = c.args.drain(2..).collect();
                    if let Some(expanded) = two_var(&c.func_name, *target, i, v, rest) {
                        *e = expanded;
                    }
                }
            } else if c.func_name == "sortBy" && c.args.len() == 2 && c.target.is_some() {
                if let (Some(var), Some(target)) = (first_ident, c.target.take()) {
                    let key = c.args.remove(1);
                    let list = "#sortBy";
                    let keys = comprehension(
                        ident(list),
                        &var,
                        list_of(vec![]),
                        lit_bool(true),
                        call("_+_", None, vec![ident(ACCU), list_of(vec![key])]),
                        ident(ACCU),
                    );
                    *e = bind(
                        list.to_string(),
                        *target,
                        call(SORT_BY, None, vec![ident(list), keys]),
                    );
                }
            } else if c.func_name == "bind" && target_is("cel") && c.args.len() == 3 {
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
            c.target
                .as_deref()
                .map(|t| references(t, name))
                .unwrap_or(false)
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
    "int",
    "uint",
    "double",
    "bool",
    "string",
    "bytes",
    "list",
    "map",
    "null_type",
    "type",
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

fn cel_type(v: Cel) -> Result<Cel, ExecutionError> {
    Ok(type_value(&runtime_type_name(&v)))
}

fn cel_dyn(v: Cel) -> Result<Cel, ExecutionError> {
    Ok(v)
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
    ctx.add_function(OPT_SELECT, opt_select);
    ctx.add_function(PAIRS, pairs);
    ctx.add_function(TICK, tick);
    ctx.add_function(SORT_BY, sort_by);
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

/// Iterations one rule evaluation may take (upstream's per-call cost limit,
/// counted in comprehension steps rather than cost units).
pub(crate) const PER_CALL_LIMIT: u64 = 1_000_000;

/// Iterations all rules of one object may take together (upstream's
/// runtime cost budget per custom resource).
pub(crate) const RUNTIME_BUDGET: u64 = 10_000_000;

/// The error a rule stopped by the limits evaluates to, as cel-go words it.
pub(crate) const COST_EXCEEDED: &str = "operation cancelled: actual cost limit exceeded";

/// The function every comprehension step passes its loop condition through.
pub(crate) const TICK: &str = "@tick";

thread_local! {
    static TICKS_LEFT: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

fn tick(v: Cel) -> Result<Cel, ExecutionError> {
    TICKS_LEFT.with(|t| {
        let left = t.get();
        if left == 0 {
            return Err(ExecutionError::function_error(TICK, COST_EXCEEDED));
        }
        t.set(left - 1);
        Ok(v)
    })
}

/// Counts comprehension steps, so that the limits can stop a rule.
fn instrument(e: &mut Expression) {
    match &mut e.expr {
        Expr::Comprehension(c) => {
            instrument(&mut c.iter_range);
            instrument(&mut c.accu_init);
            instrument(&mut c.loop_cond);
            instrument(&mut c.loop_step);
            instrument(&mut c.result);
            let cond = std::mem::take(&mut c.loop_cond);
            c.loop_cond = call(TICK, None, vec![cond]);
        }
        Expr::Call(c) => {
            if let Some(t) = c.target.as_mut() {
                instrument(t);
            }
            c.args.iter_mut().for_each(instrument);
        }
        Expr::List(l) => l.elements.iter_mut().for_each(instrument),
        Expr::Map(m) => {
            for en in m.entries.iter_mut() {
                match &mut en.expr {
                    EntryExpr::MapEntry(me) => {
                        instrument(&mut me.key);
                        instrument(&mut me.value);
                    }
                    EntryExpr::StructField(sf) => instrument(&mut sf.value),
                }
            }
        }
        Expr::Select(s) => instrument(&mut s.operand),
        Expr::Struct(_) | Expr::Ident(_) | Expr::Literal(_) | Expr::Unspecified => {}
    }
}

/// Evaluates a parsed expression with the given variables bound, within
/// the per-call limit and what is left of `budget` (which it charges).
pub(crate) fn eval(
    p: &Parsed,
    vars: &[(&str, Cel)],
    budget: &mut u64,
) -> Result<Cel, ExecutionError> {
    if !p.evaluable {
        return Err(ExecutionError::function_error(
            "eval",
            "expression not supported by this implementation",
        ));
    }
    let allowed = PER_CALL_LIMIT.min(*budget);
    TICKS_LEFT.with(|t| t.set(allowed));
    let result = eval_expr(&p.expr, vars);
    let left = TICKS_LEFT.with(|t| t.get());
    *budget -= allowed - left.min(allowed);
    result
}

fn eval_expr(expr: &Expression, vars: &[(&str, Cel)]) -> Result<Cel, ExecutionError> {
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

/// Evaluates a small constant expression (the checker's literal probes).
pub(crate) fn eval_constant(expr: &Expression) -> Result<Cel, ExecutionError> {
    if unsupported(expr) {
        return Err(ExecutionError::NoSuchOverload);
    }
    eval_expr(expr, &[])
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
        E::FunctionError { function, .. } if function == "size" => {
            (true, "no such overload".into())
        }
        E::FunctionError { message, .. } => (false, one_line(message)),
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

/// Error texts as one line: the regex crate's multi-line parse errors
/// become Go's `error parsing regexp: <what>: `<pattern>``.
fn one_line(message: &str) -> String {
    if !message.contains('\n') {
        return message.to_string();
    }
    if let Some(pattern) = message
        .strip_prefix('\'')
        .and_then(|m| m.split_once("' not a valid regex"))
        .map(|(p, _)| p)
    {
        let what = message
            .lines()
            .rev()
            .find_map(|l| l.trim().strip_prefix("error: "))
            .unwrap_or("invalid regular expression");
        return format!("error parsing regexp: {what}: `{pattern}`");
    }
    message.split_whitespace().collect::<Vec<_>>().join(" ")
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
