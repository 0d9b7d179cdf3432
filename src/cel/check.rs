//! A type checker for rules, standing in for cel-go's: it types `self` and
//! `oldSelf` from the schema and reports what cel-go reports at CRD write
//! time when it is sure to (`undefined field`, `undeclared reference`,
//! `found no matching overload`, a non-bool result). Whatever it cannot type
//! exactly is `dyn` and passes, so it never rejects a rule upstream accepts.

use kube_cel::cel::common::ast::{EntryExpr, Expr, LiteralValue};
use kube_cel::cel::parser::Expression;

use super::env::{render_error, TYPE_IDENTS};
use super::types::Ty;

/// The variables a rule sees.
pub(crate) struct Vars {
    pub self_ty: Ty,
    pub old_self_ty: Ty,
}

/// Checks `expr` (parsed from `src`); returns the result type, or cel-go's
/// rendering of the type errors.
pub(crate) fn check(src: &str, expr: &Expression, vars: &Vars) -> Result<Ty, String> {
    let mut c = Checker {
        loc: Locator::new(src),
        errors: Vec::new(),
        scopes: Vec::new(),
        vars,
    };
    let ty = c.expr(expr);
    if c.errors.is_empty() {
        return Ok(ty);
    }
    c.errors.sort_by_key(|(off, _)| *off);
    c.errors.dedup();
    Err(c
        .errors
        .iter()
        .map(|(off, msg)| render_error(src, *off, msg))
        .collect::<Vec<_>>()
        .join("\n"))
}

const NAMESPACES: &[&str] = &[
    "math",
    "sets",
    "lists",
    "strings",
    "base64",
    "format",
    "optional",
    "jsonpatch",
    "ip",
];

/// Functions upstream has but the interpreter here lacks: accepted at
/// compile time (so the CRD is not rejected), an error when evaluated.
const UPSTREAM_ONLY: &[&str] = &["transformMap", "transformMapEntry"];

struct Checker<'a> {
    loc: Locator,
    errors: Vec<(usize, String)>,
    scopes: Vec<(String, Ty)>,
    vars: &'a Vars,
}

enum CallErr {
    Undeclared,
    NoOverload,
}

