"""The local OCR engine's disk cache (docagent/localcloud/textract/ocr_cache.py), on with DOCAGENT_OCR_CACHE:
a page read once is answered from its entry by any process; a corrupt entry, or one of another engine version,
is read again; off, nothing is written. No engine runs here: the reader is a counting stand-in."""

from __future__ import annotations

import hashlib
import json
import threading
import time
from pathlib import Path

import pytest

from docagent.localcloud.textract import engine, ocr_cache

DIGEST = "ab" * 32
ENGINE = {"name": "rapidocr-onnxruntime", "versions": {"rapidocr-onnxruntime": "1.4.4"}, "settings": {}}
LINES = (((1.0, 2.0, 30.5, 12.0), "Total:1,100.00", 0.97), ((0.0, 20.0, 9.0, 28.0), "£ 5", 0.5))


class Reader:
    """The engine's stand-in: counts its reads."""

    def __init__(self, lines: tuple[ocr_cache.Line, ...] = LINES, pause: float = 0.0) -> None:
        self.lines, self.pause, self.reads = lines, pause, 0

    def __call__(self) -> tuple[ocr_cache.Line, ...]:
        self.reads += 1
        time.sleep(self.pause)
        return self.lines


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "ocr-cache"
    monkeypatch.setenv(ocr_cache.VARIABLE, str(folder))
    return folder


def entries(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.iterdir() if path.suffix == ".json")


def test_a_page_read_once_is_answered_from_its_entry_without_the_engine(cache: Path) -> None:
    first, second = Reader(), Reader(lines=())
    assert ocr_cache.cached_lines(DIGEST, lambda: ENGINE, first) == LINES
    assert ocr_cache.cached_lines(DIGEST, lambda: ENGINE, second) == LINES  # as another process would
    assert (first.reads, second.reads) == (1, 0)
    assert entries(cache) == [ocr_cache.entry_name(DIGEST, ENGINE)]
    assert not [path for path in cache.iterdir() if path.suffix == ".tmp"]  # renamed into place
    other = Reader(lines=LINES[:1])  # another image: a miss
    assert ocr_cache.cached_lines("cd" * 32, lambda: ENGINE, other) == LINES[:1] and other.reads == 1


@pytest.mark.parametrize(
    "content",
    [
        "",
        "{not json",
        '{"identity": {}, "lines": []}',
        '{"lines": []}',
        '{"identity": IDENTITY, "lines": [[1, 2]]}',
    ],
)
def test_a_corrupt_or_foreign_entry_is_ignored_and_read_again(cache: Path, content: str) -> None:
    cache.mkdir()
    entry = cache / ocr_cache.entry_name(DIGEST, ENGINE)
    entry.write_text(content.replace("IDENTITY", json.dumps({"image_sha256": DIGEST, "engine": ENGINE})))
    reader = Reader()
    assert ocr_cache.cached_lines(DIGEST, lambda: ENGINE, reader) == LINES and reader.reads == 1
    again = Reader(lines=())
    assert ocr_cache.cached_lines(DIGEST, lambda: ENGINE, again) == LINES and again.reads == 0  # rewritten


def test_another_engine_version_or_setting_misses(cache: Path) -> None:
    assert ocr_cache.cached_lines(DIGEST, lambda: ENGINE, Reader()) == LINES
    newer = {**ENGINE, "versions": {"rapidocr-onnxruntime": "1.4.5"}}
    reader = Reader(lines=LINES[1:])
    assert ocr_cache.cached_lines(DIGEST, lambda: newer, reader) == LINES[1:] and reader.reads == 1
    turned = {**ENGINE, "settings": {"use_cls": True}}
    reader = Reader(lines=())
    assert ocr_cache.cached_lines(DIGEST, lambda: turned, reader) == () and reader.reads == 1
    assert len(entries(cache)) == 3


def test_readers_of_one_page_at_once_read_it_once(cache: Path) -> None:
    reader = Reader(pause=0.2)
    answers: list[tuple[ocr_cache.Line, ...]] = []
    threads = [
        threading.Thread(
            target=lambda: answers.append(ocr_cache.cached_lines(DIGEST, lambda: ENGINE, reader))
        )
        for _ in range(3)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert answers == [LINES] * 3 and reader.reads == 1


def test_without_the_variable_nothing_is_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ocr_cache.VARIABLE, raising=False)
    monkeypatch.chdir(tmp_path)
    reader = Reader()
    for _ in range(2):
        assert ocr_cache.cached_lines(DIGEST, lambda: ENGINE, reader) == LINES
    assert reader.reads == 2 and not list(tmp_path.iterdir())


def test_the_engine_keys_its_entries_by_its_version_and_settings_and_spaces_cached_lines(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The engine's identity names its installed version and the setting that changes its reading; its
    lines come from the cache (the engine not loaded) with their spaces put back as the engine's own."""
    found = engine.identity()
    assert found["name"] == engine.ENGINE and found["versions"][engine.ENGINE]
    assert found["settings"] == {"use_cls": False}

    def no_engine(image: bytes) -> tuple[ocr_cache.Line, ...]:
        raise AssertionError("the engine ran on a cached page")

    image = b"not read: its entry answers"
    digest = hashlib.sha256(image).hexdigest()
    ocr_cache.cached_lines(digest, engine.identity, Reader())
    monkeypatch.setattr(engine, "_engine_lines", no_engine)
    engine._read.cache_clear()
    assert [text for _, text, _ in engine._read(digest, image)] == ["Total: 1,100.00", "£ 5"]
