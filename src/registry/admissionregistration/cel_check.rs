//! What upstream's admission CEL compiler (`plugin/cel.CompileCELExpression`)
//! rejects when a policy or webhook is written: expressions that do not
//! parse, references to variables the environment does not declare, and a
//! result of the wrong type. The type of a result is only judged where it is
//! certain (literals, operators that yield bool, selections from the `dyn`
//! variables); anything else passes, so nothing upstream accepts is refused.

use std::panic::{catch_unwind, AssertUnwindSafe};

use kube_cel::cel::common::ast::{EntryExpr, Expr, LiteralValue};
use kube_cel::cel::parser::{Expression, Parser};

use crate::cel::admission::Activation;

/// Which optional variables an expression may use (upstream's
/// OptionalVariableDeclarations plus composition's `variables`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Env {
    pub params: bool,
    pub authorizer: bool,
    pub variables: bool,
}

/// The result types an expression may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ret {
    Bool,
    String,
    StringOrNull,
    Any,
}

/// Type identifiers CEL predeclares, and namespaces of functions called as `ns.fn(...)`.
const TYPE_IDENTS: &[&str] = &[
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
    "dyn",
];
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
    "cel",
    "google",
];

/// `None` when the expression compiles in `env` with an allowed result;
/// otherwise upstream's error detail (`compilation failed: ERROR: ...` or
/// `must evaluate to bool but got string`).
pub fn compile(expr: &str, env: Env, ret: Ret) -> Option<String> {
    let parsed = catch_unwind(AssertUnwindSafe(|| {
        Parser::new().enable_optional_syntax(true).parse(expr)
    }));
    let ast = match parsed {
        Ok(Ok(ast)) => ast,
        _ => return Some(format!("compilation failed: {}", syntax_error(expr))),
    };
    let mut c = Checker {
        env,
        scopes: Vec::new(),
        undeclared: Vec::new(),
    };
    let ty = c.expr(&ast);
    if !c.undeclared.is_empty() {
        let mut loc = Locator::new(expr);
        let mut found: Vec<(usize, String)> = c
            .undeclared
            .iter()
            .map(|n| {
                (
                    loc.ident(n),
                    format!("undeclared reference to '{n}' (in container '')"),
                )
            })
            .collect();
        found.sort();
        found.dedup();
        let rendered: Vec<String> = found
            .iter()
            .map(|(off, msg)| render_error(expr, *off, msg))
            .collect();
        return Some(format!("compilation failed: {}", rendered.join("\n")));
    }
    let got = ty?;
    let ok = match ret {
        Ret::Any => true,
        Ret::Bool => got == "bool",
        Ret::String => got == "string",
        Ret::StringOrNull => got == "string" || got == "null_type",
    };
    if ok {
        return None;
    }
    Some(match ret {
        Ret::Bool => format!("must evaluate to bool but got {got}"),
        Ret::String => format!("must evaluate to string but got {got}"),
        _ => format!("must evaluate to one of [string null_type] but got {got}"),
    })
}

/// cel-go's rendering of the syntax errors, as kapi's CEL environment
/// produces it when asked to run an expression that does not parse.
fn syntax_error(expr: &str) -> String {
    match Activation::new(&[]).eval(expr) {
        Err(e) => match e.strip_prefix("compilation error: ") {
            Some(rendered) => rendered.to_string(),
            None => render_error(expr, 0, "Syntax error"),
        },
        Ok(_) => render_error(expr, 0, "Syntax error"),
    }
}

struct Checker {
    env: Env,
    scopes: Vec<(String, Option<&'static str>)>,
    undeclared: Vec<String>,
}

impl Checker {
    fn lookup(&self, name: &str) -> Option<Option<&'static str>> {
        if let Some((_, t)) = self.scopes.iter().rev().find(|(n, _)| n == name) {
            return Some(*t);
        }
        match name {
            "object" | "oldObject" => Some(Some("dyn")),
            "params" if self.env.params => Some(Some("dyn")),
            "request" | "namespaceObject" => Some(None),
            "authorizer" if self.env.authorizer => Some(None),
            "variables" if self.env.variables => Some(None),
            _ if TYPE_IDENTS.contains(&name) => Some(Some("type")),
            _ => None,
        }
    }

