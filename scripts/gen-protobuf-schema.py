#!/usr/bin/env python3
"""Generates src/api/protobuf/schema.rs: the Kubernetes protobuf messages.

The source of truth is the crate `k8s-pb` (prost-generated types for every
built-in Kubernetes protobuf message; a dev-dependency of kapi). For each
`#[derive(::prost::Message)] pub struct` it reads the fields' `#[prost(...)]`
attributes (tag, cardinality, wire kind) and the Rust types of message
fields (which message they refer to), and writes them out as static data for
the decoder in src/api/protobuf/mod.rs.

Message names are the ones Kubernetes' OpenAPI uses
(`io.k8s.api.core.v1.Pod`). prost changes the case of some names
(`AwsElasticBlockStoreVolumeSource` for `AWSElasticBlockStoreVolumeSource`),
so the script also reads `k8s-openapi` (v1_34) and takes the OpenAPI
spelling of a name that matches case-insensitively in the same package; it
also lists the k8s-openapi type of every such message, whose schemas give
the JSON field names. Those are read once, by a test, into
src/api/protobuf/field_json.rs: after running this script, run
`KAPI_BLESS=1 cargo test --lib field_json` too.

Usage (from the repository root; Python 3 standard library only):

    cargo fetch                      # once, so the crates' sources are local
    python3 scripts/gen-protobuf-schema.py

Options: --k8s-pb DIR and --k8s-openapi DIR (the crates' root directories;
found with `cargo metadata` by default), --out FILE.

The output is one field per line and is not rustfmt'ed: mod.rs declares it
`#[rustfmt::skip] mod schema;`.
"""

import argparse
import json
import os
import re
import subprocess
import sys

OPENAPI_VERSION_DIR = "v1_34"

ATTR_RE = re.compile(r"^\s*#\[prost\((.*)\)\]\s*$")
STRUCT_RE = re.compile(r"^pub struct (\w+) \{(\})?\s*$")
FIELD_RE = re.compile(r"^\s*pub (?:r#)?(\w+):\s*(.*)$")
RESOURCE_IMPL_RE = re.compile(r"^impl crate::Resource for (\w+) \{")
CONST_RE = re.compile(r'^\s*const (API_VERSION|KIND): &\'static str = "([^"]*)";')

SCALARS = {
    "string",
    "bytes",
    "bool",
    "int32",
    "int64",
    "uint32",
    "uint64",
    "sint32",
    "sint64",
    "fixed32",
    "fixed64",
    "sfixed32",
    "sfixed64",
    "double",
    "float",
}

# Rust enum variants of `Kind` in src/api/protobuf/mod.rs.
KIND_VARIANT = {
    "string": "String",
    "bytes": "Bytes",
    "bool": "Bool",
    "int32": "Int32",
    "int64": "Int64",
    "uint32": "Uint32",
    "uint64": "Uint64",
    "sint32": "Sint32",
    "sint64": "Sint64",
    "fixed32": "Fixed32",
    "fixed64": "Fixed64",
    "sfixed32": "Sfixed32",
    "sfixed64": "Sfixed64",
    "double": "Double",
    "float": "Float",
    "enumeration": "Enumeration",
}


def die(msg):
    print("gen-protobuf-schema: " + msg, file=sys.stderr)
    sys.exit(1)


def crate_dirs():
    """Finds the k8s-pb and k8s-openapi source directories with cargo metadata."""
    out = subprocess.run(
        [os.environ.get("CARGO", "cargo"), "metadata", "--format-version", "1"],
        check=True,
        stdout=subprocess.PIPE,
    ).stdout
    meta = json.loads(out)
    dirs = {}
    for pkg in meta["packages"]:
        if pkg["name"] in ("k8s-pb", "k8s-openapi"):
            dirs[pkg["name"]] = os.path.dirname(pkg["manifest_path"])
    for name in ("k8s-pb", "k8s-openapi"):
        if name not in dirs:
            die(name + " is not in `cargo metadata`; is it a (dev-)dependency?")
    return dirs["k8s-pb"], dirs["k8s-openapi"]


