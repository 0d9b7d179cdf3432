#!/usr/bin/env python3
"""Generates src/api/protobuf/zero_values.rs: for every Go struct of the
built-in API types, which scalar fields keep a zero value in JSON.

Go's protobuf encoder writes every non-pointer field, zero or not, so a
body from a Go client carries `paused: false`, `minReadySeconds: 0`,
`hostNetwork: false`. Upstream decodes it into a Go struct and, on the way
out, encoding/json drops a zero value of a non-pointer `omitempty` field;
a pointer field (`replicas *int32`) or a field without `omitempty` keeps it.
The decoder reads this table to do the same.

Usage (tags matching k8s-openapi's v1_34):
  git -C <kubernetes/api> ... ; python3 scripts/gen-go-zero-values.py \\
      <kubernetes/api git dir> <kubernetes/apimachinery git dir> v0.34.9
"""
import re
import subprocess
import sys

SCALARS = {"bool", "string", "int", "int32", "int64", "float64", "uint32", "uint64"}
FIELD = re.compile(r'^\s+(\w+)\s+(\S+)\s+`[^`]*json:"([^"]*)"')
EMBEDDED = re.compile(r'^\s+\*?([\w.]+)\s+`[^`]*json:"([^"]*)"')
NAMED = re.compile(r'^type (\w+) (bool|string|int|int32|int64|float64)\s*$')


def git(repo, *args):
    return subprocess.run(["git", "--git-dir", repo, *args], check=True,
                          capture_output=True, text=True).stdout


def types_files(repo, tag, under):
    names = git(repo, "ls-tree", "-r", "--name-only", tag).split("\n")
    return [n for n in names if n.endswith("/types.go") and n.startswith(under)
            and "/internal" not in n and "testdata" not in n]


