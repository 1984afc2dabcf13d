"""The instance catalog's SMDDP fact: one set of lists, agreeing with the SDK and the EFA catalog."""

from __future__ import annotations

from smddp_infra.sizing.catalog import (
    EFA_INSTANCE_TYPES,
    SMDDP_INSTANCE_TYPES,
    SMDDP_LEGACY_INSTANCE_TYPES,
    SMDDP_OLDER_RELEASE_INSTANCE_TYPES,
    smddp_support,
)


def test_smddp_runs_currently_on_p4d_and_p4de_only():
    assert {t for t in EFA_INSTANCE_TYPES if smddp_support(t) == "current"} == {"ml.p4d.24xlarge", "ml.p4de.24xlarge"}
    assert smddp_support("ml.p3dn.24xlarge") == "legacy"
    assert smddp_support("ml.p3.16xlarge") == "older-releases"


def test_newer_efa_types_have_no_smddp():
    for name in ("ml.p5.48xlarge", "ml.p5en.48xlarge", "ml.trn1.32xlarge", "ml.g5.48xlarge"):
        assert smddp_support(name) is None


def test_the_lists_together_are_the_sdk_v2_allow_list_without_local_mode():
    from sagemaker import fw_utils  # the dev venv pins sagemaker 2.257.7

    sdk = set(fw_utils.SM_DATAPARALLEL_SUPPORTED_INSTANCE_TYPES) - {"local_gpu"}
    assert SMDDP_INSTANCE_TYPES | SMDDP_LEGACY_INSTANCE_TYPES | SMDDP_OLDER_RELEASE_INSTANCE_TYPES == sdk
