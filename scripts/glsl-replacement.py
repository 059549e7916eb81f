#!/usr/bin/env python3
# Turns the GLSL rendering of a lowered node (dump_shaders_path writes graph<N>_<node>_<index>.glsl) into a module that
# replace_shaders_path accepts (docs/debugging.md, "Edit the GLSL instead"):
#   python3 scripts/glsl-replacement.py DUMP.glsl OUT.lowered.spv [--glslang PATH] [--fixed OUT.comp] [--entry-point NAME]
# Edit a copy of the .glsl first if you like; the fixes below are idempotent. OUT is named as the dump's .lowered.spv so
# that a folder of them is a replacement folder. The script exits non-zero, with glslang's message, where the source does
# not compile.
#
# SPIRV-Cross (Debian bookworm's) renders lowered nodes as GLSL that glslang does not take as it is:
#   * a record struct that is also the pointee of a buffer reference is declared twice under one name, as a plain struct
#     and as a buffer_reference block: the struct is renamed where it is a member's type (rename_clashing_structs);
#   * atomics through a buffer reference are written on the reference itself, atomicAdd(uintPointer(address), v): the
#     member `.value` is added;
#   * 64-bit atomics (the half's merged heap and record counters) need GL_EXT_shader_atomic_int64;
#   * an empty record's buffer_reference block has no member, which GLSL does not allow: it gets an unused one.
# The SPIR-V glslang writes for Vulkan 1.3 states the workgroup size as LocalSizeId, which the layer checks like LocalSize.
import argparse
import os
import re
import struct
import subprocess
import sys


def rename_clashing_structs(source):
    """A struct SPIRV-Cross also declares as a buffer_reference block under the same name becomes NAME_value: as the type
    of a member in a struct or block body (records inside an output's record array, say) it is the struct's value; every
    other use (casts of addresses, variables) is the block's reference, as the lowering keeps addresses in integers."""
    for name in set(re.findall(r"\bbuffer\s+(\w+)\s*\{", source)):
        struct_declaration = re.compile(r"(?m)^struct %s\n\{" % re.escape(name))
        if not struct_declaration.search(source):
            continue
        source = struct_declaration.sub("struct %s_value\n{" % name, source)
        member = re.compile(r"(?m)^(\s+)%s(\s+\w+(?:\[\w*\])*;)$" % re.escape(name))
        body = re.compile(r"(?ms)^((?:layout\([^)]*\)\s+)?(?:struct|buffer|uniform)\s+\w+\n\{\n)(.*?)(^\}[^\n]*;)")
        source = body.sub(lambda m: m.group(1) + member.sub(r"\1%s_value\2" % name, m.group(2)) + m.group(3), source)
    return source


def fill_empty_blocks(source):
    """An empty record (an entry node's input without members) is an empty buffer_reference block, which GLSL does not
    allow: it gets the member SPIRV-Cross gives the empty plain struct, which nothing reads."""
    return re.sub(r"(?m)^(layout\([^)]*\)\s+buffer\s+\w+\n\{\n)(\};)", r"\1    int empty_struct_member;\n\2", source)


def add_value_to_reference_atomics(source):
    pattern = re.compile(r"\batomic\w+\(\s*(\w+Pointer)\(")
    out, at = [], 0
    while True:
        match = pattern.search(source, at)
        if match is None:
            out.append(source[at:])
            return "".join(out)
        end, depth = match.end(), 1
        while depth:  # the reference constructor's closing parenthesis
            if end >= len(source):
                raise ValueError("unbalanced parentheses after %s" % match.group(0))
            depth += {"(": 1, ")": -1}.get(source[end], 0)
            end += 1
        out.append(source[at:end])
        if not source.startswith(".value", end):
            out.append(".value")
        at = end


