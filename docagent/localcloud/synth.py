"""The app synthesized with the local profile: what ``docagent local deploy``, the demo and the crash matrix
deploy on a local cloud. A synthesis is reused while it is newer than every source and was made with the
same context (cdk.out.local/docagent-context.json)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from docagent import project
from docagent.localcloud.ticket_service import TICKET_API_URL_PARAMETER

# The local profile changes only what cannot exist on a laptop: the ticket system (the local cloud's ticket
# service over HTTP, its URL resolved from SSM at deploy time) and fault injection (armed per job; a no-op
# unless a job asks for a fault). The model path is production's: BedrockConverseProvider calls Converse at
# the local cloud's endpoint (AWS_ENDPOINT_URL), served by its local Bedrock (docagent/localcloud/bedrock.py).
LOCAL_PROFILE = {
    "model_provider": "bedrock",
    "fault_injection_enabled": True,
    "ticket_adapter": "http",
    "ticket_api_url": "{{resolve:ssm:" + TICKET_API_URL_PARAMETER + "}}",
}
SOURCES = ("app.py", "cdk.json", "stacks", "functions", "statemachines")


def local_context(overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """cdk.json's context with the local profile, then ``overrides``, on its ``docagent`` entry."""
    context = json.loads((project.ROOT / "cdk.json").read_text())["context"]
    context["docagent"] = {**context.get("docagent", {}), **LOCAL_PROFILE, **(overrides or {})}
    return dict(context)


def _newest_source_mtime() -> float:
    newest = 0.0
    for name in SOURCES:
        path = project.ROOT / name
        files = (
            [path]
            if path.is_file()
            else [p for p in path.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
        )
        newest = max([newest, *(f.stat().st_mtime for f in files)])
    return newest


def _synthesized(out_dir: Path, context: dict[str, Any], newest_source: float) -> bool:
    """Whether ``out_dir`` holds a synthesis of ``context`` newer than every source."""
    marker = out_dir / "docagent-context.json"
    return (
        marker.exists()
        and json.loads(marker.read_text()) == context
        and marker.stat().st_mtime >= newest_source
    )


def synth_local(out_dir: Path = project.LOCAL_CDK_OUT) -> Path:
    """Synthesize the app with the local profile unless cdk.out.local is newer than every source."""
    context = local_context()
    if not _synthesized(out_dir, context, _newest_source_mtime()):
        env = {**os.environ, "CDK_OUTDIR": str(out_dir), "CDK_CONTEXT_JSON": json.dumps(context)}
        subprocess.run([sys.executable, "app.py"], cwd=project.ROOT, env=env, check=True, capture_output=True)
        (out_dir / "docagent-context.json").write_text(json.dumps(context))
    return out_dir


# Several variants in one CDK process: the jsii runtime starts once, so two take ~1.2 times one.
_SYNTH_VARIANTS = (
    "import json, sys\n"
    "from app import build_app\n"
    "for out_dir, context in json.loads(sys.argv[1]):\n"
    "    build_app(context, outdir=out_dir)[0].synth()\n"
)


def synth_local_variants(variants: Sequence[tuple[Path, dict[str, Any] | None]]) -> list[Path]:
    """``synth_local`` for several out dirs at once, each with its own overrides of the local profile (e.g.
    ``{"child_execution_type": "EXPRESS", "stack_name": ...}``); fresh ones are not synthesized again."""
    newest = _newest_source_mtime()
    contexts = [(out_dir, local_context(overrides)) for out_dir, overrides in variants]
    stale = [
        (out_dir, context) for out_dir, context in contexts if not _synthesized(out_dir, context, newest)
    ]
    if stale:
        argument = json.dumps([[str(out_dir), context] for out_dir, context in stale])
        subprocess.run(
            [sys.executable, "-c", _SYNTH_VARIANTS, argument],
            cwd=project.ROOT,
            env={name: value for name, value in os.environ.items() if not name.startswith("CDK_")},
            check=True,
            capture_output=True,
        )
        for out_dir, context in stale:
            (out_dir / "docagent-context.json").write_text(json.dumps(context))
    return [out_dir for out_dir, _ in variants]
