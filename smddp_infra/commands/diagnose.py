"""``smddp-infra diagnose``: the SMDDP troubleshooting guide run against the account.

One of ``--job NAME`` (a training job in any state), ``--cluster NAME`` (HyperPod),
``--stack NAME`` (a deployed stack: its live network and its groups' drift from the template) or
``--security-group ID... --subnet ID...`` (a network before any job runs). Region from
``--region`` or boto3's chain; endpoints from the standard ``AWS_ENDPOINT_URL*`` variables.

Exit codes: 0 nothing of error severity found, 1 an error finding, 2 unusable input (no
credentials, no such job, access denied: one line naming the action or credential).
Read-only; ``--print-policy`` prints the IAM policy it needs. boto3 is imported only when the
account is read (it is not in the ``[cli]`` extra).
"""

from __future__ import annotations

import argparse
import re
import sys

from smddp_infra.commands._output import print_json
from smddp_infra.errors import ConfigError
from smddp_infra.facts.arns import SECURITY_GROUP_ID

HELP = ("Run the SMDDP troubleshooting guide against your account: a training job, a HyperPod cluster or a "
        "security group + subnet, judged by the same rules as `check` (read-only).")

_GROUP = SECURITY_GROUP_ID
_SUBNET = re.compile(r"subnet-[0-9a-f]{8,17}")
_FILE_SYSTEM = re.compile(r"fs-[0-9a-f]{8,17}")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    what = parser.add_argument_group("what to diagnose (one of)")
    what.add_argument("--job", metavar="NAME", help="a training job, in any state (DescribeTrainingJob)")
    what.add_argument("--cluster", metavar="NAME", help="a HyperPod cluster (DescribeCluster)")
    what.add_argument("--stack", metavar="NAME", help="a CloudFormation stack: its live network, and its groups' drift "
                      "from its template")
    what.add_argument("--security-group", metavar="ID", nargs="+", default=[], help="security group(s) of a planned job")
    what.add_argument("--subnet", metavar="ID", nargs="+", default=[], help="subnet(s) of a planned job (with --security-group)")
    parser.add_argument("--file-system", metavar="ID", nargs="+", default=[],
                        help="with --security-group: the FSx for Lustre file system(s) the job will read")
    parser.add_argument("--instance-type", metavar="TYPE", help="with --security-group: the planned instance type "
                        "(default: an EFA type, as the guide assumes)")
    parser.add_argument("--region", metavar="REGION", help="default: boto3's (AWS_REGION, the profile)")
    parser.add_argument("--quiet-minutes", metavar="MIN", type=float, default=15.0,
                        help="--job: minutes without a log line, in status Training, that make a stall (default 15)")
    parser.add_argument("--json", action="store_true", help="print the diagnosis as JSON")
    parser.add_argument("--print-policy", action="store_true", help="print the IAM policy diagnose needs, and exit")


def _check(args: argparse.Namespace) -> None:
    chosen = [flag for flag, value in (("--job", args.job), ("--cluster", args.cluster), ("--stack", args.stack),
                                       ("--security-group/--subnet", args.security_group or args.subnet)) if value]
    if len(chosen) != 1:
        got = ", ".join(chosen) if chosen else "none"
        raise ConfigError(f"diagnose needs exactly one of --job NAME, --cluster NAME, --stack NAME or --security-group ID "
                          f"--subnet ID, got {got}")
    if chosen[0].startswith("--security-group"):
        if not args.security_group or not args.subnet:
            raise ConfigError("--security-group and --subnet go together: the groups and the subnets the job will use")
        for flag, pattern, values in (("--security-group", _GROUP, args.security_group), ("--subnet", _SUBNET, args.subnet),
                                      ("--file-system", _FILE_SYSTEM, args.file_system)):
            bad = [v for v in values if not pattern.fullmatch(v)]
            if bad:
                raise ConfigError(f"{flag} must be ids like {pattern.pattern.replace('[0-9a-f]{8,17}', '0123456789abcdef0')}, "
                                  f"got {bad[0]!r}")
        if len(args.security_group) > 5 or len(args.subnet) > 16:
            raise ConfigError(f"a job takes 1-5 security groups and 1-16 subnets (VpcConfig), got {len(args.security_group)} "
                              f"and {len(args.subnet)}")
    elif args.file_system or args.instance_type:
        raise ConfigError("--file-system and --instance-type describe a planned job: use them with --security-group/--subnet "
                          "(a job or cluster names its own)")
    if args.quiet_minutes <= 0:
        raise ConfigError(f"--quiet-minutes must be a number of minutes > 0, got {args.quiet_minutes:g}")


def run(args: argparse.Namespace) -> int:
    if args.print_policy:
        from smddp_infra.diagnose.policy import policy_document

        print_json(policy_document())
        return 0
    _check(args)
    from smddp_infra.account import Account
    from smddp_infra.diagnose import diagnose_cluster, diagnose_job, diagnose_network, diagnose_stack

    account = Account(region=args.region)
    if args.job:
        diagnosis = diagnose_job(account, args.job, quiet_minutes=args.quiet_minutes)
    elif args.cluster:
        diagnosis = diagnose_cluster(account, args.cluster)
    elif args.stack:
        diagnosis = diagnose_stack(account, args.stack)
    else:
        diagnosis = diagnose_network(account, group_ids=args.security_group, subnet_ids=args.subnet,
                                     instance_type=args.instance_type, file_system_ids=args.file_system)
    if args.json:
        print_json(diagnosis.to_json(), default=str)
    else:
        sys.stdout.write("\n".join(diagnosis.lines()) + "\n")
    return diagnosis.exit_code
