"""The flow: account -> live template -> the same rules -> findings, symptoms, verdicts.

``readers (file, cloud assembly, account) -> model -> rules -> report``: the account is read by
:mod:`.collect`, turned into a template by :mod:`smddp_infra.rules.live_loader`, judged by
:func:`smddp_infra.rules.check_template` with the template rules plus the network-ACL rule, and
the job's own record (``DescribeTrainingJob``) by preflight's rules.
"""

from __future__ import annotations

import re
import time
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from typing import Any, Mapping, Optional, Sequence

from smddp_infra.account import Account, NotFoundError, file_systems_by_dns
from smddp_infra.diagnose import collect, symptoms as sy
from smddp_infra.diagnose.report import FOUND, NOT_EVALUATED, NOT_FOUND, Diagnosis, Item, Verdict
from smddp_infra.observe.metrics import DEFAULT_HEADROOM, DEFAULT_PERIOD_SECONDS  # observe's window and re-plan defaults
from smddp_infra.rules.live_loader import Compute, LiveNetwork, live_template

#: Rules a live network is judged by: every template rule (network ACLs: SMDDP-NET6). FSX1/FSX6
#: judge settings FSx refuses at creation: a file system that exists was accepted.
SKIPPED_ON_LIVE = ("SMDDP-FSX1", "SMDDP-FSX6")
INIT_RULES = ("SMDDP-SG1", "SMDDP-SG2", "SMDDP-NET1", "SMDDP-NET6")
DEFAULT_QUIET_MINUTES = 15
_NO_JOB = "no job: the job's record (Debugger, checkpoints, logs, throughput) is judged with --job NAME"


def live_rules() -> tuple[Any, ...]:
    from smddp_infra.rules import RULES

    return tuple(r for r in RULES if r.id not in SKIPPED_ON_LIVE)


def judge_network(network: LiveNetwork, region: str) -> list[Item]:
    """The template rules over the live network (one finding format)."""
    from smddp_infra.rules import check_template
    from smddp_infra.rules.model import TemplateModel

    model = TemplateModel(live_template(network), region=region)
    findings = check_template(model, rules=live_rules(), region=region)
    unread = {fs for fs, groups in network.file_system_groups.items() if groups is None}  # collect's note says why
    world = model.world()  # a live template has no parameters: the one assignment the rules judged
    return [_item(f, network, region, world) for f in findings if not (f.rule_id == "SMDDP-INFO1" and f.resource in unread)]


def _item(finding: Any, network: LiveNetwork, region: str, world: Any) -> Item:
    console, cli = fix_for(finding, network, region, world)
    failure = sy.INIT_STALL if finding.rule_id in INIT_RULES else (sy.FSX_THROUGHPUT if finding.rule_id == "SMDDP-FSX2" else None)
    return Item(finding.rule_id, finding.severity.value, finding.resource, finding.message, "network", failure, console, cli)


def _self_rule_group(finding: Any, world: Any) -> Optional[str]:
    """The group SG1/SG2's message tells the user to fix: the first failing attachment's first group (the
    rule writes its finding at that attachment's path). An instance group with OverrideVpcConfig carries
    ONLY its own groups (SageMaker CreateCluster, ``OverrideVpcConfig``), so its fix edits those."""
    from smddp_infra.rules.training import attachments

    for attachment in attachments(world):
        if attachment.resource == finding.resource and attachment.path == finding.path and attachment.template_groups:
            return attachment.template_groups[0]
    return None


def _mount_clients(finding: Any, world: Any) -> list[str]:
    """The client groups FSX7/FSX8's message names: the first group of each mount it reports (the rule's own choice)."""
    from smddp_infra.rules.fsx_client_rules import mounts

    return list(dict.fromkeys(g.group for m in mounts(world) if m.fs.logical_id == finding.resource
                              and f"{m.what} cannot reach" in finding.message
                              for g in (m.groups or ())[:1] if g.group))


