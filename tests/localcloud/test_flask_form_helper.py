"""Flask's debug-mode form aid makes no class per request in the local cloud (flask_form_helper.py)."""

from __future__ import annotations

import pytest
from flask import Flask, debughelpers, request
from werkzeug.datastructures import ImmutableMultiDict

from docagent.localcloud import flask_form_helper


def files_class_of_a_form_request() -> type:
    app = Flask("form-aid")
    app.debug = True  # as moto makes each service's app
    with app.test_request_context("/", method="POST", data={"Action": "PutItem"}):
        assert request.form["Action"] == "PutItem"
        assert not request.files
        return type(request.files)


def test_a_request_keeps_the_files_dictionary_flask_made(monkeypatch: pytest.MonkeyPatch) -> None:
    # Flask's own aid (a local cloud of an earlier test may have installed ours); put back after the test
    monkeypatch.setattr(debughelpers, "attach_enctype_error_multidict", flask_form_helper.FLASK_AID)
    assert files_class_of_a_form_request() is not ImmutableMultiDict, "Flask alone: a subclass per request"
    flask_form_helper.install()
    assert files_class_of_a_form_request() is ImmutableMultiDict
