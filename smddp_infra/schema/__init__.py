"""The training network's schema (PURE: never imports aws_cdk).

:mod:`.network` holds the grouped, frozen values ``TrainingNetwork`` takes and one validator
per rule, and the one sizing call. The AWS facts its rules read (subnet arithmetic, AZ IDs,
names) are the floor below it, :mod:`smddp_infra.facts`. The app's context keys
(:mod:`smddp_infra.settings`) and the construct's props are two readers of this schema.

(It was ``smddp_infra.spec``; that name still resolves, with a DeprecationWarning, for one
minor release: tools and people read a folder named ``spec/`` as tests.)
"""

from __future__ import annotations

from smddp_infra.schema.network import Jobs, NetworkSpec, Placement, Security, Storage, Workload, size_file_system, validate

__all__ = ["Jobs", "NetworkSpec", "Placement", "Security", "Storage", "Workload", "size_file_system", "validate"]
