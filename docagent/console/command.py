"""``docagent console [--port N] [--reviewer NAME]``: serve the console against the running local cloud, a
local cloud's ``--endpoint``, or AWS (``--aws``, with the operator's own credentials), until Ctrl-C."""

from __future__ import annotations

import argparse
import getpass
import sys
import threading

from docagent.operations.context import (
    EXIT_BAD_REQUEST,
    EXIT_OK,
    OperatorContext,
    OperatorError,
    command,
    console,
    emit,
    target_arguments,
)

DEFAULT_PORT = 8470


def register(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    common: argparse.ArgumentParser,
) -> None:
    serve = commands.add_parser(
        "console",
        parents=[common, target_arguments()],
        help="a web page on 127.0.0.1 to watch and steer jobs and review documents (Ctrl-C stops it)",
    )
    serve.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=f"the port (default {DEFAULT_PORT}; 0: any)"
    )
    serve.add_argument("--reviewer", help="who acts from this console (default: the current user)")
    serve.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME[:PORT]",
        help="another Host name the console answers (behind a tunnel, say); 127.0.0.1 and localhost always",
    )
    serve.set_defaults(handler=cmd_console)


@command
def cmd_console(args: argparse.Namespace) -> int:
    from docagent.console.app import ReviewConsole, serve  # noqa: PLC0415 (Jinja2 only when serving)

    ctx = OperatorContext.from_args(args)
    ctx.state_machine_arn  # noqa: B018 (refuse a deployment without the stack's outputs before serving)
    try:
        server = serve(ReviewConsole(ctx, args.reviewer or getpass.getuser()), args.port, args.allow_host)
    except OSError as error:
        raise OperatorError(
            f"cannot serve on 127.0.0.1:{args.port}: {error.strerror}", EXIT_BAD_REQUEST
        ) from None
    emit(
        args,
        {"url": server.url, "where": ctx.where, "stack_name": ctx.stack_name},
        lambda: console.print(f"docagent console on {server.url} ({ctx.where}); Ctrl-C stops it"),
    )
    sys.stdout.flush()
    stop = threading.Event()
    try:
        stop.wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.shutdown()
        server.server_close()
    return EXIT_OK
