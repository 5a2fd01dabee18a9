"""`docagent experiment` without the experiment extra (LangGraph, matplotlib): it runs what it can, skips the
LangGraph rows and the plots, and says what to install, instead of ending in a ModuleNotFoundError."""

from __future__ import annotations

import json
import sys

from docagent import cli
from docagent.drills.experiment.cli import PLOTS_MISSING


def test_without_the_extra_the_plots_are_skipped_with_what_to_install(tmp_path, monkeypatch, capsys):
    for name in ("matplotlib", "matplotlib.pyplot", "langgraph"):
        monkeypatch.setitem(sys.modules, name, None)  # unimportable, as when the extra is not installed
    out = tmp_path / "out"
    arguments = ["experiment", "--documents", "6", "--kill-at", "2", "--repeat", "1", "--growth"]
    arguments += ["--strategies", "none,langgraph", "--out", str(out)]
    capsys.readouterr()
    assert cli.main([*arguments, "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["plots_skipped"] == PLOTS_MISSING and "pip install -e '.[experiment]'" in PLOTS_MISSING
    assert summary["skipped"] and all(name.startswith("langgraph") for name in summary["skipped"])
    assert [row["name"] for row in summary["strategies"]] == ["none"]
    assert sorted(path.name for path in out.iterdir()) == ["experiment.json", "table.md"]

    assert cli.main(arguments) == 0  # the human form says it before the runs
    printed = capsys.readouterr()
    assert f"note: {PLOTS_MISSING}" in printed.err and "Traceback" not in printed.err