def fix_for(finding: Any, network: LiveNetwork, region: str, world: Any) -> tuple[Optional[str], Optional[str]]:
    """The fix as console steps and as AWS CLI commands that run as printed, for the rules a console
    user can apply; each names the group (subnet, ACL) the finding's evidence names, or there is none."""
    from smddp_infra.rules.fsx_rules import LUSTRE_EXTRA_PORTS, LUSTRE_PORT

    rule_id, resource = finding.rule_id, finding.resource
    if rule_id in ("SMDDP-SG1", "SMDDP-SG2"):
        group = _self_rule_group(finding, world)
        if group is None:
            return None, None
        inbound = rule_id == "SMDDP-SG1"
        tab = "Inbound rules > Edit inbound rules" if inbound else "Outbound rules > Edit outbound rules"
        peer = "Source" if inbound else "Destination"
        verb = "ingress" if inbound else "egress"
        return (f"VPC console > Security groups > {group} > {tab} > Add rule: Type All traffic, {peer} Custom {group} > Save rules",
                f"aws ec2 authorize-security-group-{verb} --region {region} --group-id {group} "
                f"--ip-permissions 'IpProtocol=-1,UserIdGroupPairs=[{{GroupId={group}}}]'")
    if rule_id == "SMDDP-NET2":
        subnet = next((s for s in network.subnets if s.get("SubnetId") == resource), None)
        if subnet is None:
            return None, None
        tables = [t["RouteTableId"] for t in network.route_tables
                  if any(a.get("SubnetId") == resource for a in t.get("Associations") or [])]
        tables = tables or [t["RouteTableId"] for t in network.route_tables
                            if t.get("VpcId") == subnet.get("VpcId") and any(a.get("Main") for a in t.get("Associations") or [])]
        if not tables:
            return None, None
        names = " ".join(tables)
        return (f"VPC console > Endpoints > Create endpoint: AWS services, com.amazonaws.{region}.s3 (type Gateway), "
                f"VPC {subnet.get('VpcId')}, route tables {names} > Create endpoint",
                f"aws ec2 create-vpc-endpoint --region {region} --vpc-id {subnet.get('VpcId')} "
                f"--service-name com.amazonaws.{region}.s3 --route-table-ids {names}")
    if rule_id in ("SMDDP-FSX3", "SMDDP-FSX4"):
        groups = list(network.file_system_groups.get(resource) or ())
        if not groups:
            return None, None
        low, high = LUSTRE_PORT if rule_id == "SMDDP-FSX3" else LUSTRE_EXTRA_PORTS
        group = groups[0]
        permission = f"'IpProtocol=tcp,FromPort={low},ToPort={high},UserIdGroupPairs=[{{GroupId={group}}}]'"
        return (f"VPC console > Security groups > {group} > Inbound rules and Outbound rules: add Custom TCP {low}-{high} "
                f"with {group} as source / destination",
                f"aws ec2 authorize-security-group-ingress --region {region} --group-id {group} --ip-permissions {permission} && "
                f"aws ec2 authorize-security-group-egress --region {region} --group-id {group} --ip-permissions {permission}")
    if rule_id in ("SMDDP-FSX7", "SMDDP-FSX8"):
        groups = list(network.file_system_groups.get(resource) or ())
        clients = _mount_clients(finding, world)
        if not groups or not clients:
            return None, None
        pairs = ",".join(f"{{GroupId={c}}}" for c in clients)
        permissions = " ".join(f"'IpProtocol=tcp,FromPort={low},ToPort={high},UserIdGroupPairs=[{pairs}]'"
                               for low, high in (LUSTRE_PORT, LUSTRE_EXTRA_PORTS))
        names = ", ".join(clients)
        return (f"VPC console > Security groups > {groups[0]} > Inbound rules > Edit inbound rules > Add rule: Custom TCP "
                f"988 and 1018-1023, Source Custom {names} > Save rules (and the same ports outbound on {names} if its "
                "egress is restricted)",
                f"aws ec2 authorize-security-group-ingress --region {region} --group-id {groups[0]} --ip-permissions {permissions}")
    if rule_id in ("SMDDP-NET6", "SMDDP-NET7", "SMDDP-NET9", "SMDDP-NET10"):
        return _acl_fix(finding, network, region)
    return None, None


