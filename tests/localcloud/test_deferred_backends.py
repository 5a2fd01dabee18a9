"""moto's Batch and EC2 backends load when used, not when the local cloud's modules are imported
(docagent/localcloud/deferred_backends.py); used, they are moto's own. Run in a fresh interpreter: what is
imported is the process's."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import json, sys
import docagent.localcloud.patches, docagent.localcloud.server
found = {"imported": sorted(m for m in ("moto.ec2.models", "moto.batch.models") if m in sys.modules)}
from moto.backends import get_backend
from moto.core.base_backend import BackendDict
import moto.ssm.models
found["ssm_left_ec2"] = "moto.ec2.models" not in sys.modules
ec2 = get_backend("ec2")
found["ec2_is_motos"] = isinstance(ec2, BackendDict)
account = "123456789012"
region = "us-east-1"
found["ssm_sees_the_same_ec2"] = moto.ssm.models.ec2_backends[account][region] is ec2[account][region]
from moto.batch import batch_backends
found["batch_is_motos"] = isinstance(batch_backends, BackendDict) and get_backend("batch") is batch_backends
from moto.batch.utils import JobStatus
found["job_status"] = JobStatus.SUCCEEDED.value
print(json.dumps(found))
"""


def test_batch_and_ec2_load_when_used_and_are_motos_own() -> None:
    ran = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, timeout=300, check=True
    )
    found = json.loads(ran.stdout.strip().splitlines()[-1])
    assert found == {
        "imported": [],
        "ssm_left_ec2": True,
        "ec2_is_motos": True,
        "ssm_sees_the_same_ec2": True,
        "batch_is_motos": True,
        "job_status": "SUCCEEDED",
    }
