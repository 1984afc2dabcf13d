"""Preflight findings and the catalogue of rules that produce them.

Rule ids are a public contract (CI pipelines filter on them): never rename one. Each rule
carries the symptom the SageMaker SMDDP troubleshooting guide describes, so a finding says
what the user would otherwise have seen at run time, after GPU hours were spent.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

ERROR = "error"
WARNING = "warning"
INFO = "info"
SEVERITIES = (ERROR, WARNING, INFO)


@dataclass(frozen=True)
class Rule:
    id: str
    title: str
    #: What the job shows at run time if the finding is ignored (the guide's words for its
    #: error messages; ours where the guide only describes a stall).
    symptom: str
    guide_section: str


DEBUGGER_CHECKPOINT = Rule(
    "PF-DEBUGGER-CHECKPOINT",
    "Debugger hook, SageMaker checkpointing and SMDDP all enabled",
    "SMDebug Does Not Currently Support Distributed Training Jobs With Checkpointing Enabled",
    "distributed-ts-data-parallel-debugger",
)
DEPRECATED_SMDDP_API = Rule(
    "PF-DEPRECATED-SMDDP-API",
    "smdistributed.dataparallel.torch.distributed / .parallel API (deprecated since SMDDP v1.4.0)",
    "smdistributed.dataparallel.torch.dist is deprecated in the SageMaker AI distributed data parallel library v1.4.0+.",
    "distributed-ts-data-parallel-deprecation-warnings",
)
UNEVEN_BATCHES = Rule(
    "PF-UNEVEN-BATCHES",
    "Ranks run different numbers of batches",
    "the job hangs at the end of training: ranks that finished wait in the last all-reduce for the others",
    "distributed-ts-data-parallel-stall-at-the-end",
)
DATALOADER_SAMPLER = Rule(
    "PF-DATALOADER-SAMPLER",
    "DataLoader without DistributedSampler or drop_last",
    "the job can hang at the end of training when ranks get different numbers of batches",
    "distributed-ts-data-parallel-stall-at-the-end",
)
CHECKPOINT_URI_SLASH = Rule(
    "PF-CHECKPOINT-URI-SLASH",
    "Checkpoint S3 URI without a trailing '/'",
    "checkpoints land beside other prefixes that share the name (s3://b/ckpt also matches s3://b/ckpt-old/)",
    "distributed-ts-data-parallel-debugger",
)
CHECKPOINT_LOCAL_PATH = Rule(
    "PF-CHECKPOINT-LOCAL-PATH",
    "Script writes checkpoints outside the checkpoint local path",
    "checkpoints are missing from checkpoint_s3_uri: SageMaker syncs only the checkpoint local path",
    "distributed-ts-data-parallel-debugger",
)
SUBNETS_MULTI_AZ = Rule(
    "PF-SUBNETS-MULTI-AZ",
    "Job subnets in more than one Availability Zone",
    "the job stalls at initialization or loses EFA bandwidth: EFA traffic does not cross Availability Zones",
    "distributed-ts-data-parallel-efa-sg",
)
UNKNOWN_KEY = Rule(
    "PF-UNKNOWN-KEY",
    "Job file key that neither preflight nor the SageMaker SDK knows",
    ("the setting has no effect: SDK v2 estimators drop unknown keyword arguments (ModelTrainer rejects them), "
     "and preflight skips the rules that need it (a misspelt num_samples or batch_size skips PF-UNEVEN-BATCHES)"),
    "",  # not in the guide: it keeps the other rules from being skipped without a word
)

DDP_PREFIX = Rule(
    "PF-DDP-PREFIX",
    "state_dict saved from a DistributedDataParallel wrapper (every key starts with module.)",
    ('loading it into the plain model fails: RuntimeError: Error(s) in loading state_dict: Missing key(s) ... '
     'Unexpected key(s) in state_dict: "module. ..."'),
    "",  # the guide section "unexpected prefix attached to state_dict keys"
)
SMDDP_INSTANCE = Rule(
    "PF-SMDDP-INSTANCE",
    "SMDDP requested on an instance type it does not support",
    ("the job fails at start-up or runs on an unsupported path: the SMDDP library supports only "
     "ml.p4d.24xlarge and ml.p4de.24xlarge (ml.p3dn.24xlarge as legacy)"),
    "",  # AWS's SMDDP "supported instance types" page, not the troubleshooting guide
)
SMDDP_LAUNCHER = Rule(
    "PF-SMDDP-LAUNCHER",
    "pytorchddp / smdistributed launcher on an instance type SMDDP does not support, without the smddp backend",
    ("the job starts through mpirun and smddprun (the smdistributed launcher; SDK v2 2.257.7 rewrites pytorchddp into "
     "it) although the script runs another backend; whether smddprun starts on this type is UNCONFIRMED"),
    "",  # REFERENCE: SDK v2 pytorch/estimator.py; AWS "Use the PyTorch framework estimators"
)
ENTRY_POINT_MISSING = Rule(
    "PF-ENTRY-POINT-MISSING",
    "entry_point is not a file in source_dir",
    'the SDK refuses the job before upload: ValueError: No file named "..." was found in directory "..."',
    "",  # sagemaker 2.257 fw_utils.validate_source_dir; sagemaker-train ModelTrainer._validate_source_code
)
STOPPING_CONDITION = Rule(
    "PF-STOPPING-CONDITION",
    "ModelTrainer without a stopping_condition (SDK v3 default: one hour)",
    "SageMaker stops the job after 3600 s (MaxRuntimeExceeded) however far training got",
    "",  # sagemaker-train 1.27.0 sagemaker/train/defaults.py DEFAULT_MAX_RUNTIME_IN_SECONDS
)
NON_PYTHON_ENTRY_POINT = Rule(
    "PF-NON-PYTHON-ENTRY-POINT",
    "Entry point is not a Python script",
    "the scripts it runs are what the guide's failures live in; preflight follows its `python x.py` lines",
    "",
)
SDK_REFUSES = Rule(
    "PF-SDK-REFUSES",
    "SDK v2 refuses an smdistributed distribution on p5 without torch_distributed",
    "fit() raises before anything is uploaded: ValueError: SMModelParallel and SMDataParallel currently do not "
    "support p5 instances.",
    "",  # sagemaker 2.257.7 sagemaker/estimator.py Framework._distribution_configuration
)
SOURCE_DIR_MISSING = Rule(
    "PF-SOURCE-DIR-MISSING",
    "source_dir does not exist where the job is built, and nothing in the input creates it",
    'the SDK refuses the job before upload: ValueError: No file named "..." was found in directory "..." '
    "(SDK v2 fit()), or Invalid 'source_dir' path (ModelTrainer)",
    "",  # sagemaker 2.257.7 fw_utils.validate_source_dir; sagemaker-train 1.27.0 ModelTrainer._validate_source_code
)
INSTANCE_TYPE_UNKNOWN = Rule(
    "PF-INSTANCE-TYPE-UNKNOWN",
    "instance_type is not a SageMaker training instance type",
    "CreateTrainingJob fails with a ValidationException: the value is not in the TrainingInstanceType enum",
    "",  # botocore's SageMaker service model, ResourceConfig.InstanceType
)
API_SHAPE = Rule(
    "PF-API-SHAPE",
    "SageMaker API JSON that botocore's service model rejects",
    "the client refuses the request before it reaches SageMaker (botocore ParamValidationError)",
    "",
)

RULES: dict[str, Rule] = {
    rule.id: rule
    for rule in (
        DEBUGGER_CHECKPOINT,
        DEPRECATED_SMDDP_API,
        UNEVEN_BATCHES,
        DATALOADER_SAMPLER,
        CHECKPOINT_URI_SLASH,
        CHECKPOINT_LOCAL_PATH,
        SUBNETS_MULTI_AZ,
        UNKNOWN_KEY,
        DDP_PREFIX,
        SMDDP_INSTANCE,
        SMDDP_LAUNCHER,
        ENTRY_POINT_MISSING,
        STOPPING_CONDITION,
        NON_PYTHON_ENTRY_POINT,
        API_SHAPE,
        SDK_REFUSES,
        SOURCE_DIR_MISSING,
        INSTANCE_TYPE_UNKNOWN,
    )
}


@dataclass(frozen=True)
class Finding:
    """One problem: where it is, what it is, what the job would show, and the exact fix."""

    severity: str
    rule_id: str
    location: str
    message: str
    symptom: str
    fix: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def finding(rule: Rule, severity: str, *, location: str, message: str, fix: str) -> Finding:
    assert severity in SEVERITIES, severity
    return Finding(severity=severity, rule_id=rule.id, location=location, message=message,
                   symptom=rule.symptom, fix=fix)