#: One denial as the ACL rules word it (nacl_rules: "<egress|ingress> of <subnet> <to|from> <CIDR> (<peer>) is
#: denied by network ACL <acl> rule <n> (...)" or "... network ACL <acl>'s default '*' rule"), with what came before it.
_DENIAL = re.compile(r"(?P<pre>TCP 443 |the return \(TCP 1024-65535\) |to ports? (?P<to>\d+(?:-\d+)?): )?"
                     r"(?:(?P<dir>egress|ingress) of (?P<subnet>\S+) (?:to|from) (?P<cidr>[0-9a-fA-F.:/]+) \([^)]*\)|"
                     r"(?P<s3>egress TCP 443 to S3|ingress of the return traffic from S3 \(TCP 1024-65535\))) "
                     r"is denied by network ACL (?P<acl>[\w-]+?)(?: rule (?P<n>\d+)|'s default)")


def _acl_fix(finding: Any, network: LiveNetwork, region: str) -> tuple[Optional[str], Optional[str]]:
    """One allow entry per denial the message names: the ACL, the direction, the peer's CIDR, the protocol and
    ports of the traffic the rule judged, numbered just below the deny (the first matching entry decides,
    Amazon VPC User Guide, "Network ACL rules"). A deny at rule 1 has nothing below it: no command."""
    steps: list[str] = []
    commands: list[str] = []
    for match in _DENIAL.finditer(finding.message):
        egress = (match["dir"] or match["s3"]).startswith("egress")
        cidr = match["cidr"] or "0.0.0.0/0"
        protocol, ports = _denied_traffic(finding, match)
        acl = match["acl"]
        number = _free_number(network, acl, egress, int(match["n"]) if match["n"] else None)
        if number is None:
            continue
        port_text = "" if not ports else f" port {ports[0]}" if ports[0] == ports[1] else f" ports {ports[0]}-{ports[1]}"
        steps.append(f"{acl} > {'Outbound' if egress else 'Inbound'} rules > Edit: add rule {number}, protocol "
                     f"{'all' if protocol == '-1' else 'TCP'}{port_text}, {cidr}, Allow")
        commands.append(f"aws ec2 create-network-acl-entry --region {region} --network-acl-id {acl} --rule-number {number} "
                        f"--protocol {protocol}" + (f" --port-range From={ports[0]},To={ports[1]}" if ports else "")
                        + f" --rule-action allow --cidr-block {cidr} " + ("--egress" if egress else "--ingress"))
    if not commands:
        return None, None
    return "VPC console > Network ACLs > " + "; ".join(dict.fromkeys(steps)), " && ".join(dict.fromkeys(commands))


def _denied_traffic(finding: Any, match: Any) -> tuple[str, Optional[tuple[int, int]]]:
    """(protocol, ports) of the traffic a denial is about: what the rule judged (nacl_rules' docstring)."""
    from smddp_infra.rules.fsx_rules import LUSTRE_EXTRA_PORTS, LUSTRE_PORT

    if match["to"]:
        low, _, high = match["to"].partition("-")
        return "6", (int(low), int(high or low))
    if match["pre"] == "TCP 443 " or (match["s3"] or "").startswith("egress"):
        return "6", (443, 443)
    if match["pre"] or match["s3"]:
        return "6", (1024, 65535)
    if finding.rule_id == "SMDDP-NET9":
        return "6", LUSTRE_EXTRA_PORTS
    if finding.rule_id == "SMDDP-NET6" and finding.resource.startswith("fs-"):
        return "6", LUSTRE_PORT
    return "-1", None