def module_files(src):
    """Yields (module path as a list, file path) for every module file."""
    for root, _dirs, files in os.walk(src):
        for f in files:
            if not f.endswith(".rs"):
                continue
            rel = os.path.relpath(os.path.join(root, f), src)
            parts = rel[:-3].split(os.sep)
            if parts[-1] in ("mod", "lib"):
                parts = parts[:-1]
            yield parts, os.path.join(root, f)


def package_of(modpath):
    """`api::core::v1` -> `io.k8s.api.core.v1`; the first component is a
    repository name, so its underscores are dashes
    (`apiextensions_apiserver` -> `apiextensions-apiserver`)."""
    if not modpath:
        return "io.k8s"
    first = modpath[0].replace("_", "-")
    return ".".join(["io", "k8s", first] + modpath[1:])


def split_generic_args(s):
    """Splits `A, B<C, D>` at top-level commas."""
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def strip_wrapper(ty, wrappers):
    changed = True
    while changed:
        changed = False
        for w in wrappers:
            if ty.startswith(w + "<") and ty.endswith(">"):
                ty = ty[len(w) + 1 : -1].strip()
                changed = True
    return ty


def resolve_path(modpath, ty):
    """Resolves a Rust type path used in module `modpath` to
    (module path, struct name)."""
    parts = ty.split("::")
    if parts[0] == "crate":
        base, parts = [], parts[1:]
    else:
        base = list(modpath)
        while parts and parts[0] == "super":
            base.pop()
            parts = parts[1:]
    return tuple(base + parts[:-1]), parts[-1]


def parse_attr(attr):
    """Parses the inside of `#[prost(...)]`."""
    m = re.search(r'tag\s*=\s*"(\d+)"', attr)
    if not m:
        return None
    tag = int(m.group(1))
    m = re.match(r'\s*(btree_map|map|hash_map)\s*=\s*"([^"]*)"', attr)
    if m:
        key, value = [s.strip() for s in m.group(2).split(",")]
        return {"tag": tag, "card": "map", "key": key, "value": value}
    words = [w.strip() for w in attr.split(",")]
    kind = words[0].split("=")[0].strip()
    if kind == "oneof":
        die("oneof fields are not supported: " + attr)
    if kind not in SCALARS and kind not in ("message", "enumeration", "group"):
        die("unknown prost kind: " + attr)
    if kind == "group":
        die("group fields are not supported: " + attr)
    card = "optional"
    if "repeated" in words:
        card = "repeated"
    elif "required" in words:
        card = "required"
    return {"tag": tag, "card": card, "kind": kind}


def parse_k8s_pb(src):
    messages = []  # dicts: modpath, name, fields, docs
    resources = []  # (modpath, struct, api_version, kind)
    for modpath, path in sorted(module_files(src)):
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
        i, docs, derive_message = 0, [], False
        while i < len(lines):
            line = lines[i]
            if line.startswith("///"):
                docs.append(line[3:].strip())
                i += 1
                continue
            if line.startswith("#[derive(") and "::prost::Message" in line:
                derive_message = True
                i += 1
                continue
            m = STRUCT_RE.match(line)
            if m and derive_message:
                msg = {
                    "modpath": tuple(modpath),
                    "name": m.group(1),
                    "fields": [],
                    "docs": docs,
                }
                messages.append(msg)
                docs, derive_message = [], False
                i += 1
                if m.group(2):  # `pub struct Patch {}`
                    continue
                attr = None
                while i < len(lines) and lines[i] != "}":
                    fl = lines[i]
                    am = ATTR_RE.match(fl)
                    if am:
                        attr = parse_attr(am.group(1))
                        i += 1
                        continue
                    fm = FIELD_RE.match(fl)
                    if fm:
                        if attr is None:
                            die("field without #[prost] in %s: %s" % (path, fl))
                        name, ty = fm.group(1), fm.group(2)
                        depth = ty.count("<") - ty.count(">")
                        while depth > 0 or not ty.rstrip().endswith(","):
                            i += 1
                            ty += " " + lines[i].strip()
                            depth = ty.count("<") - ty.count(">")
                        ty = re.sub(r"\s+", "", ty.strip().rstrip(","))
                        ty = ty.replace(",>", ">")
                        field = dict(attr)
                        field["name"] = name
                        field["rust_type"] = ty
                        msg["fields"].append(field)
                        attr = None
                    i += 1
                i += 1
                continue
            m = RESOURCE_IMPL_RE.match(line)
            if m:
                consts = {}
                i += 1
                while i < len(lines) and lines[i] != "}":
                    cm = CONST_RE.match(lines[i])
                    if cm:
                        consts[cm.group(1)] = cm.group(2)
                    i += 1
                resources.append(
                    (tuple(modpath), m.group(1), consts["API_VERSION"], consts["KIND"])
                )
                continue
            if not line.startswith("#["):
                docs, derive_message = [], False
            i += 1
    return messages, resources