impl Checker<'_> {
    fn err(&mut self, off: usize, msg: String) -> Ty {
        self.errors.push((off, msg));
        Ty::Dyn
    }

    fn lookup(&self, name: &str) -> Option<Ty> {
        if let Some((_, t)) = self.scopes.iter().rev().find(|(n, _)| n == name) {
            return Some(t.clone());
        }
        match name {
            "self" => Some(self.vars.self_ty.clone()),
            "oldSelf" => Some(self.vars.old_self_ty.clone()),
            n if TYPE_IDENTS.contains(&n) => Some(Ty::Type),
            _ => None,
        }
    }

    fn expr(&mut self, e: &Expression) -> Ty {
        match &e.expr {
            Expr::Literal(l) => match l {
                LiteralValue::Boolean(_) => Ty::Bool,
                LiteralValue::Bytes(_) => Ty::Bytes,
                LiteralValue::Double(_) => Ty::Double,
                LiteralValue::Int(_) => Ty::Int,
                LiteralValue::Null => Ty::Null,
                LiteralValue::String(_) => Ty::String,
                LiteralValue::UInt(_) => Ty::Uint,
            },
            Expr::Ident(name) => match self.lookup(name) {
                Some(t) => t,
                None => {
                    let off = self.loc.ident(name);
                    self.err(
                        off,
                        format!("undeclared reference to '{name}' (in container '')"),
                    )
                }
            },
            Expr::Select(s) => {
                // google.protobuf.Timestamp / Duration as type names.
                if let Expr::Select(inner) = &s.operand.expr {
                    if matches!(&inner.operand.expr, Expr::Ident(g) if g == "google" && self.lookup("google").is_none())
                        && inner.field == "protobuf"
                    {
                        return Ty::Type;
                    }
                }
                let t = self.expr(&s.operand);
                let field = self.select(&t, &s.field, false);
                if s.test {
                    Ty::Bool
                } else {
                    field
                }
            }
            Expr::Call(c) => self.call(&c.func_name, c.target.as_deref(), &c.args),
            Expr::List(l) => {
                let mut elem: Option<Ty> = None;
                for (i, x) in l.elements.iter().enumerate() {
                    let mut t = self.expr(x);
                    if l.optional_indices.contains(&i) {
                        if let Ty::Opt(inner) = t {
                            t = *inner;
                        }
                    }
                    if let Some(prev) = &elem {
                        self.homogeneous(prev, &t);
                    }
                    elem = Some(match elem {
                        None => t,
                        Some(prev) => Ty::join(&prev, &t),
                    });
                }
                Ty::List(Box::new(elem.unwrap_or(Ty::Dyn)))
            }
            Expr::Map(m) => {
                let mut k: Option<Ty> = None;
                let mut v: Option<Ty> = None;
                for en in &m.entries {
                    if let EntryExpr::MapEntry(me) = &en.expr {
                        let kt = self.expr(&me.key);
                        let mut vt = self.expr(&me.value);
                        if me.optional {
                            if let Ty::Opt(inner) = vt {
                                vt = *inner;
                            }
                        }
                        if let (Some(pk), Some(pv)) = (&k, &v) {
                            let (pk, pv) = (pk.clone(), pv.clone());
                            self.homogeneous(&pk, &kt);
                            self.homogeneous(&pv, &vt);
                        }
                        k = Some(k.map(|p| Ty::join(&p, &kt)).unwrap_or(kt));
                        v = Some(v.map(|p| Ty::join(&p, &vt)).unwrap_or(vt));
                    }
                }
                Ty::Map(
                    Box::new(k.unwrap_or(Ty::Dyn)),
                    Box::new(v.unwrap_or(Ty::Dyn)),
                )
            }
            Expr::Struct(s) => {
                let off = self.loc.ident(&s.type_name);
                self.err(
                    off,
                    format!(
                        "undeclared reference to '{}' (in container '')",
                        s.type_name
                    ),
                )
            }
            Expr::Comprehension(c) => {
                let range = self.expr(&c.iter_range);
                let (it1, it2) = match &range {
                    Ty::List(e) => (Ty::Int, (**e).clone()),
                    Ty::Map(k, v) => ((**k).clone(), (**v).clone()),
                    Ty::Dyn | Ty::Ext(_) => (Ty::Dyn, Ty::Dyn),
                    other => {
                        let off = self.loc.first_call_paren();
                        self.err(
                            off,
                            format!(
                                "expression of type '{}' cannot be range of a comprehension (must be list, map, or dynamic)",
                                other.name()
                            ),
                        );
                        (Ty::Dyn, Ty::Dyn)
                    }
                };
                // One variable: the element (lists) or key (maps); two: index/key and value.
                let first = match (&range, &c.iter_var2) {
                    (Ty::List(_), None) => it2.clone(),
                    _ => it1,
                };
                let accu = self.expr(&c.accu_init);
                let depth = self.scopes.len();
                self.scopes.push((c.accu_var.clone(), accu));
                self.scopes.push((c.iter_var.clone(), first));
                if let Some(v2) = &c.iter_var2 {
                    self.scopes.push((v2.clone(), it2));
                }
                self.expr(&c.loop_cond);
                let step = self.expr(&c.loop_step);
                // The accumulator takes the step's type (e.g. map(): list of results).
                if let Some(slot) = self.scopes.get_mut(depth) {
                    slot.1 = Ty::join(&slot.1, &step);
                }
                let result = self.expr(&c.result);
                self.scopes.truncate(depth);
                result
            }
            Expr::Unspecified => Ty::Dyn,
        }
    }

    /// Aggregate literals hold one type (cel-go's HomogeneousAggregateLiterals).
    fn homogeneous(&mut self, first: &Ty, t: &Ty) {
        if first.is_scalar() && t.is_scalar() && first != t && *first != Ty::Null && *t != Ty::Null
        {
            let off = self.loc.op("[");
            self.err(
                off,
                format!("expected type '{}' but found '{}'", first.name(), t.name()),
            );
        }
    }

    /// Field selection on a value of type `t`.
    fn select(&mut self, t: &Ty, field: &str, optional: bool) -> Ty {
        match t {
            Ty::Object(fields) => match fields.get(field) {
                Some(ft) => ft.clone(),
                None => {
                    let off = self.loc.select(field);
                    self.err(off, format!("undefined field '{field}'"))
                }
            },
            Ty::Map(_, v) => (**v).clone(),
            Ty::Opt(inner) if optional => self.select(inner, field, optional),
            t if t.is_scalar() || matches!(t, Ty::List(_) | Ty::Type) => {
                let off = self.loc.select(field);
                self.err(
                    off,
                    format!("type '{}' does not support field selection", t.name()),
                )
            }
            _ => Ty::Dyn,
        }
    }

    fn call(&mut self, name: &str, target: Option<&Expression>, args: &[Expression]) -> Ty {
        // Operators first.
        match (name, args.len()) {
            ("_&&_" | "_||_", 2) => {
                let a = self.expr(&args[0]);
                let b = self.expr(&args[1]);
                for t in [&a, &b] {
                    if t.is_known() && *t != Ty::Bool {
                        let off = self.loc.op(if name == "_&&_" { "&&" } else { "||" });
                        return self.no_overload(off, name, &[a.clone(), b.clone()], false);
                    }
                }
                return Ty::Bool;
            }
            ("!_", 1) => {
                let a = self.expr(&args[0]);
                if a.is_known() && a != Ty::Bool {
                    let off = self.loc.op("!");
                    return self.no_overload(off, name, &[a], false);
                }
                return Ty::Bool;
            }
            ("-_", 1) => {
                let a = self.expr(&args[0]);
                return match a {
                    Ty::Int | Ty::Double | Ty::Duration => a,
                    a if a.is_known() => {
                        let off = self.loc.op("-");
                        self.no_overload(off, name, &[a], false)
                    }
                    _ => Ty::Dyn,
                };
            }
            ("@not_strictly_false", 1) => {
                self.expr(&args[0]);
                return Ty::Bool;
            }
            ("_?_:_", 3) => {
                let c = self.expr(&args[0]);
                let a = self.expr(&args[1]);
                let b = self.expr(&args[2]);
                if c.is_known() && c != Ty::Bool {
                    let off = self.loc.op("?");
                    return self.no_overload(off, name, &[c, a, b], false);
                }
                return Ty::join(&a, &b);
            }
            ("_==_" | "_!=_", 2) => {
                let a = self.expr(&args[0]);
                let b = self.expr(&args[1]);
                if !Ty::comparable(&a, &b) {
                    let off = self.loc.op(if name == "_==_" { "==" } else { "!=" });
                    return self.no_overload(off, name, &[a, b], false);
                }
                return Ty::Bool;
            }
            ("_<_" | "_<=_" | "_>_" | "_>=_", 2) => {
                let a = self.expr(&args[0]);
                let b = self.expr(&args[1]);
                let ok = !a.is_known()
                    || !b.is_known()
                    || (a == b
                        && matches!(
                            a,
                            Ty::Int
                                | Ty::Uint
                                | Ty::Double
                                | Ty::String
                                | Ty::Bytes
                                | Ty::Bool
                                | Ty::Timestamp
                                | Ty::Duration
                        ))
                    || (a.is_numeric() && b.is_numeric());
                if !ok {
                    let op = &name[1..name.len() - 1];
                    let off = self.loc.op(op);
                    return self.no_overload(off, name, &[a, b], false);
                }
                return Ty::Bool;
            }
            ("_+_" | "_-_" | "_*_" | "_/_" | "_%_", 2) => {
                let a = self.expr(&args[0]);
                let b = self.expr(&args[1]);
                if !a.is_known() || !b.is_known() {
                    return Ty::Dyn;
                }
                let r = match (name, &a, &b) {
                    (_, Ty::Int, Ty::Int) | (_, Ty::Uint, Ty::Uint) => Some(a.clone()),
                    ("_%_", _, _) => None,
                    (_, Ty::Double, Ty::Double) => Some(Ty::Double),
                    ("_+_", Ty::String, Ty::String) | ("_+_", Ty::Bytes, Ty::Bytes) => {
                        Some(a.clone())
                    }
                    ("_+_", Ty::List(x), Ty::List(y)) => Some(Ty::List(Box::new(Ty::join(x, y)))),
                    ("_+_", Ty::Timestamp, Ty::Duration) | ("_+_", Ty::Duration, Ty::Timestamp) => {
                        Some(Ty::Timestamp)
                    }
                    ("_+_" | "_-_", Ty::Duration, Ty::Duration) => Some(Ty::Duration),
                    ("_-_", Ty::Timestamp, Ty::Timestamp) => Some(Ty::Duration),
                    ("_-_", Ty::Timestamp, Ty::Duration) => Some(Ty::Timestamp),
                    _ => None,
                };
                return match r {
                    Some(t) => t,
                    None => {
                        let op = &name[1..name.len() - 1];
                        let off = self.loc.op(op);
                        self.no_overload(off, name, &[a, b], false)
                    }
                };
            }
            ("@in", 2) => {
                let a = self.expr(&args[0]);
                let b = self.expr(&args[1]);
                let ok = match &b {
                    Ty::List(e) => Ty::comparable(&a, e),
                    Ty::Map(k, _) => Ty::comparable(&a, k),
                    t => !t.is_known() || matches!(t, Ty::Object(_)),
                };
                if !ok {
                    let off = self.loc.op("in");
                    return self.no_overload(off, name, &[a, b], false);
                }
                return Ty::Bool;
            }
            ("_[_]" | "_[?_]", 2) => {
                let a = self.expr(&args[0]);
                let i = self.expr(&args[1]);
                let (base, opt) = match a {
                    Ty::Opt(inner) => (*inner, true),
                    other => (other, name == "_[?_]"),
                };
                let r = match &base {
                    Ty::List(e) => {
                        if i.is_known() && !matches!(i, Ty::Int | Ty::Uint | Ty::Double) {
                            let off = self.loc.op("[");
                            return self.no_overload(off, "_[_]", &[base.clone(), i], false);
                        }
                        (**e).clone()
                    }
                    Ty::Map(k, v) => {
                        if !Ty::comparable(k, &i) {
                            let off = self.loc.op("[");
                            return self.no_overload(off, "_[_]", &[base.clone(), i], false);
                        }
                        (**v).clone()
                    }
                    t if t.is_scalar() => {
                        let off = self.loc.op("[");
                        return self.no_overload(off, "_[_]", &[base.clone(), i], false);
                    }
                    _ => Ty::Dyn,
                };
                return if opt { Ty::Opt(Box::new(r)) } else { r };
            }
            (super::env::OPT_SELECT, 2) => {
                let a = self.expr(&args[0]);
                let field = match &args[1].expr {
                    Expr::Literal(LiteralValue::String(s)) => s.inner().to_string(),
                    _ => return Ty::Opt(Box::new(Ty::Dyn)),
                };
                let base = match a {
                    Ty::Opt(inner) => *inner,
                    other => other,
                };
                let t = self.select(&base, &field, true);
                return Ty::Opt(Box::new(t));
            }
            _ => {}
        }

        // Namespaced functions: `math.ceil(x)` parses as a call on `math`.
        if let Some(Expression {
            expr: Expr::Ident(ns),
            ..
        }) = target
        {
            if NAMESPACES.contains(&ns.as_str()) && self.lookup(ns).is_none() {
                let qualified = format!("{ns}.{name}");
                let arg_tys: Vec<Ty> = args.iter().map(|a| self.expr(a)).collect();
                return match namespaced(&qualified, &arg_tys) {
                    Some(t) => t,
                    None => {
                        let off = self.loc.call(name);
                        self.err(
                            off,
                            format!("undeclared reference to '{qualified}' (in container '')"),
                        )
                    }
                };
            }
        }

        // Macros cel-go has and the parser here leaves as calls: their first
        // arguments are variable names, not references.
        let binders = match (name, args.len(), target.is_some()) {
            ("transformMap" | "transformMapEntry", 3..=4, true) => 2,
            _ => 0,
        };
        if binders > 0 {
            if let Some(t) = target {
                self.expr(t);
            }
            let depth = self.scopes.len();
            for a in &args[..binders] {
                if let Expr::Ident(v) = &a.expr {
                    self.scopes.push((v.clone(), Ty::Dyn));
                }
            }
            for a in &args[binders..] {
                self.expr(a);
            }
            self.scopes.truncate(depth);
            return Ty::Map(Box::new(Ty::Dyn), Box::new(Ty::Dyn));
        }

        let recv = target.map(|t| self.expr(t));
        let arg_tys: Vec<Ty> = args.iter().map(|a| self.expr(a)).collect();
        self.check_literal_args(name, target.is_some(), args);
        match function(name, recv.as_ref(), &arg_tys) {
            Ok(t) => t,
            Err(CallErr::Undeclared) => {
                let off = self.loc.call(name);
                self.err(
                    off,
                    format!("undeclared reference to '{name}' (in container '')"),
                )
            }
            Err(CallErr::NoOverload) => {
                let off = self.loc.call(name);
                let mut all = Vec::new();
                if let Some(r) = recv {
                    all.push(r);
                }
                all.extend(arg_tys);
                self.no_overload(off, name, &all, target.is_some())
            }
        }
    }

    /// cel-go's AST validators for literal arguments (regexes, durations,
    /// timestamps), run by evaluating the literal here.
    fn check_literal_args(&mut self, name: &str, member: bool, args: &[Expression]) {
        let (arg, what) = match (name, member) {
            ("matches", true) => (args.first(), "matches"),
            ("matches", false) => (args.get(1), "matches"),
            ("duration", false) => (args.first(), "duration"),
            ("timestamp", false) => (args.first(), "timestamp"),
            _ => return,
        };
        let Some(
            arg @ Expression {
                expr: Expr::Literal(LiteralValue::String(_)),
                ..
            },
        ) = arg
        else {
            return;
        };
        let probe = if what == "matches" {
            Expression {
                id: 0,
                expr: Expr::Call(kube_cel::cel::common::ast::CallExpr {
                    func_name: "matches".into(),
                    target: Some(Box::new(Expression {
                        id: 0,
                        expr: Expr::Literal(LiteralValue::String(String::new().into())),
                    })),
                    args: vec![arg.clone()],
                }),
            }
        } else {
            Expression {
                id: 0,
                expr: Expr::Call(kube_cel::cel::common::ast::CallExpr {
                    func_name: what.into(),
                    target: None,
                    args: vec![arg.clone()],
                }),
            }
        };
        if super::env::eval_constant(&probe).is_err() {
            let off = self.loc.call_arg(name);
            self.err(off, format!("invalid {what} argument"));
        }
    }

    fn no_overload(&mut self, off: usize, name: &str, args: &[Ty], instance: bool) -> Ty {
        let mut sig = String::new();
        let mut rest = args;
        if instance {
            if let Some((first, tail)) = args.split_first() {
                sig.push_str(&first.name());
                sig.push('.');
                rest = tail;
            }
        }
        sig.push('(');
        sig.push_str(&rest.iter().map(Ty::name).collect::<Vec<_>>().join(", "));
        sig.push(')');
        self.err(
            off,
            format!("found no matching overload for '{name}' applied to '{sig}'"),
        )
    }
}

