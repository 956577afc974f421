#!/usr/bin/env python3
"""Generates do-nothing subclasses of TensorRT implementation interfaces for test fakes.

Run at configure time against the TensorRT headers found (never stored in the repository):
for each requested class, every pure virtual `... = 0;` gets an override that returns a
value-initialized result (references abort: the fakes never call them). The fakes in
fake_full_*.cc derive from these stubs and override only what the backend calls.

usage: gen_stubs.py <include dir> <output .h> <header>,<namespace>,<Class> [...]
Exit status 2 when a class is not found or a declaration cannot be parsed: the caller then
skips the end-to-end fake test instead of failing the build.
"""
import re
import sys


def class_body(text, name):
    m = re.search(r"^class %s\b[^{;]*\{" % re.escape(name), text, re.M)
    if not m:
        raise ValueError("class %s not found" % name)
    depth, i = 1, m.end()
    while depth and i < len(text):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        i += 1
    return text[m.end():i - 1]


DECL = re.compile(
    r"virtual\s+(?P<ret>[\w:<>,\s\*&]+?)\s*(?P<name>\b\w+)\s*\((?P<params>.*)\)\s*(?P<const>const)?\s*(?P<noexcept>noexcept)?\s*=\s*0$",
    re.S)


def stubs(body, cls):
    body = re.sub(r"//[^\n]*", "", body)
    body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
    if re.search(r"^\s*#", body, re.M):
        raise ValueError("%s: preprocessor lines inside the class body" % cls)
    out = []
    for chunk in body.split(";"):
        chunk = " ".join(chunk.split())
        chunk = re.sub(r"^(public|protected|private):\s*", "", chunk)
        # Attribute macros before "virtual": TRT_DEPRECATED, TRT_NODISCARD, TRT_DEPRECATED_BECAUSE(...)
        chunk = re.sub(r"^(?:TRT_\w+(?:\([^)]*\))?\s+)+", "", chunk)
        if not chunk.endswith("= 0"):
            continue
        if not chunk.startswith("virtual"):
            raise ValueError("%s: unexpected pure declaration: %s" % (cls, chunk))
        m = DECL.match(chunk)
        if not m:
            raise ValueError("%s: cannot parse: %s" % (cls, chunk))
        ret = m.group("ret").strip()
        # Default arguments are not repeated in overrides.
        params = re.sub(r"\s*=\s*[^,()]+(?=,|$)", "", m.group("params"))
        const = " const" if m.group("const") else ""
        noexcept = " noexcept" if m.group("noexcept") else ""
        out.append("    %s %s(%s)%s%s override { return ::tbs_fake_stub::none<%s>(); }"
                   % (ret, m.group("name"), params, const, noexcept, ret))
    if not out:
        raise ValueError("%s: no pure virtual functions found" % cls)
    return out


def main(argv):
    include, output, specs = argv[1], argv[2], argv[3:]
    lines = [
        "// GENERATED at configure time by native/test/trt/gen_stubs.py from the TensorRT headers",
        "// in %s. Test-only; never committed." % include,
        "#pragma once",
        "#include <cstdlib>",
        "#include <type_traits>",
        "#include <NvInfer.h>",
        "#include <NvOnnxParser.h>",
        "namespace tbs_fake_stub {",
        "template <class T> T none() {",
        "  if constexpr (std::is_void_v<T>) return;",
        "  else if constexpr (std::is_reference_v<T>) std::abort();",
        "  else return T{};",
        "}",
        "}  // namespace tbs_fake_stub",
        "#pragma GCC diagnostic push",
        '#pragma GCC diagnostic ignored "-Wunused-parameter"',
        '#pragma GCC diagnostic ignored "-Wdeprecated-declarations"',
    ]
    try:
        for spec in specs:
            header, ns, cls = spec.split(",")
            with open("%s/%s" % (include, header)) as f:
                text = f.read()
            lines.append("namespace %s {" % ns.replace("::", " { namespace ") + "")
            lines.append("class Stub%s : public %s {" % (cls, cls))
            lines.append(" public:")
            lines.extend(stubs(class_body(text, cls), cls))
            lines.append("};")
            lines.append("}" * (ns.count("::") + 1) + "  // namespace %s" % ns)
    except (ValueError, OSError) as e:
        sys.stderr.write("gen_stubs.py: %s\n" % e)
        return 2
    lines.append("#pragma GCC diagnostic pop")
    with open(output, "w") as f:
        f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
