#!/usr/bin/python3
"""Writes kiln's tables of ONNX op signatures (src/spec, the protobuf-free layer): op_types_table.cc,
the formals, type constraints and attributes of every ONNX op version that libonnx 1.12 does not
know, read from the ONNX spec's change logs; and, with --libonnx, op_types_libonnx.cc, the versions
libonnx 1.12 knows, read from its schema registry through Debian's python3-onnx (the same libonnx
1.12 build), so that kiln judges a model's nodes without building libonnx's registry (about 3 MB
of heap and milliseconds of every load; ctest OpTypesLibonnx.* holds the table to the registry).

Usage:
  git -C ONNX_REPO show COMMIT:docs/Changelog.md > Changelog.md
  git -C ONNX_REPO show COMMIT:docs/Changelog-ml.md > Changelog-ml.md
  /usr/bin/python3 tools/gen_op_types.py --source onnx/onnx@COMMIT Changelog.md Changelog-ml.md \
      > src/spec/op_types_table.cc
  /usr/bin/python3 tools/gen_op_types.py --libonnx > src/spec/op_types_libonnx.cc

The change logs document every version of every op: its inputs and outputs ("<dt><tt>A</tt>
(optional, non-differentiable) : T</dt>"), its type constraints ("<dt><tt>T</tt> : tensor(float),
tensor(double)</dt>") and its attributes ("<dt><tt>axis</tt> : int (default is 0)</dt>", "list of
ints (required)"). Versions libonnx 1.12 knows (ai.onnx <= 17, ai.onnx.ml <= 3,
ai.onnx.preview.training <= 1) are left out: kiln reads those from op_types_libonnx.cc, but for
the few whose types the spec has corrected since (LIBONNX_ERRATA).

--all writes every version instead, to check the parse against libonnx: from the change logs of
onnx/onnx@6be0677, the 444 versions libonnx 1.12 knows read exactly as its registry gives them but
for four the spec has corrected since (Erf-13 no longer lists integers, GridSample-16's grid is T2
and Y is T1; Exp-13 and Tanh-13 list the same types in another order).
"""
import argparse
import re
import sys

# The newest version of each domain libonnx 1.12's registry holds (absent: a domain it lacks).
LIBONNX_NEWEST = {"": 17, "ai.onnx.ml": 3, "ai.onnx.preview.training": 1}
# Versions libonnx 1.12 knows whose types the spec has corrected since (found with --all): the
# table holds them too, and kiln takes the table's.
LIBONNX_ERRATA = {
    ("", "Erf", 13),         # libonnx lists the integer types too
    ("", "GridSample", 16),  # libonnx types grid T1 (as X) and Y T2 (as grid): swapped
}

DOMAIN_HEADING = re.compile(r"^## Version (\d+) of (?:the default ONNX operator set|the '([^']+)' operator set)")
OP_HEADING = re.compile(r'^### <a name="[^"]+"></a>\*\*(.+)-(\d+)\*\*(.*)$')
SUBSECTION = re.compile(r"^#### (\w[\w ]*?)(?: \(.*\))?$")
# <dt><tt>NAME</tt> (QUALIFIERS) : TYPE</dt>; the qualifiers are optional.
ENTRY = re.compile(r"^<dt><tt>([^<]+)</tt>(?: \(([^)]*)\))? : (.+)</dt>$")
# <dt><tt>NAME</tt> : KIND (required)</dt>, or with "(default is ...)" after the kind.
ATTRIBUTE = re.compile(r"^<dt><tt>([^<]+)</tt> : (list of \w+|\w+)( \(required\))?")
# The change logs' attribute kinds in kiln's spelling (attr_kind_name: AttributeProto's types).
ATTRIBUTE_KINDS = {"int": "int", "float": "float", "string": "string", "tensor": "tensor",
                   "graph": "graph", "sparse_tensor": "sparse_tensor", "type_proto": "type_proto",
                   "list of ints": "ints", "list of floats": "floats", "list of strings": "strings",
                   "list of tensors": "tensors", "list of graphs": "graphs",
                   "list of sparse_tensors": "sparse_tensors", "list of type_protos": "type_protos"}
# Variadic formals that may take no value at all (min arity 0 in ONNX's C++ definitions, which
# the change logs do not say): a Loop without loop-carried values, a SequenceMap without extra
# inputs.
VARIADIC_MAY_BE_EMPTY = {("", "Loop", "v_initial"), ("", "SequenceMap", "additional_inputs")}


class OpVersion:
    def __init__(self, domain, name, since, deprecated):
        self.domain, self.name, self.since, self.deprecated = domain, name, since, deprecated
        self.inputs, self.outputs, self.constraints, self.attributes = [], [], [], []


