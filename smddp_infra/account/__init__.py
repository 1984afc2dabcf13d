"""The one read-only room that talks to an AWS account: ``guard``, ``observe`` and ``diagnose``.

Every read goes through :class:`Account`: clients from ONE boto3 ``Session`` (the caller's
credential chain, region and ``AWS_ENDPOINT_URL*`` variables: a local endpoint needs no flag
of ours), botocore's standard retry mode, pagination, a count of the calls made (``diagnose``
reports it), and the failures a user can cause turned into one line naming what is missing:

* no credentials -> "no AWS credentials found ..." (the credential chain, in words);
* ``AccessDenied`` / ``UnauthorizedOperation`` -> "... needs the IAM permission
  <service>:<Action>" (the action the call maps to, which is what the policy must grant);
* anything else the service refuses -> the operation, the error code and its message.

boto3 is not in the ``[cli]`` extra (the CLI runs without it for the template commands), so it
is imported only when a client is first needed, and its absence is one line as well.
"""

from __future__ import annotations

from smddp_infra.account.reads import file_system, file_system_by_dns, file_systems_by_dns, metric_data, template_body, training_job
from smddp_infra.account.session import (
    Account,
    AccountError,
    NotFoundError,
    check_region,
    iam_action,
)

__all__ = ["Account", "AccountError", "NotFoundError", "check_region", "file_system", "file_system_by_dns",
           "file_systems_by_dns", "iam_action", "metric_data", "template_body", "training_job"]
