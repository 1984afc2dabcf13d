"""A synth warning on a construct unless something the app may still do has been done by then.

Some fixes are called after a construct is built (``network.export_job_config()``,
``network.add_efa_client(...)``), so whether to warn is decided by an Aspect, once the app is
complete. :func:`warn_at_synth_unless` is that Aspect, shared by the hints that need it.
"""

from __future__ import annotations

from typing import Callable

import jsii
from aws_cdk import Annotations, Aspects, IAspect
from constructs import IConstruct


@jsii.implements(IAspect)
class _WarnUnless:
    def __init__(self, construct: IConstruct, done: Callable[[], object], warning_id: str, message: str) -> None:
        self._construct, self._done, self._warning_id, self._message = construct, done, warning_id, message

    def visit(self, node: IConstruct) -> None:
        if node.node.path == self._construct.node.path and not self._done():
            Annotations.of(self._construct).add_warning_v2(self._warning_id, self._message)


def warn_at_synth_unless(construct: IConstruct, done: Callable[[], object], warning_id: str, message: str) -> None:
    """At synth, warn ``warning_id: message`` on ``construct`` unless ``done()`` is true by then."""
    Aspects.of(construct).add(_WarnUnless(construct, done, warning_id, message))
