"""Splice named tests from a target's test file into the base's (realtasks).

Usage: splice.py BASE TARGET NAME... ; writes the spliced file to stdout.
A NAME is a top-level function, class or assigned name ("test_x", "TestC",
"CASES"), or a method of a class ("TestC::test_m"). A definition the base
has is replaced by the target's; one it lacks is appended (a method at the
end of its class). The top-level imports the taken code needs and the base
lacks are added after the base's imports."""

import ast
import sys


def defs(body):
    for n in body:
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield n.name, n
        elif isinstance(n, ast.Assign):
            for t in n.targets:
                if isinstance(t, ast.Name):
                    yield t.id, n
        elif isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name):
            yield n.target.id, n


def find(mod, name):
    """(class node or None, node or None) for NAME."""
    parts = name.split("::")
    if len(parts) > 2:
        raise SystemExit(f"{name}: give a function, a class or Class::method")
    top = dict(defs(mod.body))
    if len(parts) == 1:
        return None, top.get(parts[0])
    cls = top.get(parts[0])
    if not isinstance(cls, ast.ClassDef):
        return None, None
    return cls, dict(defs(cls.body)).get(parts[1])


def span(n):
    start = min([d.lineno for d in getattr(n, "decorator_list", [])] + [n.lineno])
    return start - 1, n.end_lineno  # 0-based start, exclusive end


def bound(mod):
    names = set()
    for n in mod.body:
        if isinstance(n, (ast.Import, ast.ImportFrom)):
            for a in n.names:
                names.add((a.asname or a.name).split(".")[0])
        else:
            names.update(k for k, _ in defs([n]))
    return names


def main():
    base_path, target_path, names = sys.argv[1], sys.argv[2], sys.argv[3:]
    base_src = open(base_path, encoding="utf-8").read()
    target_src = open(target_path, encoding="utf-8").read()
    base, target = ast.parse(base_src), ast.parse(target_src)
    bl = base_src.splitlines(keepends=True)
    if bl and not bl[-1].endswith("\n"):
        bl[-1] += "\n"
    tl = target_src.splitlines(keepends=True)
    edits, taken = [], []  # (start, end, rank, order, lines)
    for name in names:
        tcls, tnode = find(target, name)
        if tnode is None:
            raise SystemExit(f"the target's file has no {name}")
        taken.append(tnode)
        s, e = span(tnode)
        text = tl[s:e]
        if text and not text[-1].endswith("\n"):
            text[-1] += "\n"
        bcls, bnode = find(base, name)
        if bnode is not None:
            bs, be = span(bnode)
            edits.append((bs, be, 0, len(edits), text))
        elif "::" in name:
            if bcls is None:
                raise SystemExit(f"the base's file has no class {name.split('::')[0]}: hold back the whole class")
            end = bcls.end_lineno
            edits.append((end, end, 0, len(edits), ["\n"] + text))
        else:
            edits.append((len(bl), len(bl), 1, len(edits), ["\n", "\n"] + text))
    # From the end of the file back; of two inserted at one place, the later
    # name first, so they end up in the order given, and what goes at the
    # end of the file after a method added to a class that ends there.
    edits.sort(key=lambda e: (e[0], e[1], e[2], e[3]), reverse=True)
    for s, e, _, _, text in edits:
        bl[s:e] = text
    # Imports the taken code uses that the base does not bind.
    have = bound(base)
    used = set()
    for n in taken:
        for x in ast.walk(n):
            if isinstance(x, ast.Name):
                used.add(x.id)
    add = []
    for n in target.body:
        if isinstance(n, ast.Import):
            keep = [a for a in n.names if (a.asname or a.name).split(".")[0] in used - have]
            if keep:
                add.append("import " + ", ".join(a.name + (f" as {a.asname}" if a.asname else "") for a in keep) + "\n")
                have.update((a.asname or a.name).split(".")[0] for a in keep)
        elif isinstance(n, ast.ImportFrom):
            keep = [a for a in n.names if (a.asname or a.name) in used - have]
            if keep:
                mod = "." * n.level + (n.module or "")
                add.append(f"from {mod} import " + ", ".join(a.name + (f" as {a.asname}" if a.asname else "") for a in keep) + "\n")
                have.update(a.asname or a.name for a in keep)
    if add:
        last = 0
        for n in base.body:
            if isinstance(n, (ast.Import, ast.ImportFrom)):
                last = n.end_lineno
        # Imports moved lines down only below them: the edits above are later in the file.
        bl[last:last] = add
    sys.stdout.write("".join(bl))


if __name__ == "__main__":
    main()
