"""peers_ast.py - the ground truth of benches/peers.py, read from the files themselves with
Python's `ast` (no language server involved).

- `Project(root)` parses every .py file under root and knows each module's top-level bindings.
- `Project.binds(module, name)` is the definition a module-level name binds to: a `def`/`class`
  in the module, or, through `from X import name` (relative or absolute, X in the project),
  the definition in X. A name bound more than once at module level (conditional defs, try/except
  imports), or bound to something else (an assignment, an outside module), binds to nothing we
  can check, and is left out.
- `Project.call_sites()`: every call `f(...)` whose `f` is such a name, not shadowed by the
  enclosing function(s), on an ASCII line (so a column is the same in bytes, code points and
  UTF-16), with the definition it must land on.
- `Project.reference_targets()`: module-level functions and classes whose name is defined once in
  the whole project and is only ever used as a bare name or imported by that name (never an
  attribute, a parameter, a keyword, an alias, another binding), and that every module using it
  binds at top level to that definition (no same-spelled name from outside, no star import): for
  those every occurrence in the code is a true reference, listed by position (def, imports, loads).
- `pick(items, n, seed)`: a seeded, deterministic sample.

Positions are (path relative to root, 1-based line, 1-based column).
"""
import ast
import random
from dataclasses import dataclass
from pathlib import Path

SKIP_DIRS = {".git", "node_modules", "__pycache__", ".venv", "venv", "build", "dist"}


@dataclass(frozen=True, order=True)
class Pos:
    path: str
    line: int
    col: int


@dataclass(frozen=True)
class Definition:
    """A `def` or `class`: where its name is, and the lines of its code (decorators included)."""
    name: str
    at: Pos  # the name in `def name` / `class name`
    first_line: int  # first decorator, else the `def`/`class` line
    last_line: int


@dataclass(frozen=True)
class CallSite:
    at: Pos  # the called name
    name: str
    target: Definition


class Module:
    def __init__(self, root: Path, path: Path):
        self.rel = path.relative_to(root).as_posix()
        self.text = path.read_text(encoding="utf-8")
        self.lines = self.text.split("\n")
        self.tree = ast.parse(self.text, filename=self.rel)
        parts = self.rel[:-3].split("/")
        self.is_package = parts[-1] == "__init__"
        if self.is_package:
            parts = parts[:-1]
        self.name = ".".join(parts)
        self.bindings: dict[str, list[ast.AST]] = {}
        for node in top_level_statements(self.tree.body):
            for name, binder in bound_names(node):
                self.bindings.setdefault(name, []).append(binder)

    def package(self) -> str:
        return self.name if self.is_package else self.name.rpartition(".")[0]

    def definition(self, node) -> Definition:
        line = self.lines[node.lineno - 1]
        kw = "class" if isinstance(node, ast.ClassDef) else "def"
        col = line.index(node.name, line.index(kw, node.col_offset) + len(kw))
        first = min([d.lineno for d in node.decorator_list] + [node.lineno])
        return Definition(node.name, Pos(self.rel, node.lineno, col + 1), first, node.end_lineno)

    def ascii_line(self, line: int) -> bool:
        return self.lines[line - 1].isascii()


