#!/usr/bin/python3
"""Keeps the house so: every include of a kiln header points down the layers, and no hand-written
source file grows past ~600 lines unnoticed.

    scripts/check-layers.py [ROOT]

The layers and what each may use come from CMakeLists.txt's kiln_layer(...) lines (one source of
truth: a layer links the layers named after it, transitively). The link already fails on a wrong-way
call into a .cc file; a header-only include (an inline function, a struct) does not, so this reads
the includes of src/<layer>/**. Tests (*_test.cc, *_test_util.h) may include anything. Exits 1 on a
wrong-way include; files over the line budget are printed as warnings (exit 0).
"""
import pathlib
import re
import sys

MAX_LINES = 600
# Generated from the ONNX spec (tools/gen_op_types.py), not written by hand.
GENERATED = {"src/onnx/op_types_table.cc"}


def layers(root):
    deps = {}
    for m in re.finditer(r"^kiln_layer\((\w+)\s+([\w/]+)([^)]*)\)", (root / "CMakeLists.txt").read_text(), re.M):
        name, folder, rest = m.group(1), m.group(2), m.group(3)
        deps[name] = (folder, [d for d in rest.split() if d.startswith("kiln_")])
    folders = {name: folder for name, (folder, _) in deps.items()}

    def below(name, seen=None):
        seen = set() if seen is None else seen
        for d in deps[name][1]:
            if d not in seen:
                seen.add(d)
                below(d, seen)
        return seen

    allowed = {folders[n]: {folders[n]} | {folders[d] for d in below(n)} for n in deps}
    # The command line sits on top of every layer (it is the kiln executable, not a kiln_layer).
    allowed["cli"] = set(folders.values()) | {"cli"}
    return allowed


def layer_of(rel, allowed):
    """The layer a path under src/ belongs to: the longest layer folder it is in (artifact/format
    is a layer of its own inside artifact/)."""
    parts = rel.split("/")[:-1]
    for k in range(len(parts), 0, -1):
        folder = "/".join(parts[:k])
        if folder in allowed:
            return folder
    return parts[0] if parts else rel


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    allowed = layers(root)
    wrong, long_files = [], []
    for path in sorted((root / "src").rglob("*")):
        if path.suffix not in (".h", ".cc"):
            continue
        rel = path.relative_to(root).as_posix()
        layer = layer_of(path.relative_to(root / "src").as_posix(), allowed)
        text = path.read_text()
        lines = text.count("\n")
        if lines > MAX_LINES and rel not in GENERATED:
            long_files.append((lines, rel))
        if path.name.endswith("_test.cc") or path.name.endswith("_test_util.h") or layer not in allowed:
            continue
        for n, line in enumerate(text.splitlines(), 1):
            m = re.match(r'\s*#\s*include\s+"([^"]+)/[^"/]+"', line)
            target = layer_of(m.group(1) + "/x", allowed) if m else None
            if target in allowed and target not in allowed[layer]:
                wrong.append(f"{rel}:{n}: {layer} includes {target}/ (a layer above it)")
    # The Python package's binding (python/src) sits on top of every layer, like the command line;
    # nothing in src/ knows Python. Its files count against the line budget too.
    for path in sorted((root / "python" / "src").glob("*")) if (root / "python" / "src").is_dir() else []:
        if path.suffix not in (".h", ".cc"):
            continue
        lines = path.read_text().count("\n")
        if lines > MAX_LINES:
            long_files.append((lines, path.relative_to(root).as_posix()))
    for path in sorted((root / "src").rglob("*")):
        if path.suffix in (".h", ".cc") and re.search(r'#\s*include\s+[<"](pybind11|Python\.h|python/)',
                                                       path.read_text()):
            wrong.append(f"{path.relative_to(root).as_posix()}: src/ includes Python (only python/src may)")
    for w in wrong:
        print(w)
    for lines, rel in sorted(long_files, reverse=True):
        print(f"warning: {rel} has {lines} lines (over {MAX_LINES}: worth splitting by concern)")
    print(f"check-layers: {len(wrong)} wrong-way includes, {len(long_files)} files over {MAX_LINES} lines")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
