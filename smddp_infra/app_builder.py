"""Build the default app's stack and rule packs onto an ``App``: shared by app.py and tests."""

from __future__ import annotations

from aws_cdk import App, Validations

from smddp_infra.settings import NetworkSettings
from smddp_infra.stack import TrainingNetworkStack

STACK_NAME = "TrainingNetworkStack"


def build_app(app: App, *, stack_name: str = STACK_NAME) -> TrainingNetworkStack:
    """Parse the ``smddp:*`` context of ``app``, add the stack and the rule packs."""
    from cdk_nag import AwsSolutionsChecks

    from smddp_infra.checks import SmddpChecks

    context = {key: app.node.try_get_context(key) for key in _context_keys(app)}
    settings = NetworkSettings.from_context(context)
    stack = TrainingNetworkStack(app, stack_name, settings=settings)
    if settings.allow_replacement:
        # Construct metadata lands in the cloud assembly, not in the template: `smddp-infra guard`
        # reads it from cdk.out, so `-c smddp:allowReplacement=true` accepts exactly this synth.
        from smddp_infra.review.replacement import ALLOW_REPLACEMENT_METADATA

        stack.node.add_metadata(ALLOW_REPLACEMENT_METADATA, True)
    Validations.of(app).add_plugins(AwsSolutionsChecks(app), SmddpChecks(app))
    return stack


def _context_keys(app: App) -> list[str]:
    """Every ``smddp:*`` key set in cdk.json or with ``-c`` (so unknown keys are reported)."""
    return sorted(k for k in app.node.get_all_context() if k.startswith("smddp:"))
