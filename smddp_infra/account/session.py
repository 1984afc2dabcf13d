"""Clients from one boto3 Session, counted calls, and one-line errors (see the package docstring)."""

from __future__ import annotations

from typing import Any, Iterator, Optional

from smddp_infra.errors import SmddpError

#: boto3 service name -> the IAM service prefix its actions are granted under.
_IAM_PREFIX = {"ec2": "ec2", "sagemaker": "sagemaker", "fsx": "fsx", "logs": "logs", "cloudwatch": "cloudwatch",
               "cloudformation": "cloudformation"}
#: Error codes meaning "the caller may not do this" (EC2 says UnauthorizedOperation).
_DENIED = {"AccessDenied", "AccessDeniedException", "UnauthorizedOperation", "UnauthorizedAccess", "AuthFailure"}
#: Error codes (or message fragments) meaning "no such resource".
_NOT_FOUND_CODES = {"ResourceNotFound", "ResourceNotFoundException", "FileSystemNotFound", "InvalidGroup.NotFound",
                    "InvalidSubnetID.NotFound", "InvalidVpcID.NotFound", "InvalidNetworkInterfaceID.NotFound"}
_NOT_FOUND_TEXT = ("could not find", "does not exist", "not found")
#: Retries for throttling and transient errors (botocore's standard mode, bounded).
MAX_ATTEMPTS = 3


class AccountError(SmddpError):
    """Reading the account failed in a way the user can fix (credentials, permission, region)."""


class NotFoundError(AccountError):
    """The named resource does not exist (in this account and region)."""


def iam_action(service: str, operation: str) -> str:
    """``("sagemaker", "DescribeTrainingJob")`` -> ``sagemaker:DescribeTrainingJob``."""
    return f"{_IAM_PREFIX.get(service, service)}:{operation}"


