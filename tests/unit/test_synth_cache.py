"""Synthesis once per change (docagent/localcloud/synth.py): the cache key follows every input, a hit skips
synthesis, and a failed or partial synthesis is never taken for a hit."""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

from docagent import project
from docagent.localcloud import synth

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def source_root(tmp_path: Path) -> Path:
    """A copy of the app's inputs (app.py, cdk.json, stacks/, functions/, statemachines/)."""
    root = tmp_path / "repo"
    root.mkdir()
    for name in synth.SOURCES:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, root / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, root / name)
    return root


def test_the_key_changes_with_every_input(source_root: Path, monkeypatch: pytest.MonkeyPatch):
    context = synth.local_context()
    key = synth.synth_key(context, source_root)
    assert synth.synth_key(context, source_root) == key  # deterministic

    # Byte-compiled files are not inputs.
    cache = source_root / "functions" / "__pycache__"
    cache.mkdir(exist_ok=True)
    (cache / "models.cpython-311.pyc").write_bytes(b"\x00compiled")
    assert synth.synth_key(context, source_root) == key

    changed: list[str] = []
    asl = next((source_root / "statemachines").glob("*.json"))
    original = asl.read_bytes()
    asl.write_bytes(original + b"\n")
    changed.append(synth.synth_key(context, source_root))
    asl.write_bytes(original)
    assert synth.synth_key(context, source_root) == key

    (source_root / "stacks" / "extra.py").write_text("X = 1\n")  # a new file
    changed.append(synth.synth_key(context, source_root))
    (source_root / "stacks" / "extra.py").unlink()

    (source_root / "app.py").rename(source_root / "app2.py")  # the same bytes under another name
    changed.append(synth.synth_key(context, source_root))
    (source_root / "app2.py").rename(source_root / "app.py")
    assert synth.synth_key(context, source_root) == key

    changed.append(synth.synth_key(synth.local_context({"documents_per_child": 5}), source_root))

    # How Python was started (a script's folder or the working directory first on sys.path) is no input.
    elsewhere = source_root.parent / "elsewhere"
    (elsewhere / "stray-1.0.dist-info").mkdir(parents=True)
    monkeypatch.syspath_prepend(str(elsewhere))
    assert synth.synth_key(context, source_root) == key

    installed = synth.installed_distributions()
    assert any(name.startswith("aws_cdk_lib-") for name in installed)
    bumped = [name.replace("aws_cdk_lib-", "aws_cdk_lib-0") for name in installed]
    monkeypatch.setattr(synth, "installed_distributions", lambda: bumped)
    changed.append(synth.synth_key(context, source_root))

    assert key not in changed
    assert len(set(changed)) == len(changed)


class FakeSynthesis:
    """Stands in for the CDK process: writes a template into each requested out dir, counts the runs."""

    def __init__(self) -> None:
        self.runs: list[list[Any]] = []
        self.fail = False

    def __call__(self, command: list[str], **_: Any) -> subprocess.CompletedProcess[bytes]:
        targets = json.loads(command[-1])
        self.runs.append(targets)
        for out_dir, context in targets:
            Path(out_dir).mkdir(parents=True)
            (Path(out_dir) / "manifest.json").write_text(json.dumps(context["docagent"]))
            if self.fail:
                raise subprocess.CalledProcessError(1, command)
        return subprocess.CompletedProcess(command, 0)


