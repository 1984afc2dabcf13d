"""Review artifacts from a synthesized cloud assembly (PURE: no aws_cdk, jsii or constructs).

``write_review(cdk_out, out_dir)`` writes, per stack, the template as YAML, a Graphviz
source of the network (and an SVG where Graphviz is installed), and one Markdown summary
a reviewer reads in two minutes. :mod:`smddp_infra.review.replacement` tells which
template changes would replace stateful resources; :mod:`smddp_infra.review.api_docs`
renders the constructs' API reference from their source.
"""

from __future__ import annotations

from smddp_infra.review.assembly import Acknowledgement, CloudAssembly, StackArtifact, load_assembly
from smddp_infra.review.writer import ReviewResult, template_file_name, write_review

__all__ = [
    "Acknowledgement",
    "CloudAssembly",
    "ReviewResult",
    "StackArtifact",
    "load_assembly",
    "template_file_name",
    "write_review",
]
