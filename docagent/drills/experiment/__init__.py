"""``docagent experiment``: checkpoint strategies side by side under the same SIGKILL (docs/experiment.md).

workload.py (the per-document work), worker.py and peer.py (the worker processes, hand-written and
LangGraph), batch_handler.py (the per-batch Lambda child), processes.py and cloud.py (running and killing
them), measures.py, runner.py and report.py (the table and the plots), cli.py (the command).
"""