def require_int64_atomics(source):
    extension = "#extension GL_EXT_shader_atomic_int64 : require"
    if extension in source or not re.search(r"\batomic\w+\(\s*u?int64_tPointer\(", source):
        return source
    return re.sub(r"(?m)^(#extension GL_EXT_buffer_reference : require)$", r"\1\n" + extension, source, count=1)


def read_words(spv_path):
    with open(spv_path, "rb") as f:
        data = f.read()
    return list(struct.unpack("<%dI" % (len(data) // 4), data[: len(data) // 4 * 4]))


def find_entry_point(words):
    """(position, word count, name, words the name takes) of the first GLCompute OpEntryPoint, or None."""
    at = 5  # after the header
    while at < len(words):
        count, opcode = words[at] >> 16, words[at] & 0xFFFF
        if count == 0:
            return None
        if opcode == 15 and count > 3 and words[at + 1] == 5:  # OpEntryPoint GLCompute %id "name" interface...
            raw = b"".join(struct.pack("<I", w) for w in words[at + 3 : at + count]).split(b"\0", 1)[0]
            return at, count, raw.decode(), len(raw) // 4 + 1  # the string, its terminating zero and padding
        at += count
    return None


def entry_point_of(spv_path):
    try:
        found = find_entry_point(read_words(spv_path))
    except OSError:
        return None
    return found[2] if found else None


def rename_entry_point(spv_path, name):
    """Renames the GLCompute OpEntryPoint of a SPIR-V file (glslang's main) in place."""
    words = read_words(spv_path)
    found = find_entry_point(words)
    if found is None:
        return False
    at, count, _, name_words = found
    encoded = name.encode() + b"\0" * (4 - len(name.encode()) % 4)
    new_name = list(struct.unpack("<%dI" % (len(encoded) // 4), encoded))
    interface = words[at + 3 + name_words : at + count]
    words[at : at + count] = [((3 + len(new_name) + len(interface)) << 16) | 15, words[at + 1], words[at + 2]] + new_name + interface
    with open(spv_path, "wb") as f:
        f.write(struct.pack("<%dI" % len(words), *words))
    return True


def fix(source):
    return add_value_to_reference_atomics(require_int64_atomics(rename_clashing_structs(fill_empty_blocks(source))))


def main():
    parser = argparse.ArgumentParser(description="Compiles a lowered node's GLSL dump into a replace_shaders_path module.")
    parser.add_argument("glsl", help="a .glsl file from dump_shaders_path (edited or not)")
    parser.add_argument("output", help="the .lowered.spv to write")
    parser.add_argument("--glslang", default="glslangValidator", help="glslangValidator to compile with")
    parser.add_argument("--fixed", help="also write the fixed GLSL here")
    parser.add_argument("--entry-point", help="the lowered module's entry point name (default: the one of the .lowered.spv "
                        "beside the .glsl, else main)")
    args = parser.parse_args()
    with open(args.glsl) as f:
        source = fix(f.read())
    fixed_path = args.fixed or args.output + ".comp"
    with open(fixed_path, "w") as f:
        f.write(source)
    # The layer looks the node's entry point up by its original name; GLSL's is main.
    sibling = re.sub(r"\.glsl$", "", args.glsl) + ".lowered.spv"
    entry_point = args.entry_point or entry_point_of(sibling) or "main"
    command = [args.glslang, "-V", "--target-env", "vulkan1.3", "-S", "comp", "-o", args.output, fixed_path]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        sys.stderr.write(result.stdout + result.stderr)
        sys.stderr.write("glsl-replacement: %s does not compile (fixed source in %s)\n" % (args.glsl, fixed_path))
        return 1
    # glslang's -e/--source-entrypoint would clash with the node's own function, which SPIRV-Cross names after it.
    if entry_point != "main" and not rename_entry_point(args.output, entry_point):
        sys.stderr.write("glsl-replacement: %s has no GLCompute entry point to rename\n" % args.output)
        return 1
    if not args.fixed:
        os.remove(fixed_path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