def main():
    api, machinery, tag = sys.argv[1], sys.argv[2], sys.argv[3]
    sources = []
    for path in types_files(api, tag, ""):
        pkg = path[: -len("/types.go")]
        sources.append(("io.k8s.api." + pkg.replace("/", "."), git(api, "show", f"{tag}:{path}")))
    for path in ["pkg/apis/meta/v1/types.go"]:
        pkg = path[: -len("/types.go")]
        sources.append(("io.k8s.apimachinery." + pkg.replace("/", "."), git(machinery, "show", f"{tag}:{path}")))
    named = {}
    for _, text in sources:
        for line in text.split("\n"):
            m = NAMED.match(line)
            if m:
                named[m.group(1)] = m.group(2)
    keeps, covered = set(), set()
    # struct message -> [(json name, field type message or scalar marker)]
    struct_fields = {}
    # struct message -> [(json name, element message, how)] in declaration
    # order; how: "" a field, "map" a map's values, "inline" an embedded struct
    order = {}
    # kind message -> its Status struct message (`Status XStatus json:"status..."`)
    status_of = {}
    for prefix, text in sources:
        imports = {}
        block = re.search(r"^import \((.*?)^\)", text, re.S | re.M)
        for line in (block.group(1).split("\n") if block else []):
            m = re.match(r'\s*(\w+)?\s*"([^"]+)"', line)
            if not m:
                continue
            path = m.group(2)
            alias = m.group(1) or path.split("/")[-1]
            if path.startswith("k8s.io/api/"):
                imports[alias] = "io.k8s.api." + path[len("k8s.io/api/"):].replace("/", ".")
            elif path.startswith("k8s.io/apimachinery/"):
                imports[alias] = "io.k8s.apimachinery." + path[len("k8s.io/apimachinery/"):].replace("/", ".")
        struct = None
        for line in text.split("\n"):
            m = re.match(r"^type (\w+) struct \{", line)
            if m:
                struct = prefix + "." + m.group(1)
                covered.add(struct)
                continue
            if line.startswith("}"):
                struct = None
                continue
            if struct is None:
                continue
            e = EMBEDDED.match(line)
            if e:
                # An embedded struct: inline, or a field named by its tag
                # (`metav1.ObjectMeta `json:"metadata,omitempty"``).
                pkg, _, base_name = e.group(1).rpartition(".")
                target = (imports.get(pkg, "?") if pkg else prefix) + "." + base_name
                tag_name = e.group(2).split(",")[0]
                if tag_name == "-":
                    continue
                order.setdefault(struct, []).append((tag_name, target, "" if tag_name else "inline"))
                continue
            f = FIELD.match(line)
            if not f:
                continue
            go_name, ty, tag_text = f.groups()
            json_name = tag_text.split(",")[0]
            if json_name and json_name != "-":
                how = "map" if ty.lstrip("*").startswith("map[") else ""
                elem = re.sub(r"^(\*|\[\]|map\[[^\]]*\])+", "", ty)
                epkg, _, ebase = elem.rpartition(".")
                etarget = (imports.get(epkg, "?") if epkg else prefix) + "." + ebase
                order.setdefault(struct, []).append((json_name, etarget, how))
            parts = tag_text.split(",")
            name, omitempty = parts[0], "omitempty" in parts[1:]
            if not name or name == "-":
                continue
            pointer = ty.startswith("*")
            if not pointer and not ty.startswith("[") and not ty.startswith("map["):
                pkg, _, base_name = ty.rpartition(".")
                target = (imports.get(pkg, "?") if pkg else prefix) + "." + base_name
                struct_fields.setdefault(struct, []).append((name, target, omitempty))
                if go_name == "Status" and name == "status":
                    status_of[struct] = target
            base = ty.lstrip("*").split(".")[-1]
            if base not in SCALARS and base not in named:
                continue
            if pointer or not omitempty:
                keeps.add((struct, name))
    def zero(message, depth=0):
        """The JSON Go writes for a zero value of a struct: non-pointer
        struct fields as their own zero, a zero Time as null (without
        omitempty) and nothing else (omitempty scalars, nil slices/maps)."""
        out = {}
        for name, target, omitempty in struct_fields.get(message, []):
            base = target.split(".")[-1]
            base = named.get(base, base)
            if base in SCALARS:
                if not omitempty:
                    out[name] = "" if base == "string" else (False if base == "bool" else 0)
            elif target == "io.k8s.apimachinery.pkg.apis.meta.v1.Time":
                out[name] = None
            elif target in struct_fields and depth < 8:
                out[name] = zero(target, depth + 1)
            elif target in covered:
                out[name] = {}
        return out

    import json
    zero_status = sorted((kind, json.dumps(zero(st), separators=(",", ":"), sort_keys=True))
                         for kind, st in status_of.items() if st in covered)
    out = [
        "// @generated by scripts/gen-go-zero-values.py from k8s.io/api and",
        f"// k8s.io/apimachinery {tag} (the Go types behind k8s-openapi's v1_34). Do not edit.",
        "",
        "/// Structs whose scalar fields are all known here.",
        "pub static COVERED: &[&str] = &[",
    ]
    out += [f'    "{s}",' for s in sorted(covered)]
    out += [
        "];",
        "",
        "/// (struct, JSON field) of the scalar fields whose zero value Go's JSON",
        "/// keeps: pointers and fields without `omitempty`. Sorted.",
        "pub static KEEPS_ZERO: &[(&str, &str)] = &[",
    ]
    out += [f'    ("{s}", "{n}"),' for s, n in sorted(keeps)]
    out += [
        "];",
        "",
        "/// (kind, JSON of its Status struct's zero value): what a kind's",
        "/// `status` is when a create resets it, as Go prints it (`{}`,",
        "/// `{\"loadBalancer\":{}}`). Sorted.",
        "pub static ZERO_STATUS: &[(&str, &str)] = &[",
    ]
    out += ["    (\"%s\", r#\"%s\"#)," % (k, z) for k, z in zero_status]
    out += [
        "];",
        "",
        "/// Each struct's JSON fields in Go's declaration order (the order Go",
        "/// writes them): (json name, the struct its values are, or \"\" for",
        "/// scalars and unknown types; how: 0 a field, 1 a map's values, 2 an",
        "/// embedded struct whose fields come here). Sorted by struct.",
        "pub static GO_ORDER: &[(&str, &[(&str, &str, u8)])] = &[",
    ]
    for st in sorted(order):
        fields = []
        for name, target, how in order[st]:
            known = target if target in covered else ""
            code = {"": 0, "map": 1, "inline": 2}[how]
            if code == 2 and not known:
                continue
            fields.append('("%s", "%s", %d)' % (name, known, code))
        out.append('    ("%s", &[%s]),' % (st, ", ".join(fields)))
    out += ["];", ""]
    sys.stdout.write("\n".join(out))


if __name__ == "__main__":
    main()
