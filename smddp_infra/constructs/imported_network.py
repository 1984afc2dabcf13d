"""A training network built in another stack or app: imported by its parts
(``TrainingNetwork.from_attributes``) or by the job document it publishes
(``TrainingNetwork.from_job_document``). Nothing is created but what the consumer asks for.
"""

from __future__ import annotations

import json
from typing import Any, Optional, Sequence

from aws_cdk import Annotations, Stack, Token, aws_ec2 as ec2, aws_kms as kms, aws_s3 as s3, aws_ssm as ssm
from constructs import Construct

from smddp_infra.constructs.launch_policy import TrainingLaunchPolicy
from smddp_infra.constructs.network_interface import FileSystemMount, ITrainingNetwork, check_parts
from smddp_infra.contract import FileSystemRef, JobDocument, parse_document
from smddp_infra.errors import ConfigError


class ImportedTrainingNetwork(Construct, ITrainingNetwork):
    """A network built in another stack or app, known by its parts: nothing is created.

    What needs the network's own construct (its job document, launch policy, endpoints) is one
    line naming what to do instead.
    """

    def __init__(self, scope: Construct, id: str, *, training_subnet: ec2.ISubnet,
                 security_groups: Sequence[ec2.ISecurityGroup], job_bucket: s3.IBucket,
                 checkpoint_prefix: Optional[str] = None, file_system_id: Optional[str] = None,
                 file_system_dns_name: Optional[str] = None, file_system_mount_name: Optional[str] = None,
                 encryption_key: Optional[kms.IKey] = None, document: Optional[JobDocument] = None) -> None:
        check_parts({"training_subnet": training_subnet, "security_groups": security_groups, "job_bucket": job_bucket,
                     "checkpoint_prefix": checkpoint_prefix, "file_system_id": file_system_id,
                     "file_system_dns_name": file_system_dns_name, "file_system_mount_name": file_system_mount_name,
                     "encryption_key": encryption_key}, required=("training_subnet", "security_groups", "job_bucket"))
        super().__init__(scope, id)
        self._document = document
        self.code_prefix = _prefix_of(document.code_s3_uri) if document is not None else None
        self.output_prefix = _prefix_of(document.output_s3_uri) if document is not None else None
        self.training_subnet = training_subnet
        self.security_groups = tuple(security_groups)
        self.job_bucket = job_bucket
        self.checkpoint_prefix = checkpoint_prefix
        self.file_system_id = file_system_id
        self.file_system_mount = (FileSystemMount(file_system_id or "", file_system_dns_name, file_system_mount_name)
                                  if file_system_dns_name is not None and file_system_mount_name is not None else None)
        self.encryption_key = encryption_key
        self.training_subnet_mask = None
        self.vpc = None

    def endpoint_services(self) -> Optional[tuple[str, ...]]:
        return None  # the VPC is the platform's: its endpoints are placed there

    def add_interface_endpoint(self, service: str) -> ec2.InterfaceVpcEndpoint:
        raise ConfigError(f"{self.node.path} is an imported network: add the {service} endpoint in the app that owns its VPC")

    def add_efa_client(self, description: str) -> None:
        """Nothing to record: the EFA-clients warning belongs to the app that built the file system."""

    @property
    def job_document(self) -> Optional[JobDocument]:
        return self._document

    def job_settings(self) -> JobDocument:
        if self._document is None:
            raise ConfigError(f"{self.node.path} is imported by its parts: read its job document from the app that "
                              "built it (smddp-infra job-config --outputs cdk-outputs.json), or import it with "
                              "TrainingNetwork.from_job_document")
        return self._document

    def grant_launch(self, principal: Any) -> "TrainingLaunchPolicy":
        """Let ``principal`` start training jobs inside this network: a ``LaunchPolicy`` here,
        from the network's job document (a network imported by its parts has none: build a
        :class:`TrainingLaunchPolicy` with ``network=`` and ``jobs=LaunchJobs(role=..., instance_types=...)``);
        a principal created in another stack attaches it from its own side (:meth:`TrainingLaunchPolicy.grant`)."""
        existing = self.node.try_find_child("LaunchPolicy")
        policy = existing if isinstance(existing, TrainingLaunchPolicy) else TrainingLaunchPolicy(
            self, "LaunchPolicy", network=self)
        policy.grant(principal)
        return policy