def _free_number(network: LiveNetwork, acl: str, egress: bool, deny: Optional[int]) -> Optional[int]:
    """The highest unused rule number below the denying entry (below 32767, the '*' rule, when that decided)."""
    used = {e.get("RuleNumber") for a in network.network_acls if a.get("NetworkAclId") == acl
            for e in a.get("Entries") or [] if bool(e.get("Egress")) == egress}
    top = (deny if deny is not None else 32767) - 1
    return next((n for n in range(top, 0, -1) if n not in used), None)


# -- entry points -----------------------------------------------------------------------------------


def diagnose_network(account: Account, *, group_ids: Sequence[str], subnet_ids: Sequence[str],
                     instance_type: Optional[str] = None, file_system_ids: Sequence[str] = ()) -> Diagnosis:
    started = time.perf_counter()
    what = "--security-group/--subnet"
    compute = Compute(planned=(tuple(group_ids), tuple(subnet_ids)), planned_instance_type=instance_type)
    network, notes = collect.read_network(account, compute, group_ids=group_ids, subnet_ids=subnet_ids,
                                          file_system_ids=file_system_ids, what=what)
    _require_all(network, group_ids, subnet_ids)
    d = Diagnosis(subject=f"security group(s) {', '.join(group_ids)} in subnet(s) {', '.join(subnet_ids)}", region=account.region)
    d.items = judge_network(network, d.region)
    d.not_evaluated = notes + [_NO_JOB]
    return _finished(d, account, started)


def _require_all(network: LiveNetwork, group_ids: Sequence[str], subnet_ids: Sequence[str]) -> None:
    found_groups = {g["GroupId"] for g in network.security_groups}
    found_subnets = {s["SubnetId"] for s in network.subnets}
    missing = [g for g in group_ids if g not in found_groups] + [s for s in subnet_ids if s not in found_subnets]
    if missing:
        raise NotFoundError(f"--security-group/--subnet: {', '.join(missing)} not found in this account and region")


def diagnose_job(account: Account, name: str, *, now: Optional[datetime] = None, quiet_minutes: float = DEFAULT_QUIET_MINUTES,
                 period_seconds: int = DEFAULT_PERIOD_SECONDS, headroom: float = DEFAULT_HEADROOM) -> Diagnosis:
    started = time.perf_counter()
    job = collect.describe_job(account, name)
    now = now or datetime.now(timezone.utc)
    vpc = job.get("VpcConfig") or {}
    groups, subnets = list(vpc.get("SecurityGroupIds") or []), list(vpc.get("Subnets") or [])
    file_systems = collect.job_file_systems(job)
    d = Diagnosis(subject=f"training job {name}", region=account.region)
    compute = Compute(training_job=job)
    if groups or subnets or file_systems:
        network, notes = collect.read_network(account, compute, group_ids=groups, subnet_ids=subnets,
                                              file_system_ids=file_systems, what=f"--job {name}")
        d.not_evaluated += notes
    else:
        network = LiveNetwork(compute=compute)
        d.not_evaluated.append("the job has no VpcConfig: it ran in SageMaker's own network (no EFA group of yours to judge): "
                               "SMDDP-SG1/SG2/NET1/NET2/NET6 not evaluated")
    d.items = judge_network(network, d.region)
    d.items += _preflight_items(job, name)
    logs, note = collect.read_logs(account, job, now=now)
    if note:
        d.not_evaluated.append(f"logs: {note}")
    _add_symptoms(d, sy.match_failure_reason(job) + sy.match_logs(logs or []), name)
    from smddp_infra.rules.training import is_efa_instance_type

    efa = is_efa_instance_type((job.get("ResourceConfig") or {}).get("InstanceType")) is True
    d.stall = sy.detect_stall(job, logs, now=now, efa=efa, quiet=timedelta(minutes=quiet_minutes))
    if d.stall is not None:
        d.items.append(_stall_item(d.stall, d.items, name))
    d.throughput = _throughput(account, job, network, d, now=now, period=period_seconds, headroom=headroom)
    d.items = _ordered(d.items)
    return _finished(d, account, started, job_read=True, logs_read=bool(logs))


