"""``docagent definition validate`` against a reachable deployment refuses what ``publish`` and ``start``
would (#40): an action target or secret the deployment does not allow, named at the right field; a model
job.json ``models`` names that the deployment's functions may not call (#42: its MODELS_ALLOWED)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from docagent.cli import main
from docagent.kit.loader import read_bundle

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "invoices"


def job_sha(folder: Path) -> str:
    return read_bundle(folder).sha256


def test_validate_refuses_what_publish_refuses_and_names_the_secret(docagent, tmp_path: Path) -> None:
    folder = tmp_path / "invoices"
    shutil.copytree(EXAMPLE, folder)
    job = json.loads((folder / "job.json").read_text())
    job["actions"] = [
        {"type": "http", "name": "team", "url": "https://hooks.team.example/intake"},
        {
            "type": "http",
            "name": "ticket",
            "url": "destination:tickets",
            "secret": "ssm:/elsewhere/token",
        },
    ]
    (folder / "job.json").write_text(json.dumps(job))

    code, validated = docagent("definition", "validate", str(folder))
    assert code == 2 and not validated["ok"]
    assert "checked against the deployment" in validated["actions_checked"]
    where = {problem["where"]: problem["message"] for problem in validated["problems"]}
    assert "hooks.team.example is not allowed" in where["$.actions[0].url"]
    assert "/elsewhere/token" in where["$.actions[1].secret"]  # the secret's own field, not .url
    assert "$.actions[1].url" not in where  # its destination is allowed

    code, published = docagent("definition", "publish", str(folder))
    assert code == 2 and published["error_type"] == "DefinitionInvalid"
    assert len(published["problems"]) == len(validated["problems"])


def test_validate_publish_and_start_refuse_a_model_the_deployment_does_not_allow(
    docagent, tmp_path: Path
) -> None:
    """The local cloud allows the models the local cdk.json names (model_id; no extra_model_ids): a definition
    whose cheap model is another is refused by validate, publish and start, at ``$.models[0]``, with the fix;
    nothing is published."""
    folder = tmp_path / "invoices"
    shutil.copytree(EXAMPLE, folder)
    deployed = json.loads((ROOT / "cdk.json").read_text())["context"]["docagent"]["model_id"]
    cheap = "anthropic.claude-3-haiku-20240307-v1:0"
    job = json.loads((folder / "job.json").read_text())
    job["models"] = [cheap, deployed]
    (folder / "job.json").write_text(json.dumps(job))

    code, validated = docagent("definition", "validate", str(folder))
    assert code == 2 and not validated["ok"]
    assert "models checked against the deployment" in validated["models_checked"]
    assert deployed in validated["models_checked"]
    [problem] = validated["problems"]
    assert (problem["file"], problem["where"]) == ("job.json", "$.models[0]")
    assert cheap in problem["message"] and "extra_model_ids" in problem["fix"]

    code, published = docagent("definition", "publish", str(folder))
    assert code == 2 and published["error_type"] == "DefinitionInvalid"
    assert any("$.models[0]" in line for line in published["problems"])

    documents = tmp_path / "documents"
    documents.mkdir()
    (documents / "one.txt").write_text("INVOICE 1")
    code, started = docagent("start", "--job", str(folder), "--from-dir", str(documents))
    assert code == 2 and started["error_type"] == "DefinitionInvalid"
    assert any("$.models[0]" in line for line in started["problems"])
    code, _ = docagent("definition", "show", "invoices", "--version", job_sha(folder))
    assert code == 3  # that version was never published


def test_local_secret_stores_an_actions_secret_where_the_definition_names_it(cloud, aws, capsys) -> None:
    """`docagent local secret ssm:/NAME` (#40): RunActions reads it from the local SSM as from AWS's."""
    capsys.readouterr()
    code = main(
        [
            "local",
            "secret",
            "ssm:/team/intake-token",
            "--value",
            "s3cr3t",
            "--endpoint",
            cloud.endpoint,
            "--json",
        ]
    )
    assert code == 0 and json.loads(capsys.readouterr().out) == {
        "secret": "ssm:/team/intake-token",
        "stored": True,
    }
    found = aws("ssm").get_parameter(Name="/team/intake-token", WithDecryption=True)["Parameter"]
    assert (found["Value"], found["Type"]) == ("s3cr3t", "SecureString")
    code = main(["local", "secret", "team-token", "--value", "x", "--endpoint", cloud.endpoint])
    assert code == 2
