"""The app synthesized with the local profile: what ``docagent local deploy``, the demo, the crash matrix and
the tests deploy on a local cloud.

Synthesis once per change: an assembly is kept in the synthesis cache (``project.SYNTH_CACHE``, shared by
every state directory, so each test session's and each demo's own state reuse it) under the hash of
everything it is made of: app.py, cdk.json, stacks/, functions/, statemachines/ (path and bytes of every
file), the context with the local profile and its overrides, the Python version and every installed
distribution's name and version. The same inputs give the same directory, so a hit skips synthesis (jsii's
runtime and the app: about 10-15 s), and nothing has to decide whether an earlier synthesis is stale.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from docagent import project
from docagent.localcloud.ticket_service import LOCAL_EVENT_BUS, LOCAL_TOPIC_ARN, TICKET_API_URL_PARAMETER

# The local profile changes only what cannot exist on a laptop: the http actions' destination ``tickets``
# (the local cloud's ticket service over HTTP, its URL resolved from SSM at deploy time; examples/invoices
# names it; the local event bus and topic are allowed too) and fault injection (armed per job; a no-op
# unless a job asks for a fault). The model path is production's: BedrockConverseProvider calls Converse at
# the local cloud's endpoint (AWS_ENDPOINT_URL), served by its local Bedrock
# (docagent/localcloud/bedrock/converse_api.py).
# CDK's context key naming the stacks whose assets are bundled (aws-cdk-lib cx-api BUNDLING_STACKS).
BUNDLING_STACKS = "aws:cdk:bundling-stacks"
LOCAL_PROFILE = {
    "model_provider": "bedrock",
    "fault_injection_enabled": True,
    # The local batch jobs end in seconds and their state-change events arrive: poll every minute all the
    # same (3 s at the demo's time scale of 0.05: longer than a local invocation of the wait takes).
    "batch_poll_seconds": 60,
    "actions": {
        "destinations": {"tickets": "{{resolve:ssm:" + TICKET_API_URL_PARAMETER + "}}/tickets"},
        "event_buses": [LOCAL_EVENT_BUS],
        "topics": [LOCAL_TOPIC_ARN],
    },
}
SOURCES = ("app.py", "cdk.json", "stacks", "functions", "statemachines")
# Bumped when what the cache stores (or how synthesis is run) changes.
CACHE_FORMAT = "1"
KEY_FILE = "docagent-synth-key.json"
# Entries kept after a synthesis (the newest): every edit of a source makes a new one (~1 MB each).
KEEP_ENTRIES = 8


def local_context(overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """cdk.json's context with the local profile, then ``overrides``, on its ``docagent`` entry. The profile's
    ``actions`` are added to cdk.json's, not put in their place: the hosts, destinations and secrets a team
    allows reach locally what they reach on AWS (docs/actions.md, "Locally"); only the ``tickets``
    destination becomes the local ticket service."""
    context = json.loads((project.ROOT / "cdk.json").read_text())["context"]
    deployed = context.get("docagent", {})
    actions = merged_actions(deployed.get("actions") or {}, LOCAL_PROFILE["actions"])  # type: ignore[arg-type]
    context["docagent"] = {**deployed, **LOCAL_PROFILE, "actions": actions, **(overrides or {})}
    # No asset is bundled locally: the layers' content is the interpreter's own libraries (cfn_resources.py
    # checks their pins), so a synth never runs pip for the document layer's Lambda wheels.
    context[BUNDLING_STACKS] = []
    return dict(context)


def merged_actions(deployed: dict[str, Any], local: dict[str, Any]) -> dict[str, Any]:
    """cdk.json's ``actions`` with the local profile's added: lists joined, destinations merged (the local one
    of a name wins)."""
    merged: dict[str, Any] = {key: value for key, value in deployed.items()}
    for key, value in local.items():
        if isinstance(value, dict):
            merged[key] = {**(deployed.get(key) or {}), **value}
        else:
            merged[key] = [
                *(deployed.get(key) or []),
                *(item for item in value if item not in (deployed.get(key) or [])),
            ]
    return merged


def _source_files(root: Path) -> list[Path]:
    files: list[Path] = []
    for name in SOURCES:
        path = root / name
        if path.is_file():
            files.append(path)
        elif path.is_dir():
            files.extend(
                p
                for p in path.rglob("*")
                if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
            )
    return sorted(files)


def installed_distributions() -> list[str]:
    """``name-version`` of every distribution installed in this interpreter's site-packages, from the names
    of their metadata folders (pip writes ``{name}-{version}.dist-info``): milliseconds, where reading each
    one's metadata takes a fifth of a second. Not from ``sys.path``, which changes with how Python started."""
    folders = {Path(sysconfig.get_paths()[name]) for name in ("purelib", "platlib")}
    return sorted(
        path.name
        for folder in folders
        if folder.is_dir()
        for pattern in ("*.dist-info", "*.egg-info")
        for path in folder.glob(pattern)
    )