@pytest.fixture
def fake_synthesis(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeSynthesis:
    monkeypatch.setattr(project, "SYNTH_CACHE", tmp_path / "synth-cache")
    fake = FakeSynthesis()
    monkeypatch.setattr(synth.subprocess, "run", fake)
    return fake


def test_a_hit_skips_synthesis(fake_synthesis: FakeSynthesis):
    first = synth.synth_local()
    assert len(fake_synthesis.runs) == 1
    destinations = json.loads((first / "manifest.json").read_text())["actions"]["destinations"]
    assert destinations["tickets"].startswith("{{resolve:ssm:")
    assert json.loads((first / synth.KEY_FILE).read_text())["context"] == synth.local_context()

    assert synth.synth_local() == first
    assert len(fake_synthesis.runs) == 1  # a hit: no synthesis

    # Variants: only the one not cached yet is synthesized, and the cached one is returned as it is.
    standard, express = synth.synth_local_variants([None, {"child_execution_type": "EXPRESS"}])
    assert standard == first
    assert express != first
    assert len(fake_synthesis.runs) == 2
    assert [context["docagent"].get("child_execution_type") for _, context in fake_synthesis.runs[1]] == [
        "EXPRESS"
    ]
    assert sorted(path.name for path in project.SYNTH_CACHE.iterdir()) == sorted([first.name, express.name])


def test_a_failed_synthesis_leaves_no_entry(fake_synthesis: FakeSynthesis):
    fake_synthesis.fail = True
    with pytest.raises(subprocess.CalledProcessError):
        synth.synth_local()
    assert list(project.SYNTH_CACHE.iterdir()) == []  # the partial output is gone: not a hit next time
    fake_synthesis.fail = False
    synth.synth_local()
    assert len(fake_synthesis.runs) == 2


def test_a_synthesis_under_way_is_waited_for_not_repeated(
    fake_synthesis: FakeSynthesis, monkeypatch: pytest.MonkeyPatch
):
    """A second process (a thread here: flock locks conflict between open files) that misses the entry
    another is synthesizing waits for the lock, then finds the entry: one synthesis for both."""
    asking = threading.Event()
    real_flock = synth.fcntl.flock

    def flock(file: Any, operation: int) -> None:
        if operation == synth.fcntl.LOCK_EX and threading.current_thread() is not threading.main_thread():
            asking.set()
        real_flock(file, operation)

    monkeypatch.setattr(synth.fcntl, "flock", flock)
    found: list[Path] = []
    with synth._synthesis_lock():  # the first process, synthesizing
        waiting = threading.Thread(target=lambda: found.append(synth.synth_local()))
        waiting.start()
        assert asking.wait(30), "the second never asked for the lock"
        waiting.join(0.5)
        assert waiting.is_alive() and fake_synthesis.runs == [], "it did not wait"
        entry = synth.cached_assembly(synth.local_context())
        synth._synthesize([(entry, synth.local_context())])
    waiting.join(30)
    assert found == [entry] and len(fake_synthesis.runs) == 1, "synthesized twice"


def test_old_entries_are_pruned(fake_synthesis: FakeSynthesis):
    entries = [synth.synth_local({"documents_per_child": k}) for k in range(1, synth.KEEP_ENTRIES + 3)]
    kept = {path.name for path in project.SYNTH_CACHE.iterdir()}
    assert len(kept) == synth.KEEP_ENTRIES
    assert entries[-1].name in kept
    assert entries[0].name not in kept


def _module_file(name: str, root: Path) -> Path | None:
    """The project file a dotted module name resolves to under ``root`` (None for an installed module)."""
    base = root.joinpath(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _project_imports(start: Path, root: Path) -> set[Path]:
    """Every project module ``start`` imports, directly or through others (its packages' ``__init__`` too)."""
    seen: set[Path] = set()
    todo = [start]
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        package = ".".join(path.relative_to(root).with_suffix("").parts[:-1])
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                parent = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                module = ".".join(filter(None, [parent if node.level else "", node.module or ""]))
                names = [module, *(f"{module}.{alias.name}" for alias in node.names)]
            for name in names:
                parts = name.split(".")
                for depth in range(1, len(parts) + 1):  # a.b.c imports a and a.b first
                    found = _module_file(".".join(parts[:depth]), root)
                    if found is not None:
                        todo.append(found)
    return seen


def test_every_module_the_app_imports_is_an_input(source_root: Path):
    """The key hashes SOURCES: a project module that app.py reached outside them (in docagent/, say) would
    change the assembly without changing the key."""
    imported = _project_imports(source_root / "app.py", source_root)
    # The walk follows the app into stacks/ and functions/ (so it would see a stray import there).
    assert source_root / "stacks" / "workflow.py" in imported
    assert source_root / "functions" / "storage.py" in imported
    assert imported <= set(synth._source_files(source_root))

    # An import of a project module outside SOURCES is one the key would miss, and the walk finds it.
    (source_root / "docagent").mkdir()
    (source_root / "docagent" / "__init__.py").write_text("")
    (source_root / "docagent" / "names.py").write_text("STACK = 'x'\n")
    storage = source_root / "functions" / "storage.py"
    storage.write_text(storage.read_text() + "\nfrom docagent.names import STACK  # noqa\n")
    missed = _project_imports(source_root / "app.py", source_root) - set(synth._source_files(source_root))
    assert missed == {source_root / "docagent" / "__init__.py", source_root / "docagent" / "names.py"}
