"""A network in a ``NestedStack``: its job document output does not reach cdk-outputs.json.

``cdk deploy --outputs-file`` writes the outputs of top-level stacks only, so the document
output of a nested network is invisible to ``smddp-infra job-config``. The warning is added by
an Aspect, once the app is complete, because the fix (``network.export_job_config()``) is
called after the construct is built.
"""

from __future__ import annotations

from typing import Any

from aws_cdk import Stack

from smddp_infra.constructs._synth_hint import warn_at_synth_unless

#: Synth-warning id (acknowledgeable): the document sits in a nested stack, not re-exported.
WARN_NESTED_DOCUMENT = "smddp:jobConfigInNestedStack"


def warn_unless_exported(network: Any) -> None:
    """Warn at synth unless ``network.exported_job_config`` is set by then."""
    warn_at_synth_unless(
        network, lambda: network.exported_job_config is not None, WARN_NESTED_DOCUMENT,
        f"the job document output of {network.node.path} is in nested stack {Stack.of(network).node.path}: "
        "cdk deploy --outputs-file writes top-level outputs only, so smddp-infra job-config would find no "
        "document; re-export it from the parent: network.export_job_config() (docs/embedding.md)")
