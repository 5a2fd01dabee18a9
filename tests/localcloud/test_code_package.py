"""The local Lambda runtime unpacks a code package once per hash and compiles it there, once, rather than in
every new worker (docs/scale.md, "Where a document's time goes")."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from docagent.localcloud.lambdas.runtime import LambdaRuntime
from tests.integration.conftest import zip_source

SOURCE = "def handler(event, context):\n    raise ValueError('from the handler')\n"


def test_a_code_package_is_unpacked_once_and_compiled_where_it_stays(tmp_path: Path):
    runtime = LambdaRuntime(state_dir=tmp_path, base_env={}, log=lambda *_: None)
    code = zip_source({"app.py": SOURCE, "pkg/__init__.py": "", "pkg/broken.py": "def (:\n"})
    root = runtime.code_root("abc+/def=", code)
    assert root == runtime.code_root("abc+/def=", code)
    assert [path.name for path in root.parent.iterdir()] == [root.name]  # no staging folder left
    tag = sys.implementation.cache_tag
    assert (root / "__pycache__" / f"app.{tag}.pyc").exists()
    assert (root / "pkg" / "__pycache__" / f"__init__.{tag}.pyc").exists()
    assert not (
        root / "pkg" / "__pycache__" / f"broken.{tag}.pyc"
    ).exists()  # reported by the worker's import
    # The compiled code is used as it is (no recompilation: the sources are unchanged) and names the
    # package's final folder in a traceback, not the staging folder it was compiled in.
    show = (
        "import sys, traceback\nsys.dont_write_bytecode = True\nimport app\n"
        "try:\n    app.handler({}, None)\nexcept ValueError as error:\n"
        "    print(app.__cached__, traceback.extract_tb(error.__traceback__)[-1].filename)\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", show],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(root)},
    )
    cached, filename = completed.stdout.split()
    assert Path(cached).exists()
    assert filename == str(root / "app.py")


def test_a_code_cache_unpacks_a_package_once_for_every_runtime(tmp_path: Path):
    """Each runtime has its own copy, compiled once in the cache (the second runtime's package is never
    read: the cache has it by its hash), and an import from a copy names the copy."""
    cache = tmp_path / "cache"
    code = zip_source({"app.py": SOURCE})
    first = LambdaRuntime(state_dir=tmp_path / "one", base_env={}, log=lambda *_: None, code_cache=cache)
    second = LambdaRuntime(state_dir=tmp_path / "two", base_env={}, log=lambda *_: None, code_cache=cache)
    roots = [first.code_root("abc", code), second.code_root("abc", b"not a zip: never read")]
    assert roots == [tmp_path / "one" / "code" / "abc", tmp_path / "two" / "code" / "abc"]
    assert [path.name for path in cache.iterdir()] == ["abc"]
    tag = sys.implementation.cache_tag
    show = (
        "import sys, traceback\nsys.dont_write_bytecode = True\nimport app\n"
        "try:\n    app.handler({}, None)\nexcept ValueError as error:\n"
        "    print(app.__cached__, traceback.extract_tb(error.__traceback__)[-1].filename)\n"
    )
    for root in roots:
        pyc, source = root / "__pycache__" / f"app.{tag}.pyc", (root / "app.py").stat()
        # valid for its source (importlib's check: the source's time and size in the header), so used as is
        header = (
            int.from_bytes(pyc.read_bytes()[8:12], "little"),
            int.from_bytes(pyc.read_bytes()[12:16], "little"),
        )
        assert header == (int(source.st_mtime) & 0xFFFFFFFF, source.st_size & 0xFFFFFFFF)
        completed = subprocess.run(
            [sys.executable, "-c", show], cwd=root, capture_output=True, text=True, check=True
        )
        assert completed.stdout.split() == [str(pyc), str(root / "app.py")]


def test_a_code_cache_that_cannot_be_written_is_done_without(tmp_path: Path):
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    runtime = LambdaRuntime(state_dir=tmp_path / "one", base_env={}, log=lambda *_: None, code_cache=blocked)
    root = runtime.code_root("abc", zip_source({"app.py": SOURCE}))
    assert root == tmp_path / "one" / "code" / "abc" and (root / "app.py").read_text() == SOURCE
