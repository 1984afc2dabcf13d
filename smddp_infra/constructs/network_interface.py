"""ITrainingNetwork: what a consumer (a HyperPod cluster, a launch policy, job settings) needs
from a training network, and the network imported from its parts.

Its own module so that consumers import the interface without the L3 that builds a network.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional, Sequence

from aws_cdk import aws_ec2 as ec2, aws_kms as kms, aws_s3 as s3
from constructs import Construct

from smddp_infra.contract import JobDocument
from smddp_infra.errors import ConfigError

if TYPE_CHECKING:
    from smddp_infra.constructs.launch_policy import TrainingLaunchPolicy

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

    def job_settings(self) -> JobDocument:
        """The job document (tokens until deploy)."""
        raise NotImplementedError

    def grant_launch(self, principal: Any) -> "TrainingLaunchPolicy":
        """Let ``principal`` start training jobs, only inside this network."""
        raise NotImplementedError


class ImportedTrainingNetwork(Construct, ITrainingNetwork):
    """A network built in another stack or app, known by its parts: nothing is created.

    What needs the network's own construct (its job document, launch policy, endpoints) is one
    line naming what to do instead.
    """

    def __init__(self, scope: Construct, id: str, *, training_subnet: ec2.ISubnet,
                 security_groups: Sequence[ec2.ISecurityGroup], job_bucket: s3.IBucket,
                 checkpoint_prefix: Optional[str] = None, file_system_id: Optional[str] = None,
                 file_system_dns_name: Optional[str] = None, file_system_mount_name: Optional[str] = None,
                 encryption_key: Optional[kms.IKey] = None) -> None:
        super().__init__(scope, id)
        self.training_subnet = training_subnet
        self.security_groups = tuple(security_groups)
        self.job_bucket = job_bucket
        self.checkpoint_prefix = checkpoint_prefix
        self.file_system_id = file_system_id
        self.file_system_mount = (FileSystemMount(file_system_id or "", file_system_dns_name, file_system_mount_name)
                                  if file_system_dns_name is not None and file_system_mount_name is not None else None)
        self.encryption_key = encryption_key
        self.training_subnet_mask = None

    def endpoint_services(self) -> Optional[tuple[str, ...]]:
        return None  # the VPC is the platform's: its endpoints are placed there

    def add_interface_endpoint(self, service: str) -> ec2.InterfaceVpcEndpoint:
        raise ConfigError(f"{self.node.path} is an imported network: add the {service} endpoint in the app that owns its VPC")

    def add_efa_client(self, description: str) -> None:
        """Nothing to record: the EFA-clients warning belongs to the app that built the file system."""

    def job_settings(self) -> JobDocument:
        raise ConfigError(f"{self.node.path} is an imported network: read its job document from the app that "
                          "built it (smddp-infra job-config --outputs cdk-outputs.json)")

    def grant_launch(self, principal: Any) -> "TrainingLaunchPolicy":
        raise ConfigError(f"{self.node.path} is an imported network: grant launch in the app that built it "
                          "(TrainingNetwork.grant_launch), or build a TrainingLaunchPolicy from its parts")


__all__ = ["FileSystemMount", "ITrainingNetwork", "ImportedTrainingNetwork"]