fn elem(t: Option<&Ty>) -> Ty {
    match t {
        Some(Ty::List(e)) => (**e).clone(),
        _ => Ty::Dyn,
    }
}

fn namespaced(name: &str, args: &[Ty]) -> Option<Ty> {
    Some(match name {
        "math.isInf" | "math.isNaN" | "math.isFinite" => Ty::Bool,
        "math.ceil" | "math.floor" | "math.round" | "math.trunc" | "math.sqrt" => Ty::Double,
        "math.abs" | "math.sign" | "math.greatest" | "math.least" => {
            args.first().cloned().unwrap_or(Ty::Dyn)
        }
        "math.bitAnd" | "math.bitOr" | "math.bitXor" | "math.bitNot" | "math.bitShiftLeft"
        | "math.bitShiftRight" => args.first().cloned().unwrap_or(Ty::Dyn),
        "sets.contains" | "sets.equivalent" | "sets.intersects" => Ty::Bool,
        "lists.range" => Ty::List(Box::new(Ty::Int)),
        "strings.quote" | "base64.encode" | "jsonpatch.escapeKey" => Ty::String,
        "base64.decode" => Ty::Bytes,
        "ip.isCanonical" => Ty::Bool,
        "optional.of" | "optional.ofNonZeroValue" => {
            Ty::Opt(Box::new(args.first().cloned().unwrap_or(Ty::Dyn)))
        }
        "optional.none" => Ty::Opt(Box::new(Ty::Dyn)),
        n if n.starts_with("format.") => Ty::Ext("kubernetes.NamedFormat"),
        _ => return None,
    })
}

