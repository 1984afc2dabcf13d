"""AWS ParallelCluster clusters written as a CloudFormation custom resource.

ParallelCluster 3.6+ can be deployed from CloudFormation: a custom resource (usually
``Custom::PclusterCluster``; any ``Custom::*`` or ``AWS::CloudFormation::CustomResource``
with a ``ClusterConfiguration`` property) whose ``ClusterConfiguration`` is the cluster's
YAML configuration as a mapping (intrinsics inside) or as a literal YAML string. The EC2
resources are created by ParallelCluster, not by the template, so the only evidence of EFA
compute is the configuration. What is read, per Slurm queue:

* ``Networking.SubnetIds``: where the queue's nodes run;
* ``Networking.SecurityGroups``: the groups that *replace* the group ParallelCluster would
  create for the queue; ``Networking.AdditionalSecurityGroups``: groups added beside it;
* ``ComputeResources[].Efa.Enabled`` and ``InstanceType`` (or ``Instances[].InstanceType``).

When a queue names no ``SecurityGroups``, ParallelCluster's own compute group is on its
nodes; that group is not in the template, so the self-rule verdict is "not evaluated",
never a pass and never an error.
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Mapping
from typing import Any, Iterator, Optional

from smddp_infra.rules.model import UNKNOWN, Resource, World, describe_value, list_or_empty, to_bool

CUSTOM_RESOURCE = "AWS::CloudFormation::CustomResource"
#: What an attachment lists when ParallelCluster creates the queue's group itself.
MANAGED_GROUP = "ParallelCluster's own compute group (created by ParallelCluster, not in the template)"


@dataclass(frozen=True)
class Queue:
    """One Slurm queue of a ParallelCluster custom resource, as the template states it."""

    cluster: Resource
    name: str
    index: int
    networking: Mapping[str, Any]  # as written (intrinsics unresolved)
    efa: Any  # True when a compute resource enables EFA; False; UNKNOWN
    instance_types: tuple[Any, ...]

    @property
    def path(self) -> tuple[str | int, ...]:
        return ("Properties", "ClusterConfiguration", "Scheduling", "SlurmQueues", self.index, "Networking")


def is_cluster(resource: Resource) -> bool:
    """A custom resource that carries a ParallelCluster configuration."""
    if not (resource.type.startswith("Custom::") or resource.type == CUSTOM_RESOURCE):
        return False
    return "ClusterConfiguration" in resource.properties


def configuration(world: World, resource: Resource) -> Optional[Mapping[str, Any]]:
    """The configuration as a mapping (intrinsics still inside), or None when the template
    builds it in a way we do not read (``Fn::Sub`` of YAML text, an import)."""
    raw = resource.properties.get("ClusterConfiguration")
    value = world.resolve(raw, shallow=True)
    if isinstance(value, Mapping):
        return value
    if isinstance(raw, str):
        from smddp_infra.rules.loader import TemplateSyntaxError, load_yaml_text  # bounded, as templates are

        try:
            parsed = load_yaml_text(raw)
        except TemplateSyntaxError:
            return None
        return parsed if isinstance(parsed, Mapping) else None
    return None


def unread_configuration(world: World, resource: Resource) -> Optional[str]:
    """Why a cluster's configuration cannot be read (for a "not evaluated" note), or None."""
    if configuration(world, resource) is None:
        return f"its ClusterConfiguration ({describe_value(resource.properties.get('ClusterConfiguration'))}) is not a mapping the template states"
    return None


def queues(world: World) -> Iterator[Queue]:
    """Every Slurm queue of every ParallelCluster custom resource that may exist."""
    for resource in world.model.resources.values():
        if not is_cluster(resource) or world.exists(resource) is False:
            continue
        config = configuration(world, resource)
        if config is None:
            continue
        scheduling = world.resolve(config.get("Scheduling"), shallow=True)
        if not isinstance(scheduling, Mapping):
            continue
        for index, queue in enumerate(list_or_empty(world.resolve(scheduling.get("SlurmQueues"), shallow=True))):
            queue = world.resolve(queue, shallow=True)
            if not isinstance(queue, Mapping):
                continue
            name = world.resolve(queue.get("Name"))
            networking = world.resolve(queue.get("Networking"), shallow=True)
            efa: Any = False
            types: list[Any] = []
            for compute in list_or_empty(world.resolve(queue.get("ComputeResources"), shallow=True)):
                compute = world.resolve(compute, shallow=True)
                if not isinstance(compute, Mapping):
                    continue
                settings = world.resolve(compute.get("Efa"), shallow=True)
                enabled = to_bool(world.resolve(settings.get("Enabled"))) if isinstance(settings, Mapping) else False
                if enabled is True:
                    efa = True
                elif enabled is UNKNOWN and efa is False:
                    efa = UNKNOWN
                types.append(world.resolve(compute.get("InstanceType")))
                for instance in list_or_empty(world.resolve(compute.get("Instances"))):
                    if isinstance(instance, Mapping):
                        types.append(instance.get("InstanceType"))
            yield Queue(resource, name if isinstance(name, str) else f"#{index}", index,
                        networking if isinstance(networking, Mapping) else {}, efa, tuple(types))


__all__ = ["MANAGED_GROUP", "Queue", "configuration", "is_cluster", "queues", "unread_configuration"]
