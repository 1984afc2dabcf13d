"""ITrainingNetwork: what a consumer (a HyperPod cluster, a launch policy, job settings) needs
from a training network.

Its own module, importing no construct of ours, so that consumers (the launch policy among them)
import the interface without the L3 that builds a network; the imported network lives in
:mod:`smddp_infra.constructs.imported_network`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence

from aws_cdk import aws_ec2 as ec2, aws_kms as kms, aws_s3 as s3
from constructs import Construct

from smddp_infra.constructs import _validation as v
from smddp_infra.contract import JobDocument
from smddp_infra.errors import ConfigError
from smddp_infra.facts.training_jobs import MAX_SECURITY_GROUPS, MAX_SUBNETS

@dataclass(frozen=True)
class FileSystemMount:
    """What a client needs to mount the network's file system (tokens until deploy)."""

    file_system_id: str
    dns_name: str
    mount_name: str


class ITrainingNetwork:
    """What a consumer needs from a training network, whoever built it.

    Implemented by :class:`TrainingNetwork` and by the network :meth:`TrainingNetwork.from_attributes`
    imports. A plain base class rather than a ``typing.Protocol``: jsii's metaclass does not mix
    with ``ABCMeta``, and a nominal base lets a consumer refuse anything else in one line.
    """

    node: Any
    #: The VPC (None: a network imported by its parts, whose VPC is not named).
    vpc: Optional[ec2.IVpc]
    #: The private subnet, in one AZ, jobs and clusters run in.
    training_subnet: ec2.ISubnet
    #: Every group a job carries, the EFA group (self ingress and egress) first.
    security_groups: tuple[ec2.ISecurityGroup, ...]
    #: The file system to mount (None: the network has none).
    file_system_mount: Optional[FileSystemMount]
    #: The bucket of checkpoints, code and output, and its prefixes.
    job_bucket: s3.IBucket
    #: The prefix checkpoints go under (None: the whole bucket).
    checkpoint_prefix: Optional[str]
    #: Where the SDK uploads training code, and where SageMaker writes model artifacts, in the
    #: job bucket (None: not known, e.g. a network imported by its parts).
    code_prefix: Optional[str]
    output_prefix: Optional[str]
    #: The FSx for Lustre file system's id (None: the network has none).
    file_system_id: Optional[str]
    #: The KMS key of the bucket and file system (None: service-managed keys).
    encryption_key: Optional[kms.IKey]
    #: The training subnet's mask when this network planned it (None: not known at synth).
    training_subnet_mask: Optional[int]

    def endpoint_services(self) -> Optional[tuple[str, ...]]:
        """The interface endpoints in the training subnet; None when the network does not place
        them (a NAT gateway, or a VPC the platform owns)."""
        raise NotImplementedError

    def add_interface_endpoint(self, service: str) -> ec2.InterfaceVpcEndpoint:
        """One more interface endpoint, placed as the network places its own."""
        raise NotImplementedError

    def add_efa_client(self, description: str) -> None:
        """Say that a client mounts the file system over EFA (see :meth:`TrainingNetwork.add_efa_client`)."""
        raise NotImplementedError

    @property
    def job_document(self) -> Optional[JobDocument]:
        """The job document when the network knows it (None: imported by its parts)."""
        raise NotImplementedError

    def job_settings(self) -> JobDocument:
        """The job document (tokens until deploy)."""
        raise NotImplementedError

    def grant_launch(self, principal: Any) -> Construct:
        """Let ``principal`` start training jobs, only inside this network: the network's
        :class:`~smddp_infra.constructs.launch_policy.TrainingLaunchPolicy`."""
        raise NotImplementedError


#: What each part of a network is, by the prop that names it (the jsii interface, or text).
_PART_KINDS: dict[str, Optional[str]] = {
    "training_subnet": "ISubnet", "training_subnets": "ISubnet", "security_groups": "ISecurityGroup",
    "job_bucket": "IBucket", "encryption_key": "IKey", "checkpoint_prefix": None, "code_prefix": None,
    "output_prefix": None, "file_system_id": None, "file_system_dns_name": None, "file_system_mount_name": None,
}


def check_parts(parts: Mapping[str, Any], *, required: Sequence[str] = ()) -> None:
    """The one check of a network given by its parts, keyed by the prop the user wrote: run by
    ``TrainingNetwork.from_attributes`` (and so by HyperPodCluster's parts props) and by the launch
    policy's :class:`~smddp_infra.constructs.launch_policy.NetworkParts`, so the same value gets the
    same answer on every path.

    A job carries 1 to 5 security groups (CreateTrainingJob ``VpcConfig.SecurityGroupIds``; HyperPod's
    ``VpcConfig`` alike), and a client mounts Lustre as ``<DNS name>@tcp:/<mount name>`` (FSx for
    Lustre User Guide, "Mounting"; HyperPod's ``FsxLustreConfig`` needs both), so one without the
    other mounts nothing.
    """
    for prop, value in parts.items():
        kind = _PART_KINDS[prop]
        if value is None:
            if prop in required:
                v.require(prop, None, kind or "", optional=False)
        elif kind is None:
            v.text(prop, value, allow_token=True)
        elif prop in ("training_subnets", "security_groups"):
            count = len(v.require_each(prop, value, kind))
            high, what = ((MAX_SECURITY_GROUPS, "security groups (a training job's VpcConfig.SecurityGroupIds)")
                          if prop == "security_groups" else (MAX_SUBNETS, "subnets (a training job's VpcConfig.Subnets)"))
            if not 1 <= count <= high:
                raise ConfigError(f"{prop} must name 1 to {high} {what}, got {count or 'none'}")
        else:
            v.require(prop, value, kind, optional=False)
    if "file_system_dns_name" in parts and (parts["file_system_dns_name"] is None) != (parts.get("file_system_mount_name") is None):
        raise ConfigError("file_system_dns_name and file_system_mount_name come together (a client mounts "
                          "<dns name>@tcp:/<mount name>), got dns name "
                          f"{parts['file_system_dns_name']!r} and mount name {parts.get('file_system_mount_name')!r}")


def add_missing_endpoints(network: ITrainingNetwork, wanted: Sequence[str]) -> dict[str, ec2.InterfaceVpcEndpoint]:
    """The interface endpoints of ``wanted`` that ``network`` places but lacks, added to it (service ->
    endpoint); none when it places none (a NAT gateway, or a VPC the platform owns)."""
    return {service: network.add_interface_endpoint(service) for service in missing_endpoints(network, wanted)}


def missing_endpoints(network: ITrainingNetwork, wanted: Sequence[str]) -> list[str]:
    """The services of ``wanted`` :func:`add_missing_endpoints` would add to ``network``."""
    placed = network.endpoint_services()
    return [] if placed is None else [service for service in wanted if service not in placed]


__all__ = ["FileSystemMount", "ITrainingNetwork", "check_parts"]