fn is_str(t: &Ty) -> bool {
    !t.is_known() || *t == Ty::String
}

/// The result type of function `name`, called on `recv` (member call) or
/// globally, with arguments `args`.
fn function(name: &str, recv: Option<&Ty>, args: &[Ty]) -> Result<Ty, CallErr> {
    // Global calls of member functions take the receiver as first argument.
    let (recv, args): (Option<&Ty>, &[Ty]) = match recv {
        Some(r) => (Some(r), args),
        None => match name {
            "size" | "matches" | "contains" | "startsWith" | "endsWith" | "min" | "max" => {
                match args.split_first() {
                    Some((f, rest)) => (Some(f), rest),
                    None => (None, args),
                }
            }
            _ => (None, args),
        },
    };
    let r = recv.cloned().unwrap_or(Ty::Dyn);
    let known = recv.map(Ty::is_known).unwrap_or(false);
    let bad = Err(CallErr::NoOverload);
    let string_method = |res: Ty, arg_str: bool| -> Result<Ty, CallErr> {
        if known && r != Ty::String {
            return Err(CallErr::NoOverload);
        }
        if arg_str && args.iter().any(|a| !is_str(a)) {
            return Err(CallErr::NoOverload);
        }
        Ok(res)
    };
    match name {
        "size" => match r {
            Ty::String | Ty::Bytes | Ty::List(_) | Ty::Map(..) | Ty::Dyn | Ty::Ext(_) => {
                Ok(Ty::Int)
            }
            _ => bad,
        },
        "contains" | "startsWith" | "endsWith" | "matches" => string_method(Ty::Bool, true),
        "lowerAscii" | "upperAscii" | "trim" => string_method(Ty::String, false),
        "replace" | "substring" | "charAt" => string_method(Ty::String, false),
        "split" => string_method(Ty::List(Box::new(Ty::String)), false),
        "format" => string_method(Ty::String, false),
        "find" => string_method(Ty::String, true),
        "findAll" => string_method(Ty::List(Box::new(Ty::String)), false),
        "join" => match r {
            Ty::List(_) | Ty::Dyn => Ok(Ty::String),
            _ => bad,
        },
        "indexOf" | "lastIndexOf" => match r {
            Ty::String | Ty::List(_) | Ty::Dyn => Ok(Ty::Int),
            _ => bad,
        },
        "reverse" => match r {
            Ty::String | Ty::List(_) | Ty::Dyn => Ok(r),
            _ => bad,
        },
        "isSorted" => Ok(Ty::Bool),
        "sum" => Ok(elem(recv)),
        "min" | "max" if recv.is_some() => match r {
            Ty::List(e) => Ok(*e),
            t if t.is_numeric() || t == Ty::Dyn => Ok(t),
            _ => Ok(Ty::Dyn),
        },
        "slice" | "sort" | "distinct" => Ok(if let Ty::List(_) = r { r } else { Ty::Dyn }),
        "flatten" => Ok(Ty::List(Box::new(Ty::Dyn))),
        "first" | "last" => Ok(Ty::Opt(Box::new(elem(recv)))),
        "hasValue" => Ok(Ty::Bool),
        "value" => Ok(match r {
            Ty::Opt(t) => *t,
            _ => Ty::Dyn,
        }),
        "orValue" => match (r, args.first()) {
            (Ty::Opt(t), Some(a)) if !Ty::comparable(&t, a) => bad,
            (Ty::Opt(t), Some(a)) => Ok(Ty::join(&t, a)),
            _ => Ok(Ty::Dyn),
        },
        "or" => Ok(r),
        "getFullYear" | "getMonth" | "getDayOfYear" | "getDayOfMonth" | "getDate"
        | "getDayOfWeek" | "getHours" | "getMinutes" | "getSeconds" | "getMilliseconds" => {
            match r {
                Ty::Timestamp | Ty::Duration | Ty::Dyn => Ok(Ty::Int),
                _ => bad,
            }
        }
        // Conversions.
        "int" => Ok(Ty::Int),
        "uint" => Ok(Ty::Uint),
        "double" => Ok(Ty::Double),
        "string" => Ok(Ty::String),
        "bytes" => Ok(Ty::Bytes),
        "bool" => Ok(Ty::Bool),
        "dyn" => Ok(Ty::Dyn),
        "type" => Ok(Ty::Type),
        "duration" => Ok(Ty::Duration),
        "timestamp" => Ok(Ty::Timestamp),
        // Kubernetes libraries.
        "quantity" => Ok(Ty::Ext("kubernetes.Quantity")),
        "url" => Ok(Ty::Ext("kubernetes.URL")),
        "ip" => Ok(Ty::Ext("net.IP")),
        "cidr" => Ok(Ty::Ext("net.CIDR")),
        "semver" => Ok(Ty::Ext("kubernetes.Semver")),
        "isQuantity"
        | "isURL"
        | "isIP"
        | "isCIDR"
        | "isSemver"
        | "isInteger"
        | "isGreaterThan"
        | "isLessThan"
        | "isUnspecified"
        | "isLoopback"
        | "isLinkLocalMulticast"
        | "isLinkLocalUnicast"
        | "isGlobalUnicast"
        | "containsIP"
        | "containsCIDR"
        | "isIPv4"
        | "isIPv6"
        | "isCIDRv4"
        | "isCIDRv6" => Ok(Ty::Bool),
        "asInteger" | "sign" | "compareTo" | "family" | "prefixLength" | "major" | "minor"
        | "patch" => Ok(Ty::Int),
        "asApproximateFloat" => Ok(Ty::Double),
        "add" | "sub" => Ok(Ty::Ext("kubernetes.Quantity")),
        "masked" => Ok(Ty::Ext("net.CIDR")),
        "getScheme" | "getHost" | "getHostname" | "getPort" | "getEscapedPath" => Ok(Ty::String),
        "getQuery" => Ok(Ty::Map(
            Box::new(Ty::String),
            Box::new(Ty::List(Box::new(Ty::String))),
        )),
        "validate" => Ok(Ty::Opt(Box::new(Ty::List(Box::new(Ty::String))))),
        super::env::TICK => Ok(args.first().cloned().unwrap_or(Ty::Dyn)),
        super::env::PAIRS => Ok(Ty::List(Box::new(Ty::List(Box::new(Ty::Dyn))))),
        super::env::SORT_BY => Ok(args.first().cloned().unwrap_or(Ty::Dyn)),
        n if UPSTREAM_ONLY.contains(&n) => Ok(Ty::Dyn),
        n if n.contains('.') && recv.is_none() => namespaced(n, args).ok_or(CallErr::Undeclared),
        _ => Err(CallErr::Undeclared),
    }
}

