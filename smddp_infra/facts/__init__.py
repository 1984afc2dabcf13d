"""The AWS facts floor (PURE: imports only :mod:`smddp_infra.errors` and :mod:`smddp_infra.partitions`).

Limits, patterns, tables and arithmetic of AWS itself, each written once with its citation, so
the schema, the app's settings, job-config, HyperPod, the rules and the constructs all read
the same fact: :mod:`.regions` (regions, AZ names and IDs, S3 prefix lists, VPC CIDRs),
:mod:`.subnets` (reserved IPs, usable addresses, the training subnet's mask and fit),
:mod:`.names` (SageMaker resource names), :mod:`.arns` (one ARN parser and the shapes of role,
KMS key, SNS topic, training plan and EKS cluster ARNs), :mod:`.s3` (bucket names, ``s3://``
URIs), :mod:`.eks` (where an EKS control plane may be placed), :mod:`.addresses` (the private IPs a
HyperPod node takes, per instance type, orchestrator and interface). What each partition has is one
floor lower, :mod:`smddp_infra.partitions`. Nothing here knows a prop or a context key: a caller passes the name the
user wrote, so the message names it.
"""
