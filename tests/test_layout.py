"""The package's layering: nothing imports upward. The experiment machinery never imports a
question module (a question registers what the machinery needs of it), and nothing below the
experiments imports them."""

import ast
from pathlib import Path

import monosem

ROOT = Path(monosem.__file__).parent


def _imports(path: Path) -> set[str]:
    """Every module ``path`` imports, absolute (relative imports resolved against its package)."""
    package = ".".join(path.relative_to(ROOT.parent).with_suffix("").parts[:-1])
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
            module = ".".join([*base, node.module] if node.module else base)
            out.add(module)
            out |= {f"{module}.{a.name}" for a in node.names}
    return out


def test_the_machinery_never_imports_a_question():
    machinery = [p for p in (ROOT / "experiments").glob("*.py")]
    assert machinery
    for path in machinery:
        upward = {m for m in _imports(path) if m.startswith("monosem.experiments.questions")}
        assert not upward, f"{path.name} imports {sorted(upward)}"


def test_nothing_below_the_experiments_imports_them():
    lower = [p for p in ROOT.rglob("*.py") if p.relative_to(ROOT).parts[0] not in ("experiments", "__main__.py", "book.py")]
    assert lower
    for path in lower:
        upward = {m for m in _imports(path) if m.startswith("monosem.experiments")}
        assert not upward, f"{path.relative_to(ROOT)} imports {sorted(upward)}"


#: the longest a function may be, from its ``def`` to its end, docstring included
MAX_FUNCTION_LINES = 60
#: the longest a module of the experiments may be without saying, in its docstring, why
MAX_EXPERIMENT_MODULE_LINES = 500
#: files whose functions may be longer than that (each would say why): none
LONG_FUNCTIONS_ALLOWED: set[str] = set()


def test_no_function_is_longer_than_sixty_lines():
    long = []
    for path in sorted(ROOT.rglob("*.py")):
        if path.relative_to(ROOT).as_posix() in LONG_FUNCTIONS_ALLOWED:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES:
                long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1} lines)")
    assert not long, f"longer than {MAX_FUNCTION_LINES} lines: extract well-named helpers: {long}"


def test_a_long_experiments_module_says_why():
    unexplained = []
    for path in sorted((ROOT / "experiments").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        doc = ast.get_docstring(ast.parse(text)) or ""
        if len(text.splitlines()) > MAX_EXPERIMENT_MODULE_LINES and not any(line.startswith("Long because") for line in doc.splitlines()):
            unexplained.append(f"{path.relative_to(ROOT)} ({len(text.splitlines())} lines)")
    assert not unexplained, (f"longer than {MAX_EXPERIMENT_MODULE_LINES} lines without a docstring line "
                             f"starting 'Long because': split by seam, or say why: {unexplained}")
