"""The functions of one code root fork their templates from its code template, which imported the modules
every one of their handlers imports (docagent/localcloud/lambdas/forking.py, shared_imports.py): each worker
is what a fresh interpreter would be, with those modules imported once for all of them."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from docagent.localcloud.lambdas.runtime import FunctionSpec, Worker
from docagent.localcloud.lambdas.shared_imports import imported_modules, shared_modules
from stacks.function_specs import FUNCTION_SPECS
from tests.localcloud.test_fork_server import BASE_ENV, Runtime, alive, invoke

SHARED = "import os\nIMPORTED_BY = os.getpid()\nSETTING = os.environ.get('SHARED_SETTING')\n"
HANDLER = """
import os, sys
import shared
from helpers import {own}
IMPORTED_BY = os.getpid()
OURS = {{"a", "b", "c", "helpers", "shared"}}

def handler(event, context):
    return {{
        "pid": os.getpid(),
        "shared_by": shared.IMPORTED_BY,
        "own_by": IMPORTED_BY,
        "setting": shared.SETTING,
        "code_root_on_path": sys.path.count(os.getcwd()),
        "loaded": sorted(name for name in sys.modules if name.split(".")[0] in OURS),
    }}
"""
HANDLERS = ("a.handler", "b.handler", "c.handler")


def write_code(tmp_path: Path) -> None:
    root = tmp_path / "code"
    (root / "helpers").mkdir(parents=True)
    (root / "shared.py").write_text(SHARED)
    (root / "helpers" / "__init__.py").write_text("")
    for name in ("a", "b", "c"):
        (root / f"{name}.py").write_text(HANDLER.format(own=f"only_{name}"))
        (root / "helpers" / f"only_{name}.py").write_text("")


@pytest.fixture
def runtime(tmp_path: Path) -> Iterator[Runtime]:
    write_code(tmp_path)
    started = Runtime(tmp_path)
    try:
        yield started
    finally:
        started.stop()


def worker(runtime: Runtime, name: str, setting: str = "common") -> Worker:
    spec = FunctionSpec(
        name, f"arn:{name}", f"{name}.handler", 10, 128, {"SHARED_SETTING": setting}, "sha",
        f"/aws/lambda/{name}", code_handlers=HANDLERS,
    )  # fmt: skip
    started = Worker(spec, runtime.tmp_path / "code", BASE_ENV, lambda *line: None, runtime.launcher)
    runtime.workers.append(started)
    return started


def test_the_functions_templates_fork_from_one_code_template_with_the_shared_modules(
    runtime: Runtime,
) -> None:
    _, a = invoke(worker(runtime, "a"), {})
    _, b = invoke(worker(runtime, "b"), {})
    assert a["shared_by"] == b["shared_by"], "the shared module imported once, for both"
    assert len({a["shared_by"], a["own_by"], b["own_by"], a["pid"], b["pid"]}) == 5
    assert a["loaded"] == ["a", "helpers", "helpers.only_a", "shared"], "nothing of b's own in a's worker"
    assert b["loaded"] == ["b", "helpers", "helpers.only_b", "shared"]
    assert a["setting"] == b["setting"] == "common"
    assert runtime.launcher.from_template == 2
    [code_template] = runtime.launcher.code_templates.values()
    assert code_template is not None and code_template.process.pid == a["shared_by"]


def test_a_function_whose_shared_imports_read_otherwise_imports_them_in_its_own_template(
    runtime: Runtime,
) -> None:
    _, a = invoke(worker(runtime, "a"), {})
    _, c = invoke(worker(runtime, "c", setting="its own"), {})
    assert c["setting"] == "its own", "imported with its own environment, not the code template's"
    assert c["shared_by"] == c["own_by"] != a["shared_by"]
    assert a["code_root_on_path"] == c["code_root_on_path"], (
        "sys.path as a template forked by the server has it"
    )
    assert runtime.launcher.from_template == 2


def test_a_stop_leaves_no_code_template_behind(tmp_path: Path) -> None:
    write_code(tmp_path)
    runtime = Runtime(tmp_path)
    workers = [worker(runtime, name) for name in ("a", "b")]
    found = [invoke(each, {})[1] for each in workers]
    pids = [found[0]["shared_by"], *(one["own_by"] for one in found), *(one["pid"] for one in found)]
    assert all(alive(pid) for pid in pids)
    runtime.stop()
    assert [pid for pid in pids if alive(pid)] == []


def write(root: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)
    return root


def test_the_shared_modules_are_those_every_handler_surely_imports(tmp_path: Path) -> None:
    root = write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/models.py": "from . import base\n",
            "pkg/base.py": "",
            "pkg/extra.py": "",
            "pkg/typing_only.py": "",
            "pkg/maybe.py": "",
            "first.py": (
                '"""A docstring.\nimport pkg.extra\n"""\nfrom typing import TYPE_CHECKING\n'
                "from pkg import (\n    models,  # the models\n    extra,\n)\nimport json, pkg.maybe as m\n"
                "if TYPE_CHECKING:\n    import pkg.typing_only\n"
            ),
            "second.py": "from pkg.models import base\ntry:\n    import pkg.extra\nexcept ImportError: ...\n",
        },
    )
    assert imported_modules(root, "first") == [
        "first",
        "pkg",
        "pkg.models",
        "pkg.base",
        "pkg.extra",
        "pkg.maybe",
    ]
    assert shared_modules(root, ["first.handler", "second.handler"]) == ["pkg", "pkg.models", "pkg.base"]
    assert shared_modules(root, ["first.handler", "first.other"]) == [], "one handler module: nothing shared"


IMPORTED = """
import json, sys
sys.path.insert(0, sys.argv[1])
before = set(sys.modules)
__import__(sys.argv[2])
print(json.dumps(sorted(set(sys.modules) - before)))
"""


def test_each_project_handlers_modules_read_from_the_code_are_among_those_its_import_loads() -> None:
    """Read from the code, never more than the import loads (else a function would have modules it does not
    import), and here all of them."""
    root = Path(__file__).parents[2]
    for handler in sorted({spec.handler for spec in FUNCTION_SPECS}):
        module = handler.rpartition(".")[0]
        command = [sys.executable, "-c", IMPORTED, str(root), module]
        loaded: list[Any] = json.loads(subprocess.run(command, capture_output=True, check=True).stdout)
        read = imported_modules(root, module)
        assert set(read) == {name for name in loaded if name.split(".")[0] == "functions"}, handler
