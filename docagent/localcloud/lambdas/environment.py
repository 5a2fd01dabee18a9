"""A Lambda execution environment: one process, handler imported once, one invocation at a time.

Started by the local runtime with the function's environment. Requests arrive as JSON lines on the
file descriptor named by ``DOCAGENT_REQUEST_FD`` and answers leave on ``DOCAGENT_RESPONSE_FD``, so the
handler's own stdout and stderr stay free for its logs, as on Lambda.
"""

from __future__ import annotations

import importlib
import json
import os
import signal
import sys
import time
import traceback
from typing import Any


class LambdaContext:
    """The context object Lambda passes to a Python handler, with a real deadline."""

    def __init__(self, request: dict[str, Any]) -> None:
        self.aws_request_id: str = request["request_id"]
        self.function_name: str = os.environ["AWS_LAMBDA_FUNCTION_NAME"]
        self.function_version: str = os.environ.get("AWS_LAMBDA_FUNCTION_VERSION", "$LATEST")
        self.invoked_function_arn: str = request["function_arn"]
        self.memory_limit_in_mb: int = int(os.environ.get("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "128"))
        self.log_group_name: str = os.environ.get("AWS_LAMBDA_LOG_GROUP_NAME", "")
        self.log_stream_name: str = os.environ.get("AWS_LAMBDA_LOG_STREAM_NAME", "")
        self.identity = None
        self.client_context = None
        self._deadline: float = request["deadline"]

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self._deadline - time.time()) * 1000))


def _load_handler(handler: str) -> Any:
    module_name, _, function_name = handler.rpartition(".")
    return getattr(importlib.import_module(module_name), function_name)


def _error_payload(error: BaseException) -> dict[str, Any]:
    # The shape Lambda's Python runtime reports for an unhandled exception (docs/semantics.md L2).
    return {
        "errorMessage": str(error),
        "errorType": type(error).__name__,
        "requestId": "",
        # Lambda's runtime shows the handler's frames, not its own serving loop.
        "stackTrace": traceback.format_tb(error.__traceback__.tb_next if error.__traceback__ else None),
    }


def _reset_peak_memory() -> None:
    """Linux: start the peak resident size (VmHWM) over from the current one (``5`` to clear_refs)."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as refs:
            refs.write("5")
    except OSError:
        pass


def _peak_memory_mb() -> float | None:
    """The process's peak resident size since the last reset, in MB (None where /proc does not say): what
    Lambda reports as "Max Memory Used" for the invocation."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return None


def _profiler() -> Any:
    import cProfile  # noqa: PLC0415 (only when profiling: a worker's start imports nothing more)

    return cProfile.Profile(time.process_time, builtins=False)  # docagent/drills/profiling.py


def serve() -> None:
    sys.path.insert(0, os.environ["LAMBDA_CODE_ROOT"])
    requests = os.fdopen(int(os.environ["DOCAGENT_REQUEST_FD"]), "r", encoding="utf-8")
    responses = os.fdopen(int(os.environ["DOCAGENT_RESPONSE_FD"]), "w", encoding="utf-8")
    try:
        handler = _load_handler(os.environ["_HANDLER"])
        init_error: dict[str, Any] | None = None
    except Exception as error:  # an init error fails every invocation, as on Lambda
        handler, init_error = None, _error_payload(error)
        init_error["errorType"] = "Runtime.ImportModuleError"
    # Init is done: Lambda starts an invocation's clock only now, so a cold start never eats the timeout.
    # `docagent bench --profile DIR` (docagent/drills/profiling.py): each invocation's CPU, by function called
    profile_dir = os.environ.get("DOCAGENT_PROFILE_DIR")
    profile = _profiler() if profile_dir else None
    profile_path = f"{profile_dir}/worker-{os.environ.get('AWS_LAMBDA_FUNCTION_NAME')}-{os.getpid()}.prof"
    responses.write(json.dumps({"ready": True}) + "\n")
    responses.flush()
    for line in requests:
        request = json.loads(line)
        if init_error is not None:
            answer: dict[str, Any] = {"error": init_error}
        else:
            # Lambda stops a function at its timeout. The runtime kills this process then too, but on a
            # loaded machine its thread can be late; the OS timer ends the process at the deadline itself
            # (SIGALRM's default action), so no work, such as a write after an idempotency record expired,
            # happens past it. The runtime reports that death as Sandbox.Timedout.
            signal.setitimer(signal.ITIMER_REAL, max(request["deadline"] - time.time(), 0.001))
            _reset_peak_memory()
            if profile is not None:
                profile.enable()
            try:
                result = handler(request["event"], LambdaContext(request))
                answer = {"result": result}
            except Exception as error:
                answer = {"error": _error_payload(error) | {"requestId": request["request_id"]}}
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
                if profile is not None:
                    profile.disable()
                    profile.dump_stats(profile_path)
        sys.stdout.flush()
        sys.stderr.flush()
        answer["max_memory_mb"] = _peak_memory_mb()
        responses.write(json.dumps(answer, default=str) + "\n")
        responses.flush()


if __name__ == "__main__":
    serve()
