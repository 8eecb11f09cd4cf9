"""The shape of the package: imports go one way, loading a task stays away from the
machine and from plugin classes, modules and functions stay small enough to read.

These read nsb's source with ``ast`` (imports inside functions count too: a lazy
import hides a cycle but does not remove it).
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "nsb"
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60
# what loading a task must not import: the stages that act on machines and plugins
NOT_AT_LOAD = ("nsb.contexts", "nsb.vnfs", "nsb.traffic_profiles", "nsb.runners",
               "nsb.outputs", "nsb.executors", "nsb.engine")


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def import_graph() -> dict[str, set[str]]:
    """Module -> the nsb modules it imports (``from a import b`` is a.b if b is one)."""
    modules = _modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[:len(package.split(".")) - node.level + 1]
                    base = ".".join(parts + ([base] if base else []))
                targets = [base, *(f"{base}.{alias.name}" for alias in node.names)]
            else:
                continue
            graph[name] |= {t for t in targets if t in modules and t != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for target in sorted(graph[module]):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == module:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * len(graph)))
    for module in sorted(graph):
        if module not in index:
            visit(module)
    return found


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_among_nsb_modules():
    assert cycles(import_graph()) == []


def test_the_task_package_imports_no_later_stage():
    """Loading (nsb.task) reads files; it never reaches into what plans or runs."""
    graph = import_graph()
    reached = {target for module, targets in graph.items() if module.startswith("nsb.task")
               for target in targets}
    assert sorted(t for t in reached if t.startswith(NOT_AT_LOAD)) == []


def test_lower_packages_stay_below_the_stages_that_use_them():
    """What a node is and what a profile measures come before what runs them: nodes
    import no context, VNF or engine; profiles import no output."""
    graph = import_graph()
    upward = sorted(f"{module} -> {target}" for module, targets in graph.items()
                    for target in targets
                    if (module.startswith("nsb.nodes")
                        and target.startswith(("nsb.contexts", "nsb.vnfs", "nsb.engine")))
                    or (module.startswith("nsb.traffic_profiles")
                        and target.startswith("nsb.outputs")))
    assert upward == []


def test_nothing_below_the_command_line_imports_it():
    """The command line is the top layer: other packages never reach up into it."""
    graph = import_graph()
    upward = sorted(f"{module} -> {target}" for module, targets in graph.items()
                    for target in targets
                    if target.startswith("nsb.cli") and not module.startswith("nsb.cli")
                    and module != "nsb.__main__")
    assert upward == []


def _task_files() -> list[Path]:
    samples = sorted((ROOT / "samples").rglob("tc_*.yaml"))
    reference = ROOT.parent / "shared" / "reference" / "yardstick-samples"
    nsb_tasks = sorted(reference.rglob("tc_*.yaml")) if reference.is_dir() else []
    return samples + nsb_tasks + sorted((ROOT / "tests" / "data").rglob("tc_*.yaml"))


def test_loading_a_task_imports_no_context_vnf_or_profile():
    """Each task file is loaded in a fresh interpreter, which then lists what it
    imported: no context, VNF, profile, runner, output or executor module."""
    files = [str(path) for path in _task_files()]
    assert len(files) > 15
    script = (
        "import json, sys\n"
        "from nsb.errors import NsbError\n"
        "from nsb.task import loader\n"
        "loaded = 0\n"
        "for path in sys.argv[1:]:\n"
        "    try:\n"
        "        loader.load(path)\n"
        "        loaded += 1\n"
        "    except NsbError:\n"
        "        pass\n"
        "print(json.dumps([loaded, sorted(m for m in sys.modules if m.startswith('nsb.'))]))\n")
    out = subprocess.run([sys.executable, "-c", script, *files], capture_output=True,
                         text=True, check=True, cwd=ROOT)
    loaded, imported = json.loads(out.stdout)
    assert loaded > 15, out.stderr
    assert [m for m in imported if m.startswith(NOT_AT_LOAD)] == []


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.name))
def test_modules_and_functions_stay_small(path):
    text = path.read_text()
    lines = text.count("\n")
    assert lines <= MAX_MODULE_LINES, f"{path.relative_to(ROOT)}: {lines} lines"
    long = [f"{node.name} ({node.end_lineno - node.lineno + 1} lines)"
            for node in ast.walk(ast.parse(text))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES]
    assert long == [], f"{path.relative_to(ROOT)}: {', '.join(long)}"


def _reads_of_extra(tree: ast.AST) -> list[int]:
    """Lines that read a key of some ``.extra`` (``x.extra[k]``, ``x.extra.get(k)``)."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) \
                and isinstance(node.value, ast.Attribute) and node.value.attr == "extra":
            lines.append(node.lineno)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr == "get" and isinstance(node.func.value, ast.Attribute) \
                and node.func.value.attr == "extra":
            lines.append(node.lineno)
    return lines


def test_the_extra_reader_finds_reads():
    tree = ast.parse("a = r.extra['k']\nb = r.extra.get('k')\nr.extra['k'] = 1\n")
    assert _reads_of_extra(tree) == [1, 2]


def test_no_profile_reads_what_a_generator_put_in_extra():
    """What a profile needs of a trial is a TrialResult field, not a generator's key."""
    found = {str(path.relative_to(ROOT)): _reads_of_extra(ast.parse(path.read_text()))
             for path in sorted((PACKAGE / "traffic_profiles").glob("*.py"))}
    assert {path: lines for path, lines in found.items() if lines} == {}