def formal(name, qualifiers, type_str, may_be_empty=False):
    """NAME:TYPE with the arity as a suffix: ? optional, * variadic of one type, + variadic of
    several types (Loop's V); *? or +? a variadic that may take no value."""
    q = {s.strip() for s in qualifiers.split(",")} if qualifiers else set()
    suffix = ""
    if "variadic" in q:
        suffix = ("+" if "heterogeneous" in q else "*") + ("?" if may_be_empty else "")
    elif "optional" in q:
        suffix = "?"
    if " " in name + type_str or ":" in type_str:
        sys.exit(f"unexpected formal parameter: {name} : {type_str}")
    return f"{name}:{type_str}{suffix}"


def attribute(name, kind, required):
    """NAME:KIND, suffix ! when required; KIND as kiln spells it (ints, float, graph, ...)."""
    if " " in name or ":" in name:
        sys.exit(f"unexpected attribute name: {name}")
    return f"{name}:{kind}{'!' if required else ''}"


def split_top_level(type_list):
    """"tensor(float), map(int64, string)" -> ["tensor(float)", "map(int64, string)"]."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(type_list):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            parts.append(type_list[start:i].strip())
            start = i + 1
    parts.append(type_list[start:].strip())
    return parts


def parse(path, newest):
    """The op versions of one change log; newest[domain] becomes the domain's newest opset."""
    ops, domain, op, section = [], None, None, None
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        m = DOMAIN_HEADING.match(line)
        if m:
            domain, op, section = m.group(2) or "", None, None
            newest[domain] = max(newest.get(domain, 0), int(m.group(1)))
            continue
        m = OP_HEADING.match(line)
        if m and domain is not None:
            name = m.group(1)
            if domain and name.startswith(domain + "."):
                name = name[len(domain) + 1:]
            op = OpVersion(domain, name, int(m.group(2)), "(deprecated)" in m.group(3))
            ops.append(op)
            section = None
            continue
        m = SUBSECTION.match(line)
        if m:
            section = m.group(1)
            continue
        if section == "Attributes" and op is not None and line.startswith("<dt>"):
            m = ATTRIBUTE.match(line)
            if not m or m.group(2) not in ATTRIBUTE_KINDS:
                sys.exit(f"unexpected attribute of {op.name}-{op.since}: {line}")
            op.attributes.append(attribute(m.group(1), ATTRIBUTE_KINDS[m.group(2)], bool(m.group(3))))
            continue
        m = ENTRY.match(line)
        if not m or op is None:
            continue
        name, qualifiers, type_str = m.groups()
        if section == "Inputs":
            op.inputs.append(formal(name, qualifiers, type_str, (domain, op.name, name) in VARIADIC_MAY_BE_EMPTY))
        elif section == "Outputs":
            op.outputs.append(formal(name, qualifiers, type_str))
        elif section == "Type Constraints":
            types = [t.replace(" ", "") for t in split_top_level(type_str)]
            if any(" " in t or ";" in t for t in types):
                sys.exit(f"unexpected type list for {op.name}-{op.since} {name}: {type_str}")
            op.constraints.append(f"{name}: {' '.join(types)}")
    return ops


def from_libonnx():
    """Every op version libonnx's registry holds, as the C++ registry gives it (op_types.cc read
    the registry so before): formals in order, each's types from its constraint's list (the
    spec's order) or the one type it names; types without spaces, as the change logs' rows."""
    import onnx
    import onnx.defs

    if onnx.__version__ != "1.12.0":
        sys.exit(f"--libonnx wants python3-onnx 1.12.0 (libonnx 1.12 is what kiln matched), not {onnx.__version__}")
    opt = onnx.defs.OpSchema.FormalParameterOption
    ops = []
    for s in onnx.defs.get_all_schemas_with_history():
        op = OpVersion(s.domain, s.name, s.since_version, s.deprecated)
        for formals, out, min_count in ((s.inputs, op.inputs, s.min_input), (s.outputs, op.outputs, s.min_output)):
            for i, f in enumerate(formals):
                suffix = {opt.Single: "", opt.Optional: "?", opt.Variadic: "*" if f.isHomogeneous else "+"}[f.option]
                if f.option != opt.Variadic and not f.isHomogeneous:
                    sys.exit(f"{s.name}-{s.since_version} {f.name}: a heterogeneous single formal")
                # python3-onnx does not give a formal's min arity; the schema's min count says
                # whether the variadic (the last formal) may take no value.
                if f.option == opt.Variadic and min_count <= i:
                    suffix += "?"
                out.append(f"{f.name}:{f.typeStr.replace(' ', '')}{suffix}")
        for c in s.type_constraints:
            op.constraints.append(f"{c.type_param_str}: {' '.join(t.replace(' ', '') for t in c.allowed_type_strs)}")
        for name, a in sorted(s.attributes.items()):
            op.attributes.append(attribute(name, str(a.type).split(".")[-1].lower(), a.required))
        ops.append(op)
    return ops


