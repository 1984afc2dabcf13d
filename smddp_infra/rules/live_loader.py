"""A second reader of the ONE template model: what an account holds, as a template.

:mod:`smddp_infra.rules.loader` reads a template file; this module turns the results of the
EC2, FSx and SageMaker ``Describe*`` calls into a CloudFormation-shaped document, so the
template model (:mod:`.model`) and every SG, NET and FSX rule judge a live network exactly as
they judge a template. Physical ids become logical ids (``sg-0abc`` is the logical id of that
group, and ``{"Ref": "sg-0abc"}`` points at it), so findings name what the console shows.

Pure: the input is plain JSON (what boto3 returns), nothing here calls AWS. How each answer
maps (the API's member names on the left):

* ``DescribeSecurityGroups``: one ``AWS::EC2::SecurityGroup`` per group. The API merges rules
  with the same protocol and ports into one ``IpPermission`` listing several peers; each peer
  becomes one rule (``CidrIp``, ``CidrIpv6``, ``SourcePrefixListId`` /
  ``DestinationPrefixListId``, ``SourceSecurityGroupId`` / ``DestinationSecurityGroupId``).
  A peer group that was read is a ``Ref``; one that was not (another account's, or one the
  job does not carry) stays its id, which the rules treat as a group they cannot see.
  ``SecurityGroupEgress`` is always written (an empty list when the group has none): the
  live group's egress is exactly what the API lists, never EC2's create-time default.
* ``DescribeSubnets`` / ``DescribeVpcs`` (+ ``DescribeVpcAttribute``): ``AWS::EC2::Subnet`` (AZ name
  and id, CIDR, VPC) and ``AWS::EC2::VPC`` (CIDR, ``EnableDnsSupport`` / ``EnableDnsHostnames`` when read).
* ``DescribeRouteTables``: ``AWS::EC2::RouteTable``, one ``AWS::EC2::Route`` per route with a
  destination CIDR, and an association per subnet read: its explicit table, else its VPC's
  main table (what AWS routes it by).
* ``DescribeVpcEndpoints``: ``AWS::EC2::VPCEndpoint`` (type, service, route tables, private DNS).
* ``DescribeNetworkAcls``: ``AWS::EC2::NetworkAcl``, ``AWS::EC2::NetworkAclEntry`` per entry
  (the ``*`` default rule 32767 included) and ``AWS::EC2::SubnetNetworkAclAssociation``.
* ``DescribeFileSystems`` (its ``DNSName`` kept: HyperPod names a file system by it) (+ the groups of its network interfaces, ``DescribeNetworkInterfaces``:
  FSx reports no security groups itself): ``AWS::FSx::FileSystem``.
* the compute: a training job (``DescribeTrainingJob``) as the CreateTrainingJob-shaped mapping
  the model recognises by shape (``VpcConfig`` beside ``ResourceConfig``; its ``InputDataConfig``
  with a ``Ref`` to each file system read), a HyperPod cluster (``DescribeCluster``, with each
  group's ``InstanceStorageConfigs``) as ``AWS::SageMaker::Cluster``, planned placement
  (``--security-group``/``--subnet``) as a training job of an unknown (assumed EFA) type, or a
  stack's own compute resources (``--stack``) with their references turned into physical ids.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence

__all__ = ["LiveNetwork", "Compute", "live_template", "JOB_RESOURCE_TYPE", "PLANNED_ID"]

#: The resource type a live training job is written as (the model finds it by shape, not type).
JOB_RESOURCE_TYPE = "Custom::SageMakerTrainingJob"
#: Logical id of the placement ``--security-group``/``--subnet`` describe.
PLANNED_ID = "planned-training"


@dataclass(frozen=True)
class Compute:
    """What runs (or will run) in the network: exactly one of the three."""

    training_job: Optional[Mapping[str, Any]] = None  # DescribeTrainingJob response
    cluster: Optional[Mapping[str, Any]] = None  # DescribeCluster response
    planned: Optional[tuple[tuple[str, ...], tuple[str, ...]]] = None  # (group ids, subnet ids)
    planned_instance_type: Optional[str] = None
    #: Template resources placed as they are (a stack's launch templates, clusters...), their
    #: references already turned into physical ids (``--stack``).
    resources: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class LiveNetwork:
    """The raw answers, as boto3 returns them (lists of the API's items)."""

    compute: Compute
    security_groups: Sequence[Mapping[str, Any]] = ()
    subnets: Sequence[Mapping[str, Any]] = ()
    vpcs: Sequence[Mapping[str, Any]] = ()
    route_tables: Sequence[Mapping[str, Any]] = ()
    vpc_endpoints: Sequence[Mapping[str, Any]] = ()
    network_acls: Sequence[Mapping[str, Any]] = ()
    file_systems: Sequence[Mapping[str, Any]] = ()
    #: file system id -> the group ids on its network interfaces (None: not readable)
    file_system_groups: Mapping[str, Optional[tuple[str, ...]]] = field(default_factory=dict)


def _ref(resources: Mapping[str, Any], physical_id: Any) -> Any:
    """``{"Ref": id}`` when the id is a resource of the document, else the id itself."""
    return {"Ref": physical_id} if isinstance(physical_id, str) and physical_id in resources else physical_id


def _tags(item: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [{"Key": t["Key"], "Value": t.get("Value", "")} for t in item.get("Tags") or [] if isinstance(t, Mapping) and "Key" in t]


#: An ``IpPermission``'s address peers: (its list, the item's member, the rule's property in
#: ingress, in egress). Peer groups (``UserIdGroupPairs``) are read apart: they may be Refs.
_ADDRESS_PEERS = (("IpRanges", "CidrIp", "CidrIp", "CidrIp"), ("Ipv6Ranges", "CidrIpv6", "CidrIpv6", "CidrIpv6"),
                  ("PrefixListIds", "PrefixListId", "SourcePrefixListId", "DestinationPrefixListId"))


def _permission_entries(permission: Mapping[str, Any], egress: bool, names: Mapping[str, Any], owner: Optional[str]) -> list[dict[str, Any]]:
    base: dict[str, Any] = {"IpProtocol": str(permission.get("IpProtocol", "-1"))}
    for key in ("FromPort", "ToPort"):
        if permission.get(key) is not None:
            base[key] = permission[key]
    out = [{**base, (egress_prop if egress else ingress_prop): item.get(key)}
           for peers, key, ingress_prop, egress_prop in _ADDRESS_PEERS for item in permission.get(peers) or []]
    for pair in permission.get("UserIdGroupPairs") or []:
        group = pair.get("GroupId")
        user = pair.get("UserId")
        peer: Any = _ref(names, group)
        if isinstance(peer, str) and user and owner and user != owner:
            peer = f"{group} (account {user})"  # another account's group: the rules cannot see its members
        out.append({**base, ("DestinationSecurityGroupId" if egress else "SourceSecurityGroupId"): peer})
    return out


def live_template(network: LiveNetwork) -> dict[str, Any]:
    """The account's network as a CloudFormation-shaped template the model reads."""
    resources: dict[str, dict[str, Any]] = {}
    # Register every id first, so references between them become Refs whatever the order.
    for items, id_key, kind in ((network.vpcs, "VpcId", "VPC"), (network.subnets, "SubnetId", "Subnet"),
                                (network.security_groups, "GroupId", "SecurityGroup"),
                                (network.route_tables, "RouteTableId", "RouteTable")):
        for item in items:
            resources[item[id_key]] = {"Type": f"AWS::EC2::{kind}", "Properties": {}}

    for vpc in network.vpcs:
        resources[vpc["VpcId"]]["Properties"] = {"CidrBlock": vpc.get("CidrBlock"), "Tags": _tags(vpc),
                                                 **{k: vpc[k] for k in ("EnableDnsSupport", "EnableDnsHostnames") if k in vpc}}
    for subnet in network.subnets:
        props = {"VpcId": _ref(resources, subnet.get("VpcId")), "CidrBlock": subnet.get("CidrBlock"),
                 "AvailabilityZone": subnet.get("AvailabilityZone"), "Tags": _tags(subnet)}
        if subnet.get("AvailabilityZoneId"):
            props["AvailabilityZoneId"] = subnet["AvailabilityZoneId"]
        resources[subnet["SubnetId"]]["Properties"] = props
    for group in network.security_groups:
        owner = group.get("OwnerId")
        resources[group["GroupId"]]["Properties"] = {
            "GroupName": group.get("GroupName"),
            "GroupDescription": group.get("Description", ""),
            "VpcId": _ref(resources, group.get("VpcId")),
            "SecurityGroupIngress": [e for p in group.get("IpPermissions") or [] for e in _permission_entries(p, False, resources, owner)],
            "SecurityGroupEgress": [e for p in group.get("IpPermissionsEgress") or [] for e in _permission_entries(p, True, resources, owner)],
            "Tags": _tags(group),
        }
    _route_tables(network, resources)
    _endpoints(network, resources)
    _network_acls(network, resources)
    _file_systems(network, resources)
    _compute(network.compute, resources)
    return {"AWSTemplateFormatVersion": "2010-09-09", "Description": "live network (read from the account)",
            "Resources": resources}


def _route_tables(network: LiveNetwork, resources: dict[str, dict[str, Any]]) -> None:
    explicit: dict[str, str] = {}
    main: dict[str, str] = {}
    for table in network.route_tables:
        table_id = table["RouteTableId"]
        resources[table_id]["Properties"] = {"VpcId": _ref(resources, table.get("VpcId")), "Tags": _tags(table)}
        for association in table.get("Associations") or []:
            if association.get("Main"):
                main[str(table.get("VpcId"))] = table_id
            elif association.get("SubnetId"):
                explicit[association["SubnetId"]] = table_id
        for index, route in enumerate(table.get("Routes") or []):
            destination = route.get("DestinationCidrBlock") or route.get("DestinationIpv6CidrBlock")
            if not destination or route.get("GatewayId") == "local":
                continue  # local routes; prefix-list routes are the gateway endpoints' (read from the endpoints)
            props: dict[str, Any] = {"RouteTableId": {"Ref": table_id}}
            props["DestinationCidrBlock" if "DestinationCidrBlock" in route else "DestinationIpv6CidrBlock"] = destination
            for key in ("NatGatewayId", "InstanceId", "NetworkInterfaceId", "TransitGatewayId", "VpcPeeringConnectionId",
                        "GatewayId", "EgressOnlyInternetGatewayId", "CarrierGatewayId", "LocalGatewayId", "CoreNetworkArn"):
                if route.get(key):
                    props[key] = route[key]
            if route.get("State") == "blackhole":
                continue  # a route whose target is gone carries nothing
            resources[f"{table_id}-route-{index}"] = {"Type": "AWS::EC2::Route", "Properties": props}
    for subnet in network.subnets:
        table_id = explicit.get(subnet["SubnetId"]) or main.get(str(subnet.get("VpcId")))
        if table_id:
            resources[f"{subnet['SubnetId']}-routes"] = {
                "Type": "AWS::EC2::SubnetRouteTableAssociation",
                "Properties": {"SubnetId": {"Ref": subnet["SubnetId"]}, "RouteTableId": {"Ref": table_id}}}


def _endpoints(network: LiveNetwork, resources: dict[str, dict[str, Any]]) -> None:
    for endpoint in network.vpc_endpoints:
        if str(endpoint.get("State", "available")).lower() not in ("available", "pending", "pendingacceptance"):
            continue  # deleted, rejected or failed endpoints route nothing
        props: dict[str, Any] = {
            "ServiceName": endpoint.get("ServiceName"),
            "VpcId": _ref(resources, endpoint.get("VpcId")),
            "VpcEndpointType": endpoint.get("VpcEndpointType") or "Gateway",
            "RouteTableIds": [_ref(resources, t) for t in endpoint.get("RouteTableIds") or []],
            "SubnetIds": [_ref(resources, s) for s in endpoint.get("SubnetIds") or []],
            "SecurityGroupIds": [_ref(resources, g.get("GroupId")) for g in endpoint.get("Groups") or []],
        }
        if "PrivateDnsEnabled" in endpoint:
            props["PrivateDnsEnabled"] = bool(endpoint["PrivateDnsEnabled"])
        resources[endpoint["VpcEndpointId"]] = {"Type": "AWS::EC2::VPCEndpoint", "Properties": props}


def _network_acls(network: LiveNetwork, resources: dict[str, dict[str, Any]]) -> None:
    for acl in network.network_acls:
        acl_id = acl["NetworkAclId"]
        resources[acl_id] = {"Type": "AWS::EC2::NetworkAcl", "Properties": {"VpcId": _ref(resources, acl.get("VpcId")),
                                                                             "Tags": _tags(acl)}}
        for entry in acl.get("Entries") or []:
            egress = bool(entry.get("Egress"))
            props: dict[str, Any] = {"NetworkAclId": {"Ref": acl_id}, "RuleNumber": entry.get("RuleNumber"),
                                     "Protocol": entry.get("Protocol"), "RuleAction": entry.get("RuleAction"), "Egress": egress}
            for key in ("CidrBlock", "Ipv6CidrBlock"):
                if entry.get(key):
                    props[key] = entry[key]
            if entry.get("PortRange"):
                props["PortRange"] = {"From": entry["PortRange"].get("From"), "To": entry["PortRange"].get("To")}
            resources[f"{acl_id}-{'egress' if egress else 'ingress'}-{entry.get('RuleNumber')}"] = {
                "Type": "AWS::EC2::NetworkAclEntry", "Properties": props}
        for association in acl.get("Associations") or []:
            subnet = association.get("SubnetId")
            if subnet in resources:
                resources[f"{subnet}-acl"] = {"Type": "AWS::EC2::SubnetNetworkAclAssociation",
                                              "Properties": {"SubnetId": {"Ref": subnet}, "NetworkAclId": {"Ref": acl_id}}}


_LUSTRE_KEYS = ("DeploymentType", "PerUnitStorageThroughput", "DriveCacheType", "EfaEnabled", "ThroughputCapacity",
                "DataCompressionType")


def _file_systems(network: LiveNetwork, resources: dict[str, dict[str, Any]]) -> None:
    for fs in network.file_systems:
        fs_id = fs["FileSystemId"]
        lustre = fs.get("LustreConfiguration") or {}
        config: dict[str, Any] = {k: lustre[k] for k in _LUSTRE_KEYS if lustre.get(k) is not None}
        for key in ("MetadataConfiguration", "DataReadCacheConfiguration"):
            if lustre.get(key):
                config[key] = dict(lustre[key])
        props: dict[str, Any] = {
            "FileSystemType": fs.get("FileSystemType"),
            "SubnetIds": [_ref(resources, s) for s in fs.get("SubnetIds") or []],
            "LustreConfiguration": config,
            "Tags": _tags(fs),
        }
        for key in ("StorageCapacity", "StorageType", "FileSystemTypeVersion", "KmsKeyId", "DNSName"):
            if fs.get(key) is not None:
                props[key] = fs[key]
        groups = network.file_system_groups.get(fs_id)
        if groups is not None:
            props["SecurityGroupIds"] = [_ref(resources, g) for g in groups]
        else:  # FSx does not report its groups; their interfaces could not be read: not judged
            props["SecurityGroupIds"] = {"Fn::ImportValue": f"security groups of {fs_id} (network interfaces not readable)"}
        resources[fs_id] = {"Type": "AWS::FSx::FileSystem", "Properties": props}


def _vpc_config(vpc: Mapping[str, Any], resources: Mapping[str, Any]) -> dict[str, Any]:
    return {"SecurityGroupIds": [_ref(resources, g) for g in vpc.get("SecurityGroupIds") or []],
            "Subnets": [_ref(resources, s) for s in vpc.get("Subnets") or []]}


def _channel(channel: Mapping[str, Any], resources: Mapping[str, Any]) -> dict[str, Any]:
    """An input channel, its FSx file system id a Ref when the file system was read (FSX7 follows it)."""
    source = dict(channel.get("DataSource") or {})
    fsds = source.get("FileSystemDataSource")
    if isinstance(fsds, Mapping):
        source["FileSystemDataSource"] = {**fsds, "FileSystemId": _ref(resources, fsds.get("FileSystemId"))}
    return {"ChannelName": channel.get("ChannelName"), "DataSource": source}


def _compute(compute: Compute, resources: dict[str, dict[str, Any]]) -> None:
    for logical_id, placed in compute.resources.items():
        resources.setdefault(logical_id, dict(placed))
    job = compute.training_job
    if job is not None:
        body: dict[str, Any] = {
            "AlgorithmSpecification": dict(job.get("AlgorithmSpecification") or {}),
            "ResourceConfig": {k: v for k, v in (job.get("ResourceConfig") or {}).items() if k in ("InstanceType", "InstanceCount", "InstanceGroups")},
        }
        if job.get("VpcConfig"):
            body["VpcConfig"] = _vpc_config(job["VpcConfig"], resources)
        channels = [_channel(c, resources) for c in job.get("InputDataConfig") or [] if isinstance(c, Mapping)]
        if channels:
            body["InputDataConfig"] = channels
        resources[str(job.get("TrainingJobName", "training-job"))] = {"Type": JOB_RESOURCE_TYPE, "Properties": {"TrainingJob": body}}
    cluster = compute.cluster
    if cluster is not None:
        groups = []
        for group in cluster.get("InstanceGroups") or []:
            entry: dict[str, Any] = {"InstanceGroupName": group.get("InstanceGroupName"), "InstanceType": group.get("InstanceType"),
                                     "InstanceCount": group.get("TargetCount", group.get("CurrentCount", 0)),
                                     "ExecutionRole": group.get("ExecutionRole", "")}
            if group.get("OverrideVpcConfig"):
                entry["OverrideVpcConfig"] = _vpc_config(group["OverrideVpcConfig"], resources)
            if group.get("InstanceStorageConfigs"):  # FsxLustreConfig.DnsName: the file system the group mounts
                entry["InstanceStorageConfigs"] = [dict(c) for c in group["InstanceStorageConfigs"] if isinstance(c, Mapping)]
            groups.append(entry)
        props: dict[str, Any] = {"ClusterName": cluster.get("ClusterName"), "InstanceGroups": groups}
        if cluster.get("VpcConfig"):
            props["VpcConfig"] = _vpc_config(cluster["VpcConfig"], resources)
        resources[str(cluster.get("ClusterName", "cluster"))] = {"Type": "AWS::SageMaker::Cluster", "Properties": props}
    if compute.planned is not None:
        groups_ids, subnet_ids = compute.planned
        planned: dict[str, Any] = {"AlgorithmSpecification": {},
                                   "VpcConfig": _vpc_config({"SecurityGroupIds": list(groups_ids), "Subnets": list(subnet_ids)}, resources)}
        if compute.planned_instance_type:
            planned["ResourceConfig"] = {"InstanceType": compute.planned_instance_type}
        resources[PLANNED_ID] = {"Type": JOB_RESOURCE_TYPE, "Properties": {"TrainingJob": planned}}
