//! Label and field selectors, parsed and matched as upstream's `labels`
//! and `fields` packages do.

use std::collections::BTreeMap;

/// What a selector reads of an object: the value under a key (a label, a
/// field path such as `metadata.name`).
pub trait Lookup {
    fn lookup(&self, key: &str) -> Option<&str>;
}

impl Lookup for BTreeMap<String, String> {
    fn lookup(&self, key: &str) -> Option<&str> {
        self.get(key).map(String::as_str)
    }
}

/// Key/value pairs sorted by key, in one allocation of exactly their size:
/// the labels and fields the watch cache keeps of every object for
/// selectors. (A `BTreeMap` node holds room for 11 pairs, about 560
/// bytes, however few an object has.)
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pairs(Box<[(Box<str>, Box<str>)]>);

impl Pairs {
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0
            .binary_search_by(|(k, _)| (**k).cmp(key))
            .ok()
            .map(|i| &*self.0[i].1)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (&**k, &**v))
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl<K: Into<Box<str>>, V: Into<Box<str>>> FromIterator<(K, V)> for Pairs {
    /// The last value of a key given twice wins, as in a map.
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Pairs {
        let mut v: Vec<(Box<str>, Box<str>)> = iter
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect();
        // Stable, so among equal keys the last given stays last.
        v.sort_by(|a, b| a.0.cmp(&b.0));
        let mut out: Vec<(Box<str>, Box<str>)> = Vec::with_capacity(v.len());
        for pair in v {
            match out.last_mut() {
                Some(last) if last.0 == pair.0 => *last = pair,
                _ => out.push(pair),
            }
        }
        Pairs(out.into_boxed_slice())
    }
}

impl Lookup for Pairs {
    fn lookup(&self, key: &str) -> Option<&str> {
        self.get(key)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Op {
    Exists,
    NotExists,
    Equals(String),
    NotEquals(String),
    In(Vec<String>),
    NotIn(Vec<String>),
    Gt(i64),
    Lt(i64),
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Requirement {
    key: String,
    op: Op,
}

/// A parsed label selector; the empty selector matches everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelSelector {
    reqs: Vec<Requirement>,
}

fn valid_key(key: &str) -> bool {
    let (prefix, name) = match key.rsplit_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, key),
    };
    let name_ok = !name.is_empty()
        && name.len() <= 63
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric())
        && name
            .chars()
            .last()
            .is_some_and(|c| c.is_ascii_alphanumeric());
    let prefix_ok = prefix.is_none_or(|p| {
        !p.is_empty()
            && p.len() <= 253
            && p.split('.').all(|l| {
                !l.is_empty()
                    && l.chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
            })
    });
    name_ok && prefix_ok
}

