"""SMDDP-FSX7 (error) / FSX8 (warning): the clients of a Lustre file system reach it.

FSX3/FSX4 judge Lustre between the file system's OWN interfaces. A file system with its own
security group also has to admit its clients: its groups must allow inbound TCP 988 and
1018-1023 from the clients' groups (or a CIDR covering their subnets), and a client whose
egress is restricted must allow those ports to the file system (FSx for Lustre User Guide,
"File system access control with Amazon VPC"). A job or HyperPod group that is not admitted
cannot mount: the job's data download or the lifecycle script's ``mount`` fails.

Who mounts what, by evidence:

* **named** (FSX7 on TCP 988, an error): a training job whose ``InputDataConfig`` has a
  ``FileSystemDataSource`` of type ``FSxLustre`` naming the file system; a HyperPod instance
  group whose ``InstanceStorageConfigs`` ``FsxLustreConfig.DnsName`` is the file system's, or a
  cluster whose properties name the file system (``!GetAtt Fs.DNSName`` in any field);
* **handed out together** (FSX8, a warning naming what it depends on): the template holds the
  file system AND training compute that names no file system (a HyperPod cluster, a group
  tagged ``smddp:role=training``, a group it hands out for training): the lifecycle scripts or
  jobs that use the group likely mount it, which the template does not say.

TCP 1018-1023 are FSX8 whatever the evidence: FSx does not validate them, and what fails
without them is UNCONFIRMED (as FSX4). A client that shares a group with the file system is
left to FSX3/FSX4 (the group's self rules are the client rules): one finding per problem.
What cannot be resolved (a group or subnet the template does not define) is "not evaluated"
for named mounts and silent for the others (nothing certain to say).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Optional

from smddp_infra.rules.findings import Finding, Rule, Severity
from smddp_infra.rules.fsx_rules import (
    LUSTRE_EXTRA_PORTS, LUSTRE_PORT, describe_ports, file_system_groups, file_system_ranges, port_verdict, subnet_ranges,
)
from smddp_infra.rules.groups import SECURITY_GROUP, GroupRef, group_list, resources_mentioned, security_groups
from smddp_infra.rules.handoff import launch_targets
from smddp_infra.rules.model import Resource, ResourceRef, World, list_or_empty
from smddp_infra.rules.training import FILE_SYSTEM, hyperpod_groups, is_training_tagged, lustre_file_systems
from smddp_infra.rules.training import _training_job_configs  # the one finder of CreateTrainingJob shapes
from smddp_infra.rules.unresolved import UNRESOLVED


@dataclass(frozen=True)
class Mount:
    """One client (a job, an instance group, a training group) and one file system it mounts."""

    what: str
    groups: Optional[tuple[GroupRef, ...]]
    subnets: Any  # resolved subnet list, or None when the template does not say
    fs: Resource
    named: bool  # the client names the file system (else: handed out together)


def _file_system(world: World, value: Any, by_dns: Mapping[str, Resource]) -> Optional[Resource]:
    """The template's Lustre file system a FileSystemId / DnsName names (a Ref, a GetAtt, or a live DNS name)."""
    resolved = world.resolve(value)
    if isinstance(resolved, ResourceRef):
        resource = world.resources.get(resolved.logical_id)
        return resource if resource is not None and resource.type == FILE_SYSTEM else None
    if isinstance(resolved, str):
        if resolved.lower() in by_dns:
            return by_dns[resolved.lower()]
        resource = world.resources.get(resolved)
        return resource if resource is not None and resource.type == FILE_SYSTEM else None
    return None


def _dns_index(world: World, lustre: list[Resource]) -> dict[str, Resource]:
    """Live file systems carry their DNS name (``DNSName``): HyperPod names them by it."""
    out = {}
    for fs in lustre:
        dns = world.get(fs, "DNSName")
        if isinstance(dns, str):
            out[dns.lower()] = fs
    return out


