"""Flask's debug-mode aid for HTML forms, left out of the local cloud's requests.

moto runs each service's Flask app with ``debug = True`` (moto/moto_server/werkzeug_app.py), and Flask, in
debug mode, gives every request whose body is not ``multipart/form-data`` a new subclass of its ``files``
dictionary (``flask.debughelpers.attach_enctype_error_multidict``, called from ``Request._load_form_data``)
so that a browser form sent without ``enctype="multipart/form-data"`` gets a clearer KeyError. A class made
per request costs CPU and leaves a reference cycle for the collector: 2.8 % of the endpoint's
request-serving CPU in a profile of the 200-document demo (py-spy, 2026-12-02; Flask 3.1). The aid is
given only to requests without an uploaded file, and moto reads ``request.files`` only when it holds one
(moto/core/responses.py, ``setup_class``): it changes nothing the local cloud answers.
Looked up 2026-12-02 in flask/wrappers.py: ``_load_form_data`` imports the helper from
``flask.debughelpers`` when it runs, so replacing the module's function takes effect at once.
"""

from __future__ import annotations

from flask import debughelpers
from flask.wrappers import Request

FLASK_AID = debughelpers.attach_enctype_error_multidict  # Flask's own, as imported before install()


def _no_form_aid(request: Request) -> None:
    """The request keeps Flask's own ``files`` dictionary."""


def install() -> None:
    debughelpers.attach_enctype_error_multidict = _no_form_aid
