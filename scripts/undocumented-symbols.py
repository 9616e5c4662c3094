#!/usr/bin/env python3
"""The public symbols of a module's symbol graph without a doc comment of
their own (what `make docs` holds to none). Members a protocol requires
and the module implements (`encode(to:)`, `description`, `==`, `hash(into:)`,
Codable's `init(from:)`, an enum's raw value initializer) take their
documentation from the protocol, as DocC shows them, and are not counted.

usage: undocumented-symbols.py SYMBOLS.json...   (prints one symbol a line; exit 1 if any)
"""
import json
import sys

INHERITED = {"encode(to:)", "init(from:)", "description", "debugDescription", "==(_:_:)", "hash(into:)", "hashValue",
             "init(rawValue:)", "rawValue", "init(stringLiteral:)", "init(stringValue:)", "init(intValue:)",
             "stringValue", "intValue", "errorDescription", "localizedDescription", "next()", "makeIterator()",
             "makeAsyncIterator()", "allCases", "id", "run()", "validate()", "configuration", "<(_:_:)",
             "callAsFunction(_:)", "random(in:using:)", "insert(_:)",
             "init(extendedGraphemeClusterLiteral:)", "init(unicodeScalarLiteral:)"}
missing = []
for path in sys.argv[1:]:
    graph = json.load(open(path))
    module = graph["module"]["name"]
    for symbol in graph["symbols"]:
        if symbol.get("accessLevel") not in ("public", "open"):
            continue
        name = symbol["names"]["title"]
        if symbol.get("docComment") or name in INHERITED:
            continue
        missing.append(module + "." + ".".join(symbol["pathComponents"]))
for name in sorted(set(missing)):
    print(name)
sys.exit(1 if missing else 0)
