"""A network in a ``NestedStack``: its job document output does not reach cdk-outputs.json.

``cdk deploy --outputs-file`` writes the outputs of top-level stacks only, so the document
output of a nested network is invisible to ``smddp-infra job-config``. The warning is added by
an Aspect, once the app is complete, because the fix (``network.export_job_config()``) is
called after the construct is built.
"""

from __future__ import annotations

from typing import Any

import jsii
from aws_cdk import Annotations, Aspects, IAspect, Stack
from constructs import IConstruct

#: Synth-warning id (acknowledgeable): the document sits in a nested stack, not re-exported.
WARN_NESTED_DOCUMENT = "smddp:jobConfigInNestedStack"


@jsii.implements(IAspect)
class _NestedDocumentHint:
    def __init__(self, network: Any) -> None:
        self._network = network

    def visit(self, node: IConstruct) -> None:
        network = self._network
        if node.node.path != network.node.path or network.exported_job_config is not None:
            return
        Annotations.of(network).add_warning_v2(
            WARN_NESTED_DOCUMENT,
            f"the job document output of {network.node.path} is in nested stack {Stack.of(network).node.path}: "
            "cdk deploy --outputs-file writes top-level outputs only, so smddp-infra job-config would find no "
            "document; re-export it from the parent: network.export_job_config() (docs/embedding.md)")


def warn_unless_exported(network: Any) -> None:
    """Warn at synth unless ``network.exported_job_config`` is set by then."""
    Aspects.of(network).add(_NestedDocumentHint(network))
