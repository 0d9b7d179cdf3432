//! The JSONPath subset CRDs use for printer columns, scale paths and
//! selectable fields: `.spec.replicas`, `.status.conditions[0].type`,
//! `.metadata.labels['app.kubernetes.io/name']`, optionally in `{}`.

use serde_json::Value;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    Field(String),
    Index(usize),
}

fn parse(path: &str) -> Option<Vec<Step>> {
    let p = path.trim();
    let p = p
        .strip_prefix('{')
        .and_then(|x| x.strip_suffix('}'))
        .unwrap_or(p);
    let p = p.strip_prefix('$').unwrap_or(p);
    let mut steps = Vec::new();
    let mut chars = p.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '.' => {
                let mut name = String::new();
                while let Some(&n) = chars.peek() {
                    if n == '.' || n == '[' {
                        break;
                    }
                    name.push(n);
                    chars.next();
                }
                if name.is_empty() {
                    return None;
                }
                steps.push(Step::Field(name));
            }
            '[' => {
                let mut inner = String::new();
                for n in chars.by_ref() {
                    if n == ']' {
                        break;
                    }
                    inner.push(n);
                }
                let inner = inner.trim();
                if let Some(q) = inner
                    .strip_prefix('\'')
                    .and_then(|x| x.strip_suffix('\''))
                    .or_else(|| inner.strip_prefix('"').and_then(|x| x.strip_suffix('"')))
                {
                    steps.push(Step::Field(q.to_string()));
                } else {
                    steps.push(Step::Index(inner.parse().ok()?));
                }
            }
            _ => return None,
        }
    }
    Some(steps)
}

/// Whether `path` is in the supported subset.
pub fn is_valid(path: &str) -> bool {
    parse(path).is_some_and(|s| !s.is_empty())
}

/// The value at `path`, if there is one.
pub fn get<'a>(obj: &'a Value, path: &str) -> Option<&'a Value> {
    let mut cur = obj;
    for step in parse(path)? {
        cur = match step {
            Step::Field(f) => cur.get(f.as_str())?,
            Step::Index(i) => cur.get(i)?,
        };
    }
    Some(cur)
}

/// Sets the value at `path`, creating objects on the way.
pub fn set(obj: &mut Value, path: &str, value: Value) -> bool {
    let Some(steps) = parse(path) else {
        return false;
    };
    let mut cur = obj;
    for (i, step) in steps.iter().enumerate() {
        let last = i + 1 == steps.len();
        match step {
            Step::Field(f) => {
                if !cur.is_object() {
                    *cur = Value::Object(Default::default());
                }
                let Some(m) = cur.as_object_mut() else {
                    return false;
                };
                if last {
                    m.insert(f.clone(), value);
                    return true;
                }
                cur = m
                    .entry(f.clone())
                    .or_insert_with(|| Value::Object(Default::default()));
            }
            Step::Index(n) => {
                let Some(a) = cur.as_array_mut() else {
                    return false;
                };
                let Some(slot) = a.get_mut(*n) else {
                    return false;
                };
                if last {
                    *slot = value;
                    return true;
                }
                cur = slot;
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths() {
        let o = json!({"spec": {"replicas": 3, "items": [{"name": "a"}]}, "metadata": {"labels": {"app.kubernetes.io/name": "x"}}});
        assert_eq!(get(&o, ".spec.replicas"), Some(&json!(3)));
        assert_eq!(get(&o, "{.spec.items[0].name}"), Some(&json!("a")));
        assert_eq!(
            get(&o, ".metadata.labels['app.kubernetes.io/name']"),
            Some(&json!("x"))
        );
        assert_eq!(get(&o, ".spec.missing"), None);
        assert!(!is_valid("spec"));
        let mut m = json!({});
        assert!(set(&mut m, ".status.replicas", json!(2)));
        assert_eq!(m, json!({"status": {"replicas": 2}}));
    }
}
