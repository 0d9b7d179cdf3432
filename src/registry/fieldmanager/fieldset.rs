//! Field paths and sets of them (upstream's `sigs.k8s.io/structured-merge-diff`
//! `fieldpath` package), and their `FieldsV1` JSON form.
//!
//! A set holds *members* (paths in the set) and *children* (the subsets under
//! a path element). A path element may be both a member and have children:
//! `FieldsV1` writes that as `".": {}` inside the element's object.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde_json::{Map, Value};

/// One step of a path: upstream's `PathElement`.
#[derive(Debug, Clone)]
pub enum PathElement {
    /// A field of a struct or a key of a map: `f:<name>`.
    Field(String),
    /// An item of a `map` list, by its key fields, sorted by name:
    /// `k:{"name":"nginx"}`.
    Key(Vec<(String, Value)>),
    /// An item of a `set` list: `v:"a"`.
    Value(Value),
    /// An item of a list by position: `i:0` (upstream never records these
    /// for lists it knows the type of).
    Index(i64),
}

impl PathElement {
    pub fn field(name: impl Into<String>) -> Self {
        PathElement::Field(name.into())
    }

    /// A key element; the fields are sorted as upstream sorts them.
    pub fn key(mut fields: Vec<(String, Value)>) -> Self {
        fields.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| value_cmp(&a.1, &b.1)));
        PathElement::Key(fields)
    }

    fn rank(&self) -> u8 {
        match self {
            PathElement::Field(_) => 0,
            PathElement::Key(_) => 1,
            PathElement::Value(_) => 2,
            PathElement::Index(_) => 3,
        }
    }

    /// The `FieldsV1` key of this element (`f:name`, `k:{..}`, `v:..`, `i:0`).
    pub fn to_fields_v1_key(&self) -> String {
        match self {
            PathElement::Field(n) => format!("f:{n}"),
            PathElement::Key(fields) => {
                let parts: Vec<String> = fields
                    .iter()
                    .map(|(k, v)| format!("{}:{}", go_json(&Value::String(k.clone())), go_json(v)))
                    .collect();
                format!("k:{{{}}}", parts.join(","))
            }
            PathElement::Value(v) => format!("v:{}", go_json(v)),
            PathElement::Index(i) => format!("i:{i}"),
        }
    }

    /// Parses a `FieldsV1` key. `Ok(None)` for a prefix upstream does not
    /// know either (it skips those).
    pub fn from_fields_v1_key(s: &str) -> Result<Option<PathElement>, String> {
        let Some((prefix, rest)) = s.split_once(':') else {
            if s.is_empty() {
                return Err("key must not be empty".into());
            }
            return Ok(None);
        };
        match prefix {
            "f" => Ok(Some(PathElement::Field(rest.to_string()))),
            "v" => serde_json::from_str::<Value>(rest)
                .map(|v| Some(PathElement::Value(v)))
                .map_err(|e| format!("parsing JSON: {e}")),
            "i" => rest
                .parse::<i64>()
                .map(|i| Some(PathElement::Index(i)))
                .map_err(|e| format!("parsing index: {e}")),
            "k" => {
                let v: Value =
                    serde_json::from_str(rest).map_err(|e| format!("parsing JSON: {e}"))?;
                let Value::Object(m) = v else {
                    return Err("expected key value pairs".into());
                };
                Ok(Some(PathElement::key(m.into_iter().collect())))
            }
            _ => Ok(None),
        }
    }
}

impl PartialEq for PathElement {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for PathElement {}

impl PartialOrd for PathElement {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Upstream's `PathElement.Compare`: fields < keys < values < indexes.
impl Ord for PathElement {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (PathElement::Field(a), PathElement::Field(b)) => a.cmp(b),
            (PathElement::Key(a), PathElement::Key(b)) => {
                for ((an, av), (bn, bv)) in a.iter().zip(b.iter()) {
                    let c = an.cmp(bn).then_with(|| value_cmp(av, bv));
                    if c != Ordering::Equal {
                        return c;
                    }
                }
                a.len().cmp(&b.len())
            }
            (PathElement::Value(a), PathElement::Value(b)) => value_cmp(a, b),
            (PathElement::Index(a), PathElement::Index(b)) => a.cmp(b),
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

/// Upstream's `PathElement.String`, as conflicts print it: `.name`,
/// `[name="nginx"]`, `[="a"]`, `[0]`.
impl fmt::Display for PathElement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathElement::Field(n) => write!(f, ".{n}"),
            PathElement::Key(fields) => {
                let parts: Vec<String> = fields
                    .iter()
                    .map(|(k, v)| format!("{k}={}", go_to_string(v)))
                    .collect();
                write!(f, "[{}]", parts.join(","))
            }
            PathElement::Value(v) => write!(f, "[={}]", go_to_string(v)),
            PathElement::Index(i) => write!(f, "[{i}]"),
        }
    }
}

