# Prints the units (functions, classes, methods) of Python source as JSON, or
# where it does not parse. Input on stdin: {"src": "..."}. Run by splice's
# runPython with lemmings' own python3, isolated (-I -S -B).
import ast, json, sys

def units(body, prefix, lines, out):
    for n in body:
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            start = min([n.lineno] + [d.lineno for d in n.decorator_list])
            line = lines[start - 1] if start - 1 < len(lines) else ""
            kind = "class" if isinstance(n, ast.ClassDef) else ("method" if prefix else "def")
            out.append({"kind": kind, "name": prefix + n.name, "start": start, "end": n.end_lineno,
                        "sig": n.lineno, "indent": line[:len(line) - len(line.lstrip())]})
            if isinstance(n, ast.ClassDef):
                units(n.body, prefix + n.name + ".", lines, out)

def main():
    src = json.load(sys.stdin)["src"]
    try:
        tree = ast.parse(src)
    except SyntaxError as e:
        print(json.dumps({"ok": False, "line": e.lineno or 0, "col": e.offset or 0, "msg": e.msg}))
        return
    out = []
    units(tree.body, "", src.splitlines(), out)
    print(json.dumps({"ok": True, "units": out}))

main()
