"""``smddp-infra guard``: refuse an update that would replace a deployed network's stateful parts.

CloudFormation replaces a resource when a create-only property changes (an FSx for Lustre
``DeploymentType``, a subnet's ``CidrBlock``, a bucket's ``BucketName``), and the replacement
travels along references: a new subnet id replaces the file system in it. For a training
network that means a new, EMPTY file system while the old one stays retained and billed, or
new ids in every job's settings. ``cdk diff`` shows it as one ``[-/+]`` among many lines;
this command stops it, says what it means and how to get the same result in place.

The deployed side is a template file (``--deployed FILE``, e.g. ``aws cloudformation
get-template`` output) or, with ``--deployed-stack NAME``, read from CloudFormation
(``GetTemplate``, boto3, the caller's credentials; a stack that does not exist yet has
nothing to protect and passes). The new side is a template file or a ``cdk.out`` directory.
Accepting a replacement on purpose: synthesize with ``-c smddp:allowReplacement=true`` (the
cloud assembly records it) or pass ``--allow-replacement``.

Exit codes: 0 nothing stateful replaced (or accepted), 1 refused, 2 unreadable input.
Pure at import time; boto3 is imported only for ``--deployed-stack`` (through :mod:`smddp_infra.account`).
"""

from __future__ import annotations

import argparse
from typing import Any, Optional

from smddp_infra.commands._output import print_json

HELP = ("Refuse an update that would replace or delete the file system, a bucket, the VPC, the subnet, "
        "a KMS key or the file system's security group (exit 1), saying why and how to avoid it.")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("new", metavar="NEW", help="the new template: a JSON/YAML file or a cdk.out directory")
    deployed = parser.add_mutually_exclusive_group(required=True)
    deployed.add_argument("--deployed", metavar="FILE",
                          help="the deployed template (JSON or YAML file, or a cdk.out directory)")
    deployed.add_argument("--deployed-stack", metavar="STACK",
                          help="read the deployed template of this CloudFormation stack (GetTemplate, your credentials); "
                               "a stack that does not exist passes")
    parser.add_argument("--stack", metavar="NAME", default=None,
                        help="the stack in a cdk.out that holds several (default: the only one)")
    parser.add_argument("--region", metavar="REGION", default=None,
                        help="region of --deployed-stack (default: the cdk.out stack's region, else your AWS config)")
    parser.add_argument("--allow-replacement", action="store_true",
                        help="list the replacements but exit 0 (same as synthesizing with -c smddp:allowReplacement=true)")
    parser.add_argument("--json", action="store_true", help="print the findings as JSON")


def run(args: argparse.Namespace) -> int:
    from smddp_infra.account import check_region
    from smddp_infra.errors import ConfigError
    from smddp_infra.review.replacement import ReplacementData, guard, load_template, replacement_accepted

    if args.region is not None:
        check_region(args.region)
    new, artifact = load_template(args.new, stack=args.stack, what="NEW")
    region = args.region or (artifact.region if artifact is not None else None)
    if args.deployed_stack:
        old = fetch_deployed_template(args.deployed_stack, region=region)
        if old is None:
            where = f" in {region}" if region else ""
            print(f"guard: stack {args.deployed_stack} does not exist{where} yet: nothing deployed to protect")
            return 0
    else:
        old, _ = load_template(args.deployed, stack=args.stack, what="--deployed")
    try:
        data = ReplacementData(region=region or "us-east-1", require_service_spec=True)
    except FileNotFoundError as exc:
        raise ConfigError(str(exc)) from None
    report = guard(old, new, data=data, accepted=args.allow_replacement or replacement_accepted(artifact))
    if args.json:
        print_json(_as_json(report))
    else:
        for line in report.lines():
            print(line)
    return report.exit_code


def fetch_deployed_template(stack_name: str, *, region: Optional[str]) -> Optional[dict[str, Any]]:
    """The deployed template of ``stack_name`` (GetTemplate), or None when the stack does not exist.

    Uses the caller's credentials and AWS configuration (``AWS_PROFILE``, ``AWS_ENDPOINT_URL``...),
    through :mod:`smddp_infra.account` (a missing permission or credential is one line).
    A stack whose creation failed and was rolled back still holds no resources worth guarding,
    but CloudFormation keeps its template: it is compared like any other.
    """
    from smddp_infra.account import Account, template_body
    from smddp_infra.review.replacement import parse_template_text

    body = template_body(Account(region=region), stack_name, what=f"--deployed-stack {stack_name}")
    if body is None:
        return None
    if isinstance(body, dict):  # boto3 parses a JSON body into a dict
        return body
    return parse_template_text(str(body), where=f"the deployed template of {stack_name}")


def _as_json(report: Any) -> dict[str, Any]:
    return {
        "blocked": report.blocked,
        "accepted": report.accepted,
        "sources": list(report.sources),
        "findings": [
            {
                "logicalId": f.first.logical_id,
                "type": f.first.resource_type,
                "label": f.first.label,
                "action": f.verb.lower(),
                "why": [{"property": r.property, "reason": r.reason, "certainty": r.certainty} for r in f.replacements],
                "means": f.meaning,
                "avoid": list(f.avoid),
            }
            for f in report.findings
        ],
    }


