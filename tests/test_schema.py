"""The pure spec (smddp_infra.schema): one validator per rule, each caught by its own case.

Every case is a spec that breaks exactly one rule: ``validate`` refuses it with one line
naming the field, and every OTHER validator accepts it, so the case fails when its validator
is removed (what ``make mutation`` checks mechanically).
"""

from __future__ import annotations

import ast
import inspect
import re
import textwrap
import warnings
from dataclasses import replace
from dataclasses import fields as dataclass_fields
from pathlib import Path
from typing import Callable

import pytest

from smddp_infra.errors import ConfigError, SizingError
from smddp_infra.sizing.planner import plan_lustre
from smddp_infra.schema import network as spec_network
from smddp_infra.schema.network import Jobs, NetworkSpec, Placement, Security, Storage, Workload, size_file_system
from smddp_infra.settings import _SPEC_NAMES
from smddp_infra.sizing.catalog import efa_instance

ROOT = Path(__file__).resolve().parents[1]
PLACED = Placement(availability_zone="us-east-1a")
READS = Workload(read_mbps_per_gpu=50)
SCRATCH_PLAN = plan_lustre(1000, 1200, deployment_types=["SCRATCH_2"])
BAD_PLAN = replace(SCRATCH_PLAN, storage_capacity_gib=1000)  # SCRATCH_2 takes 1200 or multiples of 2400


def _spec(**kwargs: object) -> NetworkSpec:
    """A spec built WITHOUT running its rules (a NetworkSpec runs them all when built), so each
    validator can be tried alone on a spec only it refuses."""
    base: dict[str, object] = {f.name: f.default_factory() if callable(f.default_factory) else f.default
                               for f in dataclass_fields(NetworkSpec)}
    base.update({"workload": READS, "placement": PLACED, **kwargs})
    spec = object.__new__(NetworkSpec)
    for name, value in base.items():
        object.__setattr__(spec, name, value)
    return spec


CASES = {
    "check_existing_file_system_alone": (_spec(workload=Workload(), storage=Storage(efa_file_system=True),
                                               given=frozenset({"file_system"})),
                                         "file_system= was given with efa_file_system"),
    "check_one_encryption_key": (_spec(security=Security(create_encryption_key=True), given=frozenset({"encryption_key"})),
                                 "create_encryption_key=True was given with encryption_key"),
    "check_lustre_plan_accepted": (_spec(workload=Workload(), storage=Storage(lustre_plan=BAD_PLAN)),
                                   "lustre_plan is not a file system CloudFormation accepts"),
    "check_plan_or_workload": (_spec(storage=Storage(lustre_plan=SCRATCH_PLAN)),
                               "lustre_plan was given with read_mbps_per_gpu"),
    "check_plan_efa": (_spec(workload=Workload(), storage=Storage(lustre_plan=SCRATCH_PLAN, efa_file_system=True)),
                       "efa_file_system=True contradicts lustre_plan"),
    "check_read_rate_given": (_spec(workload=Workload()),
                              "needs lustre_plan, read_mbps_per_gpu or required_throughput_mbps (the MB/s"),
    "check_one_read_rate": (_spec(workload=Workload(read_mbps_per_gpu=50, required_throughput_mbps=1000)),
                            "both state the read rate"),
    "check_deployment_types": (_spec(storage=Storage(deployment_types=["SCRATCH_2"], efa_file_system=True)),
                               "deployment_types contains 'SCRATCH_2', but efa_file_system=True allows only PERSISTENT_2"),
    "check_tier_pinned": (_spec(storage=Storage(per_unit_storage_throughput=250)),
                          "per_unit_storage_throughput=250 needs deployment_types too"),
    "check_key_on_persistent": (_spec(storage=Storage(deployment_types=["SCRATCH_2"]),
                                      security=Security(create_encryption_key=True)),
                                "deployment_types contains 'SCRATCH_2' but create_encryption_key=True is given"),
    "check_vpc_with_subnet": (_spec(given=frozenset({"training_subnet"})), "training_subnet was given without vpc"),
    "check_one_placement": (_spec(placement=Placement()), "needs availability_zone or availability_zone_id"),
    "check_job_group_count": (_spec(additional_groups=5), "additional_security_groups has 5 groups"),
    "check_created_subnet_fits": (_spec(workload=Workload(read_mbps_per_gpu=50, instance_count=500)),
                                  "instance_count=500 does not fit the /20 training subnet"),
    "check_zone_in_region": (_spec(region="us-west-2"), "availability_zone must be an Availability Zone of us-west-2"),
    "check_training_plan": (_spec(jobs=Jobs(training_plan_availability_zone_id="use1-az4")),
                            "training_plan_availability_zone_id='use1-az4' was given without training_plan_arn"),
}


def test_every_validator_has_a_case() -> None:
    assert sorted(CASES) == sorted(check.__name__ for check in spec_network.VALIDATORS)


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_rule_is_refused_by_its_own_validator_only(name: str) -> None:
    spec, message = CASES[name]
    with pytest.raises(ConfigError, match=re.escape(message)):
        spec_network.validate(spec)
    for other in spec_network.VALIDATORS:
        if other.__name__ != name:
            other(spec)  # the case breaks one rule: without its validator, the spec passes


def test_a_good_spec_passes_every_validator() -> None:
    spec_network.validate(_spec())
    spec_network.validate(_spec(workload=Workload(), given=frozenset({"file_system"})))
    spec_network.validate(_spec(placement=Placement(), given=frozenset({"vpc", "training_subnet"})))


def test_the_one_sizing_call_names_the_fields() -> None:
    spec = _spec(storage=Storage(max_capacity_gib=1200, deployment_types=["PERSISTENT_1"]))
    with pytest.raises(SizingError, match=re.escape("no FSx for Lustre file system (PERSISTENT_1) fits read_mbps_per_gpu=50 "
                                                    "(8 accelerators x 4 instances = 1,600 MB/s) with dataset_gib=0: "
                                                    "max_capacity_gib=1,200 is too small")):
        size_file_system(spec, efa_instance("ml.p4d.24xlarge"))
    plan = size_file_system(_spec(), efa_instance("ml.p4d.24xlarge"))
    assert plan.required_throughput_mbps == 50 * 8 * 4


def test_the_spec_room_never_imports_aws_cdk() -> None:
    for path in (ROOT / "smddp_infra" / "schema").glob("*.py"):
        tree = ast.parse(path.read_text())
        names = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
        names += [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
        assert not [n for n in names if n.split(".")[0] in ("aws_cdk", "jsii", "constructs")
                    or n.startswith("smddp_infra.constructs")], path


def test_every_field_documents_its_default() -> None:
    source = (ROOT / "smddp_infra" / "schema" / "network.py").read_text()
    for group in (Workload, Placement, Storage, Security, Jobs):
        body = source.split(f"class {group.__name__}:", 1)[1].split("\n\n\n", 1)[0]
        for name in group.__dataclass_fields__:
            comment = body.split(f"\n    {name}:", 1)[0].rsplit('"""', 1)[-1]
            assert "#:" in comment, f"{group.__name__}.{name} has no #: comment"


# --- the construct's shape (issue 32's measures) ------------------------------------------------


def _body_lines(function: object) -> int:
    source = textwrap.dedent(inspect.getsource(function))  # type: ignore[arg-type]
    node = ast.parse(source).body[0]
    assert isinstance(node, ast.FunctionDef)
    body = node.body[1:] if isinstance(node.body[0], ast.Expr) else node.body
    lines = {n for stmt in body for sub in ast.walk(stmt) if hasattr(sub, "lineno")
             for n in range(sub.lineno, (sub.end_lineno or sub.lineno) + 1)}
    text = source.splitlines()
    return sum(1 for n in lines if text[n - 1].strip() and not text[n - 1].strip().startswith("#"))


def test_training_network_takes_at_most_ten_props_and_a_short_constructor() -> None:
    from smddp_infra.constructs.training_network import TrainingNetwork

    params = inspect.signature(TrainingNetwork.__init__).parameters
    props = [p for p in params.values() if p.name not in ("self", "scope", "id")]
    assert len(props) <= 10 and all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in props)
    assert _body_lines(TrainingNetwork.__init__) <= 60


