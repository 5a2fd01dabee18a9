"""moto's random strings drawn as moto draws them (localcloud/request_ids.py): a seeded ``MotoRandom`` gives
the strings moto's own method gives, and is left in the same state."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest
from moto.moto_api._internal.moto_random import MotoRandom

from docagent.localcloud import request_ids

CALLS = [(52, True, False), (20, True, True), (7, False, False), (1, False, True), (0, True, False)]


@pytest.fixture
def moto_s_own() -> Iterator[None]:
    installed = MotoRandom.get_random_string
    MotoRandom.get_random_string = request_ids._moto_get_random_string  # type: ignore[method-assign]
    try:
        yield
    finally:
        MotoRandom.get_random_string = installed  # type: ignore[method-assign]


def _draws(source: MotoRandom) -> list[str]:
    made = [source.get_random_string(length, digits, lower) for length, digits, lower in CALLS * 20]
    return [*made, source.get_random_string(), str(source.uuid4())]


def test_a_seeded_source_gives_moto_s_strings_and_state(moto_s_own: None) -> None:
    expected = _draws(MotoRandom(2026))
    source = MotoRandom(2026)
    found = [request_ids.get_random_string(source, size, digits, lower) for size, digits, lower in CALLS * 20]
    assert [*found, request_ids.get_random_string(source), str(source.uuid4())] == expected
    assert len(expected[0]) == 52 and expected[0].isalnum()


def test_a_source_that_draws_otherwise_is_answered_by_moto(moto_s_own: None) -> None:
    class Floats(MotoRandom):
        # its own random(): Random gives it _randbelow_without_getrandbits
        def random(self) -> float:
            return super().random()

    assert Floats._randbelow is not random.Random._randbelow_with_getrandbits  # type: ignore[attr-defined]
    assert request_ids.get_random_string(Floats(7), 30) == Floats(7).get_random_string(30)


def test_installed_moto_draws_through_it() -> None:
    request_ids.install()
    assert MotoRandom.get_random_string is request_ids.get_random_string