class Account:
    """Read-only access to one account and region, every call counted.

    ``region`` None: boto3's chain (``AWS_REGION``, ``AWS_DEFAULT_REGION``, the profile).
    ``region_from`` names where ``region`` came from, for the one line that refuses a malformed
    one (``--region`` by default; ``observe`` may take it from a cdk-outputs.json).

    The region is checked here, once for every command that reads an account, before any
    client exists: botocore refuses ``'us east 1'`` only when it builds a client, with a
    traceback, and a region of the right form is what AWS names (facts/regions.py).
    """

    def __init__(self, *, region: Optional[str] = None, clients: Optional[dict[str, Any]] = None,
                 region_from: str = "--region") -> None:
        if region is not None:
            check_region(region, region_from)
        self._region = region
        self._session: Any = None
        #: ``clients`` replaces the clients of some services (a botocore ``Stubber``'s client in tests).
        self._clients: dict[str, Any] = dict(clients or {})
        #: Every call made, in order: ("sagemaker:DescribeTrainingJob", ...). Pages count one each.
        self.calls: list[str] = []

    # -- clients -----------------------------------------------------------------------------

    @property
    def session(self) -> Any:
        if self._session is None:
            try:
                import boto3
            except ImportError:  # boto3 is not in the [cli] extra
                raise AccountError("reading an AWS account needs boto3, which is not installed (pip install boto3)") from None
            self._session = boto3.session.Session(region_name=self._region)
            share_data_loader(self._session)
        return self._session

    @property
    def region(self) -> str:
        import os

        # boto3's chain reads AWS_DEFAULT_REGION and the profile; AWS_REGION is what the SDKs and
        # the CLI v2 document too, so it is honoured here as well.
        if self._region:
            return self._region
        region = self.session.region_name or os.environ.get("AWS_REGION")
        if not region:
            raise AccountError("no AWS region: pass --region or set AWS_REGION (or a region in your AWS profile)")
        source = next((name for name in ("AWS_DEFAULT_REGION", "AWS_REGION") if os.environ.get(name) == region),
                      "the region of your AWS profile")
        check_region(str(region), source)
        return str(region)

    def client(self, service: str) -> Any:
        if service not in self._clients:
            from botocore.config import Config
            from botocore.exceptions import BotoCoreError

            region = self.region
            try:
                self._clients[service] = self.session.client(
                    service, region_name=region,
                    config=Config(retries={"max_attempts": MAX_ATTEMPTS, "mode": "standard"}, connect_timeout=10,
                                  read_timeout=30))
            except BotoCoreError as exc:  # e.g. an AWS_ENDPOINT_URL botocore cannot use
                raise AccountError(f"cannot build the {service} client for {region}: {exc}") from None
        return self._clients[service]

    # -- calls -------------------------------------------------------------------------------

    def call(self, service: str, operation: str, what: str = "", **kwargs: Any) -> Any:
        """One API call; ``what`` names the user's input in errors ("--job j1")."""
        client = self.client(service)
        method = getattr(client, _snake(operation))
        self.calls.append(iam_action(service, operation))
        try:
            return method(**kwargs)
        except Exception as exc:  # botocore's exceptions, turned into one line
            raise self._error(exc, service, operation, what) from None

    def pages(self, service: str, operation: str, key: str, what: str = "", *, max_pages: int = 10,
              token_in: str = "NextToken", token_out: str = "NextToken", **kwargs: Any) -> Iterator[Any]:
        """Items of ``key`` over at most ``max_pages`` pages (each page is one counted call)."""
        token: Optional[str] = None
        for _ in range(max_pages):
            page = self.call(service, operation, what, **({**kwargs, token_in: token} if token else kwargs))
            yield from page.get(key, []) or []
            token = page.get(token_out)
            if not token:
                return

    def _error(self, exc: Exception, service: str, operation: str, what: str) -> AccountError:
        from botocore.exceptions import (
            BotoCoreError,
            ClientError,
            EndpointConnectionError,
            NoCredentialsError,
            NoRegionError,
            PartialCredentialsError,
        )

        prefix = f"{what}: " if what else ""
        action = iam_action(service, operation)
        if isinstance(exc, (NoCredentialsError, PartialCredentialsError)):
            return AccountError(f"{prefix}no AWS credentials found for {action} (set AWS_PROFILE, or AWS_ACCESS_KEY_ID "
                                "and AWS_SECRET_ACCESS_KEY, or run `aws sso login`)")
        if isinstance(exc, NoRegionError):
            return AccountError("no AWS region: pass --region or set AWS_REGION")
        if isinstance(exc, EndpointConnectionError):
            return AccountError(f"{prefix}could not reach the {service} endpoint for {action}: {exc}")
        if isinstance(exc, ClientError):
            error = exc.response.get("Error", {}) or {}
            code = str(error.get("Code", ""))
            message = str(error.get("Message", "") or exc)
            if code in _DENIED or "not authorized" in message.lower():
                return AccountError(f"{prefix}access denied: the caller needs the IAM permission {action} "
                                    f"(`smddp-infra diagnose --print-policy` prints every action diagnose uses)")
            if code in ("UnrecognizedClientException", "InvalidClientTokenId", "ExpiredToken", "ExpiredTokenException",
                        "InvalidSignatureException", "SignatureDoesNotMatch"):
                return AccountError(f"{prefix}AWS rejected the credentials for {action} ({code}): refresh them "
                                    "(`aws sso login`, or new access keys)")
            if code in _NOT_FOUND_CODES or any(t in message.lower() for t in _NOT_FOUND_TEXT):
                return NotFoundError(f"{prefix}{message} ({action} in {self.region})")
            return AccountError(f"{prefix}{action} failed: {code}: {message}")
        if isinstance(exc, BotoCoreError):
            return AccountError(f"{prefix}{action} failed: {exc}")
        raise exc


def check_region(region: str, source: str = "--region") -> None:
    """Refuse a region that is not of AWS's form (``us-east-1``, ``us-gov-west-1``, ``cn-north-1``),
    naming where it came from; every command that takes ``--region`` calls it, so none of them
    meets botocore's ``InvalidRegionError`` traceback."""
    from smddp_infra.facts.regions import REGION

    if not REGION.fullmatch(region):
        raise AccountError(f"{source} must be an AWS Region name such as us-east-1, got {region!r}")


def _snake(operation: str) -> str:
    import re

    return re.sub(r"(?<!^)(?=[A-Z])", "_", operation).lower()


#: The botocore data loader every Session of this process shares (see :func:`share_data_loader`).
_DATA_LOADER: Any = None


def share_data_loader(session: Any) -> Any:
    """One botocore data loader for every Session this process builds. A Session parses each
    service's JSON model (SageMaker's and EC2's are megabytes) into its own loader's cache, so a
    process that runs several commands (``smddp-infra mcp`` serves one per tool call, and so does
    any caller of the Python API) paid that parse again for every command: most of an in-process
    ``diagnose``'s CPU. The loader only reads the installed models (its cache is keyed by file), so
    sharing it changes no answer. It is registered after boto3 built the Session (boto3 appends its
    own data path to the loader it finds then), so the shared loader's search path does not grow
    with every command."""
    global _DATA_LOADER
    inner = session._session  # boto3's botocore session: the documented way to register a component
    if _DATA_LOADER is None:
        _DATA_LOADER = inner.get_component("data_loader")
    else:
        inner.register_component("data_loader", _DATA_LOADER)
    return session