def mounts(world: World) -> list[Mount]:
    """Every (client, file system) pair under this assignment, named ones first."""
    lustre = [fs for fs in lustre_file_systems(world) if world.exists(fs) is True]
    if not lustre:
        return []
    by_dns = _dns_index(world, lustre)
    out: list[Mount] = []
    unnamed: list[tuple[str, str, Optional[tuple[GroupRef, ...]], Any]] = []
    for resource, job, vpc, _path in _training_job_configs(world):
        named = []
        for channel in list_or_empty(world.resolve(job.get("InputDataConfig"), shallow=True)):
            channel = world.resolve(channel, shallow=True)
            source = world.resolve(channel.get("DataSource"), shallow=True) if isinstance(channel, Mapping) else None
            fsds = world.resolve(source.get("FileSystemDataSource"), shallow=True) if isinstance(source, Mapping) else None
            if isinstance(fsds, Mapping) and str(world.resolve(fsds.get("FileSystemType"))).lower() == "fsxlustre":
                fs = _file_system(world, fsds.get("FileSystemId"), by_dns)
                if fs is not None and fs not in named:
                    named.append(fs)
        refs = group_list(world, vpc.get("SecurityGroupIds"))
        groups = tuple(refs) if refs is not None else None
        for fs in named:
            out.append(Mount(f"training job in {resource.logical_id}", groups,
                             world.resolve(vpc.get("Subnets")), fs, True))
    mentioned: dict[str, list[Resource]] = {}
    for cluster, name, vpc, _type, _path, _overridden, spec in hyperpod_groups(world):
        if world.exists(cluster) is not True:
            continue
        if cluster.logical_id not in mentioned:
            mentioned[cluster.logical_id] = [world.resources[n] for n in resources_mentioned(world, cluster.properties, (FILE_SYSTEM,))]
        label = f"HyperPod instance group {name} of {cluster.logical_id}"
        refs = group_list(world, vpc.get("SecurityGroupIds"))
        groups = tuple(refs) if refs is not None else None
        named = []
        for storage in list_or_empty(world.resolve(spec.get("InstanceStorageConfigs"), shallow=True)):
            storage = world.resolve(storage, shallow=True)
            config = world.resolve(storage.get("FsxLustreConfig"), shallow=True) if isinstance(storage, Mapping) else None
            if isinstance(config, Mapping):
                fs = _file_system(world, config.get("DnsName"), by_dns)
                if fs is not None and fs not in named:
                    named.append(fs)
        for fs in named or [f for f in mentioned[cluster.logical_id] if f in lustre]:
            out.append(Mount(label, groups, world.resolve(vpc.get("Subnets")), fs, True))
        if not named and not mentioned[cluster.logical_id]:
            unnamed.append((cluster.logical_id, label, groups, world.resolve(vpc.get("Subnets"))))
    targets = launch_targets(world)
    for group in world.of_type(SECURITY_GROUP):
        if world.exists(group) is not True:
            continue
        if is_training_tagged(world, group):
            unnamed.append((group.logical_id, f"training group {group.logical_id} (tagged smddp:role=training)",
                            (GroupRef(group.logical_id),), None))
        elif group.logical_id in targets:
            unnamed.append((group.logical_id, f"training group {group.logical_id} ({targets[group.logical_id].evidence()})",
                            (GroupRef(group.logical_id),), None))
    for client, what, groups, subnets in unnamed:
        vpc = _vpc_of(world, world.resources[client], subnets)
        out.extend(Mount(what, groups, subnets, fs, False) for fs in lustre
                   if vpc is not None and vpc == _vpc_of(world, fs, world.get(fs, "SubnetIds")))
    return out


def _vpc_of(world: World, resource: Resource, subnets: Any) -> Any:
    """The VPC a client or file system is in, as written (a group's ``VpcId``, else its first
    subnet's), so that a template holding two networks pairs nothing across them; None: unknown."""
    raw = world.raw(resource, "VpcId") if resource.type == SECURITY_GROUP else None
    if raw is None and isinstance(subnets, list) and subnets:
        subnet = world.resource_of(subnets[0], "AWS::EC2::Subnet")
        raw = world.raw(subnet, "VpcId") if subnet is not None else None
    if raw is None:
        return None
    value = world.resolve(raw)
    return value.logical_id if isinstance(value, ResourceRef) else value if isinstance(value, str) else repr(raw)


def _judge(world: World, mount: Mount, ports: tuple[int, int]) -> Optional[tuple[str, list[str], str]]:
    """("fail" | "unknown", what is missing, why unknown) for one mount and one port range; None: passes or not ours."""
    fs_refs = file_system_groups(world, mount.fs)
    if not fs_refs:
        return None  # the VPC's default group: FSX3/FSX4 say it is not judged
    if not mount.groups:
        # None: not decided (noted for a named mount); empty: VpcConfig.SecurityGroupIds takes 1-5 groups
        # (CreateTrainingJob and HyperPod alike), so the request is refused before anything mounts
        return ("unknown", [], "the client's security groups are not decided by the template") \
            if mount.groups is None and mount.named else None
    groups = security_groups(world)
    client = {g.group for g in mount.groups if g.group in groups.groups}
    if client & {g.group for g in fs_refs if g.group in groups.groups}:
        return None  # a shared group: its self rules are FSX3/FSX4's
    client_required, client_known = subnet_ranges(world, mount.subnets)  # ([], False) for subnets not stated
    fs_required, fs_known = file_system_ranges(world, mount.fs)
    missing: list[str] = []
    unknown: list[str] = []
    fs_names = ", ".join(r.describe() for r in fs_refs)
    client_names = ", ".join(r.describe() for r in mount.groups)
    verdict, why = port_verdict(world, fs_refs, list(mount.groups), client_required, client_known, ports, "ingress")
    if verdict == "fail":
        missing.append(f"the file system's group(s) {fs_names} admit no inbound {describe_ports(ports)} from {client_names}"
                       + (" or its subnets' CIDRs" if mount.subnets is not None else ""))
    elif verdict == "unknown":
        unknown.append(f"ingress: {why}")
    verdict, why = port_verdict(world, list(mount.groups), fs_refs, fs_required, fs_known, ports, "egress")
    if verdict == "fail":
        missing.append(f"the client's group(s) {client_names} restrict egress and allow no {describe_ports(ports)} to {fs_names} "
                       "or the file system's subnet")
    elif verdict == "unknown":
        unknown.append(f"egress: {why}")
    if missing:
        return "fail", missing, ""
    if unknown:
        return "unknown", [], "; ".join(unknown)
    return None