/// A path from the object's root.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Path(pub Vec<PathElement>);

impl Path {
    /// A path of field names: `Path::fields(&["spec", "replicas"])`.
    pub fn fields(names: &[&str]) -> Path {
        Path(names.iter().map(|n| PathElement::field(*n)).collect())
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for pe in &self.0 {
            write!(f, "{pe}")?;
        }
        Ok(())
    }
}

/// A set of field paths: upstream's `fieldpath.Set`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldSet {
    members: BTreeSet<PathElement>,
    /// Never holds an empty set.
    children: BTreeMap<PathElement, FieldSet>,
}

impl FieldSet {
    pub fn new() -> Self {
        Self::default()
    }

    /// A set of the given paths.
    pub fn from_paths<'a>(paths: impl IntoIterator<Item = &'a Path>) -> Self {
        let mut s = FieldSet::new();
        for p in paths {
            s.insert(&p.0);
        }
        s
    }

    pub fn is_empty(&self) -> bool {
        self.members.is_empty() && self.children.values().all(FieldSet::is_empty)
    }

    /// Number of member paths.
    pub fn len(&self) -> usize {
        self.members.len() + self.children.values().map(FieldSet::len).sum::<usize>()
    }

    /// Adds a path (an empty path adds nothing: no one owns the whole object).
    pub fn insert(&mut self, path: &[PathElement]) {
        match path {
            [] => {}
            [last] => {
                self.members.insert(last.clone());
            }
            // Looked up before it is copied: most inserts go under a
            // child already there.
            [first, rest @ ..] => match self.children.get_mut(first) {
                Some(child) => child.insert(rest),
                None => self.children.entry(first.clone()).or_default().insert(rest),
            },
        }
    }

    /// Whether `path` is a member.
    pub fn has(&self, path: &[PathElement]) -> bool {
        match path {
            [] => false,
            [last] => self.members.contains(last),
            [first, rest @ ..] => self.children.get(first).is_some_and(|c| c.has(rest)),
        }
    }

    /// The members directly under this set.
    pub(crate) fn members(&self) -> &BTreeSet<PathElement> {
        &self.members
    }

    /// The subsets under each path element.
    pub(crate) fn children(&self) -> &BTreeMap<PathElement, FieldSet> {
        &self.children
    }

    pub(crate) fn insert_member(&mut self, pe: PathElement) {
        self.members.insert(pe);
    }

    pub(crate) fn set_child(&mut self, pe: PathElement, set: FieldSet) {
        if set.is_empty() {
            self.children.remove(&pe);
        } else {
            self.children.insert(pe, set);
        }
    }

    /// The paths under `pe`, without `pe`: upstream's `WithPrefix`.
    pub fn with_prefix(&self, pe: &PathElement) -> Option<&FieldSet> {
        self.children.get(pe)
    }

    pub fn union(&self, other: &FieldSet) -> FieldSet {
        let mut out = self.clone();
        out.extend(other);
        out
    }

    /// Adds `other`'s paths: [`FieldSet::union`] in place.
    pub fn extend(&mut self, other: &FieldSet) {
        self.members.extend(other.members.iter().cloned());
        for (pe, c) in &other.children {
            match self.children.get_mut(pe) {
                Some(mine) => mine.extend(c),
                None => {
                    self.children.insert(pe.clone(), c.clone());
                }
            }
        }
    }

    pub fn intersection(&self, other: &FieldSet) -> FieldSet {
        let members = self.members.intersection(&other.members).cloned().collect();
        let mut children = BTreeMap::new();
        for (pe, c) in &self.children {
            if let Some(oc) = other.children.get(pe) {
                let i = c.intersection(oc);
                if !i.is_empty() {
                    children.insert(pe.clone(), i);
                }
            }
        }
        FieldSet { members, children }
    }

    /// The members of `self` that are not members of `other`. As upstream,
    /// a member of `other` does not remove the paths under it
    /// (see [`FieldSet::recursive_difference`]).
    pub fn difference(&self, other: &FieldSet) -> FieldSet {
        let members = self.members.difference(&other.members).cloned().collect();
        let mut children = BTreeMap::new();
        for (pe, c) in &self.children {
            let d = match other.children.get(pe) {
                Some(oc) => c.difference(oc),
                None => c.clone(),
            };
            if !d.is_empty() {
                children.insert(pe.clone(), d);
            }
        }
        FieldSet { members, children }
    }

    /// The members of `self` that are neither members of `other` nor under
    /// one of its members.
    pub fn recursive_difference(&self, other: &FieldSet) -> FieldSet {
        let members = self.members.difference(&other.members).cloned().collect();
        let mut children = BTreeMap::new();
        for (pe, c) in &self.children {
            if other.members.contains(pe) {
                continue;
            }
            let d = match other.children.get(pe) {
                Some(oc) => c.recursive_difference(oc),
                None => c.clone(),
            };
            if !d.is_empty() {
                children.insert(pe.clone(), d);
            }
        }
        FieldSet { members, children }
    }

    /// The members of `self` that are members of `prefixes` or under one of
    /// its members.
    pub fn under(&self, prefixes: &FieldSet) -> FieldSet {
        let members = self
            .members
            .intersection(&prefixes.members)
            .cloned()
            .collect();
        let mut children = BTreeMap::new();
        for (pe, c) in &self.children {
            let kept = if prefixes.members.contains(pe) {
                c.clone()
            } else if let Some(pc) = prefixes.children.get(pe) {
                c.under(pc)
            } else {
                continue;
            };
            if !kept.is_empty() {
                children.insert(pe.clone(), kept);
            }
        }
        FieldSet { members, children }
    }

    /// Every member path, in upstream's order (members before the children
    /// at each level, each sorted).
    pub fn paths(&self) -> Vec<Path> {
        let mut out = Vec::new();
        self.collect_paths(&mut Vec::new(), &mut out);
        out
    }

    fn collect_paths(&self, prefix: &mut Vec<PathElement>, out: &mut Vec<Path>) {
        for m in &self.members {
            let mut p = prefix.clone();
            p.push(m.clone());
            out.push(Path(p));
        }
        for (pe, c) in &self.children {
            prefix.push(pe.clone());
            c.collect_paths(prefix, out);
            prefix.pop();
        }
    }

    /// Parses upstream's `FieldsV1` JSON.
    pub fn from_fields_v1(v: &Value) -> Result<FieldSet, String> {
        let Value::Object(m) = v else {
            return Err("FieldsV1 must be a JSON object".into());
        };
        let (children, _) = read_v1(m)?;
        Ok(children.unwrap_or_default())
    }

    /// The `FieldsV1` JSON of the set.
    pub fn to_fields_v1(&self) -> Value {
        Value::Object(self.emit_v1(false))
    }

    fn emit_v1(&self, include_self: bool) -> Map<String, Value> {
        let mut out = Map::new();
        if include_self && !(self.members.is_empty() && self.children.is_empty()) {
            out.insert(".".into(), Value::Object(Map::new()));
        }
        for m in &self.members {
            if !self.children.contains_key(m) {
                out.insert(m.to_fields_v1_key(), Value::Object(Map::new()));
            }
        }
        for (pe, c) in &self.children {
            let is_member = self.members.contains(pe);
            out.insert(pe.to_fields_v1_key(), Value::Object(c.emit_v1(is_member)));
        }
        out
    }
}

