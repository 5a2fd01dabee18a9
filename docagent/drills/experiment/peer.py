"""The peer: the same job as a LangGraph graph with its SQLite checkpointer (the ``experiment`` extra).

``python -m docagent.drills.experiment.peer SHAPE DURABILITY RUN_DIR --documents N [--kill-at K] [--resume]``

Two shapes, the two ways LangGraph users write a batch:
- ``loop``: one ``review`` node per document, looping back to itself until the last one, then ``ticket``;
- ``fanout``: ``plan`` fans out one ``Send("review", ...)`` per document, ``reduce`` gathers, then ``ticket``.

Durability modes as LangGraph documents them (as of 2026-11, docs.langchain.com/oss/python/langgraph/
durable-execution and reference.langchain.com/python/langgraph/types/Durability): ``sync`` persists
each checkpoint before the next step starts, ``async`` while the next step runs, ``exit`` only when the graph
exits. Resume is as documented: invoke the graph again with ``None`` as input and the same ``thread_id``; the
checkpointer's pending writes mean tasks that finished within an interrupted super-step are not run again.
When the thread holds no checkpoint at all (``exit`` after a SIGKILL), there is nothing to resume and the
worker starts the job again with its input, as its operator would.
"""

from __future__ import annotations

import argparse
import operator
import sqlite3
from pathlib import Path
from typing import Annotated, Any, Literal, TypedDict

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Send

from docagent.drills.experiment.workload import Workload, say

CHECKPOINT_FILE = "langgraph.sqlite"
SHAPES = ("loop", "fanout")
DURABILITIES = ("exit", "async", "sync")


class JobState(TypedDict, total=False):
    documents: int
    next: int
    results: Annotated[list[dict[str, Any]], operator.add]
    ticket: dict[str, Any]


class ReviewInput(TypedDict):
    index: int


def build(shape: str, workload: Workload, job_id: str, checkpointer: SqliteSaver) -> Any:
    def review_next(state: JobState) -> JobState:
        index = state.get("next", 0)
        result = workload.review(index)
        workload.finished(result)
        return {"next": index + 1, "results": [result]}

    def review_one(state: ReviewInput) -> JobState:
        result = workload.review(state["index"])
        workload.finished(result)
        return {"results": [result]}

    def ticket(state: JobState) -> JobState:
        workload.write_report(state["results"])
        return {"ticket": workload.open_ticket(job_id, state["results"])}

    graph = StateGraph(JobState)
    graph.add_node("ticket", ticket)
    graph.add_edge("ticket", END)
    if shape == "loop":

        def after_review(state: JobState) -> Literal["review", "ticket"]:
            return "review" if state["next"] < state["documents"] else "ticket"

        graph.add_node("review", review_next)
        graph.add_edge(START, "review")
        graph.add_conditional_edges("review", after_review)
    else:

        def fan_out(state: JobState) -> list[Send]:
            return [Send("review", {"index": index}) for index in range(state["documents"])]

        graph.add_node("plan", lambda state: {})
        graph.add_node("review", review_one)
        graph.add_node("reduce", lambda state: {})
        graph.add_edge(START, "plan")
        graph.add_conditional_edges("plan", fan_out, ["review"])
        graph.add_edge("review", "reduce")
        graph.add_edge("reduce", "ticket")
    return graph.compile(checkpointer=checkpointer)


def run(shape: str, durability: str, workload: Workload, job_id: str, resume: bool) -> None:
    connection = sqlite3.connect(workload.run_dir / CHECKPOINT_FILE, check_same_thread=False)
    saver = SqliteSaver(connection)
    graph = build(shape, workload, job_id, saver)
    config: RunnableConfig = {
        "configurable": {"thread_id": job_id},
        "recursion_limit": 10 * workload.documents + 100,
    }
    workload.prepare()
    # Any checkpoint on the thread is resumed with None. (Not ``get_state(config).next``: once the tasks of
    # the last saved checkpoint have saved their writes, it is empty although the graph has not finished.)
    resumable = resume and saver.get_tuple(config) is not None
    say("start" if not resume else ("resume" if resumable else "restart"))
    job_input = None if resumable else {"documents": workload.documents, "next": 0, "results": []}
    graph.invoke(job_input, config, durability=durability)
    connection.close()
    say("end")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("shape", choices=SHAPES)
    parser.add_argument("durability", choices=DURABILITIES)
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--documents", type=int, required=True)
    parser.add_argument("--kill-at", type=int)
    parser.add_argument("--latency-ms", type=int, default=0, help="added to every model call")
    parser.add_argument("--resume", action="store_true", help="resume the thread with None as input")
    parser.add_argument("--job-id", default="experiment")
    args = parser.parse_args(argv)
    workload = Workload(args.run_dir, args.documents, args.kill_at, args.latency_ms)
    run(args.shape, args.durability, workload, args.job_id, args.resume)


if __name__ == "__main__":
    main()