def _findings(world: World, rule: Rule, port_sets: tuple[tuple[int, int], ...], *, named: bool) -> list[Finding]:
    """One finding per (client, file system) whose ports in ``port_sets`` fail (info when a named one is undecided)."""
    findings: list[Finding] = []
    for mount in mounts(world):
        if mount.named is not named:
            continue
        fs = mount.fs.logical_id
        failed: list[tuple[int, int]] = []
        missing: list[str] = []
        for ports in port_sets:
            judged = _judge(world, mount, ports)
            if judged is None:
                continue
            verdict, why_missing, why = judged
            if verdict == "fail":
                failed.append(ports)
                missing += [m for m in why_missing if m not in missing]
            elif mount.named and rule is CLIENT_PORT_RULE:
                findings.append(UNRESOLVED.finding(fs, f"{rule.id} not judged for {mount.what} mounting file system {fs}: {why}",
                                                   "Properties", "SecurityGroupIds"))
        if not failed:
            continue
        ports_text = " and ".join(describe_ports(p) for p in failed)
        depends = "" if mount.named else (f" if it mounts it (the template holds both and names no file system for "
                                          f"{mount.what}: its lifecycle scripts or jobs decide)")
        # a failed verdict has both sides' groups (_judge passes no mount without them)
        fix_group = (file_system_groups(world, mount.fs) or [])[0].describe()
        client_group = (mount.groups or ())[0].describe()
        findings.append(rule.finding(
            fs, f"{mount.what} cannot reach file system {fs} on {ports_text}{depends}: " + "; ".join(missing)
            + f": add an inbound rule on {fix_group} for {ports_text} from {client_group} (and, when the client's "
            "egress is restricted, an outbound rule for the same ports to the file system's group)",
            "Properties", "SecurityGroupIds"))
    return findings


def check_named_mounts(world: World) -> list[Finding]:
    return _findings(world, CLIENT_PORT_RULE, (LUSTRE_PORT,), named=True)


def check_other_mounts(world: World) -> list[Finding]:
    return (_findings(world, CLIENT_EXTRA_RULE, (LUSTRE_EXTRA_PORTS,), named=True)
            + _findings(world, CLIENT_EXTRA_RULE, (LUSTRE_PORT, LUSTRE_EXTRA_PORTS), named=False))


CLIENT_PORT_RULE = Rule(
    id="SMDDP-FSX7",
    severity=Severity.ERROR,
    cfn_lint_id="E9207",
    title="A job or HyperPod group that mounts a Lustre file system is not admitted on TCP 988",
    explanation="Allow inbound TCP 988 (and 1018-1023) on the file system's group from the clients' group, and the same "
                "ports outbound on the clients' group when its egress is restricted (or share one group).",
    symptom="the Lustre mount fails: the job's data download or the HyperPod lifecycle script's mount times out",
    check=check_named_mounts,
    source=("FSx for Lustre User Guide, 'File system access control with Amazon VPC': the file system's security groups "
            "must allow inbound TCP 988 and 1018-1023 from the clients, and the clients' outbound rules must allow them; "
            "Lustre's LNET listens on TCP 988 (the CreateFileSystem error 'do not permit Lustre LNET network traffic on "
            "port 988', FSx for Lustre User Guide, 'Creating an FSx for Lustre file system fails')."),
)

CLIENT_EXTRA_RULE = Rule(
    id="SMDDP-FSX8",
    severity=Severity.WARNING,
    cfn_lint_id="W9208",
    title="Lustre clients not admitted on TCP 1018-1023, or a file system handed out with training groups it does not admit",
    explanation="Allow inbound TCP 988 and 1018-1023 on the file system's group from the training group (and outbound on the "
                "training group when its egress is restricted), or use one group for both.",
    symptom="clients may fail to mount or reconnect to the file system",
    check=check_other_mounts,
    source=("UNCONFIRMED: what fails without TCP 1018-1023 (FSx for Lustre User Guide, 'File system access control with "
            "Amazon VPC' lists them; FSx does not validate them), and whether compute that names no file system mounts "
            "the one its template holds: a warning."),
)

RULES = (CLIENT_PORT_RULE, CLIENT_EXTRA_RULE)
