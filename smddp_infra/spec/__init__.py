"""The training network's spec (PURE: never imports aws_cdk).

:mod:`.network` holds the grouped, frozen values ``TrainingNetwork`` takes and one validator
per rule; :mod:`.subnets` the subnet arithmetic and the one subnet-fit check; :mod:`.regions`
the AZ-ID and S3 prefix-list tables. The app's context keys (:mod:`smddp_infra.settings`) and
the construct's props are two readers of these facts.
"""

from __future__ import annotations

from smddp_infra.spec.network import Jobs, NetworkSpec, Placement, Security, Storage, Workload, size_file_system, validate

__all__ = ["Jobs", "NetworkSpec", "Placement", "Security", "Storage", "Workload", "size_file_system", "validate"]