def diagnose_cluster(account: Account, name: str) -> Diagnosis:
    """The cluster's network by the same rules, then why it or its nodes failed (:mod:`.hyperpod`)."""
    from smddp_infra.diagnose import hyperpod as hp

    started = time.perf_counter()
    what = f"--cluster {name}"
    described = collect.describe_cluster(account, name)
    nodes = collect.read_cluster_nodes(account, described)
    events, note = collect.read_cluster_logs(account, described, hp.log_group(described))
    # a group whose lifecycle log mounts a file system is that file system's client, as if its InstanceStorageConfigs said so
    cluster = hp.with_logged_mounts(described, hp.logged_mounts(events))
    groups, subnets, dns = collect.cluster_network_ids(cluster)
    by_dns = file_systems_by_dns(account, dns, what=what, max_pages=collect.NETWORK_PAGES)
    network, notes = collect.read_network(account, Compute(cluster=cluster), group_ids=groups, subnet_ids=subnets,
                                          file_system_ids=sorted({str(fs["FileSystemId"]) for fs in by_dns.values()}), what=what)
    d = Diagnosis(subject=f"HyperPod cluster {name}", region=account.region)
    missing = sorted({n for n in dns if n.lower() not in by_dns})
    d.not_evaluated = notes + ([f"the cluster's FSx file systems ({', '.join(missing)}) are not in this account and region: "
                                "SMDDP-FSX3/FSX4/FSX7/NET4 not evaluated"] if missing else [])
    if note:
        d.not_evaluated.append(note)
    network_items, failures = hp.cluster_items(described, nodes, events, judge_network(network, d.region), region=d.region,
                                               subnets={str(s["SubnetId"]): s for s in network.subnets}, file_systems=by_dns)
    addresses, address_notes = hp.address_items(described, {str(s["SubnetId"]): s for s in network.subnets}, region=d.region)
    d.items = network_items + failures + addresses
    d.not_evaluated += address_notes
    _add_symptoms(d, [m for m in sy.match_logs(events or []) if m.pattern.id != "SYM-FSX-MOUNT"], name)  # hyperpod.py joined the mounts
    d.items += _orchestrator_items(account, cluster, d)
    d.items = _ordered(d.items)
    return _finished(d, account, started)


def _orchestrator_items(account: Account, cluster: Mapping[str, Any], d: Diagnosis) -> list[Item]:
    """Findings of the cluster's orchestrator (``DescribeCluster.Orchestrator``): on EKS, the EKS
    cluster's authentication mode, private endpoint and add-ons (:mod:`.eks`). Slurm clusters have
    none beyond the lifecycle logs read above."""
    from smddp_infra.diagnose.eks import diagnose_eks_cluster

    arn = ((cluster.get("Orchestrator") or {}).get("Eks") or {}).get("ClusterArn")
    if not arn:
        return []
    return diagnose_eks_cluster(account, arn, what=f"--cluster {cluster.get('ClusterName')} (its EKS cluster)")


def diagnose_stack(account: Account, name: str) -> Diagnosis:
    """A stack's live network judged by the same rules, and its groups' drift from the template."""
    from smddp_infra.diagnose import stack as st

    started = time.perf_counter()
    what = f"--stack {name}"
    try:
        resources = account.call("cloudformation", "DescribeStackResources", what, StackName=name)["StackResources"]
    except NotFoundError:
        raise NotFoundError(f"--stack {name}: no stack of that name in {account.region}") from None
    body = account.call("cloudformation", "GetTemplate", what, StackName=name)["TemplateBody"]
    template = body if isinstance(body, Mapping) else _parse(body, name)
    physical = st.physical_ids(resources)
    of = {t: [pid for t2, pid in physical.values() if t2 == t] for t in st.LIVE_TYPES}
    compute = Compute(resources=st.compute_resources(template, physical))
    network, notes = collect.read_network(account, compute, group_ids=of["AWS::EC2::SecurityGroup"],
                                          subnet_ids=of["AWS::EC2::Subnet"], file_system_ids=of["AWS::FSx::FileSystem"], what=what)
    d = Diagnosis(subject=f"stack {name}", region=account.region)
    d.items = judge_network(network, d.region)
    for group_id, logical_id, text in st.group_drift(template, physical, network):
        d.items.append(Item("SMDDP-DRIFT1", "warning", group_id,
                            f"security group {group_id} ({logical_id} in stack {name}) differs from the stack's template: {text}",
                            "network", sy.INIT_STALL,
                            "make the group match the template again (a stack update restores only what the template "
                            "changes), or change the template and deploy it",
                            f"aws cloudformation detect-stack-drift --region {d.region} --stack-name {name} (CloudFormation's "
                            "own view of the same drift)"))
    d.items = _ordered(d.items)
    d.not_evaluated = notes + [_NO_JOB]
    return _finished(d, account, started)