fn valid_value(v: &str) -> bool {
    v.is_empty()
        || (v.len() <= 63
            && v.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
            && v.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
            && v.chars().last().is_some_and(|c| c.is_ascii_alphanumeric()))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok {
    Ident,
    In,
    NotIn,
    Not,
    NotEquals,
    Equals,
    DoubleEquals,
    Gt,
    Lt,
    Open,
    Close,
    Comma,
    Unknown,
    End,
}

/// upstream's Lexer: symbols are taken longest first; anything else up to
/// whitespace or a symbol is an identifier (or `in`/`notin`).
fn lex(input: &str) -> Vec<(Tok, String)> {
    let special = |c: char| matches!(c, '=' | '!' | '(' | ')' | ',' | '>' | '<');
    let mut out = Vec::new();
    let mut rest = input;
    loop {
        rest = rest.trim_start_matches([' ', '\t', '\r', '\n']);
        let Some(c) = rest.chars().next() else {
            out.push((Tok::End, String::new()));
            return out;
        };
        if special(c) {
            let symbols = [
                ("!=", Tok::NotEquals),
                ("==", Tok::DoubleEquals),
                ("!", Tok::Not),
                ("=", Tok::Equals),
                ("(", Tok::Open),
                (")", Tok::Close),
                (",", Tok::Comma),
                (">", Tok::Gt),
                ("<", Tok::Lt),
            ];
            let (sym, tok) = symbols
                .iter()
                .find(|(sym, _)| rest.starts_with(sym))
                .copied()
                .unwrap_or(("", Tok::Unknown));
            let sym = if sym.is_empty() {
                &rest[..c.len_utf8()]
            } else {
                sym
            };
            out.push((tok, sym.to_string()));
            rest = &rest[sym.len()..];
            continue;
        }
        let end = rest
            .find(|c: char| c.is_whitespace() || special(c))
            .unwrap_or(rest.len());
        let word = &rest[..end];
        let tok = match word {
            "in" => Tok::In,
            "notin" => Tok::NotIn,
            _ => Tok::Ident,
        };
        out.push((tok, word.to_string()));
        rest = &rest[end..];
    }
}

struct Parser {
    tokens: Vec<(Tok, String)>,
    pos: usize,
}

impl Parser {
    /// The next token; where values are read, `in` and `notin` are
    /// identifiers like any word.
    fn peek(&self, values: bool) -> (Tok, String) {
        let (tok, lit) = self
            .tokens
            .get(self.pos)
            .cloned()
            .unwrap_or((Tok::End, String::new()));
        match tok {
            Tok::In | Tok::NotIn if values => (Tok::Ident, lit),
            _ => (tok, lit),
        }
    }

    fn next(&mut self, values: bool) -> (Tok, String) {
        let t = self.peek(values);
        self.pos = (self.pos + 1).min(self.tokens.len());
        t
    }

    fn requirement(&mut self) -> Result<Requirement, String> {
        let (mut tok, mut lit) = self.next(true);
        let not = tok == Tok::Not;
        if not {
            (tok, lit) = self.next(true);
        }
        if tok != Tok::Ident {
            return Err(format!("found '{lit}', expected: identifier"));
        }
        if !valid_key(&lit) {
            return Err(format!("invalid label key {lit:?}"));
        }
        let key = lit;
        // `!key` is whole; what follows it is the selector's to judge.
        if not {
            return Ok(Requirement {
                key,
                op: Op::NotExists,
            });
        }
        if matches!(self.peek(true).0, Tok::End | Tok::Comma) {
            return Ok(Requirement {
                key,
                op: Op::Exists,
            });
        }
        let (op, lit) = self.next(false);
        let op = match op {
            Tok::In | Tok::NotIn => {
                let values = self.values()?;
                for v in &values {
                    if !valid_value(v) {
                        return Err(format!("invalid label value: {v:?}"));
                    }
                }
                if op == Tok::In {
                    Op::In(values)
                } else {
                    Op::NotIn(values)
                }
            }
            Tok::Equals | Tok::DoubleEquals | Tok::NotEquals | Tok::Gt | Tok::Lt => {
                let value = self.exact_value()?;
                match op {
                    Tok::Gt | Tok::Lt => {
                        let n: i64 = value.parse().map_err(|_| {
                            "for 'Gt', 'Lt' operators, the value must be an integer".to_string()
                        })?;
                        if op == Tok::Gt {
                            Op::Gt(n)
                        } else {
                            Op::Lt(n)
                        }
                    }
                    _ => {
                        if !valid_value(&value) {
                            return Err(format!("invalid label value: {value:?}"));
                        }
                        if op == Tok::NotEquals {
                            Op::NotEquals(value)
                        } else {
                            Op::Equals(value)
                        }
                    }
                }
            }
            _ => {
                return Err(format!(
                    "found '{lit}', expected: in, notin, =, ==, !=, gt, lt"
                ))
            }
        };
        Ok(Requirement { key, op })
    }

    fn values(&mut self) -> Result<Vec<String>, String> {
        let (tok, lit) = self.next(true);
        if tok != Tok::Open {
            return Err(format!("found '{lit}' expected: '('"));
        }
        match self.peek(true) {
            (Tok::Ident | Tok::Comma, _) => {
                let list = self.identifiers()?;
                let (tok, lit) = self.next(true);
                if tok != Tok::Close {
                    return Err(format!("found '{lit}', expected: ')'"));
                }
                Ok(list)
            }
            (Tok::Close, _) => {
                self.next(true);
                Ok(vec![String::new()])
            }
            (_, lit) => Err(format!("found '{lit}', expected: ',', ')' or identifier")),
        }
    }

    fn identifiers(&mut self) -> Result<Vec<String>, String> {
        let mut list: Vec<String> = Vec::new();
        loop {
            match self.next(true) {
                (Tok::Ident, lit) => {
                    list.push(lit);
                    match self.peek(true) {
                        (Tok::Comma, _) => continue,
                        (Tok::Close, _) => return Ok(list),
                        (_, lit) => return Err(format!("found '{lit}', expected: ',' or ')'")),
                    }
                }
                (Tok::Comma, _) => {
                    if list.is_empty() {
                        list.push(String::new());
                    }
                    match self.peek(true).0 {
                        Tok::Close => {
                            list.push(String::new());
                            return Ok(list);
                        }
                        Tok::Comma => {
                            self.next(true);
                            list.push(String::new());
                        }
                        _ => {}
                    }
                }
                (_, lit) => return Err(format!("found '{lit}', expected: ',', or identifier")),
            }
        }
    }

    fn exact_value(&mut self) -> Result<String, String> {
        if matches!(self.peek(true).0, Tok::End | Tok::Comma) {
            return Ok(String::new());
        }
        match self.next(true) {
            (Tok::Ident, lit) => Ok(lit),
            (_, lit) => Err(format!("found '{lit}', expected: identifier")),
        }
    }
}

impl LabelSelector {
    /// upstream's `labels.Parse`: its lexer (whitespace and the symbols
    /// `! != ( ) , = == > <` end identifiers, so `a in(x)` reads as
    /// `a in (x)`), its grammar and its error messages.
    pub fn parse(input: &str) -> Result<LabelSelector, String> {
        let tokens = lex(input);
        let mut p = Parser { tokens, pos: 0 };
        let mut reqs = Vec::new();
        loop {
            match p.peek(true) {
                (Tok::Ident, _) | (Tok::Not, _) => {
                    let req = p
                        .requirement()
                        .map_err(|e| format!("unable to parse requirement: {e}"))?;
                    reqs.push(req);
                    match p.next(true) {
                        (Tok::End, _) => break,
                        (Tok::Comma, _) => match p.peek(true) {
                            (Tok::Ident, _) | (Tok::Not, _) => {}
                            (_, lit) => {
                                return Err(format!(
                                    "found '{lit}', expected: identifier after ','"
                                ))
                            }
                        },
                        (_, lit) => {
                            return Err(format!("found '{lit}', expected: ',' or 'end of string'"))
                        }
                    }
                }
                (Tok::End, _) => break,
                (_, lit) => {
                    return Err(format!(
                        "found '{lit}', expected: !, identifier, or 'end of string'"
                    ))
                }
            }
        }
        Ok(LabelSelector { reqs })
    }

    /// From a `metav1.LabelSelector` (matchLabels and matchExpressions).
    pub fn from_api(
        sel: &k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector,
    ) -> Result<LabelSelector, String> {
        let mut reqs = Vec::new();
        for (k, v) in sel.match_labels.iter().flatten() {
            reqs.push(Requirement {
                key: k.clone(),
                op: Op::Equals(v.clone()),
            });
        }
        for e in sel.match_expressions.iter().flatten() {
            let values = e.values.clone().unwrap_or_default();
            let op = match e.operator.as_str() {
                "In" => Op::In(values),
                "NotIn" => Op::NotIn(values),
                "Exists" => Op::Exists,
                "DoesNotExist" => Op::NotExists,
                other => return Err(format!("{other:?} is not a valid label selector operator")),
            };
            reqs.push(Requirement {
                key: e.key.clone(),
                op,
            });
        }
        Ok(LabelSelector { reqs })
    }

    pub fn is_empty(&self) -> bool {
        self.reqs.is_empty()
    }

    pub fn matches(&self, labels: &impl Lookup) -> bool {
        self.reqs.iter().all(|r| {
            let v = labels.lookup(&r.key);
            match &r.op {
                Op::Exists => v.is_some(),
                Op::NotExists => v.is_none(),
                Op::Equals(want) => v == Some(want.as_str()),
                Op::NotEquals(want) => v != Some(want.as_str()),
                Op::In(set) => v.is_some_and(|v| set.iter().any(|s| s == v)),
                Op::NotIn(set) => v.is_none_or(|v| !set.iter().any(|s| s == v)),
                Op::Gt(n) => v
                    .and_then(|v| v.parse::<i64>().ok())
                    .is_some_and(|x| x > *n),
                Op::Lt(n) => v
                    .and_then(|v| v.parse::<i64>().ok())
                    .is_some_and(|x| x < *n),
            }
        })
    }
}

/// A parsed field selector: `k=v`, `k==v`, `k!=v`, comma separated.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldSelector {
    reqs: Vec<(String, bool, String)>,
}