def synth_key(context: dict[str, Any], root: Path = project.ROOT) -> str:
    """The hash of every input of a synthesis of ``context``: equal keys, equal assemblies."""
    digest = hashlib.sha256()
    header = {
        "format": CACHE_FORMAT,
        "python": sys.version,
        "distributions": installed_distributions(),
        "context": context,
    }
    digest.update(json.dumps(header, sort_keys=True).encode())
    for path in _source_files(root):
        content = path.read_bytes()
        digest.update(f"\0{path.relative_to(root).as_posix()}\0{len(content)}\0".encode())
        digest.update(content)
    return digest.hexdigest()


def cached_assembly(context: dict[str, Any]) -> Path:
    """Where the assembly of ``context`` is (or will be) kept."""
    return project.SYNTH_CACHE / synth_key(context)[:32]


# Several variants in one CDK process: the jsii runtime starts once, so two take ~1.2 times one.
_SYNTH_VARIANTS = (
    "import json, sys\n"
    "from app import build_app\n"
    "for out_dir, context in json.loads(sys.argv[1]):\n"
    "    build_app(context, outdir=out_dir)[0].synth()\n"
)


def _synthesize(targets: Sequence[tuple[Path, dict[str, Any]]]) -> None:
    """Synthesize each context into a staging folder next to its cache entry, then move it in place: a
    crash mid-synthesis, or another process synthesizing the same key, never leaves a partial entry."""
    staged = [(entry.with_name(f"{entry.name}.{uuid.uuid4().hex}.partial"), entry, c) for entry, c in targets]
    argument = json.dumps([[str(staging), context] for staging, _, context in staged])
    project.SYNTH_CACHE.mkdir(parents=True, exist_ok=True)
    try:
        subprocess.run(
            [sys.executable, "-c", _SYNTH_VARIANTS, argument],
            cwd=project.ROOT,
            # The context is the whole input: nothing of the caller's CDK_* settings reaches the app.
            env={name: value for name, value in os.environ.items() if not name.startswith("CDK_")},
            check=True,
            capture_output=True,
        )
        for staging, entry, context in staged:
            (staging / KEY_FILE).write_text(json.dumps({"key": entry.name, "context": context}))
            # Another process may have cached the same key first: the same assembly, kept.
            with contextlib.suppress(OSError):
                staging.rename(entry)
    finally:
        for staging, _, _ in staged:
            shutil.rmtree(staging, ignore_errors=True)
    _prune(keep={entry for entry, _ in targets})


def _prune(keep: set[Path]) -> None:
    """Remove all but the ``KEEP_ENTRIES`` newest entries (never those just made)."""
    entries = [path for path in project.SYNTH_CACHE.iterdir() if path.is_dir() and "." not in path.name]
    entries.sort(key=lambda path: path.stat().st_mtime, reverse=True)
    for old in entries[KEEP_ENTRIES:]:
        if old not in keep:
            shutil.rmtree(old, ignore_errors=True)


def _stale(entries: Sequence[Path], contexts: Sequence[dict[str, Any]]) -> list[tuple[Path, dict[str, Any]]]:
    """The entries (with their contexts) the cache does not hold yet, each once."""
    missing = {entry: context for entry, context in zip(entries, contexts, strict=True) if not entry.is_dir()}
    return list(missing.items())


@contextlib.contextmanager
def _synthesis_lock() -> Iterator[None]:
    """An exclusive lock on the synthesis cache, held while synthesizing (released when its process dies).
    Beside the cache, not in it: the cache holds entries only."""
    lock = project.SYNTH_CACHE.with_name(f"{project.SYNTH_CACHE.name}.lock")
    lock.parent.mkdir(parents=True, exist_ok=True)
    with lock.open("a") as file:
        fcntl.flock(file, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(file, fcntl.LOCK_UN)


def synth_local_variants(overrides: Sequence[dict[str, Any] | None]) -> list[Path]:
    """The local profile's assembly for each of ``overrides`` (e.g. ``{"child_execution_type": "EXPRESS",
    "stack_name": ...}``), synthesized together in one CDK process unless the cache holds it."""
    contexts = [local_context(each) for each in overrides]
    entries = [cached_assembly(context) for context in contexts]
    if _stale(entries, contexts):
        # One synthesis at a time: a process that finds an entry missing waits for the one synthesizing it,
        # then finds it there (two demos, or test workers, started together each synthesized the same
        # assembly: ~6 s of CPU each, 2026-12-04).
        with _synthesis_lock():
            if stale := _stale(entries, contexts):
                _synthesize(stale)
    for entry in entries:
        os.utime(entry)  # recently used: kept by _prune
    return entries


def synth_local(overrides: dict[str, Any] | None = None) -> Path:
    """The app's assembly with the local profile (and ``overrides``), synthesized only on a cache miss."""
    return synth_local_variants([overrides])[0]
