"""SMDDP-STATE1 / STATE2: a stateful resource that CloudFormation deletes with the stack.

``DeletionPolicy: Delete`` (and ``UpdateReplacePolicy: Delete``) means that deleting the stack,
removing the resource from the template, or (for the replace policy) a replacement deletes the
physical resource: the file system with every file on it, the bucket with its objects, the key
(scheduled for deletion). CloudFormation User Guide, "DeletionPolicy attribute" and
"UpdateReplacePolicy attribute". The usual way a CDK app gets there without meaning to is a
blanket ``RemovalPolicies.of(app).destroy()`` aspect, which writes an explicit ``Delete``.

* STATE1 (warning): on a resource this project's constructs made (it carries an ``smddp:`` tag
  or ``smddp:`` Metadata, as the file system does): they create it RETAIN, so Delete is a
  change somebody's aspect or override made.
* STATE2 (info): an explicit ``Delete`` on any other template's file system, bucket or key: the
  author's choice, said once.

Only an explicit ``Delete`` is reported: aws-cdk-lib writes one for ``RemovalPolicy.DESTROY``,
while an absent policy (CloudFormation's default, also Delete) is the usual hand-written form,
including in templates that borrow this project's tags, and not evidence of a change.

A key only SNS topics use (the alarm topic's key) is left out: topics hold no data to lose.
"""

from __future__ import annotations

from typing import Any, Mapping

from smddp_infra.rules.findings import Finding, Rule, Severity
from smddp_infra.rules.groups import resources_mentioned
from smddp_infra.rules.model import World

STATEFUL_TYPES = ("AWS::FSx::FileSystem", "AWS::S3::Bucket", "AWS::KMS::Key")
_MARK = "smddp:"
_WHAT = {"AWS::FSx::FileSystem": "the file system and every file on it", "AWS::S3::Bucket": "the bucket and its objects",
         "AWS::KMS::Key": "the key (data encrypted under it becomes unreadable)"}


def _body(world: World, logical_id: str) -> Mapping[str, Any]:
    body = (world.model.template.get("Resources") or {}).get(logical_id)
    return body if isinstance(body, Mapping) else {}


def _ours(world: World, body: Mapping[str, Any], resource: Any) -> bool:
    metadata = body.get("Metadata")
    if isinstance(metadata, Mapping) and any(str(k).startswith(_MARK) for k in metadata):
        return True
    return any(str(k).startswith(_MARK) for k in world.tags(resource))


def _only_topics_use(world: World, key_id: str) -> bool:
    users = {r.type for r in world.resources.values()
             if r.logical_id != key_id and key_id in resources_mentioned(world, r.properties, ("AWS::KMS::Key",))}
    return users == {"AWS::SNS::Topic"}


def check_retention(world: World) -> list[Finding]:
    findings: list[Finding] = []
    for resource in world.of_type(*STATEFUL_TYPES):
        body = _body(world, resource.logical_id)
        ours = _ours(world, body, resource)
        deleted = [a for a in ("DeletionPolicy", "UpdateReplacePolicy") if body.get(a) == "Delete"]
        if not deleted or (resource.type == "AWS::KMS::Key" and _only_topics_use(world, resource.logical_id)):
            continue
        policies = " and ".join(f"{a} Delete" for a in deleted)
        what = _WHAT[resource.type]
        if ours:
            findings.append(NOT_RETAINED.finding(
                resource.logical_id,
                f"{resource.logical_id} was created RETAIN by smddp_infra and has {policies} (a removal-policy aspect "
                f"such as RemovalPolicies.of(app).destroy(), or an override): the data goes when the stack goes, "
                f"{what} with it; exclude it from the aspect, or accept it on purpose",
                deleted[0]))
        else:
            findings.append(DELETED_WITH_STACK.finding(
                resource.logical_id,
                f"{resource.logical_id} ({resource.type}) has {policies}: deleting the stack or removing the resource "
                f"deletes {what}; write Retain to keep it",
                deleted[0]))
    return findings


_SOURCE = ("CloudFormation User Guide, 'DeletionPolicy attribute' (Delete: CloudFormation deletes the resource and all its "
           "content, if applicable, during stack deletion) and 'UpdateReplacePolicy attribute' (Delete: the old physical "
           "resource is deleted when the resource is replaced).")

NOT_RETAINED = Rule(
    id="SMDDP-STATE1",
    severity=Severity.WARNING,
    cfn_lint_id="W9401",
    title="A stateful resource smddp_infra created RETAIN is Delete",
    explanation="Exclude the resource from the removal-policy aspect (or override) that set Delete, or accept it on purpose.",
    symptom="the data goes when the stack goes: the file system, bucket or key is deleted with the stack",
    check=lambda world: [f for f in check_retention(world) if f.rule_id == "SMDDP-STATE1"],
    source=_SOURCE,
)

DELETED_WITH_STACK = Rule(
    id="SMDDP-STATE2",
    severity=Severity.INFO,
    cfn_lint_id="I9402",
    title="A file system, bucket or key is deleted with the stack (explicit DeletionPolicy Delete)",
    explanation="Write DeletionPolicy and UpdateReplacePolicy Retain where the data must outlive the stack.",
    symptom="the data goes when the stack goes",
    check=lambda world: [f for f in check_retention(world) if f.rule_id == "SMDDP-STATE2"],
    source=_SOURCE,
)

RULES = (NOT_RETAINED, DELETED_WITH_STACK)
