"""No template makes the engine raise: every node of a few rich fixtures is replaced by odd
values (wrong types, broken intrinsics, unknown conditions) and the rules must still answer.

A crash would reach a user as a traceback from `smddp-infra check` or a jsii error from the
nag pack; the rules answer "unknown" instead.
"""

from __future__ import annotations

import copy
import json
from typing import Any, Iterator

import pytest

from _rules_helpers import load

ODD: list[Any] = [
    None, 7, "x", [], {}, [None],
    {"Fn::If": "x"}, {"Ref": 5}, {"Fn::If": ["Nope", {"Ref": "AWS::NoValue"}, [1]]},
    {"Fn::Select": [{"Ref": "Nope"}, "a"]}, {"Fn::GetAtt": 3}, {"Fn::Sub": [1, 2]}, {"Condition": 1}, {"Fn::Equals": 1},
]
FIXTURES = ["p1_if_group_bad.yaml", "p1_rules_section_ok.yaml", "p3_fsx_ports_ok.yaml", "p6_hyperpod_spread_bad.yaml", "no_s3_route.yaml"]


def _paths(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, (*path, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _paths(value, (*path, index))


@pytest.mark.parametrize("name", FIXTURES)
def test_odd_values_anywhere_never_make_the_engine_raise(name: str) -> None:
    from smddp_infra.rules import check_template

    base = json.loads(json.dumps(load(name)))
    for path in list(_paths(base))[1:]:
        for odd in ODD:
            template = copy.deepcopy(base)
            node = template
            for key in path[:-1]:
                node = node[key]
            node[path[-1]] = odd
            check_template(template)  # must not raise
