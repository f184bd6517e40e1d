"""Checks that docs/ScheduleFormat.md documents exactly the ops (and fields)
of the op table, runtime/include/zero/runtime/OpSet.def: the one list the
decoder, the backends and the emitter read."""
import re
import sys

root = sys.argv[1]
table = open(root + "/runtime/include/zero/runtime/OpSet.def").read()
doc = open(root + "/docs/ScheduleFormat.md").read()

# ZERO_OP(Code, "name", Placement, (arity), fields...), a field optional(Name)
# where it may be left out
ops = re.findall(
    r'ZERO_OP\(\w+, "([\w.]+)", (\w+), \([\w, ]+\)'
    r'((?:,\s*(?:optional\(\w+\)|\w+))*)\)', table)
if len(ops) != table.count("\nZERO_OP("):
    print("error: %d ZERO_OP lines, %d read" % (table.count("\nZERO_OP("), len(ops)))
    sys.exit(1)
# The compute-op table of the doc: its first column, `op` or `a`, `b`.
section = doc[doc.index("### Compute ops"):doc.index("### Collectives")]
rows = re.findall(r"^\| (.+?) \| (.*?) \|", section, re.M)
documented = {}
for first, fields in rows:
    for name in re.findall(r"`([\w.]+)`", first):
        documented[name] = fields
scalar = section[section.index("Scalar ops:"):]
scalar_names = set()
for prefix, group in re.findall(r"`(arith|math)\.(\w+)", scalar):
    scalar_names.add(prefix + "." + group)
# Bare names continue the last dialect named: `addf subf ...`.
dialect = "arith"
for token in re.findall(r"`([^`]+)`", scalar):
    words = token.split()
    if words and "." in words[0]:
        dialect = words[0].split(".")[0]
        words[0] = words[0].split(".")[1]
    for word in words:
        if re.fullmatch(r"[a-z_0-9]+", word):
            scalar_names.add(dialect + "." + word)

errors = []
for name, placement, fields in ops:
    field_names = [f.strip() for f in fields.split(",") if f.strip()]
    if placement == "Scalar":
        if name not in scalar_names:
            errors.append("scalar op %s is not in the doc's scalar ops" % name)
    elif placement in ("Compute", "Sync"):
        if name not in documented:
            errors.append("%s is not in the doc's compute-op table" % name)
    elif placement == "Body":
        if "`%s`" % name not in section:
            errors.append("body op %s is not documented" % name)
    elif placement == "Comm":
        if '`%s`' % name not in doc[doc.index("### Collectives"):]:
            errors.append("collective %s is not documented" % name)
for name in documented:
    if name not in [op[0] for op in ops] and not name.startswith(("arith.", "math.")):
        errors.append("the doc lists %s, which the op table lacks" % name)
for error in errors:
    print("error: " + error)
print("%d ops, %d errors" % (len(ops), len(errors)))
sys.exit(1 if errors else 0)