fn split_unescaped(s: &str, sep: char) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(n) = chars.next() {
                cur.push('\\');
                cur.push(n);
            }
        } else if c == sep {
            out.push(std::mem::take(&mut cur));
        } else {
            cur.push(c);
        }
    }
    out.push(cur);
    out
}

fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(n) = chars.next() {
                out.push(n);
            }
        } else {
            out.push(c);
        }
    }
    out
}

impl FieldSelector {
    pub fn parse(input: &str) -> Result<FieldSelector, String> {
        let mut reqs = Vec::new();
        if input.trim().is_empty() {
            return Ok(FieldSelector::default());
        }
        for part in split_unescaped(input, ',') {
            // upstream's parseSelector skips empty terms (`a=b,`, `,,`).
            if part.is_empty() {
                continue;
            }
            let (k, eq, v) = if let Some((k, v)) = part.split_once("!=") {
                (k, false, v)
            } else if let Some((k, v)) = part.split_once("==") {
                (k, true, v)
            } else if let Some((k, v)) = part.split_once('=') {
                (k, true, v)
            } else {
                return Err(format!(
                    "invalid selector: '{input}'; can't understand '{part}'"
                ));
            };
            reqs.push((k.trim().to_string(), eq, unescape(v.trim())));
        }
        Ok(FieldSelector { reqs })
    }

