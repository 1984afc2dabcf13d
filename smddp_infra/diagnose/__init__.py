"""``smddp-infra diagnose``: the troubleshooting guide run against what an account holds.

readers (:mod:`.collect`, through :mod:`smddp_infra.account`) -> the template model
(:mod:`smddp_infra.rules.live_loader`) -> the same rules as ``check`` (plus SMDDP-NET6, network
ACLs) and preflight's rules on the job's record -> symptoms from ``FailureReason`` and the job's
log (:mod:`.symptoms`) -> throughput during the job (``observe``'s arithmetic) -> a report with
one verdict per guide failure (:mod:`.report`). Read-only (:mod:`.policy`).
"""

from __future__ import annotations

from smddp_infra.diagnose.report import Diagnosis
from smddp_infra.diagnose.run import diagnose_cluster, diagnose_job, diagnose_network, diagnose_stack

__all__ = ["Diagnosis", "diagnose_cluster", "diagnose_job", "diagnose_network", "diagnose_stack"]