/// Upstream's `readIterV1`: the children of an object and whether the
/// object stands for a member itself (it is empty, or holds ".").
fn read_v1(m: &Map<String, Value>) -> Result<(Option<FieldSet>, bool), String> {
    let mut children: Option<FieldSet> = None;
    let mut is_member = false;
    for (k, v) in m {
        if k == "." {
            is_member = true;
            continue;
        }
        let Some(pe) = PathElement::from_fields_v1_key(k)
            .map_err(|e| format!("parsing key as path element: {e}"))?
        else {
            continue;
        };
        let Value::Object(sub) = v else {
            return Err(format!("expected an object at {k}"));
        };
        let (grandchildren, child_is_member) = read_v1(sub)?;
        if child_is_member {
            children
                .get_or_insert_with(FieldSet::new)
                .members
                .insert(pe.clone());
        }
        if let Some(g) = grandchildren.filter(|g| !g.is_empty()) {
            children
                .get_or_insert_with(FieldSet::new)
                .children
                .insert(pe, g);
        }
    }
    if children.is_none() {
        is_member = true;
    }
    Ok((children, is_member))
}

// ------------------------------------------------------------ JSON values

/// Upstream's `value.Compare`: a total order over JSON values (numbers <
/// strings < booleans < lists < maps < null; ints and floats compare by
/// value).
pub(crate) fn value_cmp(a: &Value, b: &Value) -> Ordering {
    fn rank(v: &Value) -> u8 {
        match v {
            Value::Number(_) => 0,
            Value::String(_) => 1,
            Value::Bool(_) => 2,
            Value::Array(_) => 3,
            Value::Object(_) => 4,
            Value::Null => 5,
        }
    }
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(i), Some(j)) => i.cmp(&j),
            _ => {
                let (f, g) = (x.as_f64().unwrap_or(0.0), y.as_f64().unwrap_or(0.0));
                f.partial_cmp(&g).unwrap_or(Ordering::Equal)
            }
        },
        (Value::String(x), Value::String(y)) => x.cmp(y),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Array(x), Value::Array(y)) => {
            for (i, j) in x.iter().zip(y.iter()) {
                let c = value_cmp(i, j);
                if c != Ordering::Equal {
                    return c;
                }
            }
            x.len().cmp(&y.len())
        }
        (Value::Object(x), Value::Object(y)) => {
            // Upstream compares sorted (key, value) pairs, then sizes.
            for ((ka, va), (kb, vb)) in x.iter().zip(y.iter()) {
                let c = ka.cmp(kb).then_with(|| value_cmp(va, vb));
                if c != Ordering::Equal {
                    return c;
                }
            }
            x.len().cmp(&y.len())
        }
        _ => rank(a).cmp(&rank(b)),
    }
}