// ---------------------------------------------------------------------------
// Source positions

/// Finds where in the source a construct is, for error positions. The parser
/// keeps no positions for a successful parse, so this searches the text
/// (with string literals blanked out) for the first matching token not
/// already blamed for an earlier error.
struct Locator {
    masked: Vec<u8>,
    used: Vec<usize>,
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

impl Locator {
    fn new(src: &str) -> Self {
        let mut masked = src.as_bytes().to_vec();
        let mut i = 0;
        while i < masked.len() {
            let q = masked[i];
            if q == b'\'' || q == b'"' {
                let mut j = i + 1;
                while j < masked.len() && masked[j] != q {
                    if masked[j] == b'\\' {
                        masked[j] = b' ';
                        j += 1;
                    }
                    if j < masked.len() {
                        masked[j] = b' ';
                    }
                    j += 1;
                }
                i = j + 1;
            } else {
                i += 1;
            }
        }
        Locator {
            masked,
            used: Vec::new(),
        }
    }

    /// The first candidate offset not used yet (else the first, else 0).
    fn pick(&mut self, candidates: impl Iterator<Item = usize>) -> usize {
        let mut first = None;
        for c in candidates {
            if first.is_none() {
                first = Some(c);
            }
            if !self.used.contains(&c) {
                self.used.push(c);
                return c;
            }
        }
        first.unwrap_or(0)
    }

