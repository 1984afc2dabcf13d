"""The instance catalog against botocore's TrainingInstanceType enum (issue 9, section 7).

botocore is pinned (requirements-dev.txt), so the enum is stable; a botocore upgrade that adds
an EFA-capable training type fails here until the type is catalogued or excluded with a reason.

"EFA-capable" below is EC2's list of instance sizes that support EFA (EC2 User Guide,
"Supported instance types" for EFA), restricted to the families SageMaker sells for training.
It is this test's own copy of the fact, so the catalog cannot vouch for itself.
"""

from __future__ import annotations

import botocore.session
import pytest

from smddp_infra.errors import ConfigError
from smddp_infra.sizing.catalog import EFA_INSTANCE_TYPES, EFA_MIN_PRIVATE_IPS, EXCLUDED_EFA_TYPES, efa_instance

#: EC2 sizes with EFA support, as SageMaker names them (ml.<ec2 name>).
EC2_EFA_SIZES = {
    "p3dn.24xlarge", "p4d.24xlarge", "p4de.24xlarge", "p5.48xlarge", "p5e.48xlarge", "p5en.48xlarge", "p5.4xlarge",
    "p6-b200.48xlarge", "p6-b300.48xlarge", "p6e-gb200.36xlarge",
    "trn1.32xlarge", "trn1n.32xlarge", "trn2.48xlarge",
    "g4dn.8xlarge", "g4dn.12xlarge", "g4dn.16xlarge",
    *(f"{family}.{size}" for family in ("g5", "g6", "g6e") for size in ("8xlarge", "12xlarge", "16xlarge", "24xlarge", "48xlarge")),
    "c5n.9xlarge", "c5n.18xlarge", "c6i.32xlarge", "m6i.32xlarge", "r6i.32xlarge", "c7i.48xlarge", "m7i.48xlarge", "r7i.48xlarge",
}

#: New in botocore 1.44 (REFERENCE section 8) and expected IN the catalog, not excluded.
NEW_TRAINING_TYPES = {"ml.p6-b200.48xlarge", "ml.p6e-gb200.36xlarge", "ml.p6-b300.48xlarge", "ml.trn2.48xlarge"}


@pytest.fixture(scope="module")
def enum() -> set[str]:
    model = botocore.session.get_session().get_service_model("sagemaker")
    return set(model.shape_for("TrainingInstanceType").enum)


def test_every_efa_capable_training_type_is_catalogued_or_excluded_with_a_reason(enum):
    efa_capable = {name for name in enum if name.removeprefix("ml.") in EC2_EFA_SIZES}
    assert len(efa_capable) > 20  # the enum really carries them (not an empty comparison)
    missing = sorted(efa_capable - set(EFA_INSTANCE_TYPES) - set(EXCLUDED_EFA_TYPES))
    assert missing == [], f"EFA-capable training types neither catalogued nor excluded: {missing}"


def test_catalogue_and_exclusions_name_real_training_types_once(enum):
    assert set(EFA_INSTANCE_TYPES) <= enum, sorted(set(EFA_INSTANCE_TYPES) - enum)
    assert set(EXCLUDED_EFA_TYPES) <= enum, sorted(set(EXCLUDED_EFA_TYPES) - enum)
    assert not set(EFA_INSTANCE_TYPES) & set(EXCLUDED_EFA_TYPES)
    assert all(len(reason) > 30 for reason in EXCLUDED_EFA_TYPES.values())


def test_the_new_p6_and_trn2_types_are_catalogued(enum):
    assert NEW_TRAINING_TYPES <= enum
    assert NEW_TRAINING_TYPES <= set(EFA_INSTANCE_TYPES)


@pytest.mark.parametrize("name", sorted(EFA_INSTANCE_TYPES))
def test_each_entry_has_accelerators_and_at_least_the_documented_ips(name):
    entry = EFA_INSTANCE_TYPES[name]
    assert entry.name == name and entry.accelerators in (4, 8, 16) and entry.private_ips >= EFA_MIN_PRIVATE_IPS
    assert entry.unconfirmed <= {"network_gbps", "private_ips", "accelerators"}
    assert "network_gbps" in entry.unconfirmed  # bandwidth is always from secondary tables


def test_an_excluded_type_is_refused_with_its_reason():
    with pytest.raises(ConfigError, match=r"ml\.p3dn\.24xlarge is left out on purpose: NVIDIA V100"):
        efa_instance("ml.p3dn.24xlarge", setting="instance_type")