/// Upstream's `value.Equals`: ints and floats are equal when their values are.
pub(crate) fn value_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(_), Value::Number(_)) => value_cmp(a, b) == Ordering::Equal,
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(i, j)| value_eq(i, j))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| value_eq(v, w)))
        }
        _ => a == b,
    }
}

/// JSON as Go's encoder writes it (`<`, `>`, `&` and the line separators
/// escaped). Those characters only occur inside strings, so replacing
/// them in serde's output is safe.
pub(crate) fn go_json(v: &Value) -> String {
    let s = serde_json::to_string(v).unwrap_or_default();
    if !s.contains(['<', '>', '&', '\u{2028}', '\u{2029}']) {
        return s;
    }
    s.replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029")
}

pub(crate) use crate::api::go_quote;

/// Go's `%v` of a float64 (`strconv.FormatFloat(f, 'g', -1, 64)`).
fn go_float(f: f64) -> String {
    if f == 0.0 {
        return "0".into();
    }
    if !f.is_finite() {
        return if f.is_nan() {
            "NaN".into()
        } else if f > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        };
    }
    // Rust's `{:e}` is the shortest representation ("1.5e3"); Go prints
    // the exponent form when the exponent is below -4 or at least 6.
    let e = format!("{f:e}");
    let (mantissa, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if !(-4..6).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        return format!("{mantissa}e{sign}{:02}", exp.abs());
    }
    format!("{f}")
}

/// Upstream's `value.ToString`, as conflict paths print key values.
pub(crate) fn go_to_string(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => i.to_string(),
            (None, Some(u)) => u.to_string(),
            _ => go_float(n.as_f64().unwrap_or(0.0)),
        },
        Value::String(s) => go_quote(s),
        Value::Bool(b) => b.to_string(),
        Value::Array(a) => format!(
            "[{}]",
            a.iter().map(go_to_string).collect::<Vec<_>>().join(",")
        ),
        Value::Object(m) => format!(
            "{{{}}}",
            m.iter()
                .map(|(k, v)| format!("{k}={}", go_to_string(v)))
                .collect::<Vec<_>>()
                .join(",")
        ),
    }
}