    /// The expression's type when it is certain.
    fn expr(&mut self, e: &Expression) -> Option<&'static str> {
        match &e.expr {
            Expr::Literal(l) => Some(match l {
                LiteralValue::Boolean(_) => "bool",
                LiteralValue::Bytes(_) => "bytes",
                LiteralValue::Double(_) => "double",
                LiteralValue::Int(_) => "int",
                LiteralValue::Null => "null_type",
                LiteralValue::String(_) => "string",
                LiteralValue::UInt(_) => "uint",
            }),
            Expr::Ident(name) => match self.lookup(name) {
                Some(t) => t,
                None => {
                    self.undeclared.push(name.clone());
                    None
                }
            },
            Expr::Select(s) => {
                // `google.protobuf.Timestamp` names a type, not a variable.
                if let Expr::Select(inner) = &s.operand.expr {
                    if matches!(&inner.operand.expr, Expr::Ident(g) if g == "google")
                        && inner.field == "protobuf"
                    {
                        return Some("type");
                    }
                }
                let t = self.expr(&s.operand);
                if s.test {
                    Some("bool")
                } else if t == Some("dyn") {
                    Some("dyn")
                } else {
                    None
                }
            }
            Expr::Call(c) => self.call(&c.func_name, c.target.as_deref(), &c.args),
            Expr::List(l) => {
                for x in &l.elements {
                    self.expr(x);
                }
                None
            }
            Expr::Map(m) => {
                for en in &m.entries {
                    if let EntryExpr::MapEntry(me) = &en.expr {
                        self.expr(&me.key);
                        self.expr(&me.value);
                    }
                }
                None
            }
            Expr::Struct(s) => {
                for en in &s.entries {
                    if let EntryExpr::StructField(f) = &en.expr {
                        self.expr(&f.value);
                    }
                }
                None
            }
            Expr::Comprehension(c) => {
                self.expr(&c.iter_range);
                let accu = self.expr(&c.accu_init);
                let depth = self.scopes.len();
                self.scopes.push((c.iter_var.clone(), None));
                if let Some(v2) = &c.iter_var2 {
                    self.scopes.push((v2.clone(), None));
                }
                self.scopes.push((c.accu_var.clone(), accu));
                self.expr(&c.loop_cond);
                self.expr(&c.loop_step);
                self.scopes.truncate(depth);
                self.scopes.push((c.accu_var.clone(), accu));
                let t = self.expr(&c.result);
                self.scopes.truncate(depth);
                t
            }
            Expr::Unspecified => None,
        }
    }

    fn call(
        &mut self,
        name: &str,
        target: Option<&Expression>,
        args: &[Expression],
    ) -> Option<&'static str> {
        // Namespaced functions (`math.greatest(...)`) parse as calls on an identifier.
        let namespaced = matches!(target.map(|t| &t.expr), Some(Expr::Ident(ns))
            if NAMESPACES.contains(&ns.as_str()) && self.lookup(ns).is_none());
        // Macros the parser leaves as calls (`cel.bind`, two-variable
        // comprehensions, `sortBy`, `optMap`): their leading identifier
        // arguments are variables they bind, not references.
        let binders = match (name, args.len(), target.is_some()) {
            ("bind", 3, true) => 1,
            (
                "all" | "exists" | "existsOne" | "exists_one" | "transformList" | "transformMap"
                | "transformMapEntry",
                3,
                true,
            ) => 2,
            ("transformList" | "transformMap", 4, true) => 2,
            ("sortBy" | "optMap" | "optFlatMap", 2, true) => 1,
            _ => 0,
        };
        if !namespaced {
            if let Some(t) = target {
                self.expr(t);
            }
        }
        let depth = self.scopes.len();
        let mut rest = args;
        if binders > 0
            && args[..binders]
                .iter()
                .all(|a| matches!(a.expr, Expr::Ident(_)))
        {
            for a in &args[..binders] {
                if let Expr::Ident(v) = &a.expr {
                    self.scopes.push((v.clone(), None));
                }
            }
            rest = &args[binders..];
        }
        let tys: Vec<Option<&'static str>> = rest.iter().map(|a| self.expr(a)).collect();
        self.scopes.truncate(depth);
        if namespaced {
            return None;
        }
        match name {
            "_==_"
            | "_!=_"
            | "_<_"
            | "_<=_"
            | "_>_"
            | "_>=_"
            | "_&&_"
            | "_||_"
            | "!_"
            | "@in"
            | "@not_strictly_false" => Some("bool"),
            "size" => Some("int"),
            "int" | "uint" | "double" | "string" | "bytes" | "bool"
                if target.is_none() && args.len() == 1 =>
            {
                TYPE_IDENTS.iter().copied().find(|t| *t == name)
            }
            "startsWith" | "endsWith" | "contains" | "matches" if target.is_some() => Some("bool"),
            "all" | "exists" | "existsOne" | "exists_one" if binders > 0 => Some("bool"),
            "_?_:_" if tys.len() == 3 && tys[1].is_some() && tys[1] == tys[2] => tys[1],
            "_+_" if tys.len() == 2 && tys[0] == tys[1] => match tys[0] {
                Some(t @ ("string" | "int" | "uint" | "double" | "bytes")) => Some(t),
                _ => None,
            },
            _ => None,
        }
    }
}

