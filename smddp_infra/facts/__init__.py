"""The AWS facts floor (PURE: imports only :mod:`smddp_infra.errors` and :mod:`smddp_infra.partitions`).

Limits, patterns, tables and arithmetic of AWS itself, each written once with its citation, so
the schema, the app's settings, job-config, HyperPod, the rules and the constructs all read
the same fact: :mod:`.regions` (regions, AZ names and IDs, S3 prefix lists, VPC CIDRs),
:mod:`.subnets` (reserved IPs, the training subnet's mask and fit), :mod:`.names` (SageMaker
resource names). Nothing here knows a prop or a context key: a caller passes the name the
user wrote, so the message names it.
"""
