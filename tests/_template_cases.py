"""The ONE fixture list the three faces share: template file -> expected findings.

Each entry pins the error and warning findings of one fixture under tests/fixtures/templates
EXACTLY, as (rule id, resource logical id); ``INFOS`` pins the informational notes where a
fixture exists to prove "unknown is not missing". Adding a fixture here tests it through
the engine, `smddp-infra check`, the cfn-lint plugin and SmddpChecks on CfnInclude.
"""

from __future__ import annotations

Expected = frozenset[tuple[str, str]]

CASES: dict[str, Expected] = {
    # the original fixtures, per rule
    "compliant.yaml": frozenset(),
    "compliant.json": frozenset(),
    "sg_inline.yaml": frozenset(),  # named only: SMDDP-SG3 is an info note (INFOS)
    "sg_separate.yaml": frozenset({("SMDDP-SG1", "Cluster"), ("SMDDP-SG2", "Cluster")}),
    "sg_egress_missing.json": frozenset(),  # named only: an info note (INFOS)
    "fsx_invalid.yaml": frozenset({
        ("SMDDP-FSX1", "ParameterisedFileSystem"),
        ("SMDDP-FSX1", "OldVersionFileSystem"),
        ("SMDDP-FSX1", "NoThroughputFileSystem"),
    }),
    "fsx_efa_no_metadata.json": frozenset({("SMDDP-FSX1", "EfaFileSystem"), ("SMDDP-FSX6", "EfaFileSystem")}),
    "fsx_efa_ok.json": frozenset(),
    "fsx_throughput_low.yaml": frozenset({("SMDDP-FSX2", "FileSystem")}),
    "fsx_key_on_scratch.yaml": frozenset({("SMDDP-FSX5", "ScratchWithKey")}),
    "lustre_ports.yaml": frozenset({("SMDDP-FSX3", "BadFileSystem"), ("SMDDP-FSX4", "BadFileSystem")}),
    "az_mismatch.yaml": frozenset({("SMDDP-NET4", "FileSystem")}),  # a warning: a mount failure is UNCONFIRMED
    "az_same_id.json": frozenset(),
    "no_s3_route.yaml": frozenset({("SMDDP-NET2", "TrainingSubnet"), ("SMDDP-NET3", "TrainingSubnet")}),
    "nat_subnet.yaml": frozenset(),
    "yes_booleans.yaml": frozenset({
        ("SMDDP-SG1", "FileSystem"), ("SMDDP-SG2", "FileSystem"), ("SMDDP-FSX3", "FileSystem"), ("SMDDP-FSX4", "FileSystem"),
    }),
    # issue 10, point 1: conditions, Fn::If, AWS::NoValue, resource Condition, Rules
    "p1_if_group_ok.yaml": frozenset(),
    "p1_if_group_bad.yaml": frozenset({("SMDDP-SG2", "Cluster")}),
    "p1_novalue_ok.yaml": frozenset(),
    "p1_condition_resource_ok.yaml": frozenset(),
    "p1_condition_resource_bad.yaml": frozenset({("SMDDP-SG1", "NodeTemplate"), ("SMDDP-SG2", "NodeTemplate")}),
    "p1_rules_section_ok.yaml": frozenset(),
    # point 2: unknown is not missing
    "p2_unresolved_groups.yaml": frozenset(),
    "p2_unresolved_peer_bad.yaml": frozenset({("SMDDP-SG2", "Node")}),
    # point 3: groups judged together
    "p3_union_ok.yaml": frozenset(),
    "p3_union_bad.yaml": frozenset({("SMDDP-SG1", "ComputeTemplate"), ("SMDDP-SG2", "ComputeTemplate")}),
    "p3_fsx_ports_ok.yaml": frozenset(),
    "p3_fsx_988_bad.yaml": frozenset({("SMDDP-FSX3", "FileSystem")}),
    "p3_fsx_1018_warn.yaml": frozenset({("SMDDP-FSX4", "FileSystem")}),
    # point 4: what a training group is
    "p4_efa_instance_bad.yaml": frozenset({("SMDDP-SG1", "Node"), ("SMDDP-SG2", "Node")}),
    "p4_efa_only_ok.yaml": frozenset(),
    "p4_named_only_warn.yaml": frozenset(),  # a name is the weakest evidence: an info note (INFOS)
    "p4_training_job_bad.yaml": frozenset({("SMDDP-SG2", "TrainingJob")}),
    # point 5: FSx facts
    "p5_version_metadata_bad.yaml": frozenset({("SMDDP-FSX1", "FileSystem")}),
    "p5_efa_if_bad.yaml": frozenset({("SMDDP-FSX6", "FileSystem")}),  # the EFA step is UNCONFIRMED: a warning
    "p5_efa_if_ok.yaml": frozenset(),
    "p5_intelligent_tiering_ok.yaml": frozenset(),
    "p5_intelligent_tiering_bad.yaml": frozenset({("SMDDP-FSX1", "FileSystem")}),
    # point 6: one job, one AZ
    "p6_hyperpod_spread_bad.yaml": frozenset({("SMDDP-NET1", "Cluster")}),
    "p6_hyperpod_spread_ok.yaml": frozenset(),
    "p6_training_job_spread_bad.yaml": frozenset({("SMDDP-NET1", "TrainingJob")}),
    # issue 18: roles from evidence, one finding per problem
    "r18_fsx_only_public_subnet.yaml": frozenset(),  # the file system's subnet is not a training subnet
    "r18_no_nat_s3_gateway.yaml": frozenset({("SMDDP-NET3", "Isolated")}),  # a warning about callers, no error
    "r18_hyperpod_fsx_group.yaml": frozenset(),  # a file system's group, whatever its Name tag says
    "r18_additional_group_on_efa.yaml": frozenset(),  # the union on the EFA interfaces has the self rules
    "r18_scratch2_throughput_param.yaml": frozenset({("SMDDP-FSX1", "Scratch")}),  # one finding, not seven
    # issue 24: what a template hands to training outside it; ParallelCluster; the default group
    "i24_handout_output.yaml": frozenset({("SMDDP-SG4", "LustreGroup")}),  # a warning: no resource carries it
    "i24_handout_ssm.yaml": frozenset({("SMDDP-SG4", "JobsGroup"), ("SMDDP-NET5", "TrainSubnet")}),
    "i24_pcluster_efa_queue.yaml": frozenset({("SMDDP-SG2", "Cluster")}),
    "i24_fsx_default_group.yaml": frozenset(),  # not evaluated (INFOS), never a pass
    # issue 25: network ACLs (the rule diagnose runs live, on templates too)
    "i25_nacl_between_subnets.yaml": frozenset({("SMDDP-NET6", "TrainingJob"), ("SMDDP-NET3", "SubnetA")}),
    # issue 33: a HyperPod group that names a file system whose own group does not admit it
    "i33_fsx_client_not_admitted.yaml": frozenset({("SMDDP-FSX7", "FileSystem"), ("SMDDP-FSX8", "FileSystem")}),
    # issue 33: a training subnet whose ACL denies all (HTTPS to S3 leaves it), a VPC with DNS off
    "i33_data_path_blocked.yaml": frozenset({("SMDDP-NET7", "TrainSubnet"), ("SMDDP-NET8", "Vpc")}),
    # network ACLs on what leaves a training subnet: an interface endpoint only in a denied subnet (NET7), one with a
    # denied and an open subnet (NET10), one in the training subnet itself (not judged)
    "net7_endpoint_other_subnet.yaml": frozenset({("SMDDP-NET7", "Train"), ("SMDDP-NET10", "Train")}),
    # a file system in another subnet whose ACLs allow returns on 1024-65535 only (NET9)
    "net9_lustre_return_ports.yaml": frozenset({("SMDDP-NET9", "Lustre")}),
    # issue 41: inbound ACL entries written without Egress (CloudFormation's default, false) deny EFA between subnets
    "i41_efa_acl_inbound_default_egress.yaml": frozenset({("SMDDP-NET6", "Pretrain")}),
    # issue 27: Retain -> Delete on what our constructs made is a warning; elsewhere an info (INFOS)
    "retention_delete.yaml": frozenset({("SMDDP-STATE1", "Checkpoints")}),
    # issue 35: a HyperPod cluster's EKS cluster in CONFIG_MAP mode (by default) without a private endpoint
    "i35_eks_config_map.yaml": frozenset({("SMDDP-EKS1", "Eks"), ("SMDDP-EKS2", "Eks")}),
    # issue 42: task governance against its HyperPod cluster: a quota type the cluster has no group of (GOV1),
    # quotas past the cluster's instances of a type (GOV2), governance on a Slurm cluster (GOV3), and what the
    # template cannot decide (INFOS)
    "i42_governance_quota_type.yaml": frozenset({("SMDDP-GOV1", "Research")}),
    "i42_governance_overcommit.yaml": frozenset({("SMDDP-GOV2", "HyperPod")}),
    "i42_governance_slurm.yaml": frozenset({("SMDDP-GOV3", "HyperPod")}),
    "i42_governance_not_evaluated.yaml": frozenset(),
}

