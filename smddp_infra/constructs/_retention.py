"""A synth warning when something turns our stateful resources from Retain to Delete.

The constructs create the file system, the buckets and the key with ``RemovalPolicy.RETAIN``:
deleting the stack, or removing the resource from the app, leaves them (and the data) in the
account. A blanket ``RemovalPolicies.of(app).destroy()`` (the usual dev-account aspect) or any
Aspect calling ``apply_removal_policy(DESTROY)`` rewrites those policies to ``Delete`` after
the constructs are built, silently. Aspects run before validation in ``app.synth()``, so a
node validation sees the final policies; it adds a warning (it returns no error: deleting a
dev network with its data can be what the user wants) and so the change is said once, at
synth, where the user can acknowledge it (``Annotation::smddp:statefulNotRetained``).
"""

from __future__ import annotations

from typing import Any

import jsii
from aws_cdk import Annotations, CfnDeletionPolicy, CfnResource, aws_fsx as fsx, aws_kms as kms, aws_s3 as s3
from constructs import Construct, IValidation

WARNING_ID = "smddp:statefulNotRetained"
#: The L1 classes of the types whose loss loses data (``rules.retention_rules.STATEFUL_TYPES``, which
#: the guard protects too): what the constructs create, told apart in Python (``cfn_resource_type``
#: is a round trip to jsii's node process for every resource under the scope).
_STATEFUL_CLASSES = (fsx.CfnFileSystem, s3.CfnBucket, kms.CfnKey)
_RETAINING = (CfnDeletionPolicy.RETAIN, CfnDeletionPolicy.RETAIN_EXCEPT_ON_CREATE, CfnDeletionPolicy.SNAPSHOT)


def watch_retention(scope: Construct) -> list[CfnResource]:
    """Watch every stateful resource under ``scope`` that is RETAIN now; returns them."""
    watched = [c for c in scope.node.find_all() if isinstance(c, _STATEFUL_CLASSES)
               and c.cfn_options.deletion_policy in _RETAINING]
    if watched:
        scope.node.add_validation(_RetentionKept(watched))
    return watched


_NAMES = {"DELETE": "Delete", "RETAIN": "Retain", "SNAPSHOT": "Snapshot", "RETAIN_EXCEPT_ON_CREATE": "RetainExceptOnCreate"}


def _policy_name(policy: Any) -> str:
    """The template's spelling (``Delete``) of a jsii enum member (its value is ``DELETE``)."""
    if policy is None:
        return "Delete (CloudFormation's default)"
    name = str(getattr(policy, "value", policy))
    return _NAMES.get(name, name)


@jsii.implements(IValidation)
class _RetentionKept:
    def __init__(self, resources: list[CfnResource]) -> None:
        self._resources = resources

    def validate(self) -> list[str]:
        for resource in self._resources:
            changed = [(name, policy) for name, policy in (("DeletionPolicy", resource.cfn_options.deletion_policy),
                                                           ("UpdateReplacePolicy", resource.cfn_options.update_replace_policy))
                       if policy not in _RETAINING]
            if not changed:
                continue
            policies = " and ".join(f"{name} {_policy_name(policy)}" for name, policy in changed)
            Annotations.of(resource).add_warning_v2(
                WARNING_ID,
                f"{resource.cfn_resource_type} {resource.node.path} was created RETAIN and is now {policies} (a removal-"
                "policy aspect such as RemovalPolicies.of(app).destroy()): the data goes when the stack goes; exclude it "
                "from the aspect to keep it, or acknowledge this warning to delete it with the stack on purpose",
            )
        return []


__all__ = ["WARNING_ID", "watch_retention"]
