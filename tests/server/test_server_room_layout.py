"""The room package's shape: its modules import one way (no cycle, not even through an import
made only for type checking or inside a function), each says in its docstring what it holds,
and every public name of the room has a docstring."""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import nertz.server.room as room_package

ROOM = Path(room_package.__file__).parent
PACKAGE = "nertz.server.room"


def modules() -> dict[str, ast.Module]:
    return {path.stem: ast.parse(path.read_text()) for path in sorted(ROOM.glob("*.py"))
            if path.stem != "__init__"}


def room_imports(tree: ast.Module) -> set[str]:
    """The room modules a module imports, wherever the import statement stands."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module is not None:
            if node.module == PACKAGE:
                found.update(alias.name for alias in node.names)
            elif node.module.startswith(PACKAGE + "."):
                found.add(node.module.removeprefix(PACKAGE + ".").split(".")[0])
        elif isinstance(node, ast.Import):
            found.update(alias.name.removeprefix(PACKAGE + ".").split(".")[0]
                         for alias in node.names if alias.name.startswith(PACKAGE + "."))
    return found


def test_room_modules_import_one_way() -> None:
    trees = modules()
    graph = {name: room_imports(tree) & trees.keys() for name, tree in trees.items()}
    try:
        TopologicalSorter(graph).prepare()
    except CycleError as exc:
        raise AssertionError(f"room modules import each other: {exc.args[1]}") from None
    # The table is the top: nothing in the room builds on it but the room's bots.
    assert {name for name, deps in graph.items() if "table" in deps} == {"bots"}


def test_every_room_module_and_public_name_says_what_it_is() -> None:
    missing = []
    for name, tree in modules().items():
        if ast.get_docstring(tree) is None:
            missing.append(name)
        for node in tree.body:
            if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) \
                    and not node.name.startswith("_"):
                if ast.get_docstring(node) is None:
                    missing.append(f"{name}.{node.name}")
                if isinstance(node, ast.ClassDef):
                    missing += [f"{name}.{node.name}.{item.name}" for item in node.body
                                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
                                and not item.name.startswith("_")
                                and ast.get_docstring(item) is None]
    assert not missing, f"no docstring: {missing}"
