"""The pure spec (smddp_infra.spec): one validator per rule, each caught by its own case.

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
from pathlib import Path

import pytest

from smddp_infra.errors import ConfigError, SizingError
from smddp_infra.sizing.planner import plan_lustre
from smddp_infra.spec import network as spec_network
from smddp_infra.spec.network import Jobs, NetworkSpec, Placement, Security, Storage, Workload, size_file_system
from smddp_infra.sizing.catalog import efa_instance

ROOT = Path(__file__).resolve().parents[1]
PLACED = Placement(availability_zone="us-east-1a")
READS = Workload(read_mbps_per_gpu=50)
SCRATCH_PLAN = plan_lustre(1000, 1200, deployment_types=["SCRATCH_2"])
BAD_PLAN = replace(SCRATCH_PLAN, storage_capacity_gib=1000)  # SCRATCH_2 takes 1200 or multiples of 2400


def _spec(**kwargs: object) -> NetworkSpec:
    base = {"workload": READS, "placement": PLACED}
    base.update(kwargs)
    return NetworkSpec(**base)  # type: ignore[arg-type]


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
                              "needs lustre_plan, read_mbps_per_gpu or required_throughput_mbps, got none"),
    "check_one_read_rate": (_spec(workload=Workload(read_mbps_per_gpu=50, required_throughput_mbps=1000)),
                            "both state the read rate"),
    "check_deployment_types": (_spec(storage=Storage(deployment_types=["SCRATCH_9"])),
                               "deployment_types must be among"),
    "check_key_on_persistent": (_spec(storage=Storage(deployment_types=["SCRATCH_2"]),
                                      security=Security(create_encryption_key=True)),
                                "deployment_types contains 'SCRATCH_2' but create_encryption_key=True is given"),
    "check_vpc_with_subnet": (_spec(given=frozenset({"training_subnet"})), "training_subnet was given without vpc"),
    "check_one_placement": (_spec(placement=Placement()), "needs availability_zone or availability_zone_id"),
    "check_job_group_count": (_spec(additional_groups=5), "additional_security_groups has 5 groups"),
    "check_created_subnet_fits": (_spec(workload=Workload(read_mbps_per_gpu=50, instance_count=500)),
                                  "instance_count=500 does not fit the /20 training subnet"),
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
                                                    "(8 accelerators x 4 instances = 1,600 MB/s) and dataset_gib=0: "
                                                    "max_capacity_gib=1,200 is too small")):
        size_file_system(spec, efa_instance("ml.p4d.24xlarge"))
    plan = size_file_system(_spec(), efa_instance("ml.p4d.24xlarge"))
    assert plan.required_throughput_mbps == 50 * 8 * 4


def test_the_spec_room_never_imports_aws_cdk() -> None:
    for path in (ROOT / "smddp_infra" / "spec").glob("*.py"):
        tree = ast.parse(path.read_text())
        names = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
        names += [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
        assert not [n for n in names if n.split(".")[0] in ("aws_cdk", "jsii", "constructs")
                    or n.startswith("smddp_infra.constructs")], path


def test_every_field_documents_its_default() -> None:
    source = (ROOT / "smddp_infra" / "spec" / "network.py").read_text()
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