def _parse(body: Any, name: str) -> Mapping[str, Any]:
    from smddp_infra.errors import ConfigError
    from smddp_infra.rules.loader import TemplateSyntaxError, load_template_text

    try:
        template = load_template_text(str(body))
    except TemplateSyntaxError as exc:
        raise ConfigError(f"--stack {name}: its template is not readable: {exc}") from None
    if not isinstance(template, Mapping):
        raise ConfigError(f"--stack {name}: its template is not a mapping with Resources")
    return template


# -- the job's own record ---------------------------------------------------------------------------


_PREFLIGHT_FAILURE = {"PF-DEBUGGER-CHECKPOINT": sy.DEBUGGER, "PF-DEPRECATED-SMDDP-API": sy.DEPRECATION,
                      "PF-UNEVEN-BATCHES": sy.END_STALL, "PF-DATALOADER-SAMPLER": sy.END_STALL, "PF-DDP-PREFIX": sy.PREFIX}


def _preflight_items(job: Mapping[str, Any], name: str) -> list[Item]:
    """Preflight's rules on the job as SageMaker ran it (the DescribeTrainingJob answer)."""
    from smddp_infra.preflight import check_api_document

    document = {k: v for k, v in job.items() if k != "ResponseMetadata"}
    report = check_api_document(document, label=f"training job {name}", from_service=True)
    items = []
    for f in report.findings:
        items.append(Item(f.rule_id, f.severity, name, f.message, "job", _PREFLIGHT_FAILURE.get(f.rule_id), None, f.fix,
                          (f"symptom: {f.symptom}",)))
    return items


def _explained_by(causes: Sequence[Item]) -> str:
    return "explained by " + ", ".join(dict.fromkeys(f"{i.rule_id} ({i.resource})" for i in causes))


def _explained(pattern: sy.Pattern, items: Sequence[Item]) -> str:
    causes = [i for i in items if i.rule_id in pattern.explained_by and i.severity in ("error", "warning")]
    return _explained_by(causes) if causes else f"no finding here explains it (the rules that would: {', '.join(pattern.explained_by)})"


def _add_symptoms(d: Diagnosis, matches: list[sy.Match], name: str) -> None:
    """The matches as ``d``'s symptoms, each joined symptom added as evidence to the findings that explain it,
    and the matches still to report on their own (not joined, or nothing explains them) as items."""
    rest: list[sy.Match] = []
    d.symptoms, items = matches, d.items
    for match in matches:
        causes = [i for i in items if i.rule_id in match.pattern.explained_by and i.severity in ("error", "warning")]
        if not (match.pattern.joined and causes):
            rest.append(match)
            continue
        line = f"{match.where}: \"{match.text}\" ({match.pattern.meaning})"
        items = [replace(i, evidence=(*i.evidence, line)) if i in causes else i for i in items]
    d.items = items + _symptom_items(rest, items, name)


def _symptom_items(matches: Sequence[sy.Match], items: Sequence[Item], name: str) -> list[Item]:
    out = []
    for match in matches:
        pattern = match.pattern
        severity = "warning" if pattern.failure == sy.DEPRECATION else "error"
        when = f" at {match.timestamp.isoformat()}" if match.timestamp else ""
        out.append(Item(pattern.id, severity, name, f"{match.where}{when}: \"{match.text}\": {pattern.meaning}; "
                        f"{_explained(pattern, items)}", "logs" if match.where != "FailureReason" else "job", pattern.failure))
    return out


