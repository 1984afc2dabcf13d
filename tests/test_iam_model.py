"""The IAM evaluation model (tests/_iam_model.py) against AWS's documented semantics, case by case."""

from __future__ import annotations

import pytest

from _iam_model import ModelError, Request, condition_holds, evaluate

K = "sagemaker:VpcSubnets"


@pytest.mark.parametrize(
    ("operator", "policy", "context", "holds"),
    [
        # positive operators: false for a missing key; policy values are alternatives (OR)
        ("StringEquals", ["a", "b"], {"k": "b"}, True),
        ("StringEquals", ["a"], {}, False),
        ("StringEquals", ["a"], {"k": "A"}, False),  # case-sensitive
        # negated operators: true when the value matches none, and TRUE for a missing key
        ("StringNotEquals", ["a", "b"], {"k": "c"}, True),
        ("StringNotEquals", ["a", "b"], {"k": "a"}, False),
        ("StringNotEquals", ["a"], {}, True),
        ("ArnNotEquals", ["arn:aws:kms:r:1:key/x"], {}, True),
        # IfExists: a missing key passes, a present one is compared
        ("StringEqualsIfExists", ["a"], {}, True),
        ("StringEqualsIfExists", ["a"], {"k": "b"}, False),
        ("BoolIfExists", "false", {}, True),
        ("BoolIfExists", "false", {"k": True}, False),
        # Null
        ("Null", "true", {}, True),
        ("Null", "false", {}, False),
        ("Null", "false", {"k": ["x"]}, True),
        ("Null", "true", {"k": []}, True),  # an empty set counts as missing
        # Bool
        ("Bool", "true", {"k": True}, True),
        ("Bool", "true", {"k": False}, False),
        ("Bool", "true", {}, False),
        # set operators
        ("ForAllValues:StringEquals", ["a", "b"], {"k": ["a", "b"]}, True),
        ("ForAllValues:StringEquals", ["a"], {"k": ["a", "c"]}, False),
        ("ForAllValues:StringEquals", ["a"], {}, True),  # the empty-set trap
        ("ForAnyValue:StringEquals", ["a"], {"k": ["c", "a"]}, True),
        ("ForAnyValue:StringEquals", ["a"], {}, False),
        ("ForAnyValue:StringNotEquals", ["a"], {"k": ["a", "c"]}, True),
        ("ForAnyValue:StringNotEquals", ["a"], {"k": ["a"]}, False),
        ("ForAllValues:StringNotEquals", ["a"], {"k": ["b", "c"]}, True),
        # wildcards
        ("StringLike", ["/mnt/*"], {"k": "/mnt/data/x"}, True),
        ("StringLike", ["/mnt/*"], {"k": "/mntx"}, False),
        ("StringLike", ["a?c"], {"k": "abc"}, True),
        ("ArnLike", ["arn:aws:iam::*:role/x"], {"k": "arn:aws:iam::123:role/x"}, True),
        ("ArnEquals", ["arn:aws:kms:us-east-1:1:key/k"], {"k": "arn:aws:kms:us-east-1:1:key/k"}, True),
        ("ArnEquals", ["arn:aws:kms:us-east-1:1:key/k"], {"k": "k"}, False),  # a key id is not its ARN
    ],
)
def test_condition_operator_semantics(operator: str, policy, context: dict, holds: bool) -> None:
    assert condition_holds(operator, "k", policy, context) is holds


def test_single_valued_operator_on_a_multi_valued_key_is_refused_by_the_model() -> None:
    with pytest.raises(ModelError):
        condition_holds("StringEquals", K, ["a"], {K: ["a", "b"]})


def test_unknown_operators_are_refused_by_the_model() -> None:
    with pytest.raises(ModelError):
        condition_holds("NumericLessThan", "k", ["1"], {"k": "0"})


def test_explicit_deny_wins_and_implicit_deny_is_the_default() -> None:
    allow = {"Statement": [{"Sid": "A", "Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}
    deny = {"Statement": [{"Sid": "D", "Effect": "Deny", "Action": "s3:PutObject", "Resource": "arn:aws:s3:::b/*",
                           "Condition": {"Null": {"s3:x-amz-server-side-encryption": "true"}}}]}
    assert evaluate([allow, deny], Request("s3:GetObject", "arn:aws:s3:::b/k", {})).allowed
    decision = evaluate([allow, deny], Request("s3:PutObject", "arn:aws:s3:::b/k", {}))
    assert decision.effect == "ExplicitDeny" and decision.sid == "D"
    assert evaluate([deny], Request("s3:GetObject", "arn:aws:s3:::b/k", {})).effect == "ImplicitDeny"


def test_actions_match_case_insensitively_and_resources_case_sensitively() -> None:
    allow = {"Statement": [{"Sid": "A", "Effect": "Allow", "Action": "SageMaker:Describe*", "Resource": "arn:aws:x:::Job/*"}]}
    assert evaluate([allow], Request("sagemaker:DescribeTrainingJob", "arn:aws:x:::Job/1", {})).allowed
    assert not evaluate([allow], Request("sagemaker:DescribeTrainingJob", "arn:aws:x:::job/1", {})).allowed