    fn word_at(&self, i: usize, w: &[u8]) -> bool {
        self.masked[i..].starts_with(w)
            && (i == 0 || !is_ident_byte(self.masked[i - 1]))
            && self
                .masked
                .get(i + w.len())
                .map(|b| !is_ident_byte(*b))
                .unwrap_or(true)
    }

    fn prev_non_space(&self, i: usize) -> Option<u8> {
        self.masked[..i]
            .iter()
            .rev()
            .find(|b| !b.is_ascii_whitespace())
            .copied()
    }

    fn next_non_space_at(&self, i: usize) -> Option<usize> {
        (i..self.masked.len()).find(|&j| !self.masked[j].is_ascii_whitespace())
    }

    fn ident(&mut self, name: &str) -> usize {
        let w = name.as_bytes().to_vec();
        let c: Vec<usize> = (0..self.masked.len())
            .filter(|&i| {
                self.word_at(i, &w) && !matches!(self.prev_non_space(i), Some(b'.') | Some(b'?'))
            })
            .collect();
        self.pick(c.into_iter())
    }

    /// The `.` of a selection `.field` (not a call `.field(`).
    fn select(&mut self, field: &str) -> usize {
        let w = field.as_bytes().to_vec();
        let mut c = Vec::new();
        for i in 0..self.masked.len() {
            let next = self.next_non_space_at(i + w.len()).map(|j| self.masked[j]);
            if self.word_at(i, &w) && next != Some(b'(') {
                let mut j = i;
                while j > 0
                    && (self.masked[j - 1].is_ascii_whitespace() || self.masked[j - 1] == b'?')
                {
                    j -= 1;
                }
                if j > 0 && self.masked[j - 1] == b'.' {
                    c.push(j - 1);
                }
            }
        }
        self.pick(c.into_iter())
    }

