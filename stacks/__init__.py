"""The CDK app's constructs, and the plain modules the CLI reads too (config, outputs, powertools).

Importing the package quiets jsii's Node release banner. jsii's runtime (jsii 1.142.0,
``jsii/_embedded/jsii/bin/jsii-runtime.js``, ``checkNode``; read 2026-12-07) prints a banner on every start
under a Node release past jsii's support (Node 20 since 2026-10-30, Node 18 before it) or deprecated, and
jsii's Python client echoes each runtime stderr line it cannot parse as raw bytes
(``jsii/_kernel/providers/process.py``, ``stderr_sink``): ``b'!!!...'`` lines in every synth's output. The
runtime skips the banner when ``JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION`` lists the Node major
(comma-separated) and, for a deprecated release, when ``JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION`` is
set. They are set here, unless the shell set them, before any module imports aws_cdk (which starts the
runtime): the app (app.py) imports this package first. docs/contributing.md names the supported releases.
"""

from __future__ import annotations

import os

NODE_MAJORS_PAST_JSII_SUPPORT = "18,20"
os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", NODE_MAJORS_PAST_JSII_SUPPORT)
os.environ.setdefault("JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION", "1")