    pub fn is_empty(&self) -> bool {
        self.reqs.is_empty()
    }

    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.reqs.iter().map(|(k, _, _)| k.as_str())
    }

    /// The value required by an `=` term on `key`, if any.
    pub fn required(&self, key: &str) -> Option<&str> {
        self.reqs
            .iter()
            .find(|(k, eq, _)| k == key && *eq)
            .map(|(_, _, v)| v.as_str())
    }

    pub fn matches(&self, fields: &impl Lookup) -> bool {
        self.reqs.iter().all(|(k, eq, v)| {
            let have = fields.lookup(k).unwrap_or("");
            (have == v) == *eq
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_find_their_keys_and_the_last_value_of_a_key_wins() {
        let p: Pairs = [("b", "2"), ("a", "1"), ("c", "3"), ("a", "4")]
            .into_iter()
            .collect();
        assert_eq!(p.len(), 3);
        assert_eq!(p.get("a"), Some("4"));
        assert_eq!(p.get("b"), Some("2"));
        assert_eq!(p.get("c"), Some("3"));
        assert_eq!(p.get("d"), None);
        assert_eq!(
            p.iter().map(|(k, _)| k).collect::<Vec<_>>(),
            ["a", "b", "c"]
        );
        assert!(Pairs::default().get("a").is_none());
    }

    #[test]
    fn selectors_read_pairs_as_they_read_maps() {
        let map = labels(&[("app", "web"), ("tier", "1"), ("env", "prod")]);
        let pairs: Pairs = map.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        for sel in [
            "app=web",
            "app!=web",
            "tier>0",
            "tier<1",
            "env in (prod,dev)",
            "env notin (prod)",
            "missing",
            "!missing",
            "app,!env",
        ] {
            let s = LabelSelector::parse(sel).unwrap();
            assert_eq!(s.matches(&map), s.matches(&pairs), "{sel}");
        }
        let f = FieldSelector::parse("app=web,missing=").unwrap();
        assert!(f.matches(&pairs) && f.matches(&map));
    }

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn label_selectors() {
        let l = labels(&[("app", "web"), ("tier", "front"), ("n", "5")]);
        for (sel, want) in [
            ("", true),
            ("app=web", true),
            ("app==web", true),
            ("app!=web", false),
            ("app in (web, db)", true),
            ("app notin (web)", false),
            ("tier", true),
            ("!tier", false),
            ("!missing", true),
            ("app=web,tier=back", false),
            ("n>3", true),
            ("n<3", false),
            ("example.com/x notin (a)", true),
        ] {
            assert_eq!(
                LabelSelector::parse(sel).expect(sel).matches(&l),
                want,
                "{sel}"
            );
        }
        assert!(LabelSelector::parse("-bad=x").is_err());
        assert!(LabelSelector::parse("a in(web)")
            .expect("in(")
            .matches(&labels(&[("a", "web")])));
        assert!(LabelSelector::parse("a notin(web)")
            .expect("notin(")
            .matches(&l));
        for (sel, why) in [
            ("a=b,", "found '', expected: identifier after ','"),
            (
                "a in x",
                "unable to parse requirement: found 'x' expected: '('",
            ),
            (
                "a in (",
                "unable to parse requirement: found '', expected: ',', ')' or identifier",
            ),
            (
                "a in (x y)",
                "unable to parse requirement: found 'y', expected: ',' or ')'",
            ),
            ("a=x=y", "found '=', expected: ',' or 'end of string'"),
            (
                "a b",
                "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt",
            ),
            ("!a=b", "found '=', expected: ',' or 'end of string'"),
        ] {
            assert_eq!(
                LabelSelector::parse(sel).err().as_deref(),
                Some(why),
                "{sel}"
            );
        }
    }

    #[test]
    fn field_selectors() {
        let f = labels(&[("metadata.name", "a,b"), ("status.phase", "Running")]);
        assert!(FieldSelector::parse("metadata.name=a\\,b")
            .expect("p")
            .matches(&f));
        assert!(
            FieldSelector::parse("status.phase!=Pending,metadata.name==a\\,b")
                .expect("p")
                .matches(&f)
        );
        assert!(!FieldSelector::parse("status.phase=Pending")
            .expect("p")
            .matches(&f));
        assert!(FieldSelector::parse("nonsense").is_err());
        assert_eq!(
            FieldSelector::parse(",metadata.name=a\\,b,,")
                .expect("empty terms")
                .keys()
                .collect::<Vec<_>>(),
            ["metadata.name"]
        );
    }
}
