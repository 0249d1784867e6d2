"""Writes an MLIR module nested N levels deep in one way (KIND) to OUT:
    deep_module.py KIND N OUT
array [[[...]]], dict {a = {a = ...}}, tuple tuple<tuple<...>>, function
(i32) -> ((i32) -> (...)) (each '->' is no closing '>'), region module {
module {...}}, alias and type-alias chains (#a1 = [#a0], !t1 = tuple<!t0>),
set: arrays of affine sets whose '>=' close nothing; laughs and
laugh-locations: N attribute or location aliases each using the one before
twice (a billion laughs: 2^N once expanded); alias-uses, not deep: one alias
used N times."""
import sys

kind, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]


def attribute(value):
    return "module attributes {x.a = " + value + "} {\n}\n"


if kind == "array":
    text = attribute("[" * n + "]" * n)
elif kind == "dict":
    text = attribute("{a = " * n + "1" + "}" * n)
elif kind == "tuple":
    text = attribute("tuple<" * n + ">" * n)
elif kind == "function":
    text = attribute("(i32) -> (" * n + "i32" + ")" * n)
elif kind == "region":
    text = "module {\n" * n + "}\n" * n
elif kind == "alias":
    text = "#a0 = []\n" + "".join(f"#a{i} = [#a{i - 1}]\n" for i in range(1, n)) + \
        attribute(f"#a{n - 1}")
elif kind == "type-alias":
    text = "!t0 = tuple<>\n" + "".join(f"!t{i} = tuple<!t{i - 1}>\n" for i in range(1, n)) + \
        attribute(f"!t{n - 1}")
elif kind == "set":
    block = "[" * 100 + "affine_set<(d0) : (" + "d0 >= 0, " * 200 + "d0 >= 0)>, "
    text = attribute(block * (n // 100) + "1" + "]" * (n // 100 * 100))
elif kind == "alias-uses":
    # Not deep: one alias used N times in the module after it.
    text = "#a = [1]\n" + attribute("[" + ", ".join(["#a"] * n) + "]")
elif kind == "laughs":
    text = "#a0 = [1]\n" + "".join(f"#a{i} = [#a{i - 1}, #a{i - 1}]\n" for i in range(1, n)) + \
        attribute(f"#a{n - 1}")
elif kind == "laugh-locations":
    # Distinct callers and callees: a location fused of one twice is that one.
    text = ('module {\n  func.func @main(%x: tensor<4xf32> {graph.name = "x"}) -> (tensor<4xf32> '
            '{graph.name = "y"}) {\n    return %x : tensor<4xf32>\n  } loc(#l' + str(n - 1) +
            ')\n}\n#l0 = loc("a":1:1)\n#m0 = loc("b":1:1)\n' +
            "".join(f"#l{i} = loc(callsite(#l{i - 1} at #m{i - 1}))\n"
                    f"#m{i} = loc(callsite(#m{i - 1} at #l{i - 1}))\n" for i in range(1, n)))
else:
    sys.exit(f"unknown kind {kind}")
with open(out, "w") as f:
    f.write(text)
