"""Build a synthesized template's network in moto through the EC2/FSx APIs (test helper).

What CloudFormation would create for the resources the network rules read, with values
resolved by the template model itself (so ``Fn::Join`` service names, ``Fn::GetAtt ...GroupId``
and ``Ref`` all resolve as the rules see them): VPC, subnets, route tables and associations,
security groups with their inline and separate rules (a group with an inline
``SecurityGroupEgress`` loses EC2's default egress rule, as CloudFormation does), VPC
endpoints and FSx file systems. Everything else (buckets, roles, alarms) is not network and
is skipped. Used where moto's CloudFormation cannot carry the comparison: its stack holds the
same resources, but the FSx double creates no network interfaces and the test needs the
physical ids of each logical one.
"""

from __future__ import annotations

from typing import Any

from smddp_infra.rules.model import ResourceRef, TemplateModel


class Replay:
    def __init__(self, template: dict[str, Any], ec2: Any, fsx: Any) -> None:
        self.model = TemplateModel(template, region="us-east-1")
        self.world = self.model.world()
        self.ec2, self.fsx = ec2, fsx
        self.physical: dict[str, str] = {}

    def value(self, raw: Any) -> Any:
        resolved = self.world.resolve(raw)
        return self._physical(resolved)

    def _physical(self, value: Any) -> Any:
        if isinstance(value, ResourceRef):
            return self.physical[value.logical_id]
        if isinstance(value, list):
            return [self._physical(v) for v in value]
        if isinstance(value, dict):
            return {k: self._physical(v) for k, v in value.items()}
        return value

    def of_type(self, type_name: str) -> list[Any]:
        return self.model.of_type(type_name)

    def build(self) -> dict[str, str]:
        ec2 = self.ec2
        for vpc in self.of_type("AWS::EC2::VPC"):
            self.physical[vpc.logical_id] = ec2.create_vpc(CidrBlock=self.value(vpc.properties["CidrBlock"]))["Vpc"]["VpcId"]
        for subnet in self.of_type("AWS::EC2::Subnet"):
            p = self.value(subnet.properties)
            made = ec2.create_subnet(VpcId=p["VpcId"], CidrBlock=p["CidrBlock"], AvailabilityZone=p["AvailabilityZone"])
            self.physical[subnet.logical_id] = made["Subnet"]["SubnetId"]
            if p.get("Tags"):
                ec2.create_tags(Resources=[made["Subnet"]["SubnetId"]], Tags=p["Tags"])
        for table in self.of_type("AWS::EC2::RouteTable"):
            self.physical[table.logical_id] = ec2.create_route_table(VpcId=self.value(table.properties["VpcId"]))["RouteTable"]["RouteTableId"]
        for association in self.of_type("AWS::EC2::SubnetRouteTableAssociation"):
            p = self.value(association.properties)
            ec2.associate_route_table(RouteTableId=p["RouteTableId"], SubnetId=p["SubnetId"])
        groups = self.of_type("AWS::EC2::SecurityGroup")
        for group in groups:
            p = self.value({k: v for k, v in group.properties.items() if k not in ("SecurityGroupIngress", "SecurityGroupEgress")})
            made = ec2.create_security_group(GroupName=group.logical_id, Description=p["GroupDescription"], VpcId=p["VpcId"])
            self.physical[group.logical_id] = made["GroupId"]
            if p.get("Tags"):
                ec2.create_tags(Resources=[made["GroupId"]], Tags=p["Tags"])
        for group in groups:
            gid = self.physical[group.logical_id]
            inline_egress = "SecurityGroupEgress" in group.properties
            if inline_egress:  # CloudFormation removes EC2's default egress rule when the template lists egress
                ec2.revoke_security_group_egress(GroupId=gid, IpPermissions=[{"IpProtocol": "-1", "IpRanges": [{"CidrIp": "0.0.0.0/0"}]}])
            for key, egress in (("SecurityGroupIngress", False), ("SecurityGroupEgress", True)):
                for rule in self.value(group.properties.get(key, [])):
                    self.authorize(gid, rule, egress)
        for type_name, egress in (("AWS::EC2::SecurityGroupIngress", False), ("AWS::EC2::SecurityGroupEgress", True)):
            for rule in self.of_type(type_name):
                p = self.value(rule.properties)
                self.authorize(p["GroupId"], p, egress)
        for endpoint in self.of_type("AWS::EC2::VPCEndpoint"):
            p = self.value(endpoint.properties)
            kind = p.get("VpcEndpointType", "Gateway")
            kwargs: dict[str, Any] = {"VpcId": p["VpcId"], "ServiceName": p["ServiceName"], "VpcEndpointType": kind}
            if kind == "Gateway":
                kwargs["RouteTableIds"] = p.get("RouteTableIds", [])
            else:
                kwargs.update(SubnetIds=p.get("SubnetIds", []), SecurityGroupIds=p.get("SecurityGroupIds", []),
                              PrivateDnsEnabled=bool(p.get("PrivateDnsEnabled", False)))
            self.physical[endpoint.logical_id] = self.ec2.create_vpc_endpoint(**kwargs)["VpcEndpoint"]["VpcEndpointId"]
        for fs in self.of_type("AWS::FSx::FileSystem"):
            p = self.value(fs.properties)
            lustre = {k: v for k, v in (p.get("LustreConfiguration") or {}).items() if k in ("DeploymentType", "PerUnitStorageThroughput")}
            made = self.fsx.create_file_system(FileSystemType=p["FileSystemType"], StorageCapacity=int(p["StorageCapacity"]),
                                               SubnetIds=p["SubnetIds"], SecurityGroupIds=p.get("SecurityGroupIds", []),
                                               LustreConfiguration=lustre)
            self.physical[fs.logical_id] = made["FileSystem"]["FileSystemId"]
        return self.physical

    def authorize(self, group_id: str, rule: dict[str, Any], egress: bool) -> None:
        permission: dict[str, Any] = {"IpProtocol": str(rule["IpProtocol"])}
        for key in ("FromPort", "ToPort"):
            if key in rule:
                permission[key] = int(rule[key])
        peer_key = "DestinationSecurityGroupId" if egress else "SourceSecurityGroupId"
        prefix_key = "DestinationPrefixListId" if egress else "SourcePrefixListId"
        if peer_key in rule:
            permission["UserIdGroupPairs"] = [{"GroupId": rule[peer_key]}]
        elif prefix_key in rule:
            permission["PrefixListIds"] = [{"PrefixListId": rule[prefix_key]}]
        elif "CidrIp" in rule:
            permission["IpRanges"] = [{"CidrIp": rule["CidrIp"]}]
        elif "CidrIpv6" in rule:
            permission["Ipv6Ranges"] = [{"CidrIpv6": rule["CidrIpv6"]}]
        call = self.ec2.authorize_security_group_egress if egress else self.ec2.authorize_security_group_ingress
        call(GroupId=group_id, IpPermissions=[permission])