def parse_k8s_openapi(src):
    """Returns {openapi name: rust path} for every non-generic type of the
    v1_34 module that implements schemars' JsonSchema."""
    base = os.path.join(src, "src", OPENAPI_VERSION_DIR)
    types = {}
    impl_re = re.compile(r"^impl crate::schemars::JsonSchema for (\w+) \{")
    name_re = re.compile(r'^\s*"([^"]+)"\.into\(\)')
    for modpath, path in module_files(base):
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
        for i, line in enumerate(lines):
            m = impl_re.match(line)
            if not m:
                continue
            for j in range(i + 1, min(i + 6, len(lines))):
                nm = name_re.match(lines[j])
                if nm:
                    # modpath ends in the file's module (private, re-exported
                    # by its parent with `pub use`).
                    rust = "::".join(["k8s_openapi"] + modpath[:-1] + [m.group(1)])
                    types[nm.group(1)] = rust
                    break
    return types


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--k8s-pb")
    ap.add_argument("--k8s-openapi")
    ap.add_argument("--out", default="src/api/protobuf/schema.rs")
    args = ap.parse_args()

    pb_dir, openapi_dir = args.k8s_pb, args.k8s_openapi
    if not pb_dir or not openapi_dir:
        found_pb, found_openapi = crate_dirs()
        pb_dir = pb_dir or found_pb
        openapi_dir = openapi_dir or found_openapi

    messages, resources = parse_k8s_pb(os.path.join(pb_dir, "src"))
    openapi = parse_k8s_openapi(openapi_dir)
    openapi_by_lower = {}
    for name in openapi:
        openapi_by_lower.setdefault(name.lower(), []).append(name)

    kinds = {}  # (modpath, struct) -> Resource KIND
    for modpath, struct, _av, kind in resources:
        kinds[(modpath, struct)] = kind

    # Full names: the OpenAPI spelling where one matches, else the Resource
    # kind, else prost's name.
    full = {}
    for msg in messages:
        key = (msg["modpath"], msg["name"])
        pkg = package_of(list(msg["modpath"]))
        name = pkg + "." + msg["name"]
        candidates = openapi_by_lower.get(name.lower(), [])
        if len(candidates) == 1:
            name = candidates[0]
        elif key in kinds:
            name = pkg + "." + kinds[key]
        if key in full:
            die("duplicate message " + name)
        full[key] = name
        msg["full"] = name
    names = sorted(full.values())
    if len(set(n.lower() for n in names)) != len(names):
        die("message names collide case-insensitively")

    def message_ref(msg, rust_type):
        ty = strip_wrapper(
            rust_type,
            ["::core::option::Option", "::prost::alloc::vec::Vec", "::prost::alloc::boxed::Box"],
        )
        key = resolve_path(msg["modpath"], ty)
        if key not in full:
            die("%s: unknown message type %s" % (msg["full"], rust_type))
        return full[key]

    def scalar_kind(k):
        if k not in KIND_VARIANT:
            die("unsupported map key/value kind " + k)
        return "Kind::" + KIND_VARIANT[k]

    out = []
    out.append("// @generated by scripts/gen-protobuf-schema.py from the sources of the")
    out.append("// crates k8s-pb (the protobuf messages) and k8s-openapi (v1_34: message")
    out.append("// names and the types whose schemas give JSON field names). Do not edit.")
    out.append("// Regenerate: `cargo fetch && python3 scripts/gen-protobuf-schema.py`.")
    out.append("")
    out.append("use super::{Card, Field, Kind, Message, ResourceKind, SchemaFn};")
    out.append("use crate::api::catalog::schema_of;")
    out.append("")
    out.append("/// Every message, sorted by name.")
    out.append("pub static MESSAGES: &[Message] = &[")
    n_fields = 0
    kinds_seen = set()
    for msg in sorted(messages, key=lambda m: m["full"]):
        wrapper = "true" if "+protobuf.nullable=true" in msg["docs"] else "false"
        out.append("    Message {")
        out.append('        name: "%s",' % msg["full"])
        out.append("        array_wrapper: %s," % wrapper)
        if not msg["fields"]:
            out.append("        fields: &[],")
        else:
            out.append("        fields: &[")
            for fd in sorted(msg["fields"], key=lambda f: f["tag"]):
                n_fields += 1
                if fd["card"] == "map":
                    key = scalar_kind(fd["key"])
                    if fd["value"] == "message":
                        vt = split_generic_args(
                            strip_wrapper(fd["rust_type"], ["::prost::alloc::collections::BTreeMap", "::std::collections::HashMap"])
                        )[1]
                        val = 'Kind::Message("%s")' % message_ref(msg, vt)
                    else:
                        val = scalar_kind(fd["value"])
                    kind = "Kind::Map(&%s, &%s)" % (key, val)
                    card = "Card::Map"
                    kinds_seen.add("map<%s,%s>" % (fd["key"], fd["value"]))
                else:
                    if fd["kind"] == "message":
                        kind = 'Kind::Message("%s")' % message_ref(msg, fd["rust_type"])
                    else:
                        kind = "Kind::" + KIND_VARIANT[fd["kind"]]
                    card = {"optional": "Card::Optional", "required": "Card::Optional", "repeated": "Card::Repeated"}[fd["card"]]
                    kinds_seen.add(fd["card"] + " " + fd["kind"])
                out.append(
                    '            Field { tag: %d, name: "%s", card: %s, kind: %s },'
                    % (fd["tag"], fd["name"], card, kind)
                )
            out.append("        ],")
        out.append("    },")
    out.append("];")
    out.append("")
    out.append("/// The `impl Resource` blocks of k8s-pb: apiVersion and kind of the")
    out.append("/// top-level kinds, and their messages.")
    out.append("pub static RESOURCES: &[ResourceKind] = &[")
    for modpath, struct, av, kind in sorted(resources, key=lambda r: (r[2], r[3])):
        out.append(
            '    ResourceKind { api_version: "%s", kind: "%s", message: "%s" },'
            % (av, kind, full[(modpath, struct)])
        )
    out.append("];")
    out.append("")
    out.append("/// The k8s-openapi type of every message that has one, by name: their")
    out.append("/// schemas' property names are the JSON field names.")
    out.append("pub static OPENAPI_SCHEMAS: &[(&str, SchemaFn)] = &[")
    matched = 0
    for name in names:
        if name in openapi:
            matched += 1
            out.append('    ("%s", schema_of::<%s>),' % (name, openapi[name]))
    out.append("];")
    out.append("")

    text = "\n".join(out)
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(text)
    print(
        "gen-protobuf-schema: %d messages, %d fields, %d resources, %d with a k8s-openapi type -> %s"
        % (len(messages), n_fields, len(resources), matched, args.out),
        file=sys.stderr,
    )
    print("gen-protobuf-schema: field kinds: " + ", ".join(sorted(kinds_seen)), file=sys.stderr)


if __name__ == "__main__":
    main()
