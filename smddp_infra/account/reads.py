"""The reads more than one command makes, in one place (pagination and "does not exist" included)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Mapping, Optional, Sequence

from smddp_infra.account.session import Account, NotFoundError

#: GetMetricData pages followed at most (each returns up to 100,800 datapoints).
METRIC_PAGES = 20


def metric_data(account: Account, queries: Sequence[Mapping[str, Any]], start: datetime, end: datetime, *,
                what: str = "", max_pages: int = METRIC_PAGES) -> dict[str, list[tuple[datetime, float]]]:
    """One GetMetricData request for the window, its pages followed; query id -> (time, value) ascending."""
    series: dict[str, list[tuple[datetime, float]]] = {str(q["Id"]): [] for q in queries}
    token: Optional[str] = None
    for _ in range(max_pages):
        kwargs: dict[str, Any] = {"MetricDataQueries": list(queries), "StartTime": start, "EndTime": end,
                                  "ScanBy": "TimestampAscending"}
        if token:
            kwargs["NextToken"] = token
        page = account.call("cloudwatch", "GetMetricData", what, **kwargs)
        for result in page.get("MetricDataResults", []):
            series.setdefault(result["Id"], []).extend(zip(result.get("Timestamps", []), result.get("Values", [])))
        token = page.get("NextToken")
        if not token:
            break
    return {k: sorted(v) for k, v in series.items()}


def training_job(account: Account, name: str, *, what: str) -> Mapping[str, Any]:
    """DescribeTrainingJob; a job that does not exist is one line naming the flag."""
    try:
        job: Mapping[str, Any] = account.call("sagemaker", "DescribeTrainingJob", what, TrainingJobName=name)
    except NotFoundError:
        raise NotFoundError(f"{what}: no training job of that name in {account.region}") from None
    return job


def template_body(account: Account, stack: str, *, what: str) -> Optional[Any]:
    """The stack's template (GetTemplate: a dict when JSON, else text); None when the stack does not exist."""
    try:
        return account.call("cloudformation", "GetTemplate", what, StackName=stack)["TemplateBody"]
    except NotFoundError:
        return None


def file_system(account: Account, file_system_id: str, *, what: str) -> Mapping[str, Any]:
    """DescribeFileSystems for one id; one that does not exist is one line naming it (FSx says
    FileSystemNotFound; some endpoints answer an empty list instead)."""
    try:
        found = list(account.pages("fsx", "DescribeFileSystems", "FileSystems", what, max_pages=1,
                                   FileSystemIds=[file_system_id]))
    except NotFoundError:
        found = []
    match = [fs for fs in found if fs.get("FileSystemId") == file_system_id]
    if not match:
        raise NotFoundError(f"{what}: no FSx file system {file_system_id} in {account.region}")
    return dict(match[0])


def file_systems_by_dns(account: Account, dns_names: Sequence[str], *, what: str, max_pages: int = 10) -> dict[str, Mapping[str, Any]]:
    """DNS name (lower case) -> the file system of that ``DNSName``, for the names found: how a HyperPod
    instance group (``FsxLustreConfig.DnsName``) or its lifecycle script (``mount -t lustre
    <dns>@tcp:/<mount name>``) names a file system. DescribeFileSystems has no filter, so its pages
    are read (up to ``max_pages``), stopping once every name is found."""
    wanted = {n.lower() for n in dns_names}
    found: dict[str, Mapping[str, Any]] = {}
    if not wanted:
        return found
    for fs in account.pages("fsx", "DescribeFileSystems", "FileSystems", what, max_pages=max_pages):
        name = str(fs.get("DNSName", "")).lower()
        if name in wanted:
            found[name] = dict(fs)
            if len(found) == len(wanted):
                break
    return found


def file_system_by_dns(account: Account, dns_name: str, *, what: str, max_pages: int = 10) -> Mapping[str, Any]:
    """The file system whose DNSName is ``dns_name``; none is one line naming it."""
    found = file_systems_by_dns(account, [dns_name], what=what, max_pages=max_pages)
    if not found:
        raise NotFoundError(f"{what}: no FSx file system with DNS name {dns_name} in {account.region}")
    return next(iter(found.values()))
