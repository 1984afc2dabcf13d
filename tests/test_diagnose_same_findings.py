"""The same network judged as a template by ``check`` and live by ``diagnose`` gives the same findings.

The default app is synthesized once (conftest), its network is built in moto's server through
the EC2 and FSx APIs from the template's own resolved values (tests/_live_replay.py: moto's
CloudFormation holds the same resources after ``make deploy-local``, but its FSx double creates
no network interfaces and the replay keeps each logical id's physical id), and then:

1. as deployed: ``check`` finds nothing in the template, ``diagnose`` nothing in the account;
2. the EFA group's self egress rule is revoked through the EC2 API (someone in the console):
   ``diagnose`` names exactly SMDDP-SG2 on that group, and ``check`` names the same rule on the
   same group in the template without that rule;
3. repaired through the API: nothing again.

What a live read cannot see is said, not guessed: moto's FSx reports no network interfaces,
so the file system's groups (SMDDP-FSX3/FSX4) are "not evaluated" live.
"""

from __future__ import annotations

import copy
import json
import logging
from typing import Any, Iterator

import pytest

from smddp_infra.cli import main
from smddp_infra.rules import check_template

pytestmark = pytest.mark.slow

REGION = "us-east-1"
SELF_EGRESS = "TrainingNetworkEfaSelfEgressA8D44125"
EFA_GROUP = "TrainingNetworkEfaGroupADA42E2E"
SUBNET = "TrainingNetworkVpcTrainingSubnet1Subnet31BC44F6"
FILE_SYSTEM = "TrainingNetworkLustreFileSystemBFD42804"


@pytest.fixture(scope="module")
def live(default_app: Any) -> Iterator[tuple[dict[str, Any], dict[str, str], Any, str]]:
    import boto3
    from moto.server import ThreadedMotoServer

    from _live_replay import Replay

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    _, port = server.get_host_and_port()
    url = f"http://127.0.0.1:{port}"
    session = boto3.session.Session(aws_access_key_id="testing", aws_secret_access_key="testing", region_name=REGION)
    ec2, fsx = session.client("ec2", endpoint_url=url), session.client("fsx", endpoint_url=url)
    template = default_app.json
    physical = Replay(template, ec2, fsx).build()
    yield template, physical, ec2, url
    server.stop()


@pytest.fixture()
def env(live: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_DEFAULT_REGION"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_ENDPOINT_URL", live[3])
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_REGION", REGION)


def _diagnose(physical: dict[str, str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    code = main(["diagnose", "--security-group", physical[EFA_GROUP], "--subnet", physical[SUBNET],
                 "--file-system", physical[FILE_SYSTEM], "--json"])
    return code, json.loads(capsys.readouterr().out)


def _template_findings(template: dict[str, Any], physical: dict[str, str]) -> set[tuple[str, str]]:
    return {(f.rule_id, physical.get(f.resource, f.resource)) for f in check_template(template, region=REGION)
            if f.severity.value != "info"}


def _live_findings(report: dict[str, Any]) -> set[tuple[str, str]]:
    """Findings on the account's resources (the planned placement is diagnose's own input, not a resource)."""
    return {(f["rule"], f["resource"]) for f in report["findings"] if f["severity"] != "info" and f["resource"] != "planned-training"}


def test_as_deployed_both_find_nothing(live: Any, env: None, capsys: pytest.CaptureFixture[str]) -> None:
    template, physical, _, _ = live
    code, report = _diagnose(physical, capsys)
    assert _template_findings(template, physical) == set()
    assert (code, [f for f in report["findings"] if f["severity"] != "info"]) == (0, [])
    assert any("FSX3/FSX4 not evaluated" in n for n in report["notEvaluated"])


def test_a_group_broken_in_the_console_is_named_by_both_then_repaired(live: Any, env: None, capsys: pytest.CaptureFixture[str]) -> None:
    template, physical, ec2, _ = live
    group = physical[EFA_GROUP]
    permission = [{"IpProtocol": "-1", "UserIdGroupPairs": [{"GroupId": group}]}]
    ec2.revoke_security_group_egress(GroupId=group, IpPermissions=permission)
    try:
        code, report = _diagnose(physical, capsys)
        broken = copy.deepcopy(template)
        del broken["Resources"][SELF_EGRESS]
        assert code == 1
        assert {f["rule"] for f in report["findings"] if f["severity"] != "info"} == {"SMDDP-SG2"}
        assert _live_findings(report) == _template_findings(broken, physical) == {("SMDDP-SG2", group)}
    finally:
        ec2.authorize_security_group_egress(GroupId=group, IpPermissions=permission)
    code, report = _diagnose(physical, capsys)
    assert (code, [f for f in report["findings"] if f["severity"] != "info"]) == (0, [])
