"""``smddp-infra guardrails``: the launch policy of a deployed network, as IAM JSON.

For teams that attach policies outside CDK: the same statements ``TrainingLaunchPolicy``
synthesizes (one builder, :mod:`smddp_infra.guardrails`), filled with the real subnet,
groups, role, file system and key from ``cdk-outputs.json``. ``--deny-style`` renders
"deny CreateTrainingJob (and tuning jobs) unless ..." for an SCP (beside FullAWSAccess) or a
permissions boundary (add your own allows). Pure: no aws_cdk.
"""

from __future__ import annotations

import argparse
import json
import sys

HELP = "Print the launch guardrail (IAM policy: jobs only inside the network) for a deployed network."

#: AWS Organizations' size limit for one SCP, in characters.
SCP_MAX_CHARS = 5120


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--outputs", default="cdk-outputs.json", metavar="FILE",
                        help="the file written by `cdk deploy --outputs-file` (default: cdk-outputs.json)")
    parser.add_argument("--network", default=None, metavar="NAME",
                        help="the network to read when the file holds several (its name or Stack/Name)")
    parser.add_argument("--stack", default=None, metavar="NAME", help="the stack to read when the file holds several")
    parser.add_argument("--deny-style", action="store_true",
                        help="deny statements for an SCP or permissions boundary instead of the allow policy")
    parser.add_argument("--instance-type", action="append", default=None, metavar="TYPE", dest="instance_types",
                        help="EFA instance type jobs may use (repeatable; default: the one the network was sized for)")
    parser.add_argument("--include-tuning-jobs", action="store_true",
                        help="also allow CreateHyperParameterTuningJob under the same conditions (allow style)")
    parser.add_argument("--compact", action="store_true", help="minified JSON (SCPs count whitespace)")


def run(args: argparse.Namespace) -> int:
    from smddp_infra.contract import DOCUMENT_OUTPUT, read_outputs_file, select_network
    from smddp_infra.errors import ConfigError
    from smddp_infra.guardrails import deny_policy_document, launch_policy_document, scope_from_document
    from smddp_infra.jobconfig import validated
    from smddp_infra.sizing.catalog import efa_instance

    types = tuple(args.instance_types or ())
    for name in types:
        efa_instance(name, setting="--instance-type")
    network = select_network(read_outputs_file(args.outputs), network=args.network, stack=args.stack)
    if network.document is None and not types:
        raise ConfigError(f"{network.where} has no {DOCUMENT_OUTPUT} output, so the instance type jobs may use is "
                          "unknown: pass --instance-type")
    # The policy does not depend on the instance count; a stack without a document needs a type.
    count = 1 if network.document is None and types else None
    document = validated(network, instance_type=types[0] if network.document is None and types else None,
                         instance_count=count)
    scope = scope_from_document(document, where=f"{network.where}: ", instance_types=types,
                                include_tuning_jobs=args.include_tuning_jobs)
    policy = deny_policy_document(scope) if args.deny_style else launch_policy_document(scope)
    text = json.dumps(policy, separators=(",", ":")) if args.compact else json.dumps(policy, indent=2)
    if args.deny_style and len(json.dumps(policy, separators=(",", ":"))) > SCP_MAX_CHARS:
        sys.stderr.write(f"smddp-infra guardrails: warning: the deny-style policy is over the {SCP_MAX_CHARS}-character "
                         "SCP limit even minified; use it as a permissions boundary or split it\n")
    sys.stdout.write(text + "\n")
    return 0
