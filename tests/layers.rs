//! The shape of src/: imports between top-level modules point down only (no
//! cycle), and no file grows past 1,000 lines.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Tables generated from upstream's definitions, exempt from the limit.
const GENERATED: &[&str] = &[
    "api/protobuf/schema.rs",
    "api/protobuf/zero_values.rs",
    "api/protobuf/field_json.rs",
];

const LIMIT: usize = 1000;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The file's code without comments and without its `#[cfg(test)]`
/// modules (unit tests and their helpers may reach anywhere).
fn code_of(path: &Path) -> String {
    if path.file_name().is_some_and(|n| n == "tests.rs") {
        return String::new();
    }
    let text = std::fs::read_to_string(path).expect("read");
    let mut out = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let t = line.trim_start();
        let test_module = t.starts_with("#[cfg(test)]")
            && lines.peek().is_some_and(|l| {
                let l = l.trim_start();
                let l = l
                    .strip_prefix("pub(crate) ")
                    .or_else(|| l.strip_prefix("pub "))
                    .unwrap_or(l);
                l.starts_with("mod ")
            });
        if test_module {
            // Skip the module: to the brace that closes it (or its `mod x;`).
            let mut depth = 0i32;
            let mut opened = false;
            for l in lines.by_ref() {
                depth += l.matches('{').count() as i32 - l.matches('}').count() as i32;
                opened |= l.contains('{');
                if (opened && depth <= 0) || (!opened && l.trim_end().ends_with(';')) {
                    break;
                }
            }
            continue;
        }
        if t.starts_with("//") {
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// `crate::a::...` and `crate::{a, b::c}`: the top-level modules named.
fn modules_named(code: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    for (i, _) in code.match_indices("crate::") {
        let rest = &code[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let inner = group.split('}').next().unwrap_or("");
            // Only the first segment of each path in the group.
            for part in inner.split(',') {
                let name = ident(part.trim());
                if !name.is_empty() {
                    out.insert(name);
                }
            }
        } else {
            let name = ident(rest);
            if !name.is_empty() {
                out.insert(name);
            }
        }
    }
    out
}

fn graph() -> BTreeMap<String, BTreeMap<String, BTreeSet<String>>> {
    let root = src();
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let top_of = |p: &Path| -> String {
        let rel = p.strip_prefix(&root).expect("under src");
        let first = rel.components().next().expect("a component");
        first
            .as_os_str()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_string()
    };
    let tops: BTreeSet<String> = files.iter().map(|p| top_of(p)).collect();
    let mut edges: BTreeMap<String, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for f in &files {
        let from = top_of(f);
        if from == "lib" {
            continue;
        }
        for to in modules_named(&code_of(f)) {
            if to != from && tops.contains(&to) {
                let rel = f.strip_prefix(&root).expect("under src");
                edges
                    .entry(from.clone())
                    .or_default()
                    .entry(to)
                    .or_default()
                    .insert(rel.to_string_lossy().to_string());
            }
        }
    }
    edges
}

/// Strongly connected components of more than one module (Tarjan).
fn cycles(edges: &BTreeMap<String, BTreeMap<String, BTreeSet<String>>>) -> Vec<BTreeSet<String>> {
    struct T<'a> {
        edges: &'a BTreeMap<String, BTreeMap<String, BTreeSet<String>>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        out: Vec<BTreeSet<String>>,
    }
    fn visit<'a>(t: &mut T<'a>, v: &'a str) {
        let n = t.index.len();
        t.index.insert(v, n);
        t.low.insert(v, n);
        t.stack.push(v);
        t.on.insert(v);
        let next: Vec<&'a str> = t
            .edges
            .get(v)
            .map(|m| m.keys().map(String::as_str).collect())
            .unwrap_or_default();
        for w in next {
            if !t.index.contains_key(w) {
                visit(t, w);
                let lw = t.low[w];
                let lv = t.low.get_mut(v).expect("visited");
                *lv = (*lv).min(lw);
            } else if t.on.contains(w) {
                let iw = t.index[w];
                let lv = t.low.get_mut(v).expect("visited");
                *lv = (*lv).min(iw);
            }
        }
        if t.low[v] == t.index[v] {
            let mut scc = BTreeSet::new();
            while let Some(w) = t.stack.pop() {
                t.on.remove(w);
                scc.insert(w.to_string());
                if w == v {
                    break;
                }
            }
            if scc.len() > 1 {
                t.out.push(scc);
            }
        }
    }
    let mut t = T {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in edges.keys() {
        if !t.index.contains_key(v.as_str()) {
            visit(&mut t, v);
        }
    }
    t.out
}

#[test]
fn imports_between_top_level_modules_form_no_cycle() {
    let edges = graph();
    let found = cycles(&edges);
    let show = |scc: &BTreeSet<String>| -> String {
        let mut lines = Vec::new();
        for a in scc {
            for (b, files) in edges.get(a).into_iter().flatten() {
                if scc.contains(b) {
                    let files: Vec<&String> = files.iter().take(3).collect();
                    lines.push(format!("  {a} -> {b}  ({files:?})"));
                }
            }
        }
        lines.join("\n")
    };
    assert!(
        found.is_empty(),
        "imports between top-level modules of src/ form a cycle; a concept needed below \
         belongs below (or a trait defined below, implemented above):\n{}",
        found.iter().map(show).collect::<Vec<_>>().join("\n\n")
    );
    // The walk itself: it sees the layers it should (no vacuous pass).
    assert!(
        edges
            .get("registry")
            .is_some_and(|m| m.contains_key("storage")),
        "the import walk found no registry -> storage import: {edges:?}"
    );
}

#[test]
fn no_file_in_src_grows_past_a_thousand_lines() {
    let root = src();
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let mut long = BTreeMap::new();
    for f in &files {
        let rel = f
            .strip_prefix(&root)
            .expect("under src")
            .to_string_lossy()
            .replace('\\', "/");
        if GENERATED.contains(&rel.as_str()) {
            continue;
        }
        let n = std::fs::read_to_string(f).expect("read").lines().count();
        if n > LIMIT {
            long.insert(rel, n);
        }
    }
    let over: Vec<String> = long
        .iter()
        .map(|(f, n)| format!("src/{f}: {n} lines"))
        .collect();
    assert!(
        over.is_empty(),
        "over {LIMIT} lines; split by concept:\n{}",
        over.join("\n")
    );
    // The walk itself: it read the tree (no vacuous pass).
    assert!(files.len() > 100, "only {} files under src/", files.len());
}
