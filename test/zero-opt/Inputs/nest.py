#!/usr/bin/python3
"""Writes MLIR nested DEPTH levels deep, of one KIND, to stdout:
  attribute  a function attribute [[[...]]]
  type       a function argument of type tensor<tensor<...<f32>...>>
  struct     a function argument of type !llvm.struct<(struct<(...)>)>
  region     scf.execute_region inside scf.execute_region, one per line
  generic    generic-form unregistered ops, "test.op"() ({ ... })
  strings    DEPTH brackets in a comment and in a string, and DEPTH
             arrows (->) inside '<' that do not close it
The k-th opening bracket of the nesting is at column K_COLUMN + k (of the
kind's first line of brackets), so that tests can name where the limit is
passed.
"""

import sys


def main():
    kind, depth = sys.argv[1], int(sys.argv[2])
    out = sys.stdout
    if kind == "attribute":
        out.write("func.func @f() attributes {deep = " + "[" * depth +
                  "]" * depth + "} {\n  return\n}\n")
    elif kind == "type":
        out.write("func.func @f(%a: " + "tensor<" * depth + "f32" +
                  ">" * depth + ") {\n  return\n}\n")
    elif kind == "struct":
        out.write("func.func @f(%a: !llvm.struct<(" +
                  "struct<(" * depth + "i32" + ")>" * depth +
                  ")>) {\n  return\n}\n")
    elif kind == "region":
        out.write("func.func @f() {\n")
        out.write("scf.execute_region {\n" * depth)
        out.write("scf.yield\n}\n" * depth)
        out.write("return\n}\n")
    elif kind == "generic":
        out.write('"test.op"() ({\n' * depth)
        out.write('"test.end"() : () -> ()\n}) : () -> ()\n' * depth)
    elif kind == "strings":
        out.write("// " + "[<({" * depth + "\n")
        out.write("func.func @f(%a: i32) -> i32 attributes {s = \"" +
                  "{[(<\\\"" * depth + "\"} {\n")
        out.write("  %b = scf.execute_region -> i32 {\n" +
                  "    scf.yield %a : i32\n  }\n")
        out.write("  return %b : i32\n}\n")
        out.write("func.func private @g(" + ", ".join(
            ["memref<4xf32, affine_map<(d0) -> (d0 + 1)>>"] * depth) + ")\n")
    else:
        sys.exit("nest.py: unknown kind " + kind)


if __name__ == "__main__":
    main()
