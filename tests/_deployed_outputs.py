"""cdk-outputs.json for a synthesized template, as `cdk deploy --outputs-file` would write it.

No AWS account here: each Ref/GetAtt a template's Outputs use is replaced by a physical id
of the shape CloudFormation returns for that resource type (subnet-..., sg-..., fs-...,
role ARNs, bucket names), derived deterministically from the logical id so that two
resources never share one. Outputs whose value needs anything else raise, so a new
intrinsic in our outputs is noticed here rather than silently written as text.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

ACCOUNT = "111122223333"


def _hex(logical_id: str, n: int = 17) -> str:
    return hashlib.sha256(logical_id.encode()).hexdigest()[:n]


def _ref(template: dict, logical_id: str) -> str:
    resource = template["Resources"][logical_id]
    kind = resource["Type"]
    ids = {
        "AWS::EC2::Subnet": "subnet-", "AWS::EC2::SecurityGroup": "sg-", "AWS::EC2::VPC": "vpc-",
        "AWS::FSx::FileSystem": "fs-",
    }
    if kind in ids:
        return ids[kind] + _hex(logical_id)
    if kind == "AWS::S3::Bucket":
        return f"{logical_id.lower()[:40]}-{_hex(logical_id, 12)}"
    if kind == "AWS::SSM::Parameter":
        return f"CFN-{logical_id}-{_hex(logical_id, 12)}"
    if kind in ("AWS::IAM::ManagedPolicy",):
        return f"arn:aws:iam::{ACCOUNT}:policy/{logical_id}-{_hex(logical_id, 12)}"
    if kind == "AWS::IAM::Role":
        return f"{logical_id}-{_hex(logical_id, 12)}"
    if kind in ("AWS::CloudWatch::Alarm", "AWS::CloudWatch::Dashboard"):  # generated names
        return f"Stack-{logical_id}-{_hex(logical_id, 12).upper()}"
    if kind == "AWS::SNS::Topic":
        return f"arn:aws:sns:us-east-1:{ACCOUNT}:Stack-{logical_id}-{_hex(logical_id, 12).upper()}"
    raise AssertionError(f"no physical id shape for Ref of {kind} ({logical_id})")


def _get_att(template: dict, logical_id: str, attribute: str) -> str:
    kind = template["Resources"][logical_id]["Type"]
    if (kind, attribute) == ("AWS::EC2::SecurityGroup", "GroupId"):
        return _ref(template, logical_id)
    if (kind, attribute) == ("AWS::IAM::Role", "Arn"):
        return f"arn:aws:iam::{ACCOUNT}:role/{_ref(template, logical_id)}"
    if (kind, attribute) == ("AWS::FSx::FileSystem", "LustreMountName"):
        return _hex(logical_id, 8).translate(str.maketrans("0123456789", "ghijklmnop"))
    if (kind, attribute) == ("AWS::KMS::Key", "Arn"):
        return f"arn:aws:kms:us-east-1:{ACCOUNT}:key/{_hex(logical_id, 8)}-0000-0000-0000-000000000000"
    if (kind, attribute) == ("AWS::EC2::Subnet", "AvailabilityZone"):
        return template["Resources"][logical_id]["Properties"].get("AvailabilityZone", "us-east-1a")
    raise AssertionError(f"no value for GetAtt {logical_id}.{attribute} ({kind})")


def resolve(value: Any, template: dict, region: str = "us-east-1") -> Any:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return [resolve(v, template, region) for v in value]
    (fn, arg), = value.items()
    if fn == "Fn::Join":
        return arg[0].join(str(resolve(part, template, region)) for part in arg[1])
    if fn == "Ref":
        if arg == "AWS::Region":
            return region
        if arg in ("AWS::AccountId",):
            return ACCOUNT
        if arg == "AWS::URLSuffix":
            return "amazonaws.com"
        if arg == "AWS::Partition":
            return "aws"
        return _ref(template, arg)
    if fn == "Fn::GetAtt":
        logical_id, attribute = arg if isinstance(arg, list) else arg.split(".", 1)
        return _get_att(template, logical_id, attribute)
    raise AssertionError(f"cannot resolve {fn} in an output")


def outputs_file(templates: dict[str, dict]) -> dict[str, dict[str, str]]:
    """``{stack name: {output id: value}}`` for the given ``{stack name: template}``."""
    return {name: {key: resolve(out["Value"], template) for key, out in template.get("Outputs", {}).items()}
            for name, template in templates.items()}


def write_outputs_file(path, templates: dict[str, dict]) -> None:
    path.write_text(json.dumps(outputs_file(templates), indent=2))
