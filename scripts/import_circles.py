"""Import circles among the engine's modules: the strongly connected groups (Tarjan) of
the graph of every import, top-level or inside a function ("from pkg import mod" counts
as importing mod; a package's own __init__, loaded before any of its modules, does not).

    python scripts/import_circles.py [REPO_ROOT]
"""
import ast
import os
import sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
mods = {}
for dp, _, fs in os.walk(os.path.join(root, "engine")):
    for f in fs:
        if f.endswith(".py"):
            path = os.path.join(dp, f)
            rel = os.path.relpath(path, root)[:-3].replace(os.sep, ".")
            if rel.endswith(".__init__"):
                rel = rel[:-9]
            mods[rel] = path
graph = {m: set() for m in mods}
for m, path in mods.items():
    tree = ast.parse(open(path).read())
    pkg = m if path.endswith("__init__.py") else m.rpartition(".")[0]
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = pkg.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1] + ([base] if base else []))
            # "from pkg import mod" imports mod (pkg, an ancestor, is loaded first anyway);
            # "from mod import name" imports mod
            names = [base + "." + a.name if base + "." + a.name in mods else base
                     for a in node.names]
        for n in names:
            while n and n not in mods:
                n = n.rpartition(".")[0]
            if n and n != m:
                graph[m].add(n)
index, low, stack, on, sccs, i = {}, {}, [], set(), [], [0]

sys.setrecursionlimit(10000)
def visit(v):
    index[v] = low[v] = i[0]; i[0] += 1; stack.append(v); on.add(v)
    for w in graph[v]:
        if w not in index:
            visit(w); low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        comp = []
        while True:
            w = stack.pop(); on.discard(w); comp.append(w)
            if w == v: break
        if len(comp) > 1:
            sccs.append(sorted(comp))
for v in graph:
    if v not in index:
        visit(v)
for c in sccs:
    print(len(c), c)
print("circles (strongly connected groups):", len(sccs))
