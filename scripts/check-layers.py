#!/usr/bin/python3
"""Keeps the house so: every include of a kiln header points down the layers, the runtime (what
kiln-run links) includes no protobuf, libonnx or optimizer, and no hand-written source file grows
past ~600 lines unnoticed.

    scripts/check-layers.py [ROOT]

The layers and what each may use come from CMakeLists.txt's kiln_layer(...) lines (one source of
truth: a layer links the layers named after it, transitively). The link already fails on a wrong-way
call into a .cc file; a header-only include (an inline function, a struct) does not, so this reads
the includes of src/<layer>/**. Tests (*_test.cc, *_test_util.h) may include anything.

The runtime is kiln_artifact_load and the layers below it, plus the sources kiln-run's
add_executable names: none of their files may include onnx/, opt/ or frontend/ headers, libonnx's
<onnx/...> or protobuf's <google/protobuf/...>, and none of those layers may link kiln_onnx,
kiln_opt, kiln_frontend, libonnx or protobuf (ctest runtime_links_no_protobuf checks the binary).

Exits 1 on a wrong-way include or a runtime rule broken; files over the line budget are printed as
warnings (exit 0).
"""
import pathlib
import re
import sys

MAX_LINES = 600
# Generated from the ONNX spec and libonnx's registry (tools/gen_op_types.py), not written by hand.
GENERATED = {"src/spec/op_types_table.cc", "src/spec/op_types_libonnx.cc"}
# The runtime's top layer (what kiln-run links), and what none of the runtime may include or link.
RUNTIME_TOP = "kiln_artifact_load"
RUNTIME_FORBIDDEN_INCLUDE = re.compile(r'#\s*include\s+(?:"(?:onnx|opt|frontend)/|<onnx/|<google/protobuf/)')
RUNTIME_FORBIDDEN_LINK = {"kiln_onnx", "kiln_opt", "kiln_frontend", "onnx", "onnx_proto", "protobuf::libprotobuf"}


def kiln_layers(root):
    """name -> (folder, every library it links)."""
    out = {}
    for m in re.finditer(r"^kiln_layer\((\w+)\s+([\w/]+)([^)]*)\)", (root / "CMakeLists.txt").read_text(), re.M):
        out[m.group(1)] = (m.group(2), m.group(3).split())
    return out


def below(deps, name, seen=None):
    seen = set() if seen is None else seen
    for d in deps[name][1]:
        if d not in seen:
            seen.add(d)
            below(deps, d, seen)
    return seen


def layers(root):
    deps = {name: (folder, [d for d in libs if d.startswith("kiln_")])
            for name, (folder, libs) in kiln_layers(root).items()}
    folders = {name: folder for name, (folder, _) in deps.items()}
    allowed = {folders[n]: {folders[n]} | {folders[d] for d in below(deps, n)} for n in deps}
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


def runtime_rules(root):
    """The runtime's broken rules: includes of onnx/, opt/, frontend/, libonnx or protobuf in its
    files, and links of those libraries by its layers."""
    all_layers = kiln_layers(root)
    if RUNTIME_TOP not in all_layers:
        return [f"CMakeLists.txt: no kiln_layer({RUNTIME_TOP} ...): the runtime's top layer is missing"]
    kiln_deps = {n: (f, [d for d in libs if d.startswith("kiln_")]) for n, (f, libs) in all_layers.items()}
    names = {RUNTIME_TOP} | below(kiln_deps, RUNTIME_TOP)
    broken = [f"CMakeLists.txt: {n} (the runtime) links {lib}"
              for n in sorted(names) for lib in all_layers[n][1] if lib in RUNTIME_FORBIDDEN_LINK]
    files = []
    for n in sorted(names):
        files += [p for p in sorted((root / "src" / all_layers[n][0]).rglob("*"))
                  if p.suffix in (".h", ".cc") and not p.name.endswith(("_test.cc", "_test_util.h"))
                  and not any(root / "src" / all_layers[o][0] in p.parents and len(all_layers[o][0]) > len(all_layers[n][0])
                              for o in all_layers if o not in names)]
    m = re.search(r"add_executable\(kiln-run\s([^)]*)\)", (root / "CMakeLists.txt").read_text())
    if not m:
        broken.append("CMakeLists.txt: no add_executable(kiln-run ...)")
    else:
        for src in m.group(1).split():
            p = root / src.replace("${CMAKE_SOURCE_DIR}/", "")
            files += [p] + ([p.with_suffix(".h")] if p.with_suffix(".h").exists() else [])
    for p in files:
        for n, line in enumerate(p.read_text().splitlines(), 1):
            if RUNTIME_FORBIDDEN_INCLUDE.match(line.strip()):
                broken.append(f"{p.relative_to(root).as_posix()}:{n}: the runtime (what kiln-run links) "
                              f"includes {line.strip().split()[-1]} (onnx/, opt/, frontend/, libonnx and "
                              "protobuf are above it)")
    return broken


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
    wrong += runtime_rules(root)
    for w in wrong:
        print(w)
    for lines, rel in sorted(long_files, reverse=True):
        print(f"warning: {rel} has {lines} lines (over {MAX_LINES}: worth splitting by concern)")
    print(f"check-layers: {len(wrong)} wrong-way includes, {len(long_files)} files over {MAX_LINES} lines")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
