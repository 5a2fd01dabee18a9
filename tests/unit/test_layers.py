"""Each test folder is one layer, marked by tests/conftest.py's collection hook (a `pytestmark` in a
conftest.py marks nothing): `make unit`'s `-m "not integration"` leaves out every test that starts the
local cloud."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest

from tests.conftest import TESTS_DIR, pytest_collection_modifyitems
from tests.localcloud import test_action_lookup, test_error_lookup, test_s3_key_index


@dataclass
class FakeItem:
    path: Path
    module: Any = None
    marks: list[str] = field(default_factory=list)

    def add_marker(self, mark: str | pytest.MarkDecorator) -> None:
        self.marks.append(mark if isinstance(mark, str) else mark.name)


def marks_of(path: Path, module: Any = None) -> list[str]:
    """The marks tests/conftest.py gives a test of that file (and module)."""
    item = FakeItem(path, module)
    pytest_collection_modifyitems(None, [item])  # type: ignore[arg-type, list-item]
    return item.marks


@pytest.mark.parametrize(
    ("folder", "mark"),
    [
        ("unit", "unit"),
        ("infra", "infra"),
        ("integration", "integration"),
        ("localcloud", "integration"),
        ("chaos", "integration"),
        ("experiment", "integration"),
    ],
)
def test_a_test_is_marked_with_its_folders_layer(folder: str, mark: str) -> None:
    assert marks_of(TESTS_DIR / folder / "test_something.py") == [mark]


def test_an_integration_test_using_mock_aws_runs_apart_from_the_session_cloud() -> None:
    # mock_aws resets moto's backends in the process, and with them the session cloud of the integration
    # tests on that worker: `make test` runs own_cloud tests in a run of their own.
    with_moto = SimpleNamespace(mock_aws=object())
    for folder in ("localcloud", "integration"):
        assert marks_of(TESTS_DIR / folder / "test_x.py", with_moto) == ["integration", "own_cloud"]
    assert marks_of(TESTS_DIR / "unit" / "test_x.py", with_moto) == ["unit"]  # a run of its own already
    assert marks_of(TESTS_DIR / "integration" / "test_x.py", SimpleNamespace()) == ["integration"]


def test_the_integration_modules_that_use_mock_aws_are_marked_own_cloud() -> None:
    modules: list[ModuleType] = [test_s3_key_index, test_error_lookup, test_action_lookup]
    for module in modules:
        assert marks_of(Path(str(module.__file__)), module) == ["integration", "own_cloud"], module.__name__


def test_every_test_folder_has_a_layer() -> None:
    folders = {path.name for path in TESTS_DIR.iterdir() if path.is_dir() and any(path.glob("test_*.py"))}
    marked = {folder for folder in folders if marks_of(TESTS_DIR / folder / "test_x.py")}
    assert marked == folders


def test_this_test_carries_the_unit_marker(request: pytest.FixtureRequest) -> None:
    # The real collection marked this very test: `-m unit` and `-m "not integration"` select it.
    assert request.node.get_closest_marker("unit") is not None
    assert request.node.get_closest_marker("integration") is None