def c_string(s, indent, width=100):
    """A C++ string literal, split into adjacent literals at spaces to keep lines short."""
    pieces, line = [], ""
    for word in s.split(" "):
        candidate = word if not line else line + " " + word
        if line and indent + len(candidate) + 4 > width:  # quotes, space, comma
            pieces.append(line + " ")
            line = word
        else:
            line = candidate
    pieces.append(line)
    return ("\n" + " " * indent).join(f'"{p}"' for p in pieces)


def rows(ops):
    out = []
    for op in ops:
        ind = 7
        out.append(f'      {{"{op.domain}", "{op.name}", {op.since}, {"true" if op.deprecated else "false"},')
        out.append(" " * ind + c_string(" ".join(op.inputs), ind) + ",")
        out.append(" " * ind + c_string(" ".join(op.outputs), ind) + ",")
        out.append(" " * ind + c_string("; ".join(op.constraints), ind) + ",")
        out.append(" " * ind + c_string(" ".join(sorted(op.attributes)), ind) + "},")
    return out


def write_libonnx(ops):
    ops.sort(key=lambda op: (op.domain, op.name, op.since))
    out = [
        "// Generated by tools/gen_op_types.py --libonnx from libonnx 1.12's schema registry (Debian's",
        "// python3-onnx 1.12.0). Do not edit; run the generator again.",
        "//",
        "// The signatures of every op version libonnx 1.12 knows (ai.onnx 1..17, ai.onnx.ml 1..3,",
        "// ai.onnx.preview.training 1), in op_types_table.cc's row form: kiln judges types, counts and",
        "// attributes with these rows instead of building libonnx's registry (op_types.h).",
        '#include "spec/op_types_table.h"',
        "",
        "namespace kiln {",
        "",
        "std::span<const OpTypesRow> op_types_libonnx_table() {",
        "  static constexpr OpTypesRow kRows[] = {",
    ]
    out += rows(ops)
    out += ["  };", "  return kRows;", "}", "", "}  // namespace kiln", ""]
    sys.stdout.write("\n".join(out))
    print(f"{len(ops)} op versions", file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--source", help="where the change logs came from (onnx/onnx@COMMIT)")
    ap.add_argument("--all", action="store_true",
                    help="every version, libonnx's too (to check the parse against libonnx)")
    ap.add_argument("--libonnx", action="store_true",
                    help="write op_types_libonnx.cc from libonnx 1.12's registry (python3-onnx) instead")
    ap.add_argument("changelogs", nargs="*")
    args = ap.parse_args()
    if args.libonnx:
        return write_libonnx(from_libonnx())
    if not args.changelogs or not args.source:
        ap.error("--source and the change logs are needed (or --libonnx)")

    newest = {}
    ops = [op for path in args.changelogs for op in parse(path, newest)]
    newer = [op for op in ops if args.all or op.since > LIBONNX_NEWEST.get(op.domain, 0)
             or (op.domain, op.name, op.since) in LIBONNX_ERRATA]
    newer.sort(key=lambda op: (op.domain, op.name, op.since))
    if not newer:
        sys.exit("no op versions found: not an ONNX change log?")

    out = [
        "// Generated by tools/gen_op_types.py from docs/Changelog.md and docs/Changelog-ml.md of",
        f"// {args.source}.",
        "// Do not edit; run the generator again (its usage says how).",
        "//",
        "// The type constraints of the ONNX op versions libonnx 1.12 does not know (ai.onnx 18 and",
        "// newer, ai.onnx.ml 4 and newer, ai.onnx.preview) and of those it has wrong (Erf-13,",
        "// GridSample-16): each row is domain, op, the version it appeared in, whether that version is",
        "// deprecated, its inputs and outputs (NAME:TYPE, TYPE a type parameter or a type; suffix ?",
        "// optional, * variadic of one type, + variadic of several types, *? or +? a variadic that may",
        '// take no value), its type parameters ("T: tensor(float) tensor(double); I: tensor(int64)")',
        '// and its attributes ("axis:int group:int kernel_shape:ints!", ! required). Then the newest',
        "// opset of each domain the spec describes.",
        '#include "spec/op_types_table.h"',
        "",
        "namespace kiln {",
        "",
        "std::span<const OpTypesRow> op_types_table() {",
        "  static constexpr OpTypesRow kRows[] = {",
    ]
    out += rows(newer)
    out += ["  };", "  return kRows;", "}", ""]
    out += ["std::span<const OpTypesDomain> op_types_table_domains() {",
            "  static constexpr OpTypesDomain kDomains[] = {"]
    out += [f'      {{"{d}", {v}}},' for d, v in sorted(newest.items())]
    out += ["  };", "  return kDomains;", "}", "", "}  // namespace kiln", ""]
    sys.stdout.write("\n".join(out))
    print(f"{len(newer)} op versions", file=sys.stderr)


if __name__ == "__main__":
    main()