def _stall_item(stall: sy.Stall, items: Sequence[Item], name: str) -> Item:
    causes = [i for i in items if i.rule_id in INIT_RULES and i.severity == "error"]
    explained = (_explained_by(causes) if causes else
                 "no network finding explains it: check the groups on the instances by hand and the job's log")
    return Item("SYM-INIT-STALL", "warning", name,
                f"the guide's stall at initialization on EFA instances: {stall.describe()}; {explained}", "logs", sy.INIT_STALL)


def _throughput(account: Account, job: Mapping[str, Any], network: LiveNetwork, d: Diagnosis, *, now: datetime,
                period: int, headroom: float) -> Optional[dict[str, Any]]:
    """The file system's reads during the job against its baseline (observe's computation), and the plan."""
    from smddp_infra.observe import during, metrics as m

    if not network.file_systems:
        d.not_evaluated.append("throughput: the job reads no FSx for Lustre file system")
        return None
    fs = network.file_systems[0]
    baseline = _baseline(network, fs["FileSystemId"])
    settings = replace(during.default_settings(fs.get("StorageCapacity") or 0), period_seconds=period)
    window = during.job_window(job, now=now, period_seconds=period)
    if baseline is None or window is None:
        d.not_evaluated.append(f"throughput: {'the job has not started' if baseline is not None else 'the baseline of ' + fs['FileSystemId'] + ' is not known'}")
        return None
    start, end = window
    series = during.read_window(account, fs["FileSystemId"], start, end, settings=settings, max_pages=collect.METRIC_PAGES)
    found = during.judge(series, baseline, settings=settings)
    read = found.read
    result: dict[str, Any] = {"fileSystemId": fs["FileSystemId"], "baselineMBps": baseline, "window": [start.isoformat(), end.isoformat()],
                              "periodSeconds": period, "read": read.to_json() if read else None, "verdict": found.verdict.value}
    count = (job.get("ResourceConfig") or {}).get("InstanceCount")
    if found.verdict is m.Verdict.UNDER_SIZED and read is not None:
        d.items.append(_under_sized(fs, read, baseline, count, headroom, result))
    elif found.verdict is m.Verdict.NOT_EVALUATED:
        d.not_evaluated.append(f"throughput: no DataReadBytes datapoints for {fs['FileSystemId']} during the job")
    return result


def _under_sized(fs: Mapping[str, Any], read: Any, baseline: float, count: Any, headroom: float, result: dict[str, Any]) -> Item:
    """The finding, with the deployed tier grown in place (the one in-place plan: sizing.growth)."""
    from smddp_infra.observe import metrics as m
    from smddp_infra.sizing.growth import DeployedFileSystem, grow_in_place

    deployed = DeployedFileSystem.from_description(fs)
    required = round(read.p95 * headroom, 1)
    console: Optional[str] = None
    cli = f"smddp-infra size --required-mbps {required:g} --deployment-type {deployed.group}"
    growth = grow_in_place(deployed, required, clients=count if isinstance(count, int) else None)
    plan = growth.plan
    if plan is not None:
        result["plan"] = plan.to_dict()
        plan_text = (f"; the calculator's plan for {required:,g} MB/s (p95 x {headroom:g}) and {count} instance(s) in its own "
                     f"type: {plan.deployment_type}{'/' + str(plan.per_unit_storage_throughput) if plan.per_unit_storage_throughput else ''} "
                     f"{plan.storage_capacity_gib:,} GiB, {plan.baseline_throughput_mbps:,.0f} MB/s baseline")
        if growth.changes:
            console = (f"FSx console > {fs['FileSystemId']} > Actions > Update storage capacity: {plan.storage_capacity_gib:,} GiB "
                       "(grows in place)")
            cli = (f"aws fsx update-file-system --file-system-id {fs['FileSystemId']} --storage-capacity "
                   f"{plan.storage_capacity_gib}")
    else:
        plan_text = f"; nothing in place meets it: {growth.why_not}"
    return Item("SYM-FSX-THROUGHPUT", "warning", fs["FileSystemId"],
                f"during the job the file system read p95 {read.p95:,.1f} MB/s (max {read.max:,.1f}) of a {baseline:,.1f} MB/s "
                f"baseline: at or above {m.DEFAULT_THROUGHPUT_FRACTION:.0%}, the file system is the bottleneck (the guide's "
                f"scaling collapse){plan_text}", "metrics", sy.FSX_THROUGHPUT, console, cli)


