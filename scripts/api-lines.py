#!/usr/bin/env python3
"""Prints the public API of one module as sorted lines, from the symbol graphs of `swift package dump-symbol-graph`.

    python3 scripts/api-lines.py MODULE SYMBOL_GRAPH_DIR

Run by scripts/api.sh, which describes the record. Reads MODULE.symbols.json and MODULE@*.symbols.json (the
module's extensions of other modules' types), extracted with `--minimum-access-level internal` so that public
declarations whose names start with `_` are there too (the symbol graph hides them at the public level, but code
outside the module can use them). Keeps the declarations that are public or open and whose enclosing types are
too: no `package`, internal or `@usableFromInline` declaration is API.

One line per declaration, `Container | declaration`:

- the container is the enclosing type's path (`Store`, `Middlewares.LogRecord`), the module's name for a top-level
  declaration, the other module's type for an extension of it (`Swift.Duration`), `extension Protocol` for a
  member of a protocol's extension (a requirement's container is the protocol), followed by `(where ...)` when the
  declaration sits in an extension with constraints of its own;
- the declaration is the compiler's text of it (attributes, generic parameters and `where` clause, default
  argument values, effects), without doc comments or source locations, prefixed with `open` for an open one,
  `@_spi` for one behind SPI (the symbol graph does not say which group), and its `@available` attributes;
- a type's conformances are lines `Type | conforms to Module.Protocol (where ...)`, a class's superclass
  `Type | inherits from ...`. The conformances that every type has or that another implies (`Copyable`,
  `Escapable`, `SendableMetatype`) are left out. (The symbol graph does not say whether a type suppresses
  `Copyable`: a change to `~Copyable` has to be seen in review.)

Lines are ordered by the declaration's path and then by text, so that a type's members follow it; the same symbol
graphs give the same bytes.
"""

import glob
import json
import os
import re
import subprocess
import sys

# Conformances that every type has unless it suppresses them (`Copyable`, `Escapable`), or that `Sendable` implies
# (`SendableMetatype`).
IMPLIED_CONFORMANCES = {"s:s8CopyableP", "s:s9EscapableP", "s:s16SendableMetatypeP"}
PUBLIC = {"public", "open"}
# Relationships that make a symbol part of another: a member, or a requirement of a protocol.
MEMBERSHIP = {"memberOf", "requirementOf", "optionalRequirementOf"}


def load(module, directory):
    paths = [os.path.join(directory, f"{module}.symbols.json")]
    if not os.path.isfile(paths[0]):
        sys.exit(f"api-lines: no symbol graph for {module} in {directory}")
    paths += sorted(glob.glob(os.path.join(glob.escape(directory), f"{module}@*.symbols.json")))
    symbols, relationships = {}, []
    for path in paths:
        with open(path, encoding="utf-8") as file:
            graph = json.load(file)
        for symbol in graph["symbols"]:
            symbols[symbol["identifier"]["precise"]] = symbol
        relationships += graph["relationships"]
    return symbols, relationships


def text(fragments):
    """The declaration's text on one line."""
    return re.sub(r"\s*\n\s*", " ", "".join(fragment["spelling"] for fragment in fragments)).strip()