def top_level_statements(body):
    """Module-level statements, looking into if/try/with/for/while blocks (still module scope)."""
    for node in body:
        yield node
        for field in ("body", "orelse", "finalbody", "handlers"):
            inner = getattr(node, field, None)
            if isinstance(inner, list) and not isinstance(
                    node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                yield from top_level_statements(inner)
        if isinstance(node, ast.Match):
            for case in node.cases:
                yield from top_level_statements(case.body)


def bound_names(node):
    """(name, binder) for each name a statement binds in its own scope."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        yield node.name, node
    elif isinstance(node, (ast.Import, ast.ImportFrom)):
        for a in node.names:
            if a.name == "*":
                yield "*", node
            else:
                yield (a.asname or a.name.split(".")[0]), (node, a)
    elif isinstance(node, ast.ExceptHandler):
        if node.name:
            yield node.name, node
    elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor,
                           ast.With, ast.AsyncWith)):
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor)):
            targets = [node.target]
        else:
            targets = [i.optional_vars for i in node.items if i.optional_vars is not None]
        for t in targets:
            for n in ast.walk(t):
                if isinstance(n, ast.Name):
                    yield n.id, node
    elif isinstance(node, (ast.Global, ast.Nonlocal)):
        for n in node.names:
            yield n, node
    # walrus targets anywhere in a module-level expression bind at module level
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        for field in ("test", "value", "iter"):
            expr = getattr(node, field, None)
            if isinstance(expr, ast.AST):
                for n in ast.walk(expr):
                    if isinstance(n, ast.NamedExpr):
                        yield n.target.id, node


def local_names(fn) -> set:
    """Every name a function binds in its own scope (parameters, assignments, defs, imports,
    comprehension variables, global/nonlocal declarations), not looking into nested scopes."""
    names = set()
    a = fn.args
    for arg in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg]:
        if arg is not None:
            names.add(arg.arg)
    stack = list(fn.body)
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(n.name)
            stack.extend(n.decorator_list)
            continue
        if isinstance(n, ast.Lambda):
            continue
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            names.add(n.id)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            for al in n.names:
                names.add(al.asname or al.name.split(".")[0])
        elif isinstance(n, (ast.Global, ast.Nonlocal)):
            names.update(n.names)
        elif isinstance(n, ast.ExceptHandler) and n.name:
            names.add(n.name)
        elif isinstance(n, (ast.MatchAs, ast.MatchStar)) and n.name:
            names.add(n.name)
        stack.extend(ast.iter_child_nodes(n))
    return names


class Project:
    def __init__(self, root: Path, under=None):
        self.root = Path(root)
        self.modules: dict[str, Module] = {}
        base = self.root / under if under else self.root
        for p in sorted(base.rglob("*.py")):
            if SKIP_DIRS & set(p.relative_to(self.root).parts):
                continue
            try:
                m = Module(self.root, p)
            except (SyntaxError, UnicodeDecodeError, ValueError):
                continue  # a file Python cannot parse (a fixture of a test suite) has no truth
            self.modules[m.name] = m
        self.by_path = {m.rel: m for m in self.modules.values()}

    def imported_module(self, mod: Module, node: ast.ImportFrom):
        if node.level:
            base = mod.package().split(".") if mod.package() else []
            if node.level - 1 > len(base):
                return None
            base = base[:len(base) - (node.level - 1)]
            name = ".".join(base + ([node.module] if node.module else []))
        else:
            name = node.module
        return self.modules.get(name)

    def binds(self, mod: Module, name: str, depth: int = 0):
        """The Definition `name` binds to at `mod`'s top level, or None (see the module doc)."""
        if depth > 10 or "*" in mod.bindings:
            return None
        bs = mod.bindings.get(name, [])
        if len(bs) != 1:
            return None
        b = bs[0]
        if isinstance(b, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return mod.definition(b)
        if isinstance(b, tuple) and isinstance(b[0], ast.ImportFrom):
            node, alias = b
            src = self.imported_module(mod, node)
            if src is None or f"{src.name}.{alias.name}" in self.modules:
                return None  # an outside module, or a submodule (not a definition)
            return self.binds(src, alias.name, depth + 1)
        return None

    def call_sites(self) -> list:
        out = []
        for mod in self.modules.values():
            self._calls_in(mod, mod.tree.body, [], out)
        return sorted(out, key=lambda c: c.at)

    def _calls_in(self, mod, body, shadow, out):
        """Walk statements of one scope; `shadow` is the union of enclosing functions' locals."""
        stack = list(body)
        while stack:
            n = stack.pop()
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                stack.extend(n.decorator_list)
                stack.extend(d for d in n.args.defaults + n.args.kw_defaults if d is not None)
                self._calls_in(mod, n.body, shadow + [local_names(n)], out)
                continue
            if isinstance(n, ast.ClassDef):
                stack.extend(n.decorator_list + n.bases)
                # a class body is a scope of its own; its names are not seen by its methods
                self._calls_in(mod, n.body, shadow + [class_names(n)], out)
                continue
            if isinstance(n, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp,
                              ast.GeneratorExp)):
                continue  # scopes of their own; rarely worth the care
            if (isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                    and not any(n.func.id in s for s in shadow)
                    and mod.ascii_line(n.func.lineno)):
                target = self.binds(mod, n.func.id)
                if target is not None:
                    out.append(CallSite(Pos(mod.rel, n.func.lineno, n.func.col_offset + 1),
                                        n.func.id, target))
            stack.extend(ast.iter_child_nodes(n))

    def definition_of(self, pos: Pos):
        """The innermost def/class whose name is at `pos`'s line (for `source` checks)."""
        mod = self.by_path[pos.path]
        for n in ast.walk(mod.tree):
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                    and n.lineno == pos.line:
                return mod.definition(n)
        return None

    def reference_targets(self) -> dict:
        """{Definition: sorted [Pos]} for the names described in the module doc."""
        defs, bad, uses = {}, set(), {}
        for mod in self.modules.values():
            for n in ast.walk(mod.tree):
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    defs.setdefault(n.name, []).append((mod, n))
                    if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        a = n.args
                        for arg in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg]:
                            if arg is not None:
                                bad.add(arg.arg)
                elif isinstance(n, ast.Attribute):
                    bad.add(n.attr)
                elif isinstance(n, ast.keyword) and n.arg:
                    bad.add(n.arg)
                elif isinstance(n, ast.Name):
                    if isinstance(n.ctx, ast.Load):
                        uses.setdefault(n.id, []).append((mod, n.lineno, n.col_offset))
                    else:
                        bad.add(n.id)
                elif isinstance(n, (ast.Import, ast.ImportFrom)):
                    for al in n.names:
                        if isinstance(n, ast.Import) or (al.asname and al.asname != al.name):
                            bad.add(al.name.split(".")[-1])
                            bad.add(al.asname or "")
                        else:
                            uses.setdefault(al.name, []).append((mod, al.lineno, al.col_offset))
                elif isinstance(n, (ast.Global, ast.Nonlocal)):
                    bad.update(n.names)
                elif isinstance(n, ast.ExceptHandler) and n.name:
                    bad.add(n.name)
                elif isinstance(n, (ast.MatchAs, ast.MatchStar)) and n.name:
                    bad.add(n.name)
                elif isinstance(n, ast.Constant) and isinstance(n.value, str):
                    bad.add(n.value)  # `__all__` entries, string annotations, getattr names
        out = {}
        for name, ds in defs.items():
            if len(ds) != 1 or name in bad or name.startswith("__"):
                continue
            mod, node = ds[0]
            if node not in mod.tree.body:
                continue  # module-level only
            d = mod.definition(node)
            # every module that says the name must bind it to this definition (not to an
            # outside module's name of the same spelling, a star import, a local import)
            if any(self.binds(m, name) != d for m in {m for m, _, _ in uses.get(name, [])}):
                continue
            occ = [d.at] + [Pos(m.rel, line, col + 1) for m, line, col in uses.get(name, [])]
            if all(self.by_path[p.path].ascii_line(p.line) for p in occ):
                out[d] = sorted(occ)
        return out


def class_names(cls) -> set:
    return {name for stmt in cls.body for name, _ in bound_names(stmt)}


def pick(items, n, seed):
    """`n` of `items`, chosen by a seeded generator (the same on every machine), in order."""
    items = list(items)
    if len(items) <= n:
        return items
    return sorted(random.Random(seed).sample(items, n), key=lambda x: items.index(x))