def _baseline(network: LiveNetwork, fs_id: str) -> Optional[float]:
    from smddp_infra.rules.fsx_rules import read_settings
    from smddp_infra.rules.model import TemplateModel

    model = TemplateModel(live_template(network))
    world = model.world()
    resource = model.resources.get(fs_id)
    settings = read_settings(world, resource) if resource is not None else None
    return settings.baseline_mbps() if settings is not None else None


_SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


def _finished(d: Diagnosis, account: Account, started: float, *, job_read: bool = False, logs_read: bool = False) -> Diagnosis:
    d.verdicts = _verdicts(d, job_read=job_read, logs_read=logs_read)
    d.calls, d.seconds = list(account.calls), time.perf_counter() - started
    return d


def _ordered(items: list[Item]) -> list[Item]:
    return sorted(dict.fromkeys(items), key=lambda i: _SEVERITY_ORDER.get(i.severity, 3))


def _verdicts(d: Diagnosis, *, job_read: bool, logs_read: bool) -> list[Verdict]:
    def found(failure: str) -> list[Item]:
        return [i for i in d.items if i.failure == failure and i.severity in ("error", "warning")]

    def verdict(failure: str, not_found_when: bool, not_found_why: str, not_evaluated_why: str) -> Verdict:
        hits = found(failure)
        if hits:
            return Verdict(failure, FOUND, ", ".join(dict.fromkeys(i.rule_id for i in hits)))
        if not_found_when:
            return Verdict(failure, NOT_FOUND, not_found_why)
        return Verdict(failure, NOT_EVALUATED, not_evaluated_why)

    unjudged = [i for i in d.items if i.rule_id == "SMDDP-INFO1" and any(r in i.message for r in ("SMDDP-SG1", "SMDDP-SG2"))]
    network_judged = not unjudged and not any("SMDDP-SG1/SG2" in n for n in d.not_evaluated)
    no_job = "needs a training job (--job NAME)"
    thr = d.throughput or {}
    return [
        verdict(sy.DEBUGGER, job_read, "the job does not run the Debugger hook, SageMaker checkpointing and SMDDP together, "
                "and its record shows no SMDebug error", no_job),
        verdict(sy.PREFIX, False, "", "shows only when a checkpoint is loaded: needs the training script "
                "(smddp-infra preflight) or the log line, and none was found" if job_read else no_job),
        verdict(sy.INIT_STALL, network_judged, "the groups allow all traffic to and from themselves, the subnets share one AZ "
                "and no network ACL blocks the job's traffic", "; ".join(i.message for i in unjudged) or
                "the network was not judged"),
        verdict(sy.END_STALL, logs_read, "no collective timeout in the job's log (the batch count per rank is judged on the "
                "script: smddp-infra preflight)", "needs the job's log" if job_read else no_job),
        verdict(sy.FSX_THROUGHPUT, thr.get("verdict") in ("right-sized", "over-sized"),
                f"p95 read below {80}% of the baseline during the job ({thr.get('verdict')})",
                next((n.split(': ', 1)[1] for n in d.not_evaluated if n.startswith("throughput:")), no_job)),
        verdict(sy.DEPRECATION, logs_read, "the deprecation text is not in the job's log",
                "needs the job's log" if job_read else no_job),
    ]
