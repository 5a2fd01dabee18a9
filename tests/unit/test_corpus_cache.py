"""The demo's rendered corpus from the cache (docagent/drills/corpus_cache.py): the same bytes a render
gives, a new entry for any change of what makes them, and a broken entry rendered again."""

from __future__ import annotations

from pathlib import Path

import pytest

from docagent import project
from docagent.drills import corpus_cache
from docagent.drills.corpus_cache import rendered_corpus
from docagent.drills.document_files import render_corpus
from docagent.drills.synthetic import generate_documents

FORMATS = ("pdf", "docx", "txt")


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(project, "RENDER_CACHE", tmp_path / "render-cache")
    return project.RENDER_CACHE


def test_a_hit_gives_the_rendered_bytes_without_rendering(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    documents = generate_documents(6, seed=3)
    first = rendered_corpus(documents, FORMATS, seed=3)
    assert first == render_corpus(documents, FORMATS, seed=3)
    assert len(list(cache.glob("*.zip"))) == 1

    def no_render(*_: object, **__: object) -> None:
        raise AssertionError("rendered again")

    monkeypatch.setattr(corpus_cache, "render_corpus", no_render)
    assert rendered_corpus(documents, FORMATS, seed=3) == first


def test_another_text_seed_or_format_mix_is_another_entry(cache: Path) -> None:
    documents = generate_documents(4, seed=3)
    rendered_corpus(documents, FORMATS, seed=3)
    rendered_corpus(documents, FORMATS, seed=4)
    rendered_corpus(documents, ("pdf",), seed=3)
    changed = [documents[0]._replace(text=documents[0].text + "\nP.S."), *documents[1:]]
    again = rendered_corpus(changed, FORMATS, seed=3)
    assert again == render_corpus(changed, FORMATS, seed=3)
    assert len(list(cache.glob("*.zip"))) == 4


def test_a_broken_entry_is_rendered_again_and_an_unwritable_cache_fails_nothing(cache: Path) -> None:
    documents = generate_documents(3, seed=5)
    rendered_corpus(documents, FORMATS, seed=5)
    (entry,) = cache.glob("*.zip")
    entry.write_bytes(b"not a zip")
    assert rendered_corpus(documents, FORMATS, seed=5) == render_corpus(documents, FORMATS, seed=5)
    entry.unlink()
    cache.rmdir()
    cache.write_text("a file where the folder should be")
    assert rendered_corpus(documents, FORMATS, seed=5) == render_corpus(documents, FORMATS, seed=5)
