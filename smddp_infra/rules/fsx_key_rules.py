"""SMDDP-FSX5: a customer KMS key on a SCRATCH FSx for Lustre file system.

FSx for Lustre uses a customer key (``KmsKeyId``) on PERSISTENT_1 and PERSISTENT_2 only;
SCRATCH_1 and SCRATCH_2 file systems are encrypted with the FSx service key of the account
(FSx API reference, CreateFileSystem ``KmsKeyId``; FSx for Lustre guide, "Encrypting data at
rest"). A ``KmsKeyId`` on a scratch file system is therefore never the key the data is
encrypted with: the security reviewer's "encrypted with our CMK" is not true of it.
"""

from __future__ import annotations

from smddp_infra.rules.findings import Finding, Rule, Severity
from smddp_infra.rules.model import NO_VALUE, UNKNOWN, World
from smddp_infra.rules.training import lustre_file_systems
from smddp_infra.sizing import lustre_rules as lr


def check_key_on_scratch(world: World) -> list[Finding]:
    findings: list[Finding] = []
    for fs in lustre_file_systems(world):
        key = world.get(fs, "KmsKeyId")
        if key is NO_VALUE:
            continue
        deployment = world.get(fs, "LustreConfiguration", "DeploymentType")
        deployment = lr.SCRATCH_1 if deployment is NO_VALUE else deployment  # CloudFormation's default
        if deployment is UNKNOWN or deployment not in lr.SCRATCH_TYPES:
            continue
        findings.append(KEY_ON_SCRATCH.finding(
            fs.logical_id,
            f"file system {fs.logical_id} is {deployment} with a KmsKeyId: FSx for Lustre uses a customer KMS key on "
            "PERSISTENT_1 and PERSISTENT_2 only (scratch file systems are encrypted with the FSx service key); choose a "
            "PERSISTENT deployment type to use the key, or remove KmsKeyId",
            "Properties", "KmsKeyId"))
    return findings


KEY_ON_SCRATCH = Rule(
    id="SMDDP-FSX5",
    severity=Severity.ERROR,
    cfn_lint_id="E9205",
    title="Customer KMS key on a SCRATCH FSx for Lustre file system",
    explanation="A customer key encrypts PERSISTENT_1/PERSISTENT_2 file systems only; use a PERSISTENT type or drop KmsKeyId.",
    symptom="the file system is not encrypted with your key: FSx uses its service key on SCRATCH types",
    check=check_key_on_scratch,
    source=("Amazon FSx API Reference, CreateFileSystem, KmsKeyId: customer keys are for PERSISTENT_1 and PERSISTENT_2 "
            "only; SCRATCH_1 and SCRATCH_2 are encrypted with the Amazon FSx service KMS key. FSx for Lustre User "
            "Guide, 'Encrypting data at rest'. Whether CreateFileSystem rejects or ignores the key is UNCONFIRMED."),
)

RULES = (KEY_ON_SCRATCH,)
