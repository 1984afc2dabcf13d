"""The CreateCluster request an ``AWS::SageMaker::Cluster`` resource stands for.

CloudFormation's properties and the API's request share their names (``InstanceGroups``,
``VpcConfig``, ``Orchestrator``, ``NodeRecovery``); what differs is that a template holds
intrinsics (``Ref``, ``Fn::GetAtt``, ``Fn::Join``) where the request holds ids. A resolver
turns each intrinsic into a value: physical ids read from a deployed stack, or
:func:`placeholder_resolver`'s well-formed stand-ins for offline validation against botocore.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Optional

CLUSTER_TYPE = "AWS::SageMaker::Cluster"
#: Template-only properties the API does not take (CloudFormation reads them, or they are read-only).
_NOT_IN_REQUEST = ("CurrentCount",)

Resolver = Callable[[Mapping[str, Any]], Any]

#: Well-formed stand-ins per referenced resource type: ``Ref`` and the attributes our templates read.
_PLACEHOLDERS: Mapping[str, Mapping[str, str]] = {
    "AWS::EC2::Subnet": {"Ref": "subnet-0123456789abcdef0"},
    "AWS::EC2::SecurityGroup": {"Ref": "sg-0123456789abcdef0", "GroupId": "sg-0123456789abcdef0"},
    "AWS::IAM::Role": {"Ref": "hyperpod-role", "Arn": "arn:aws:iam::123456789012:role/hyperpod-role"},
    "AWS::FSx::FileSystem": {"Ref": "fs-0123456789abcdef0", "DNSName": "fs-0123456789abcdef0.fsx.us-east-1.amazonaws.com",
                             "LustreMountName": "abcdefgh"},
    "AWS::S3::Bucket": {"Ref": "job-bucket", "Arn": "arn:aws:s3:::job-bucket"},
}
_PSEUDO = {"AWS::Region": "us-east-1", "AWS::AccountId": "123456789012", "AWS::Partition": "aws",
           "AWS::URLSuffix": "amazonaws.com", "AWS::StackName": "stack"}


def placeholder_resolver(template: Mapping[str, Any]) -> Resolver:
    """Resolve ``Ref``/``Fn::GetAtt`` of ``template``'s resources to well-formed stand-ins."""
    resources: Mapping[str, Mapping[str, Any]] = template.get("Resources") or {}

    def resolve(intrinsic: Mapping[str, Any]) -> Any:
        if "Ref" in intrinsic:
            name = str(intrinsic["Ref"])
            if name in _PSEUDO:
                return _PSEUDO[name]
            kind = str((resources.get(name) or {}).get("Type"))
            return _PLACEHOLDERS.get(kind, {}).get("Ref", f"{name.lower()}-id")
        target = intrinsic["Fn::GetAtt"]
        name, attribute = (target if isinstance(target, list) else str(target).split(".", 1))
        kind = str((resources.get(name) or {}).get("Type"))
        return _PLACEHOLDERS.get(kind, {}).get(attribute, f"{name.lower()}-{attribute.lower()}")

    return resolve


def resolved(value: Any, resolve: Resolver) -> Any:
    """``value`` with every ``Ref``/``Fn::GetAtt`` resolved and ``Fn::Join`` joined."""
    if isinstance(value, Mapping):
        if "Ref" in value or "Fn::GetAtt" in value:
            return resolve(value)
        if "Fn::Join" in value:
            sep, parts = value["Fn::Join"]
            return str(sep).join(str(resolved(p, resolve)) for p in parts)
        return {k: resolved(v, resolve) for k, v in value.items()}
    if isinstance(value, list):
        return [resolved(v, resolve) for v in value]
    return value


def create_cluster_request(properties: Mapping[str, Any], resolve: Resolver, *,
                           cluster_name: Optional[str] = None) -> dict[str, Any]:
    """The CreateCluster request for a cluster resource's ``Properties`` (``ClusterName`` is
    required by the API; CloudFormation generates one when the template has none)."""
    request = resolved(dict(properties), resolve)
    for group in request.get("InstanceGroups", []):
        for key in _NOT_IN_REQUEST:
            group.pop(key, None)
    if cluster_name is not None or "ClusterName" not in request:
        request["ClusterName"] = cluster_name or "cluster"
    return dict(request)