def test_upgrading_table_places_every_old_keyword_in_a_real_field() -> None:
    from smddp_infra.constructs.training_network import Existing, SmddpTrainingNetwork

    table = (ROOT / "docs" / "upgrading.md").read_text()
    groups = {"workload": Workload, "placement": Placement, "storage": Storage, "security": Security, "jobs": Jobs,
              "existing": Existing}
    old = [p for p in inspect.signature(SmddpTrainingNetwork.__init__).parameters if p not in ("self", "scope", "id")]
    assert len(old) == 43
    for keyword in old:
        (row,) = [line for line in table.splitlines() if line.startswith(f"| `{keyword}` |")]
        place = re.search(r"`(\w+)=(?:(\w+)\((\w+)=)?", row.split("|")[2])
        assert place is not None, row
        if place.group(2):
            assert place.group(3) == keyword and keyword in groups[place.group(1)].__dataclass_fields__, row


@pytest.mark.slow
def test_the_old_api_warns_once_naming_the_new_one() -> None:
    from aws_cdk import App, Environment, Stack

    from smddp_infra.constructs.training_network import SmddpTrainingNetwork, TrainingNetwork

    stack = Stack(App(), "S", env=Environment(region="us-east-1"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        network = SmddpTrainingNetwork(stack, "Net", availability_zone="us-east-1a", read_mbps_per_gpu=50)
    deprecations = [w for w in caught if issubclass(w.category, DeprecationWarning)]
    assert len(deprecations) == 1 and "TrainingNetwork(scope, id, workload=Workload(" in str(deprecations[0].message)
    assert isinstance(network, TrainingNetwork)


# --- every message, whole: the field the user wrote, the limit, the advice (issue: make mutation) ---------------
#
# Each row breaks one rule through ONE field (or a named set of them) and asserts the WHOLE one-line
# message, so a message that names the wrong field, drops one of several, or garbles its advice fails.
# The row's validator must be the only one refusing the spec (as in CASES above).

FS_ALONE = ("those size or link a file system the network creates; with an existing one, drop them (link datasets "
            "on your file system)")
PLAN_AND_WORKLOAD = "the plan fixes the file system's size already; pass the plan or the workload props, not both"
ALL_TYPES = "SCRATCH_1, SCRATCH_2, PERSISTENT_1, PERSISTENT_1_HDD, PERSISTENT_2"
PERSISTENT_PLAN = plan_lustre(1000, 1200, deployment_types=["PERSISTENT_2"], customer_key=True)
TWO_PROBLEM_PLAN = replace(SCRATCH_PLAN, storage_capacity_gib=1000, per_unit_storage_throughput=7)
CREATE_KEY = Security(create_encryption_key=True)
NO_READS = Workload()
EXISTING_FS = frozenset({"file_system"})
PLAN_ARN = "arn:aws:sagemaker:us-east-1:123456789012:training-plan/p1"
TOKEN = "${Token[TOKEN.12]}"  # how a CDK token reads in Python: the spec skips what only deploy knows
#: How the app's context reader names the fields (settings._SPEC_NAMES): the same rules, its keys.
CONTEXT_NAMES = _SPEC_NAMES


def _key_why() -> str:
    from smddp_infra.sizing.planner import CUSTOMER_KEY_WHY

    return CUSTOMER_KEY_WHY


MESSAGES = [
    # check_existing_file_system_alone: each field that sizes or links a created file system, then all at once
    ("check_existing_file_system_alone", _spec(workload=NO_READS, storage=Storage(lustre_plan=SCRATCH_PLAN), given=EXISTING_FS),
     f"file_system= was given with lustre_plan: {FS_ALONE}"),
    ("check_existing_file_system_alone", _spec(workload=NO_READS, storage=Storage(deployment_types=["PERSISTENT_2"]),
                                               given=EXISTING_FS),
     f"file_system= was given with deployment_types: {FS_ALONE}"),
    ("check_existing_file_system_alone", _spec(workload=NO_READS, storage=Storage(max_capacity_gib=2400), given=EXISTING_FS),
     f"file_system= was given with max_capacity_gib: {FS_ALONE}"),
    ("check_existing_file_system_alone", _spec(workload=NO_READS, storage=Storage(efa_file_system=True), given=EXISTING_FS),
     f"file_system= was given with efa_file_system: {FS_ALONE}"),
    ("check_existing_file_system_alone", _spec(workload=NO_READS, given=frozenset({"file_system", "dataset_bucket"})),
     f"file_system= was given with dataset_bucket: {FS_ALONE}"),
    ("check_existing_file_system_alone",
     _spec(workload=NO_READS, storage=Storage(deployment_types=["PERSISTENT_2"], max_capacity_gib=2400, efa_file_system=True),
           given=frozenset({"file_system", "dataset_bucket"})),
     f"file_system= was given with deployment_types, max_capacity_gib, efa_file_system, dataset_bucket: {FS_ALONE}"),
    ("check_existing_file_system_alone", _spec(workload=NO_READS, storage=Storage(per_unit_storage_throughput=125),
                                               given=EXISTING_FS),
     f"file_system= was given with per_unit_storage_throughput: {FS_ALONE}"),
    ("check_one_encryption_key", _spec(security=CREATE_KEY, given=frozenset({"encryption_key"})),
     "create_encryption_key=True was given with encryption_key: pass one (the given key is used)"),
    ("check_lustre_plan_accepted", _spec(workload=NO_READS, storage=Storage(lustre_plan=TWO_PROBLEM_PLAN)),
     "lustre_plan is not a file system CloudFormation accepts: PerUnitStorageThroughput is not settable for SCRATCH_2, "
     "got 7; StorageCapacity must be 1,200, 2,400, or a multiple of 2,400 GiB for SCRATCH_2, got 1000"),
    # check_plan_or_workload: each workload field beside a plan, then all at once
    ("check_plan_or_workload", _spec(storage=Storage(lustre_plan=SCRATCH_PLAN)),
     f"lustre_plan was given with read_mbps_per_gpu: {PLAN_AND_WORKLOAD}"),
    ("check_plan_or_workload", _spec(workload=Workload(required_throughput_mbps=1000), storage=Storage(lustre_plan=SCRATCH_PLAN)),
     f"lustre_plan was given with required_throughput_mbps: {PLAN_AND_WORKLOAD}"),
    ("check_plan_or_workload", _spec(workload=NO_READS, storage=Storage(lustre_plan=SCRATCH_PLAN, deployment_types=["SCRATCH_2"])),
     f"lustre_plan was given with deployment_types: {PLAN_AND_WORKLOAD}"),
    ("check_plan_or_workload", _spec(workload=NO_READS, storage=Storage(lustre_plan=SCRATCH_PLAN, max_capacity_gib=2400)),
     f"lustre_plan was given with max_capacity_gib: {PLAN_AND_WORKLOAD}"),
    ("check_plan_or_workload", _spec(workload=NO_READS, storage=Storage(lustre_plan=SCRATCH_PLAN,
                                                                       per_unit_storage_throughput=125)),
     f"lustre_plan was given with per_unit_storage_throughput: {PLAN_AND_WORKLOAD}"),
    ("check_plan_or_workload", _spec(workload=Workload(dataset_gib=100), storage=Storage(lustre_plan=SCRATCH_PLAN)),
     f"lustre_plan was given with dataset_gib: {PLAN_AND_WORKLOAD}"),
    ("check_plan_or_workload",
     _spec(workload=Workload(read_mbps_per_gpu=50, required_throughput_mbps=1000, dataset_gib=100),
           storage=Storage(lustre_plan=SCRATCH_PLAN, deployment_types=["SCRATCH_2"], max_capacity_gib=2400)),
     "lustre_plan was given with read_mbps_per_gpu, required_throughput_mbps, deployment_types, max_capacity_gib, "
     f"dataset_gib: {PLAN_AND_WORKLOAD}"),
    ("check_plan_efa", _spec(workload=NO_READS, storage=Storage(lustre_plan=SCRATCH_PLAN, efa_file_system=True)),
     "efa_file_system=True contradicts lustre_plan, which is not EFA-enabled"),
    ("check_read_rate_given", _spec(workload=NO_READS),
     "TrainingNetwork needs lustre_plan, read_mbps_per_gpu or required_throughput_mbps (the MB/s the jobs read size the "
     "file system), got none"),
    ("check_read_rate_given", _spec(workload=NO_READS, names=CONTEXT_NAMES),  # the app: no key sets a plan
     "TrainingNetwork needs smddp:readMBpsPerGpu or smddp:requiredThroughputMBps (the MB/s the jobs read size the "
     "file system), got none"),
    ("check_one_read_rate", _spec(workload=Workload(read_mbps_per_gpu=50, required_throughput_mbps=1000)),
     "read_mbps_per_gpu=50 and required_throughput_mbps=1000 both state the read rate: pass one (per accelerator, or "
     "the cluster's total)"),
    # check_deployment_types: a non-EFA one beside efa_file_system (unknown names are the field's rule)
    ("check_deployment_types", _spec(storage=Storage(deployment_types=["PERSISTENT_2", "PERSISTENT_1"], efa_file_system=True)),
     "deployment_types contains 'PERSISTENT_1', but efa_file_system=True allows only PERSISTENT_2 (FSx for Lustre "
     "supports EFA on PERSISTENT_2 only)"),
    # check_tier_pinned: no type, or two, beside the rate
    ("check_tier_pinned", _spec(storage=Storage(per_unit_storage_throughput=250)),
     "per_unit_storage_throughput=250 needs deployment_types too, naming one type (the tier is a deployment type and "
     "its MB/s/TiB), got none"),
    ("check_tier_pinned", _spec(storage=Storage(per_unit_storage_throughput=250,
                                                deployment_types=["PERSISTENT_1", "PERSISTENT_2"])),
     "per_unit_storage_throughput=250 needs deployment_types too, naming one type (the tier is a deployment type and "
     "its MB/s/TiB), got PERSISTENT_1, PERSISTENT_2"),
    # check_key_on_persistent: a scratch plan or a scratch type, with each field that gives a key
    ("check_key_on_persistent", _spec(workload=NO_READS, storage=Storage(lustre_plan=SCRATCH_PLAN), security=CREATE_KEY),
     f"lustre_plan is SCRATCH_2 but create_encryption_key=True is given: {_key_why()}; plan a PERSISTENT type "
     "(plan_lustre(..., customer_key=True)) or drop the key"),
    ("check_key_on_persistent", _spec(workload=NO_READS, storage=Storage(lustre_plan=SCRATCH_PLAN),
                                      given=frozenset({"encryption_key"})),
     f"lustre_plan is SCRATCH_2 but encryption_key is given: {_key_why()}; plan a PERSISTENT type "
     "(plan_lustre(..., customer_key=True)) or drop the key"),
    ("check_key_on_persistent", _spec(storage=Storage(deployment_types=["PERSISTENT_2", "SCRATCH_2"]),
                                      given=frozenset({"encryption_key"})),
     f"deployment_types contains 'SCRATCH_2' but encryption_key is given: {_key_why()}; name PERSISTENT types only, "
     "or drop the key"),
    ("check_key_on_persistent", _spec(storage=Storage(deployment_types=["SCRATCH_2"]), security=CREATE_KEY,
                                      names=CONTEXT_NAMES),  # the app's keys
     f"smddp:deploymentType contains 'SCRATCH_2' but smddp:kmsKey=create is given: {_key_why()}; name PERSISTENT "
     "types only, or drop the key"),
    ("check_vpc_with_subnet", _spec(given=frozenset({"training_subnet"})),
     "training_subnet was given without vpc: pass both, or neither to create them"),
    ("check_vpc_with_subnet", _spec(placement=Placement(), given=frozenset({"vpc"})),
     "vpc was given without training_subnet: pass the private subnet (one AZ) for jobs and FSx"),
    ("check_one_placement", _spec(placement=Placement()),
     "TrainingNetwork needs availability_zone or availability_zone_id to place the training subnet"),
    ("check_one_placement", _spec(placement=Placement(availability_zone="us-east-1a", availability_zone_id="use1-az4")),
     "availability_zone='us-east-1a' and availability_zone_id='use1-az4' both place the training subnet: pass one"),
    ("check_job_group_count", _spec(additional_groups=5),
     "additional_security_groups has 5 groups: a training job takes at most 5 security groups "
     "(VpcConfig.SecurityGroupIds), the EFA group and up to 4 more"),
    ("check_created_subnet_fits", _spec(placement=Placement(availability_zone="us-east-1a", vpc_cidr="10.0.0.0/24",
                                                            max_instance_count=64)),
     "vpc_cidr 10.0.0.0/24 is too small for a /22 training subnet (max_instance_count=64); use a CIDR of /22 or larger"),
    ("check_created_subnet_fits", _spec(placement=Placement(availability_zone="us-east-1a", vpc_cidr="10.0.0.0/24",
                                                            max_instance_count=64, nat_gateway=True)),
     "vpc_cidr 10.0.0.0/24 is too small for a /22 training subnet and a /28 NAT subnet (max_instance_count=64); use a "
     "CIDR of /21 or larger"),
    ("check_created_subnet_fits", _spec(placement=Placement(availability_zone="us-east-1a", max_instance_count=5000)),
     # (5,000 x 5 IPs + 6 endpoints + 8 file-system IPs) x 2 + 5 reserved = 50,033
     "max_instance_count=5000 is too large for one training subnet: a cluster of 5000 instances needs 50033 IPs, more "
     "than a /18 training subnet holds"),
    ("check_created_subnet_fits", _spec(workload=Workload(read_mbps_per_gpu=50, instance_count=500), names=CONTEXT_NAMES),
     "smddp:instanceCount=500 does not fit the /20 training subnet (the default, 1/16 of smddp:vpcCidr 10.0.0.0/16), "
     "which holds 406 ml.p4d.24xlarge instances with room for a second job's interfaces; set smddp:maxInstanceCount=500 "
     "or more (a new subnet CIDR: it replaces the subnet and the file system of a deployed network)"),
    # check_zone_in_region: an AZ name, an AZ ID of another region (named as the app's keys too)
    ("check_zone_in_region", _spec(region="eu-west-1"),
     "availability_zone must be an Availability Zone of eu-west-1 (eu-west-1a, eu-west-1b, ...), got 'us-east-1a'"),
    ("check_zone_in_region", _spec(region="us-east-1", placement=Placement(availability_zone_id="usw2-az1"),
                                   names=CONTEXT_NAMES),
     "smddp:availabilityZoneId must be an AZ ID of us-east-1 like use1-az1, got 'usw2-az1' (prefix 'use1' from the "
     "built-in table, UNCONFIRMED: set smddp:availabilityZoneIdPrefix if AWS names us-east-1's AZ IDs otherwise)"),
    # check_training_plan: an AZ ID without a plan, a plan in another AZ ID
    ("check_training_plan", _spec(jobs=Jobs(training_plan_availability_zone_id="use1-az4")),
     "training_plan_availability_zone_id='use1-az4' was given without training_plan_arn: pass the plan too (or drop "
     "the AZ ID)"),
    ("check_training_plan", _spec(placement=Placement(availability_zone_id="use1-az4"),
                                  jobs=Jobs(training_plan_arn=PLAN_ARN, training_plan_availability_zone_id="use1-az6")),
     "training_plan_availability_zone_id 'use1-az6': the training plan's reserved capacity is in use1-az6 but the "
     "training subnet is in use1-az4; a job runs in its subnet's AZ, so it would never get the plan's instances: place "
     "the network in use1-az6 (a new subnet replaces the file system) or use a plan in use1-az4"),
]


# --- each group refuses a bad value when it is built: one line naming the field ----------------------------------

@pytest.mark.parametrize(("build", "message"), [
    (lambda: Workload(instance_count=0), "instance_count must be a whole number >= 1, got 0"),
    (lambda: Workload(instance_count="4"), "instance_count must be a whole number >= 1, got str '4'"),
    (lambda: Workload(read_mbps_per_gpu=float("nan")), "read_mbps_per_gpu must be a number > 0 MB/s per accelerator, got nan"),
    (lambda: Workload(read_mbps_per_gpu=float("inf")), "read_mbps_per_gpu must be a number > 0 MB/s per accelerator, got inf"),
    (lambda: Workload(read_mbps_per_gpu=-5), "read_mbps_per_gpu must be a number > 0 MB/s per accelerator, got -5"),
    (lambda: Workload(dataset_gib=True), "dataset_gib must be a number >= 0 GiB, got bool True"),
    (lambda: Placement(vpc_cidr="10.0.0.0/8"),
     "vpc_cidr must be an IPv4 CIDR block from /16 to /24 like 10.0.0.0/16, got '10.0.0.0/8'"),
    (lambda: Placement(availability_zone="use1-az4"), "availability_zone must be an Availability Zone name like "
     "us-east-1a, got 'use1-az4': an AZ ID, pass it as availability_zone_id"),
    (lambda: Placement(ips_per_instance=4), "ips_per_instance must be a whole number >= 5 or None (SageMaker: a training "
     "instance that uses EFA needs at least 5 private IPs), got 4"),
    (lambda: Storage(deployment_types=[]), f"deployment_types must be FSx for Lustre deployment types among {ALL_TYPES}, "
     "got []"),
    (lambda: Storage(deployment_types=["PERSISTENT_2", "SCRATCH_9"]), "deployment_types must be FSx for Lustre "
     f"deployment types among {ALL_TYPES}, got ['PERSISTENT_2', 'SCRATCH_9']"),
    (lambda: Storage(file_system_access_mode="rx"), "file_system_access_mode must be 'ro' or 'rw', got 'rx'"),
    (lambda: Jobs(max_runtime_seconds=2_419_201),
     "max_runtime_seconds must be a whole number of seconds from 1 to 2,419,200 (28 days, the CreateTrainingJob "
     "StoppingCondition.MaxRuntimeInSeconds limit), got 2419201"),
    (lambda: Jobs(training_plan_arn="nope"),
     "training_plan_arn must be a SageMaker training plan ARN (arn:aws:sagemaker:<region>:<12-digit account>:"
     "training-plan/<name>, 50 to 2048 characters: CreateTrainingJob's ResourceConfig.TrainingPlanArn), got 'nope'"),
    (lambda: Jobs(training_plan_arn=PLAN_ARN, training_plan_availability_zone_id="x"),
     "training_plan_availability_zone_id must be an AZ ID like use1-az4 (DescribeTrainingPlan's "
     "ReservedCapacitySummaries[].AvailabilityZoneId), got 'x'"),
    (lambda: Workload(instnace_count=4), "Workload has no field 'instnace_count': did you mean 'instance_count'?"),
    (lambda: NetworkSpec(workload=Placement()), "workload must be a Workload(...), got Placement"),
], ids=lambda v: "" if callable(v) else v.split(" ")[0])
def test_a_group_refuses_a_bad_value_when_it_is_built(build: "Callable[[], object]", message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        build()
    assert str(caught.value) == message


def test_a_spec_runs_its_rules_when_it_is_built() -> None:
    with pytest.raises(ConfigError, match="needs lustre_plan, read_mbps_per_gpu or required_throughput_mbps"):
        NetworkSpec(placement=PLACED)
    assert NetworkSpec(workload=READS, placement=PLACED).workload is READS


@pytest.mark.parametrize(("name", "spec", "message"), MESSAGES,
                         ids=[f"{row[0]}-{i}" for i, row in enumerate(MESSAGES)])
def test_each_message_is_the_whole_line_naming_the_fields_given(name: str, spec: NetworkSpec, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        spec_network.validate(spec)
    assert str(caught.value) == message
    for other in spec_network.VALIDATORS:
        if other.__name__ != name:
            other(spec)


@pytest.mark.parametrize(("spec", "expected"), [
    (_spec(jobs=Jobs(training_plan_arn=PLAN_ARN, training_plan_availability_zone_id="use1-az6")),
     "not evaluated: the training plan's capacity is in use1-az6, and the training subnet's AZ us-east-1a is known by "
     "name only"),
    (_spec(placement=Placement(availability_zone_id="use1-az6"),
           jobs=Jobs(training_plan_arn=PLAN_ARN, training_plan_availability_zone_id="use1-az6")), None),
    (_spec(placement=Placement(availability_zone_id=TOKEN),
           jobs=Jobs(training_plan_arn=PLAN_ARN, training_plan_availability_zone_id="use1-az6")),
     "not evaluated: the training plan's capacity is in use1-az6, and the training subnet's AZ is known by name only"),
    (_spec(workload=NO_READS, placement=Placement(availability_zone_id="use1-az4"),
           given=frozenset({"vpc", "training_subnet", "file_system"}),
           jobs=Jobs(training_plan_arn=PLAN_ARN, training_plan_availability_zone_id="use1-az6")),
     "not evaluated: the training plan's capacity is in use1-az6, and the training subnet's AZ is known by name only"),
    (_spec(), None),
], ids=["subnet-by-name", "same-az-id", "az-id-token", "platform-subnet", "no-plan"])
def test_the_training_plan_zone_is_judged_only_where_the_network_placed_the_subnet_by_az_id(
        spec: NetworkSpec, expected: "str | None") -> None:
    problem = spec_network.training_plan_zone_problem(spec)
    assert problem == expected if expected is None else (problem or "").startswith(expected)


def test_a_sizing_failure_names_the_context_keys_of_the_limits_the_app_set() -> None:
    spec = _spec(workload=Workload(required_throughput_mbps=50000), names=CONTEXT_NAMES,
                 storage=Storage(deployment_types=["PERSISTENT_2"], per_unit_storage_throughput=125, max_capacity_gib=9600))
    with pytest.raises(SizingError) as caught:
        size_file_system(spec, efa_instance("ml.p4d.24xlarge"))
    assert str(caught.value) == (
        "no FSx for Lustre file system (PERSISTENT_2) fits smddp:requiredThroughputMBps=50,000 MB/s with "
        "smddp:datasetGiB=0, smddp:maxCapacityGiB=9,600, smddp:perUnitStorageThroughput=125: max_capacity_gib=9,600 is "
        "too small: the smallest valid file system meeting 50,000 MB/s and 0 GiB is 410,400 GiB (PERSISTENT_2/125)")


def test_every_validator_has_whole_message_rows() -> None:
    assert {row[0] for row in MESSAGES} == {check.__name__ for check in spec_network.VALIDATORS}


@pytest.mark.parametrize("spec", [
    _spec(storage=Storage(deployment_types="PERSISTENT_2")),  # one type as a plain string, not its letters
    _spec(storage=Storage(deployment_types=["PERSISTENT_2"], efa_file_system=True)),  # the EFA type with EFA
    _spec(workload=NO_READS, storage=Storage(lustre_plan=PERSISTENT_PLAN), security=CREATE_KEY),  # a key on PERSISTENT
    _spec(storage=Storage(deployment_types=["PERSISTENT_1", "PERSISTENT_2"]), given=frozenset({"encryption_key"})),
    _spec(placement=Placement(availability_zone_id="use1-az4")),  # an AZ ID alone places the subnet
    _spec(additional_groups=4),  # the EFA group + 4 = 5, SecurityGroupIds' limit
    _spec(workload=NO_READS, storage=Storage(lustre_plan=SCRATCH_PLAN, dataset_prefix="data/")),
    _spec(workload=NO_READS, given=frozenset({"file_system", "vpc", "training_subnet"}), placement=Placement()),
    _spec(storage=Storage(deployment_types=["PERSISTENT_2"], per_unit_storage_throughput=250)),  # a pinned tier
    _spec(jobs=Jobs(max_runtime_seconds=2_419_200)),  # 28 days, the API's limit
    _spec(placement=Placement(availability_zone_id="use1-az4"),  # the plan's capacity in the subnet's AZ ID
          jobs=Jobs(training_plan_arn=PLAN_ARN, training_plan_availability_zone_id="use1-az4")),
    _spec(jobs=Jobs(training_plan_arn=PLAN_ARN, training_plan_availability_zone_id="use1-az6")),  # by name: not evaluated
    _spec(jobs=Jobs(training_plan_arn=TOKEN)),  # an ARN known at deploy: its shape is not judged at synth
    _spec(placement=Placement(availability_zone_id=TOKEN),  # an AZ ID known at deploy: not evaluated, not refused
          jobs=Jobs(training_plan_arn=PLAN_ARN, training_plan_availability_zone_id="use1-az6")),
    _spec(workload=NO_READS, placement=Placement(availability_zone_id="use1-az4"),  # a subnet the platform placed
          given=frozenset({"vpc", "training_subnet", "file_system"}),
          jobs=Jobs(training_plan_arn=PLAN_ARN, training_plan_availability_zone_id="use1-az6")),
], ids=["type-as-string", "efa-persistent-2", "key-persistent-plan", "key-persistent-types", "az-id-only",
        "five-groups", "plan-alone", "existing-everything", "tier-pinned", "runtime-28-days", "plan-same-az-id",
        "plan-az-by-name", "plan-arn-token", "az-id-token", "plan-existing-subnet"])
def test_specs_at_the_edge_of_each_rule_pass_every_validator(spec: NetworkSpec) -> None:
    spec_network.validate(spec)


# --- the created training subnet: capacity from AWS facts, each side of the limit -------------------------------
#
# AWS reserves 5 addresses per subnet; the module plans 8 IPs for the file system, one per interface
# endpoint (6 without NAT, plus kms with a customer key; none with NAT), twice over for a second
# job's ENIs, and ips_per_instance per instance (5 for p4d, the catalog's EFA minimum).

AWS_RESERVED = 5
FS_IPS = 8
ENDPOINTS = 6  # sagemaker.api, sts, logs, monitoring, ecr.api, ecr.dkr


def _capacity(mask: int, *, other: int, ips: int = 5) -> int:
    """Instances a /mask holds twice over: 2 x (n x ips + other) + 5 <= 2 ** (32 - mask), in integers."""
    return (2 ** (32 - mask) - AWS_RESERVED - 2 * other) // (2 * ips)


# (vpc_cidr, the default subnet mask (1/16 of the VPC, at most /24, /25 beside a NAT in a /24), nat, key, ips)
SUBNETS = [
    ("10.0.0.0/16", 20, False, False, 5),
    ("10.0.0.0/16", 20, False, False, 10),
    ("10.0.0.0/18", 22, False, False, 5),
    ("10.0.0.0/18", 22, False, True, 5),
    ("10.0.0.0/19", 23, True, False, 5),
    ("10.0.0.0/20", 24, False, True, 5),
    ("10.0.0.0/20", 24, True, True, 5),
    ("10.0.0.0/24", 24, False, False, 5),
    ("10.0.0.0/24", 25, True, False, 5),
]


@pytest.mark.parametrize(("cidr", "mask", "nat", "key", "ips"), SUBNETS)
def test_a_created_subnet_holds_its_capacity_and_refuses_one_more(cidr: str, mask: int, nat: bool, key: bool,
                                                                  ips: int) -> None:
    endpoints = 0 if nat else ENDPOINTS + (1 if key else 0)
    capacity = _capacity(mask, other=endpoints + FS_IPS, ips=ips)

    def spec(count: int) -> NetworkSpec:
        return _spec(workload=Workload(read_mbps_per_gpu=50, instance_count=count),
                     placement=Placement(availability_zone="us-east-1a", vpc_cidr=cidr, nat_gateway=nat,
                                         ips_per_instance=None if ips == 5 else ips),
                     security=Security(create_encryption_key=key))

    spec_network.check_created_subnet_fits(spec(capacity))
    with pytest.raises(ConfigError) as caught:
        spec_network.check_created_subnet_fits(spec(capacity + 1))
    assert str(caught.value) == (
        f"instance_count={capacity + 1} does not fit the /{mask} training subnet (the default, 1/16 of vpc_cidr {cidr}), "
        f"which holds {capacity} ml.p4d.24xlarge instances with room for a second job's interfaces; set max_instance_count="
        f"{capacity + 1} or more (a new subnet CIDR: it replaces the subnet and the file system of a deployed network)")


def test_the_capacities_the_table_checks_are_the_ones_worked_out_by_hand() -> None:
    # (4,096 - 5 - 2 x 14) // 10 = 406; a key's kms endpoint: (1,024 - 5 - 30) // 10 = 98, without 99
    assert [_capacity(20, other=14), _capacity(22, other=15), _capacity(22, other=14), _capacity(23, other=8),
            _capacity(24, other=15), _capacity(25, other=8)] == [406, 98, 99, 49, 22, 10]


def test_max_instance_count_sizes_the_created_subnet_not_todays_count() -> None:
    # 1,000 instances: (5,000 + 14) x 2 + 5 = 10,033 IPs -> a /18 (16,384), which holds (16,384 - 5 - 28) // 10
    spec = _spec(workload=Workload(read_mbps_per_gpu=50, instance_count=1635),
                 placement=Placement(availability_zone="us-east-1a", max_instance_count=1000))
    spec_network.check_created_subnet_fits(spec)
    with pytest.raises(ConfigError) as caught:
        spec_network.check_created_subnet_fits(replace(spec, workload=Workload(read_mbps_per_gpu=50, instance_count=1636)))
    assert str(caught.value) == (
        "instance_count=1636 does not fit the /18 training subnet (max_instance_count=1000), which holds 1635 ml.p4d.24xlarge instances "
        "with room for a second job's interfaces; set max_instance_count=1636 or more (a new subnet CIDR: it replaces "
        "the subnet and the file system of a deployed network)")


# --- the one sizing call: each field reaches plan_lustre, each failure names the fields -------------------------

P4D = efa_instance("ml.p4d.24xlarge")


def test_the_sizing_call_passes_every_field_to_the_planner() -> None:
    assert size_file_system(_spec(workload=Workload(required_throughput_mbps=1000)), P4D).required_throughput_mbps == 1000
    assert size_file_system(_spec(workload=Workload(read_mbps_per_gpu=50, dataset_gib=20000)), P4D).storage_capacity_gib >= 20000
    assert size_file_system(_spec(storage=Storage(efa_file_system=True)), P4D).efa_enabled
    assert size_file_system(_spec(storage=Storage(deployment_types=["PERSISTENT_1"])), P4D).deployment_type == "PERSISTENT_1"
    assert size_file_system(_spec(), P4D).deployment_type == "SCRATCH_2"  # the cheapest for 1,600 MB/s, no key
    assert size_file_system(_spec(security=CREATE_KEY), P4D).deployment_type in ("PERSISTENT_1", "PERSISTENT_2")
    assert size_file_system(_spec(given=frozenset({"encryption_key"})), P4D).deployment_type in ("PERSISTENT_1", "PERSISTENT_2")


TOO_SMALL = ("max_capacity_gib=1,200 is too small: the smallest valid file system meeting 1,600 MB/s and 0 GiB is "
             "2,400 GiB (PERSISTENT_2/1000)")
READ_50 = "read_mbps_per_gpu=50 (8 accelerators x 4 instances = 1,600 MB/s)"


@pytest.mark.parametrize(("spec", "message"), [
    (_spec(storage=Storage(max_capacity_gib=1200)),
     f"no FSx for Lustre file system (SCRATCH_2, PERSISTENT_1, PERSISTENT_2) fits {READ_50} with dataset_gib=0: {TOO_SMALL}"),
    (_spec(storage=Storage(max_capacity_gib=1200), security=CREATE_KEY),
     f"no FSx for Lustre file system (PERSISTENT_1, PERSISTENT_2) fits {READ_50} with dataset_gib=0: {TOO_SMALL}"),
    (_spec(storage=Storage(max_capacity_gib=1200, efa_file_system=True)),
     f"no FSx for Lustre file system (PERSISTENT_2) fits {READ_50} with dataset_gib=0: max_capacity_gib=1,200 is too "
     "small: the smallest valid file system meeting 1,600 MB/s and 0 GiB is 4,800 GiB (PERSISTENT_2/1000 with EFA, on "
     "the EFA capacity steps, which are UNCONFIRMED: a LustrePlan made by hand is not held to them)"),
    (_spec(workload=Workload(required_throughput_mbps=1000, dataset_gib=1500.5), storage=Storage(max_capacity_gib=1200)),
     "no FSx for Lustre file system (SCRATCH_2, PERSISTENT_1, PERSISTENT_2) fits required_throughput_mbps=1,000 MB/s "
     "with dataset_gib=1,500.5: max_capacity_gib=1,200 is too small: the smallest valid file system meeting 1,000 MB/s "
     "and 1,500.5 GiB is 2,400 GiB (PERSISTENT_2/500)"),
    (_spec(workload=Workload(required_throughput_mbps=1e12)),
     "required_throughput_mbps=1e+12 MB/s with dataset_gib=0 is more than one FSx for Lustre file system can serve: it "
     "needs more than 2,147,483,647 GiB, the largest StorageCapacity CloudFormation accepts; read less per GPU or split "
     "the dataset across file systems"),
    (_spec(workload=Workload(read_mbps_per_gpu=1e9, instance_count=2, dataset_gib=10)),
     "read_mbps_per_gpu=1e+09 (8 accelerators x 2 instances = 1.6e+10 MB/s) with dataset_gib=10 is more than one FSx "
     "for Lustre file system can serve: it needs more than 2,147,483,647 GiB, the largest StorageCapacity "
     "CloudFormation accepts; read less per GPU or split the dataset across file systems"),
], ids=["default-types", "key-types", "efa-type", "required-throughput", "beyond-fsx", "beyond-fsx-per-gpu"])
def test_a_sizing_failure_is_one_whole_line_naming_the_fields(spec: NetworkSpec, message: str) -> None:
    with pytest.raises(SizingError) as caught:
        size_file_system(spec, P4D)
    assert str(caught.value) == message


# --- subnet arithmetic (smddp_infra.facts.subnets), against sums done here -------------------------------------


def _ips_needed(instances: int, ips: int = 5, other: int = 0) -> int:
    """Twice the cluster's and the other interfaces' IPs, plus AWS's 5 reserved addresses."""
    return 2 * (instances * ips + other) + AWS_RESERVED


@pytest.mark.parametrize(("instances", "ips", "other", "mask"), [
    (25, 5, 0, 24),   # 2 x 125 + 5 = 255 of a /24's 256
    (25, 5, 1, 23),   # 257: one over, a /23
    (24, 6, 0, 23),   # 2 x 144 + 5 = 293
    (25, 5, 3, 23),   # 2 x 128 + 5 = 261: the reserved 5 push it past 256
    (49, 5, 0, 23),   # 495
    (49, 5, 14, 22),  # 2 x 259 + 5 = 523
    (1, 5, 0, 24),    # never smaller than a /24
])
def test_planned_mask_is_the_smallest_block_holding_the_cluster_twice(instances: int, ips: int, other: int,
                                                                       mask: int) -> None:
    from smddp_infra.facts.subnets import plan_subnet_mask, subnet_instance_capacity

    needed = _ips_needed(instances, ips, other)
    assert needed <= 2 ** (32 - mask) and (mask == 24 or needed > 2 ** (31 - mask))
    assert plan_subnet_mask(instances=instances, ips_per_instance=ips, other_ips=other) == mask
    assert subnet_instance_capacity(mask, ips_per_instance=ips, other_ips=other) >= instances
    if ips == 5 and other == 0:  # the defaults: 5 IPs per instance (EFA minimum), nothing else in the subnet
        assert plan_subnet_mask(instances=instances) == mask
        assert subnet_instance_capacity(mask) == (2 ** (32 - mask) - AWS_RESERVED) // 10


def test_subnet_capacity_is_never_negative_and_is_floored() -> None:
    from smddp_infra.facts.subnets import subnet_instance_capacity

    assert subnet_instance_capacity(24) == 25  # (256 - 5) // 10
    assert subnet_instance_capacity(28, other_ips=14) == 0  # 11 usable: not even the endpoints fit
    assert subnet_instance_capacity(24, other_ips=14, ips_per_instance=7) == (256 - 5 - 28) // 14 == 15


def test_training_subnet_mask_takes_nat_ips_and_other_ips_into_account() -> None:
    from smddp_infra.facts.subnets import default_subnet_mask, training_subnet_mask

    assert default_subnet_mask(24) == 24 and default_subnet_mask(16) == 20  # no NAT unless told
    assert training_subnet_mask(vpc_prefix=24, nat=True, max_instance_count=None, ips_per_instance=5, other_ips=8) == 25
    assert training_subnet_mask(vpc_prefix=24, nat=False, max_instance_count=None, ips_per_instance=5, other_ips=8) == 24
    # 64 instances x 10 IPs: 2 x (640 + 14) + 5 = 1,313 -> /21 (at 5 IPs: 673 -> /22)
    assert training_subnet_mask(vpc_prefix=16, nat=False, max_instance_count=64, ips_per_instance=10, other_ips=14) == 21
    # 49 instances: 2 x (245 + 14) + 5 = 523 -> /22 (without the 14 others: 495 -> /23)
    assert training_subnet_mask(vpc_prefix=16, nat=False, max_instance_count=49, ips_per_instance=5, other_ips=14) == 22


def test_a_nat_vpc_of_a_24_gets_a_25_beside_the_28() -> None:
    from smddp_infra.facts.subnets import fitting_training_subnet_mask

    assert fitting_training_subnet_mask("10.0.0.0/24", vpc_prefix=24, nat=True, max_instance_count=None,
                                        ips_per_instance=5, other_ips=8, cidr_name="vpc_cidr",
                                        max_name="max_instance_count") == 25


def test_the_old_module_name_still_resolves_with_one_warning_naming_the_new_one() -> None:
    import importlib
    import warnings

    import smddp_infra.schema as schema

    old = importlib.import_module("smddp_infra.spec")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert old.Workload is schema.Workload
    assert [str(w.message) for w in caught] == [
        "smddp_infra.spec is deprecated: import Workload from smddp_infra.schema (or from smddp_infra)"]
    with pytest.raises(AttributeError):
        old.NoSuchGroup  # noqa: B018


# --- the field rules' own edges (schema/fields.py): what a reader hands them ------------------------------------

@pytest.mark.parametrize(("length", "shown"), [(78, repr("x" * 78)), (79, repr("x" * 79)[:77] + "..."),
                                               (200, repr("x" * 200)[:77] + "...")])
def test_a_long_value_is_shown_cut_to_eighty_characters(length: int, shown: str) -> None:
    """A repr of 80 characters (78 and its quotes) is shown whole; one of 81 is cut to 77 and '...'."""
    with pytest.raises(ConfigError) as caught:
        Workload(instance_type="x" * length)
    assert str(caught.value).split(", got ", 1)[1] == shown


@pytest.mark.parametrize(("raw", "expected"), [("8", 8), (" 8 ", 8), (8, 8), (8.0, 8), ("true", None)])
def test_a_whole_number_is_read_from_text_json_or_a_whole_float(raw: object, expected: "int | None") -> None:
    from smddp_infra.schema.fields import rule_for

    rule = rule_for(Workload, "instance_count")
    if expected is None:
        with pytest.raises(ConfigError, match=r"^smddp:instanceCount must be a whole number >= 1, got 'true'$"):
            rule.read("smddp:instanceCount", raw)
    else:
        assert rule.read("smddp:instanceCount", raw) == expected


@pytest.mark.parametrize("raw", [2.5, True, "2.5", "nan"])
def test_a_fraction_a_bool_or_text_that_is_no_whole_number_is_refused_as_written(raw: object) -> None:
    from smddp_infra.schema.fields import rule_for

    with pytest.raises(ConfigError) as caught:
        rule_for(Workload, "instance_count").read("smddp:instanceCount", raw)
    assert str(caught.value) == f"smddp:instanceCount must be a whole number >= 1, got {raw!r}"


@pytest.mark.parametrize(("raw", "expected"), [("TRUE", True), ("False", False), (True, True), ("yes", None), (1, None)])
def test_a_flag_is_true_or_false_in_any_case_and_nothing_else(raw: object, expected: "bool | None") -> None:
    from smddp_infra.schema.fields import rule_for

    rule = rule_for(Placement, "nat_gateway")
    if expected is None:
        with pytest.raises(ConfigError, match=r"^smddp:natGateway must be true or false, got "):
            rule.read("smddp:natGateway", raw)
    else:
        assert rule.read("smddp:natGateway", raw) is expected


def test_a_token_passes_where_the_field_takes_one_and_is_refused_where_it_sizes() -> None:
    number_token = -1.8881545897087626e+289  # how aws-cdk-lib encodes a number token
    assert Placement(availability_zone="${Token[TOKEN.12]}").availability_zone == "${Token[TOKEN.12]}"
    with pytest.raises(ConfigError, match=r"^instance_count must be known at synth \(a literal number\): it sizes "
                                          r"resources, got a token$"):
        Workload(instance_count=number_token)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"^vpc_cidr must be an IPv4 CIDR block"):
        Placement(vpc_cidr="${Token[TOKEN.3]}")  # a CIDR sizes the subnet: no token


def test_a_number_token_is_below_the_encoding_bound_and_read_from_context_names_the_key() -> None:
    from smddp_infra.schema.fields import is_token, rule_for

    assert [is_token(v) for v in (-1.8881545897087626e+289, -1e289, -1e300, True, "${Token[T.1]}", "x")] == [
        True, False, True, False, True, False]
    with pytest.raises(ConfigError) as caught:
        rule_for(Workload, "read_mbps_per_gpu").read("smddp:readMBpsPerGpu", -1.8881545897087626e+289)
    assert str(caught.value) == ("smddp:readMBpsPerGpu must be known at synth (a literal number): it sizes resources, "
                                 "got a token")


def test_a_value_read_from_context_keeps_its_hint() -> None:
    from smddp_infra.schema.fields import rule_for

    with pytest.raises(ConfigError) as caught:
        rule_for(Placement, "availability_zone").read("smddp:availabilityZone", "use1-az4")
    assert str(caught.value) == ("smddp:availabilityZone must be an Availability Zone name like us-east-1a, got "
                                 "'use1-az4': an AZ ID, pass it as availability_zone_id")


def test_a_rule_whose_kinds_hold_bool_takes_a_bool() -> None:
    from smddp_infra.schema.fields import Rule

    assert Rule("a flag or a count", (bool, int)).check("k", True) is True
    with pytest.raises(ConfigError) as caught:
        Rule("a count", (int, float)).check("k", True)
    assert str(caught.value) == "k must be a count, got bool True"


def test_a_lone_deployment_type_is_one_type_not_its_letters() -> None:
    pinned = NetworkSpec(workload=READS, placement=PLACED,
                         storage=Storage(deployment_types="PERSISTENT_2", per_unit_storage_throughput=250))
    assert pinned.storage.deployment_types == "PERSISTENT_2"
    with pytest.raises(ConfigError) as caught:
        NetworkSpec(workload=READS, placement=PLACED, storage=Storage(deployment_types="SCRATCH_2", efa_file_system=True))
    assert str(caught.value) == ("deployment_types contains 'SCRATCH_2', but efa_file_system=True allows only "
                                 "PERSISTENT_2 (FSx for Lustre supports EFA on PERSISTENT_2 only)")


@pytest.mark.parametrize("placement", [Placement(availability_zone="${Token[TOKEN.1]}"),
                                       Placement(availability_zone_id="${Token[TOKEN.1]}")], ids=["name", "id"])
def test_a_token_zone_is_not_judged_against_the_region(placement: Placement) -> None:
    assert NetworkSpec(workload=READS, placement=placement, region="us-east-1").placement is placement


# --- the rule constructors, built here: the groups build theirs at import, before a mutation run --------------
# --- switches a mutant on, so only a rule built inside a test shows what a changed constructor does -----------

def _shape(rule: object) -> tuple[object, ...]:
    from smddp_infra.schema.fields import Rule

    assert isinstance(rule, Rule)
    return rule.allowed, rule.kind, rule.key, rule.optional, rule.tokens, rule.synth_only, rule.text_allowed


def _refusal(rule: object, value: object, *, read: bool = False) -> str:
    from smddp_infra.schema.fields import Rule

    assert isinstance(rule, Rule)
    with pytest.raises(ConfigError) as caught:
        rule.read("k", value) if read else rule.check("k", value)
    return str(caught.value)


def test_a_whole_rule_says_its_bounds_unit_and_why_and_holds_both_ends() -> None:
    from smddp_infra.schema.fields import whole

    plain = whole(1)
    assert _shape(plain) == ("a whole number >= 1", int, "", False, False, True, "")
    assert (plain.check("k", 1), _refusal(plain, 0)) == (1, "k must be a whole number >= 1, got 0")
    assert _shape(whole(5, optional=True)) == ("a whole number >= 5 or None", int, "", True, False, True, "")
    bounded = whole(1, 2_419_200, key="smddp:x", optional=True, unit="seconds", why=" (28 days)")
    assert _shape(bounded) == ("a whole number of seconds from 1 to 2,419,200 (28 days)", int, "smddp:x", True, False,
                               True, "")
    assert [bounded.check("k", v) for v in (None, 1, 2_419_200)] == [None, 1, 2_419_200]
    assert _refusal(bounded, 2_419_201) == "k must be a whole number of seconds from 1 to 2,419,200 (28 days), got 2419201"
    assert (bounded.read("k", " 7 "), _refusal(bounded, "7.5", read=True)) == (
        7, "k must be a whole number of seconds from 1 to 2,419,200 (28 days), got '7.5'")


def test_a_number_rule_is_inclusive_unless_exclusive_and_reads_text() -> None:
    from smddp_infra.schema.fields import number

    above = number(0, exclusive=True, unit="GiB", key="smddp:x", optional=True)
    assert _shape(above) == ("a number > 0 GiB", (int, float), "smddp:x", True, False, True, "")
    assert (above.check("k", 0.5), above.check("k", None), _refusal(above, 0)) == (
        0.5, None, "k must be a number > 0 GiB, got 0")
    assert (above.read("k", "2.5"), _refusal(above, True, read=True)) == (2.5, "k must be a number > 0 GiB, got True")
    at_least = number(1.5)
    assert _shape(at_least) == ("a number >= 1.5", (int, float), "", False, False, True, "")
    assert (at_least.check("k", 1.5), _refusal(at_least, 1)) == (1.5, "k must be a number >= 1.5, got 1")


def test_a_flag_rule_takes_a_bool_and_reads_true_or_false_as_text() -> None:
    from smddp_infra.schema.fields import flag

    rule = flag(key="smddp:x", optional=True)
    assert _shape(rule) == ("True or False", bool, "smddp:x", True, False, False, "true or false")
    assert (rule.check("k", None), rule.read("k", "TRUE"), _refusal(rule, "yes", read=True)) == (
        None, True, "k must be true or false, got 'yes'")
    assert (_shape(flag()), _refusal(flag(), 1)) == (("True or False", bool, "", False, False, False, "true or false"),
                                                     "k must be True or False, got int 1")


def test_a_text_rule_says_what_it_takes_and_adds_its_hint() -> None:
    from smddp_infra.schema.fields import text

    rule = text("an id like a1", lambda v: v.startswith("a"), key="smddp:x", optional=True, tokens=True,
                hint=lambda v: f" ({v} is no id)")
    assert _shape(rule) == ("an id like a1", str, "smddp:x", True, True, False, "")
    assert [rule.check("k", v) for v in (None, "a1", "${Token[T.1]}")] == [None, "a1", "${Token[T.1]}"]
    assert _refusal(rule, "b1") == "k must be an id like a1, got 'b1' (b1 is no id)"
    assert (rule.read("k", "a2"), _refusal(rule, 3, read=True)) == ("a2", "k must be an id like a1, got 3")
    plain = text()
    assert (_shape(plain), plain.check("k", ""), _refusal(plain, 3)) == (
        ("a string", str, "", False, False, False, ""), "", "k must be a string, got int 3")


def test_a_choice_rule_names_two_options_with_or_and_more_as_one_of() -> None:
    from smddp_infra.schema.fields import choice

    two, three = choice(("ro", "rw")), choice(("a", "b", "c"), key="smddp:x", optional=True)
    assert (_shape(two), _shape(three)) == (("'ro' or 'rw'", str, "", False, False, False, ""),
                                            ("one of 'a', 'b', 'c'", str, "smddp:x", True, False, False, ""))
    assert (two.check("k", "rw"), three.check("k", None), three.read("k", "c")) == ("rw", None, "c")
    assert (_refusal(two, "rx"), _refusal(three, 3, read=True)) == ("k must be 'ro' or 'rw', got 'rx'",
                                                                     "k must be one of 'a', 'b', 'c', got 3")


def test_a_texts_rule_takes_a_list_of_accepted_strings_and_tokens() -> None:
    from smddp_infra.schema.fields import texts

    rule = texts("ids like a1", lambda v: v.startswith("a"), key="smddp:x", optional=True, one=True, nonempty=True)
    assert _shape(rule) == ("ids like a1", (list, tuple, str), "smddp:x", True, False, False, "")
    assert [rule.check("k", v) for v in (None, "a1", ["a1", "${Token[T.1]}"], ("a2",))] == [
        None, "a1", ["a1", "${Token[T.1]}"], ("a2",)]
    assert [_refusal(rule, v) for v in ([], ["b1"], ["a1", 3])] == [
        "k must be ids like a1, got []", "k must be ids like a1, got ['b1']", "k must be ids like a1, got ['a1', 3]"]
    assert rule.read("k", ["a3"]) == ["a3"]
    many = texts("names")
    assert (_shape(many), many.check("k", []), _refusal(many, "a1")) == (
        ("names", (list, tuple), "", False, False, False, ""), [], "k must be names, got str 'a1'")


def test_a_group_built_here_refuses_a_bad_value_and_an_unknown_field() -> None:
    import dataclasses

    from smddp_infra.schema.fields import RULE, group, value, whole

    rule = whole(1)
    declared = value(3, rule)
    assert (declared.default, dict(declared.metadata)) == (3, {RULE: rule})

    @group
    @dataclasses.dataclass(frozen=True)
    class Box:
        size: int = value(3, whole(1))
        label: str = "x"

    assert (Box().size, Box(size=2, label="y").label) == (3, "y")
    with pytest.raises(ConfigError) as caught:
        Box(size=0)
    assert str(caught.value) == "size must be a whole number >= 1, got 0"
    with pytest.raises(ConfigError) as caught:
        Box(sise=2)  # type: ignore[call-arg]
    assert str(caught.value) == "Box has no field 'sise': did you mean 'size'?"


# --- the one plan per spec, in the stack's partition (file_system_plan), and the value hints -------------------

GOV_WHY = "FSx for Lustre PERSISTENT_2 (and so an EFA-enabled file system) is not available in AWS GovCloud (US)"


def test_the_plan_is_the_given_one_none_beside_an_existing_file_system_or_the_sizing() -> None:
    assert spec_network.file_system_plan(NetworkSpec(workload=NO_READS, placement=PLACED,
                                                     storage=Storage(lustre_plan=SCRATCH_PLAN))) is SCRATCH_PLAN
    assert spec_network.file_system_plan(NetworkSpec(workload=NO_READS, placement=Placement(), given=frozenset(
        {"file_system", "vpc", "training_subnet"}))) is None
    sized = spec_network.file_system_plan(NetworkSpec(workload=READS, placement=PLACED))
    assert sized == size_file_system(NetworkSpec(workload=READS, placement=PLACED))


@pytest.mark.parametrize(("storage", "security", "setting"), [
    (Storage(lustre_plan=PERSISTENT_PLAN), Security(), "lustre_plan"),
    (Storage(efa_file_system=True), Security(), "efa_file_system=True"),
    (Storage(deployment_types=("PERSISTENT_2",)), Security(), "deployment_types"),
])
def test_a_type_the_partition_lacks_is_refused_naming_the_field_that_asked(storage: Storage, security: Security,
                                                                            setting: str) -> None:
    workload = NO_READS if storage.lustre_plan is not None else READS
    spec = NetworkSpec(workload=workload, placement=Placement(availability_zone="us-gov-west-1a"), storage=storage,
                       security=security, region="us-gov-west-1")
    with pytest.raises(ConfigError) as caught:
        spec_network.file_system_plan(spec)
    assert str(caught.value) == (f"{setting} asks for a PERSISTENT_2 file system, which the aws-us-gov partition "
                                 f"(region us-gov-west-1) does not have: {GOV_WHY} (FSx for Lustre User Guide, "
                                 "deployment options)")
    assert spec_network.file_system_plan(replace(spec, region=None)) is not None  # no region: nothing to refuse


@pytest.mark.parametrize(("region", "security", "expected"), [
    ("us-gov-west-1", Security(), ("SCRATCH_2", "PERSISTENT_1")),  # the calculator's choice, less PERSISTENT_2
    ("us-gov-west-1", CREATE_KEY, ("PERSISTENT_1",)),              # a customer key: PERSISTENT types only
    ("us-east-1", Security(), None),                               # nothing absent: the calculator's own default
    (None, Security(), None),                                      # environment-agnostic: not filtered
])
def test_the_calculator_chooses_among_the_types_the_partition_has(region: "str | None", security: Security,
                                                                  expected: "tuple[str, ...] | None") -> None:
    zone = f"{region or 'us-east-1'}a"
    spec = NetworkSpec(workload=READS, placement=Placement(availability_zone=zone), security=security, region=region)
    assert spec_network._deployment_types(spec) == expected
    chosen = replace(spec, storage=Storage(deployment_types=("SCRATCH_2",))) if security is not CREATE_KEY else spec
    if chosen is not spec:  # the user's own choice is never filtered
        assert spec_network._deployment_types(chosen) == ("SCRATCH_2",)


_AZ_NAME = "availability_zone must be an Availability Zone name like us-east-1a, got "
_AZ_ID = "availability_zone_id must be an AZ ID like use1-az4, got "
_EFA = ("instance_type must be a SageMaker EFA training instance type (ml.p4d.24xlarge, ml.p4de.24xlarge, "
        "ml.p5.48xlarge, ml.p5e.48xlarge, ml.p5en.48xlarge, ml.trn1.32xlarge, ml.trn1n.32xlarge, ml.p6-b200.48xlarge, "
        "ml.p6-b300.48xlarge, ml.p6e-gb200.36xlarge, ml.trn2.48xlarge), got ")


@pytest.mark.parametrize(("build", "message"), [
    (lambda: Placement(availability_zone_id="us-east-1a"), _AZ_ID + "'us-east-1a': an AZ name, pass it as availability_zone"),
    (lambda: Placement(availability_zone_id="az4"), _AZ_ID + "'az4'"),
    (lambda: Placement(availability_zone="use1-az4"), _AZ_NAME + "'use1-az4': an AZ ID, pass it as availability_zone_id"),
    (lambda: Placement(availability_zone="east"), _AZ_NAME + "'east'"),
    (lambda: Workload(instance_type="ml.p5.4xlarge"), _EFA + "'ml.p5.4xlarge' (ml.p5.4xlarge is left out on purpose: a "
     "single H100: a one-GPU size is not a multi-node EFA training target (EFA support UNCONFIRMED))"),
    (lambda: Workload(instance_type="ml.c5.xlarge"), _EFA + "'ml.c5.xlarge'"),
], ids=["id-given-a-name", "id-bad", "name-given-an-id", "name-bad", "type-left-out", "type-unknown"])
def test_a_value_in_the_wrong_field_says_where_it_belongs_and_only_then(build: "Callable[[], object]",
                                                                        message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        build()
    assert str(caught.value) == message
