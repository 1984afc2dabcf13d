"""Who mounts a network's EFA-enabled file system over EFA: the hook a cluster calls.

A SageMaker training job mounts FSx over TCP (``FileSystemDataSource`` has no EFA option,
:data:`~smddp_infra.sizing.guards.EFA_OVER_TCP_FOR_TRAINING_JOBS`), so a network whose only
consumers are training jobs gains nothing from ``efa_file_system=True``: a synth warning says
so. A construct that brings EFA clients (a HyperPod cluster built on the network, EC2
instances with the EFA Lustre client) calls :func:`add_efa_client` on the network, and the
warning is not emitted. The check runs as an Aspect, once the app is complete, because the
cluster is created after the network.
"""

from __future__ import annotations

from typing import Any

from smddp_infra.constructs._synth_hint import warn_at_synth_unless
from smddp_infra.errors import ConfigError
from smddp_infra.sizing.guards import EFA_OVER_TCP_FOR_TRAINING_JOBS, EFA_TRAINING_JOBS_ALERT_ID

#: The attribute the network keeps its EFA clients in (descriptions, for the record).
_CLIENTS = "_smddp_efa_clients"


def watch_efa_clients(network: Any) -> None:
    """Warn at synth unless an EFA client was attached to ``network`` by then."""
    warn_at_synth_unless(
        network, lambda: efa_clients(network), EFA_TRAINING_JOBS_ALERT_ID,
        f"efa_file_system=True on {network.node.path}: {EFA_OVER_TCP_FOR_TRAINING_JOBS}; drop efa_file_system "
        "(smddp:efaFileSystem), or attach the EFA clients (a HyperPod cluster: network.add_efa_client(...))")


def add_efa_client(network: Any, description: str) -> None:
    """Record that ``description`` (e.g. ``"HyperPod cluster Cluster"``) mounts ``network``'s
    file system over EFA."""
    if not isinstance(description, str) or not description.strip():
        raise ConfigError(f"add_efa_client needs a description of the client (e.g. 'HyperPod cluster X'), got {description!r}")
    if not hasattr(network, _CLIENTS):
        setattr(network, _CLIENTS, [])
    getattr(network, _CLIENTS).append(description.strip())


def efa_clients(network: Any) -> tuple[str, ...]:
    """The EFA clients attached to ``network`` (empty: training jobs only)."""
    return tuple(getattr(network, _CLIENTS, ()))