    /// The `(` of a call to `name`.
    fn call(&mut self, name: &str) -> usize {
        let w = name.as_bytes().to_vec();
        let mut c = Vec::new();
        for i in 0..self.masked.len() {
            if self.word_at(i, &w) {
                if let Some(j) = self.next_non_space_at(i + w.len()) {
                    if self.masked[j] == b'(' {
                        c.push(j);
                    }
                }
            }
        }
        self.pick(c.into_iter())
    }

    /// The first argument of a call to `name` (for literal checks).
    fn call_arg(&mut self, name: &str) -> usize {
        let paren = self.call(name);
        self.next_non_space_at(paren + 1).unwrap_or(paren)
    }

    fn first_call_paren(&self) -> usize {
        self.masked.iter().position(|b| *b == b'(').unwrap_or(0)
    }

    fn op(&mut self, op: &str) -> usize {
        let w = op.as_bytes().to_vec();
        let mut c = Vec::new();
        for i in 0..self.masked.len() {
            if op == "in" {
                if self.word_at(i, &w) {
                    c.push(i);
                }
                continue;
            }
            if !self.masked[i..].starts_with(&w) {
                continue;
            }
            let next = self.masked.get(i + w.len()).copied();
            let prev = if i > 0 {
                Some(self.masked[i - 1])
            } else {
                None
            };
            let ok = match op {
                "<" | ">" => next != Some(b'=') && prev != Some(b'-'),
                "!" => next != Some(b'='),
                "?" => prev != Some(b'.') && next != Some(b'.'),
                "==" => {
                    prev != Some(b'!')
                        && prev != Some(b'<')
                        && prev != Some(b'>')
                        && prev != Some(b'=')
                }
                _ => true,
            };
            if ok {
                c.push(i);
            }
        }
        self.pick(c.into_iter())
    }
}