def demangle(identifier):
    """`Swift.Int` for the type `s:Si`, when no relationship names it; the identifier itself if that fails."""
    if not identifier.startswith("s:"):
        return identifier
    try:
        result = subprocess.run(
            ["swift", "demangle", "--compact", "$s" + identifier[2:] + "D"],
            capture_output=True, text=True, check=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return identifier
    name = result.stdout.strip()
    return name if name and not name.startswith("$") else identifier


def constraint(item):
    operator = " == " if item["kind"] == "sameType" else " : "
    return item["lhs"] + operator + item["rhs"]


def where(constraints):
    # `Copyable` and `Escapable` constraints are implicit: the symbol graph spells them out on some conformances.
    shown = sorted(constraint(item) for item in constraints if item.get("rhsPrecise") not in IMPLIED_CONFORMANCES)
    return f" (where {', '.join(shown)})" if shown else ""


def version(value):
    return ".".join(str(value[key]) for key in ("major", "minor", "patch") if key in value)


def availability(symbol):
    attributes = []
    for item in symbol.get("availability", []):
        parts = [item.get("domain", "*")]
        for key in ("introduced", "deprecated", "obsoleted"):
            if key in item:
                parts.append(f"{key}: {version(item[key])}")
        if item.get("isUnconditionallyDeprecated"):
            parts.append("deprecated")
        if item.get("isUnconditionallyUnavailable"):
            parts.append("unavailable")
        for key in ("renamed", "message"):
            if key in item:
                parts.append(f"{key}: {json.dumps(item[key], ensure_ascii=False)}")
        attributes.append(f"@available({', '.join(parts)})")
    return sorted(attributes)


def main():
    module, directory = sys.argv[1], sys.argv[2]
    symbols, relationships = load(module, directory)

    # Other modules' symbols by name, as relationships name them.
    names = {}
    for relationship in relationships:
        for end in ("source", "target"):
            if relationship.get(end + "Fallback"):
                names.setdefault(relationship[end], relationship[end + "Fallback"])

    parent, requirements = {}, set()
    for relationship in relationships:
        if relationship["kind"] in MEMBERSHIP and relationship["source"] in symbols:
            parent.setdefault(relationship["source"], relationship["target"])
            if relationship["kind"] != "memberOf":
                requirements.add(relationship["source"])

    def is_api(identifier):
        """Public or open, and so is every enclosing declaration of this module."""
        while identifier in symbols:
            if symbols[identifier]["accessLevel"] not in PUBLIC:
                return False
            identifier = parent.get(identifier)
        return True

    def container(symbol):
        path = symbol["pathComponents"][:-1]
        extension = symbol.get("swiftExtension", {})
        extended_module = extension.get("extendedModule", module)
        if not path:
            return module
        name = ".".join(path)
        if extended_module != module:
            name = f"{extended_module}.{name}"
        # A protocol's extension members (default implementations and others) are not its requirements.
        if extension.get("typeKind") == "swift.protocol" and symbol["identifier"]["precise"] not in requirements:
            name = f"extension {name}"
        return name

    def extension_constraints(symbol):
        """The constraints of the extension that holds `symbol`, less those of the type it extends."""
        constraints = symbol.get("swiftExtension", {}).get("constraints", [])
        owner = symbols.get(parent.get(symbol["identifier"]["precise"]), {})
        own = {constraint(item) for item in owner.get("swiftGenerics", {}).get("constraints", [])}
        return [item for item in constraints if constraint(item) not in own]

    def type_name(identifier, fallback):
        if identifier in symbols:
            return ".".join(symbols[identifier]["pathComponents"]) if is_api(identifier) else None
        return fallback or names.get(identifier) or demangle(identifier)

    entries = []
    for identifier, symbol in symbols.items():
        if not is_api(identifier):
            continue
        prefixes = availability(symbol)
        if symbol.get("spi"):
            prefixes.append("@_spi")
        if symbol["accessLevel"] == "open":
            prefixes.append("open")
        declaration = " ".join(prefixes + [text(symbol["declarationFragments"])])
        holder = container(symbol) + where(extension_constraints(symbol))
        entries.append((symbol["pathComponents"], f"{holder} | {declaration}"))

    for relationship in relationships:
        kind = relationship["kind"]
        if kind not in ("conformsTo", "inheritsFrom") or relationship["target"] in IMPLIED_CONFORMANCES:
            continue
        source = relationship["source"]
        if source in symbols:
            if not is_api(source):
                continue
            path = symbols[source]["pathComponents"]
        else:  # an extension of another module's type: ordered with its members, whose paths omit the module
            name = type_name(source, relationship.get("sourceFallback"))
            path = name.split(".")[1:] if "." in name else [name]
        target = type_name(relationship["target"], relationship.get("targetFallback"))
        if target is None:  # a conformance to a protocol that is not API
            continue
        verb = "conforms to" if kind == "conformsTo" else "inherits from"
        subject = ".".join(path) if source in symbols else name
        line = f"{subject} | {verb} {target}{where(relationship.get('swiftConstraints', []))}"
        # Right after the type's own line, before its members.
        entries.append((path + [""], line))

    for _, line in sorted(set((tuple(path), line) for path, line in entries)):
        print(line)


if __name__ == "__main__":
    main()
