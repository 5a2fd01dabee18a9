"""Each test folder is one layer, marked by tests/conftest.py's collection hook (a `pytestmark` in a
conftest.py marks nothing): `make unit`'s `-m "not integration"` leaves out every test that starts the
local cloud."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.conftest import TESTS_DIR, pytest_collection_modifyitems


@dataclass
class FakeItem:
    path: Path
    marks: list[str] = field(default_factory=list)
    groups: list[str] = field(default_factory=list)  # xdist_group marks (`make unit`'s --dist loadgroup)

    def add_marker(self, mark: str | pytest.MarkDecorator) -> None:
        if isinstance(mark, str):
            self.marks.append(mark)
        else:
            assert mark.name == "xdist_group"
            self.groups.extend(mark.args)


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
    item = FakeItem(TESTS_DIR / folder / "test_something.py")
    pytest_collection_modifyitems(None, [item])  # type: ignore[arg-type, list-item]
    assert item.marks == [mark]


def test_the_infra_tests_are_one_group_so_one_worker_synthesizes_the_app() -> None:
    grouped = {}
    for folder in ("unit", "infra", "integration"):
        item = FakeItem(TESTS_DIR / folder / "test_something.py")
        pytest_collection_modifyitems(None, [item])  # type: ignore[arg-type, list-item]
        grouped[folder] = item.groups
    assert grouped == {"unit": [], "infra": ["infra"], "integration": []}


def test_every_test_folder_has_a_layer() -> None:
    folders = {path.name for path in TESTS_DIR.iterdir() if path.is_dir() and any(path.glob("test_*.py"))}
    marked = set()
    for folder in folders:
        item = FakeItem(TESTS_DIR / folder / "test_x.py")
        pytest_collection_modifyitems(None, [item])  # type: ignore[arg-type, list-item]
        marked |= {folder} if item.marks else set()
    assert marked == folders


def test_this_test_carries_the_unit_marker(request: pytest.FixtureRequest) -> None:
    # The real collection marked this very test: `-m unit` and `-m "not integration"` select it.
    assert request.node.get_closest_marker("unit") is not None
    assert request.node.get_closest_marker("integration") is None
