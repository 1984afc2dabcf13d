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

    settings = NetworkSettings.from_context(_context(app))
    stack = TrainingNetworkStack(app, stack_name, settings=settings)
    if settings.allow_replacement:
        # Construct metadata lands in the cloud assembly, not in the template: `smddp-infra guard`
        # reads it from cdk.out, so `-c smddp:allowReplacement=true` accepts exactly this synth.
        from smddp_infra.review.replacement import ALLOW_REPLACEMENT_METADATA

        stack.node.add_metadata(ALLOW_REPLACEMENT_METADATA, True)
    Validations.of(app).add_plugins(AwsSolutionsChecks(app), SmddpChecks(app))
    return stack


def _context(app: App) -> dict[str, object]:
    """Every ``smddp:*`` key set in cdk.json or with ``-c`` (so unknown keys are reported), with its
    value: the app is the root, so its whole context is what ``try_get_context`` would read key by key."""
    return {key: value for key, value in sorted(app.node.get_all_context().items()) if key.startswith("smddp:")}