#: Informational notes pinned where they are the point of the fixture.
INFOS: dict[str, Expected] = {
    "p2_unresolved_groups.yaml": frozenset({
        ("SMDDP-INFO1", "Cluster"), ("SMDDP-INFO1", "CustomTemplate"), ("SMDDP-INFO1", "ListTemplate"),
    }),
    "sg_inline.yaml": frozenset({("SMDDP-SG3", "EfaGroup")}),
    "sg_egress_missing.json": frozenset({("SMDDP-SG3", "TrainingGroup")}),
    "p4_named_only_warn.yaml": frozenset({("SMDDP-SG3", "EfaSecurityGroup")}),
    "i24_fsx_default_group.yaml": frozenset({("SMDDP-INFO1", "Lustre")}),
    "retention_delete.yaml": frozenset({("SMDDP-STATE2", "Scratch"), ("SMDDP-STATE2", "DataKey")}),
    "i42_governance_not_evaluated.yaml": frozenset({("SMDDP-INFO1", "HyperPod"), ("SMDDP-INFO1", "Elsewhere")}),
}

#: The parameter assignment each conditional finding must name (point 7).
WHEN: dict[tuple[str, str, str], str] = {
    ("p1_condition_resource_bad.yaml", "SMDDP-SG1", "NodeTemplate"): "when Environment=dev: ",
    ("p5_version_metadata_bad.yaml", "SMDDP-FSX1", "FileSystem"): "when DeploymentType=PERSISTENT_2 (default) and LustreVersion=2.12: ",
    ("p5_efa_if_bad.yaml", "SMDDP-FSX6", "FileSystem"): "when EnableEfa=true: ",
}

#: Fixtures CfnInclude cannot read (it rejects what CloudFormation accepts), with why.
NOT_INCLUDABLE = {"yes_booleans.yaml": "CfnInclude rejects booleans written 'Yes'"}


def errors_and_warnings(found: set[tuple[str, str, str]]) -> set[tuple[str, str]]:
    """(rule, resource) of the (rule, severity, resource) triples that are errors or warnings."""
    return {(rule, resource) for rule, severity, resource in found if severity in ("error", "warning")}
