"""Test doubles of CLOUDFORMATION (not of this project) for moto 5.2.5's local endpoint.

moto's CloudFormation skips every resource type it has no handler for: it logs a warning,
creates nothing, and still reports CREATE_COMPLETE. The default app uses five such types:

- ``AWS::FSx::FileSystem``           (moto has the FSx API, but no CloudFormation handler;
                                       a stack Output that reads its ``LustreMountName``
                                       then fails with an HTTP 500)
- ``AWS::EC2::SecurityGroupEgress``  (moto has AuthorizeSecurityGroupEgress)
- ``AWS::S3::BucketPolicy``          (moto has PutBucketPolicy)
- ``AWS::CloudWatch::Alarm``         (moto has PutMetricAlarm, metric math queries included)
- ``AWS::SNS::TopicPolicy``          (moto has SetTopicAttributes Policy)

Two more types have a moto handler that fails (HTTP 500 on CreateStack) on a valid template:
``AWS::EC2::FlowLog`` with an S3 destination that carries a key prefix
(``arn:aws:s3:::bucket/prefix/``, which moto looks up as a bucket name), and
``AWS::SSM::Parameter`` without a ``Name`` (moto reads only ``Properties.Name``). Each
repair fixes that one step and is otherwise moto's own handler. For stack UPDATES the FSx
double updates ``StorageCapacity`` in place (larger only) and replaces otherwise, and one
repair makes ``UsePreviousValue`` work for a defaulted parameter (the CLI's BootstrapVersion).

Each double here does what CloudFormation's own handler does: it calls moto's OWN service
backend (the code behind the real API), so the test reads the result back through the real
API (``fsx.describe_file_systems``, ``ec2.describe_security_group_rules``,
``s3.get_bucket_policy``). Nothing here knows about smddp_infra: the doubles stand in for
AWS, and the project is the thing under test.

:func:`register` adds them to moto's CloudFormation type map (:func:`unregister` undoes
it). It must run in the process that serves the endpoint: ``ThreadedMotoServer`` serves
from a thread of the caller's process, so the caller registers. Register AFTER
``cdk bootstrap``: with the BucketPolicy double, moto would apply the bootstrap bucket's
SSL-only policy, and moto 5.2.5 evaluates a statement whose Condition it cannot check
(``aws:SecureTransport``) as an explicit Deny (moto/iam/access_control.py), so the CLI's
template upload would fail with 403. The bootstrap stack is the CLI's, not the project's.
"""

from __future__ import annotations

from .handlers import DOUBLES, REPAIRS, register, unregister

__all__ = ["DOUBLES", "REPAIRS", "register", "unregister"]
