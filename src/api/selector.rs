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

/// Splits on commas that are not inside parentheses.
fn split_top_level(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
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

fn parse_set(s: &str) -> Result<Vec<String>, String> {
    let inner = s
        .trim()
        .strip_prefix('(')
        .and_then(|r| r.strip_suffix(')'))
        .ok_or_else(|| format!("found '{s}', expected: '('"))?;
    let vals: Vec<String> = inner.split(',').map(|v| v.trim().to_string()).collect();
    for v in &vals {
        if !valid_value(v) {
            return Err(format!("invalid label value: {v:?}"));
        }
    }
    Ok(vals)
}

impl LabelSelector {
    pub fn parse(input: &str) -> Result<LabelSelector, String> {
        let mut reqs = Vec::new();
        let s = input.trim();
        if s.is_empty() {
            return Ok(LabelSelector::default());
        }
        for part in split_top_level(s) {
            let part = part.trim();
            if part.is_empty() {
                return Err(format!(
                    "unable to parse requirement: found '', expected: identifier in {input:?}"
                ));
            }
            let req = if let Some(key) = part.strip_prefix('!') {
                Requirement {
                    key: key.trim().to_string(),
                    op: Op::NotExists,
                }
            } else if let Some((k, v)) = part.split_once("!=") {
                Requirement {
                    key: k.trim().to_string(),
                    op: Op::NotEquals(v.trim().to_string()),
                }
            } else if let Some((k, v)) = part.split_once("==") {
                Requirement {
                    key: k.trim().to_string(),
                    op: Op::Equals(v.trim().to_string()),
                }
            } else if let Some((k, v)) = part.split_once('=') {
                Requirement {
                    key: k.trim().to_string(),
                    op: Op::Equals(v.trim().to_string()),
                }
            } else if let Some((k, v)) = part.split_once(" notin ") {
                Requirement {
                    key: k.trim().to_string(),
                    op: Op::NotIn(parse_set(v)?),
                }
            } else if let Some((k, v)) = part.split_once(" in ") {
                Requirement {
                    key: k.trim().to_string(),
                    op: Op::In(parse_set(v)?),
                }
            } else if let Some((k, v)) = part.split_once('>') {
                let n = v.trim().parse().map_err(|_| {
                    format!("for 'gt', 'lt' operators, the value must be an integer: {part:?}")
                })?;
                Requirement {
                    key: k.trim().to_string(),
                    op: Op::Gt(n),
                }
            } else if let Some((k, v)) = part.split_once('<') {
                let n = v.trim().parse().map_err(|_| {
                    format!("for 'gt', 'lt' operators, the value must be an integer: {part:?}")
                })?;
                Requirement {
                    key: k.trim().to_string(),
                    op: Op::Lt(n),
                }
            } else {
                Requirement {
                    key: part.to_string(),
                    op: Op::Exists,
                }
            };
            if !valid_key(&req.key) {
                return Err(format!(
                    "unable to parse requirement: invalid label key {:?}",
                    req.key
                ));
            }
            if let Op::Equals(v) | Op::NotEquals(v) = &req.op {
                if !valid_value(v) {
                    return Err(format!(
                        "unable to parse requirement: invalid label value: {v:?}"
                    ));
                }
            }
            reqs.push(req);
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
        assert!(LabelSelector::parse("a=b,").is_err());
        assert!(LabelSelector::parse("-bad=x").is_err());
        assert!(LabelSelector::parse("a in x").is_err());
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
    }
}