def _prefix_of(uri: Optional[str]) -> Optional[str]:
    """``code/`` of ``s3://bucket/code/`` (None: no URI; a document from before code prefixes)."""
    if uri is None:
        return None
    return uri.removeprefix("s3://").partition("/")[2] or None


#: What ``StringParameter.value_from_lookup`` returns before the CDK CLI performed the lookup
#: (aws-cdk-lib ``aws-ssm/lib/parameter.js``: ``dummy-value-for-<name>``).
_LOOKUP_DUMMY = "dummy-value-for-"


def network_from_parameter(scope: Construct, id: str, *, parameter_name: str) -> ITrainingNetwork:
    """The network whose job document is the SSM parameter ``parameter_name`` (what
    TrainingNetworkStack publishes), read at synth with a context lookup.

    Needs the stack's account and region (SSM lookups are per environment): the CDK CLI looks
    the value up and records it in cdk.context.json. Before that, aws-cdk-lib hands back a dummy
    value; the network is then a placeholder (an info says so) and the CLI runs the app again.
    """
    stack = Stack.of(scope)
    if Token.is_unresolved(stack.account) or Token.is_unresolved(stack.region):
        raise ConfigError(f"parameter_name {parameter_name!r}: reading a job document at synth needs the stack's "
                          "env=Environment(account=..., region=...) (an SSM context lookup is per environment)")
    raw = ssm.StringParameter.value_from_lookup(scope, parameter_name)
    if raw.startswith(_LOOKUP_DUMMY):
        Annotations.of(scope).add_info(f"job document {parameter_name!r} comes from a context lookup not performed yet: "
                                       "the network is a placeholder until the CDK CLI runs the app again")
        placeholder = JobDocument(subnets=("p-12345",), security_group_ids=("sg-12345",), role_arn="dummy",
                                  checkpoint_s3_uri="s3://dummy-value/", file_system=FileSystemRef("fs-12345", "dummy", "/dummy"),
                                  instance_type="ml.p4d.24xlarge", instance_count=1, region=stack.region,
                                  availability_zone="dummy1a")
        raw = json.dumps(placeholder.to_json())
    doc = parse_document(raw, where=f"SSM parameter {parameter_name}")
    bucket_name, _, prefix = doc.checkpoint_s3_uri.removeprefix("s3://").partition("/")
    subnet = ec2.Subnet.from_subnet_attributes(scope, f"{id}Subnet", subnet_id=doc.subnets[0],
                                               availability_zone=doc.availability_zone)
    groups = [ec2.SecurityGroup.from_security_group_id(scope, f"{id}Group{i}", group_id, mutable=False)
              for i, group_id in enumerate(doc.security_group_ids)]
    fs = doc.file_system
    return ImportedTrainingNetwork(
        scope, id, training_subnet=subnet, security_groups=groups,
        job_bucket=s3.Bucket.from_bucket_name(scope, f"{id}Bucket", bucket_name), checkpoint_prefix=prefix.strip("/") or None,
        file_system_id=fs.id if fs else None, file_system_mount_name=fs.mount_name if fs else None,
        # FSx for Lustre's DNS name is <id>.fsx.<region>.<URL suffix> (aws-cdk-lib's LustreFileSystem.dnsName)
        file_system_dns_name=f"{fs.id}.fsx.{doc.region}.{stack.url_suffix}" if fs else None,
        encryption_key=kms.Key.from_key_arn(scope, f"{id}Key", doc.kms_key_arn) if doc.kms_key_arn else None,
        document=doc)


__all__ = ["ImportedTrainingNetwork", "network_from_parameter"]