/// Finds where cel-go would point at an identifier: its first occurrence as
/// a whole word outside string literals, not after a `.`, each occurrence
/// used once.
struct Locator {
    masked: Vec<u8>,
    used: Vec<usize>,
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

impl Locator {
    fn new(src: &str) -> Locator {
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

    fn ident(&mut self, name: &str) -> usize {
        let w = name.as_bytes();
        let m = &self.masked;
        let candidates: Vec<usize> = (0..m.len())
            .filter(|&i| {
                m[i..].starts_with(w)
                    && (i == 0 || !is_ident_byte(m[i - 1]))
                    && m.get(i + w.len()).is_none_or(|b| !is_ident_byte(*b))
                    && m[..i].iter().rev().find(|b| !b.is_ascii_whitespace()) != Some(&b'.')
            })
            .collect();
        for c in &candidates {
            if !self.used.contains(c) {
                self.used.push(*c);
                return *c;
            }
        }
        candidates.first().copied().unwrap_or(0)
    }
}

/// cel-go's `Error.ToDisplayString` for an error at byte offset `offset`.
fn render_error(src: &str, offset: usize, msg: &str) -> String {
    let mut offset = offset.min(src.len());
    while !src.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &src[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map(|i| i + 1).unwrap_or(0);
    let col = src[line_start..offset].chars().count();
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

#[cfg(test)]
mod tests {
    use super::*;

    const WEBHOOK: Env = Env {
        params: false,
        authorizer: true,
        variables: false,
    };

    #[test]
    fn accepts_what_upstream_accepts() {
        for e in [
            "object.spec.replicas <= 5",
            "has(object.metadata.labels) && 'app' in object.metadata.labels",
            "object.spec.containers.all(c, c.image.startsWith('registry/'))",
            "request.operation == 'CREATE'",
            "authorizer.group('').resource('pods').check('get').allowed()",
            "math.greatest(1, 2) == 2",
            "cel.bind(x, object.metadata.name, x.size() > 2)",
            "type(object) == map",
            "object.spec.items.map(i, i.name).size() > 0",
            "variables.foo == 1 || true",
        ] {
            let env = Env {
                variables: true,
                ..WEBHOOK
            };
            assert_eq!(compile(e, env, Ret::Bool), None, "{e}");
        }
        assert_eq!(
            compile(
                "params.x",
                Env {
                    params: true,
                    ..WEBHOOK
                },
                Ret::Any
            ),
            None
        );
        assert_eq!(compile("'a' + object.x", WEBHOOK, Ret::String), None);
    }

    #[test]
    fn syntax_errors() {
        let d = compile("object.spec.replicas >", WEBHOOK, Ret::Bool).unwrap_or_default();
        assert!(
            d.starts_with("compilation failed: ERROR: <input>:1:"),
            "{d}"
        );
        assert!(d.contains("Syntax error"), "{d}");
    }

    #[test]
    fn undeclared_references() {
        let d = compile("params.max > 1", WEBHOOK, Ret::Bool);
        assert_eq!(
            d.as_deref(),
            Some("compilation failed: ERROR: <input>:1:1: undeclared reference to 'params' (in container '')\n | params.max > 1\n | ^")
        );
        let d = compile("object.x == foo", WEBHOOK, Ret::Bool).unwrap_or_default();
        assert!(
            d.contains("<input>:1:13: undeclared reference to 'foo'"),
            "{d}"
        );
        let msg = Env {
            authorizer: false,
            ..WEBHOOK
        };
        assert!(compile("authorizer.x", msg, Ret::String).is_some());
    }

    #[test]
    fn result_types() {
        assert_eq!(
            compile("'abc'", WEBHOOK, Ret::Bool).as_deref(),
            Some("must evaluate to bool but got string")
        );
        assert_eq!(
            compile("object.spec.enabled", WEBHOOK, Ret::Bool).as_deref(),
            Some("must evaluate to bool but got dyn")
        );
        assert_eq!(
            compile("1 + 2", WEBHOOK, Ret::String).as_deref(),
            Some("must evaluate to string but got int")
        );
        assert_eq!(compile("null", WEBHOOK, Ret::StringOrNull), None);
        assert_eq!(
            compile("int(object.spec.max)", WEBHOOK, Ret::Bool).as_deref(),
            Some("must evaluate to bool but got int")
        );
        assert_eq!(
            compile("string(object.spec.max)", WEBHOOK, Ret::String),
            None
        );
        assert_eq!(
            compile("true", WEBHOOK, Ret::StringOrNull).as_deref(),
            Some("must evaluate to one of [string null_type] but got bool")
        );
    }
}
