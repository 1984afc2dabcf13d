"""Network ACLs on a training job's data path.

* SMDDP-NET6 (error): an ACL denies traffic between the subnets a training job uses, or
  Lustre's TCP 988 between a training subnet and its file system's subnet;
* SMDDP-NET7 (error): what leaves a subnet where SageMaker trains: HTTPS to S3 and its return,
  and HTTPS to an interface endpoint that has no network interface in the subnet (its network
  interfaces are in the subnets chosen for it, AWS PrivateLink Guide, "Access an AWS service
  using an interface VPC endpoint"), when EVERY subnet of the endpoint is denied for certain;
* SMDDP-NET10 (warning): the same when only SOME of the endpoint's subnets are denied (its DNS
  name may hand out the denied interface);
* SMDDP-NET9 (warning): Lustre's TCP 1018-1023 towards the file system's subnet, and the file
  system's replies back (to ports 988, 1018-1023 and 1024-65535): what fails without them, and
  which ports the replies use, is UNCONFIRMED.

Network ACLs filter traffic where it enters or leaves a subnet, stateless, in ascending rule
order: the first entry whose CIDR, protocol and ports match a packet decides it, and the
``*`` entry (32767) denies what no numbered entry allowed (Amazon VPC User Guide, "Control
subnet traffic with network access control lists", sections "Network ACL basics" and "Network
ACL rules"). So:

* a training job or HyperPod instance group of an EFA type placed in SEVERAL subnets (one AZ)
  sends its EFA traffic across subnet boundaries: the sending subnet's ACL must allow egress and
  the receiving subnet's ACL ingress of ALL protocols (EFA's SRD is neither TCP nor UDP, so
  only an all-protocol entry covers it) for the other subnet's CIDR;
* a training subnet and a Lustre file system in different subnets: the client's egress to and
  the file system's ingress from the other CIDR on TCP 988 (Lustre's port, FSx for Lustre User
  Guide, "File system access control with Amazon VPC").

Traffic between instances of ONE subnet never crosses its ACL (ACLs sit at the subnet
boundary), so a single-subnet job is not judged here; its groups are (SMDDP-SG1/SG2).

Evidence: an entry that denies is proof only when it matches for certain (all protocols, or
the protocol and ports in question) and no lower-numbered entry allows the traffic first.
Anything else an ACL could decide either way (port-specific entries in front of the deciding
one, an unknown CIDR, a subnet whose ACL association is not in the template) is not judged:
a template that associates no ACL leaves its subnets on the VPC's default ACL, which it does
not show. The same rule runs for ``check`` (templates) and ``diagnose`` (live networks, where
every association is known).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Optional

from smddp_infra.rules.findings import Finding, Rule, Severity
from smddp_infra.rules.fsx_rules import LUSTRE_EXTRA_PORTS, LUSTRE_PORT, cidr_network, describe_ports
from smddp_infra.rules.model import NO_VALUE, Resource, ResourceRef, World, to_bool, to_int
from smddp_infra.rules.network_rules import _subnet
from smddp_infra.rules.training import lustre_file_systems, placements, training_subnets
from smddp_infra.rules.unresolved import UNRESOLVED
from smddp_infra.rules.vpc import ENDPOINT, service_name

ACL = "AWS::EC2::NetworkAcl"
ENTRY = "AWS::EC2::NetworkAclEntry"
ASSOCIATION = "AWS::EC2::SubnetNetworkAclAssociation"
_ALL = "-1"
_TCP = "6"
#: EFA's traffic between instances (SRD): neither TCP nor UDP, so only an all-protocol entry
#: matches it (NET6's premise); an entry for ICMP, TCP, UDP or ICMPv6 never does, and an entry
#: for another protocol number might (SRD's number is not documented): not evaluated.
SRD = "srd"
_NOT_SRD = frozenset({"1", "6", "17", "58"})


@dataclass(frozen=True)
class AclEntry:
    number: Optional[int]  # None: not read (it may stand in front of any other entry)
    egress: Optional[bool]  # None: not read (it may be in either direction)
    allow: Optional[bool]  # None: not read
    protocol: Optional[str]  # "-1", "6", "17", ...; None: not read
    cidr: Any  # ipaddress network; None: not read
    ports: Optional[tuple[int, int]]  # None: no PortRange (every port), or not read ("PortRange" in unread)
    declared_in: str
    #: what the template does not decide about the entry ("RuleNumber", "PortRange", "Condition" ...)
    unread: tuple[str, ...] = ()

    def matches(self, peer: Any, protocol: str, wanted: Optional[tuple[int, int]], public_peer: bool) -> Optional[bool]:
        """True: every packet of the traffic matches; False: none does; None: some, or not decided."""
        certain = not self.unread
        if self.cidr is not None:
            if self.cidr.version != peer.version or not self.cidr.overlaps(peer) or (public_peer and self.cidr.is_private):
                return False
            certain = certain and peer.subnet_of(self.cidr)
        if self.protocol is None or self.protocol == _ALL:
            return True if certain and self.protocol == _ALL else None
        if protocol == SRD:
            return False if self.protocol in _NOT_SRD else None
        if self.protocol != protocol:
            return False
        if self.ports is not None and wanted is not None:
            if self.ports[1] < wanted[0] or wanted[1] < self.ports[0]:
                return False
            certain = certain and self.ports[0] <= wanted[0] and wanted[1] <= self.ports[1]
        return True if certain else None


def _protocol(value: Any) -> Optional[str]:
    """CloudFormation's ``Protocol``: a number (-1 for all), or a name the EC2 API also takes."""
    number = to_int(value)
    if isinstance(number, int):
        return str(number)
    text = str(value).strip().lower() if isinstance(value, str) else ""
    return {"all": _ALL, "tcp": _TCP, "udp": "17", "icmp": "1"}.get(text)


def _entry(world: World, entry: Resource) -> AclEntry:
    """One entry as the template states it; what it does not decide is listed in ``unread``.

    An unstated ``Egress`` is an ingress entry: "By default, AWS CloudFormation specifies false"
    (AWS CloudFormation User Guide, AWS::EC2::NetworkAclEntry, ``Egress``)."""
    unread = []
    number, action = to_int(world.get(entry, "RuleNumber")), world.get(entry, "RuleAction")
    raw_egress = world.get(entry, "Egress")
    egress = False if raw_egress is NO_VALUE else to_bool(raw_egress)
    cidr = cidr_network(world.get(entry, "CidrBlock" if world.has(entry, "CidrBlock") else "Ipv6CidrBlock"))
    protocol = _protocol(world.get(entry, "Protocol"))
    port_range, ports = world.get(entry, "PortRange"), None
    if isinstance(port_range, Mapping):
        low, high = to_int(port_range.get("From")), to_int(port_range.get("To"))
        ports = (low, high) if isinstance(low, int) and isinstance(high, int) else None
    for name, missing in (("RuleNumber", not isinstance(number, int)), ("RuleAction", action not in ("allow", "deny")),
                          ("Egress", egress not in (True, False)), ("CidrBlock", cidr is None), ("Protocol", protocol is None),
                          ("PortRange", protocol != _ALL and port_range is not NO_VALUE and ports is None),
                          ("Condition", world.exists(entry) is not True)):
        if missing:
            unread.append(name)
    return AclEntry(number if isinstance(number, int) else None, egress if egress in (True, False) else None,
                    action == "allow" if action in ("allow", "deny") else None, protocol, cidr, ports, entry.logical_id,
                    tuple(unread))


class Acls:
    """Entries per ACL and the ACL of each subnet (only what the template states)."""

    def __init__(self, world: World) -> None:
        self.entries: dict[str, list[AclEntry]] = {}
        for entry in world.of_type(ENTRY):
            acl = world.get(entry, "NetworkAclId")
            if isinstance(acl, ResourceRef):
                self.entries.setdefault(acl.logical_id, []).append(_entry(world, entry))
        for entries in self.entries.values():
            entries.sort(key=lambda e: -1 if e.number is None else e.number)  # an unread number may come first
        self.acl_of: dict[str, str] = {}
        for association in world.of_type(ASSOCIATION):
            subnet, acl = world.get(association, "SubnetId"), world.get(association, "NetworkAclId")
            if isinstance(subnet, ResourceRef) and isinstance(acl, ResourceRef) and world.exists(association) is True:
                self.acl_of[subnet.logical_id] = acl.logical_id

    def verdict(self, subnet: str, egress: bool, peer: Any, protocol: str, port: Optional[int | tuple[int, int]],
                *, public_peer: bool = False) -> tuple[str, Optional[AclEntry]]:
        """("allow" | "deny" | "unknown", the deciding entry) for traffic of ``protocol`` (``SRD``
        for EFA's) to/from ``peer`` on ``port`` (one port, or a range every port of which must be
        decided the same way). ``public_peer``: the peer's addresses are public (S3's ranges), so
        entries for private (RFC 1918) CIDRs never match it.

        Entries that may match only part of the traffic, or that the template does not decide,
        are passed over while they could only agree with the entry that decides: the verdict is
        "unknown", naming the first that could disagree, only when one could."""
        wanted = (port, port) if isinstance(port, int) else port
        acl = self.acl_of.get(subnet)
        if acl is None:
            return "unknown", None
        maybe: list[AclEntry] = []
        decided, deciding = "deny", None  # the '*' entry: everything no numbered entry matched
        for entry in self.entries.get(acl, ()):
            if entry.egress is not None and entry.egress != egress:
                continue
            match = entry.matches(peer, protocol, wanted, public_peer)
            if match is True:
                decided, deciding = ("allow" if entry.allow else "deny"), entry
                break
            if match is None:
                maybe.append(entry)
        other = next((e for e in maybe if e.allow is not (decided == "allow")), None)
        return ("unknown", other) if other is not None else (decided, deciding)


def _acls(world: World) -> Acls:
    result: Acls = world.memo("network_acls", Acls)
    return result


def _cidr(world: World, subnet: Resource) -> Optional[Any]:
    return cidr_network(world.get(subnet, "CidrBlock"))


def _crossing(acls: Acls, sender: str, sender_cidr: Any, receiver: str, receiver_cidr: Any, protocol: str,
              port: Optional[int | tuple[int, int]]) -> tuple[list[str], list[str]]:
    """(what is denied for certain, what is not decided) of the sender's egress and the receiver's
    ingress; a side whose subnet has no ACL association in the template is neither."""
    denied: list[str] = []
    undecided: list[str] = []
    for subnet, egress, peer, text in ((sender, True, receiver_cidr, f"egress of {sender} to {receiver_cidr} ({receiver})"),
                                       (receiver, False, sender_cidr, f"ingress of {receiver} from {sender_cidr} ({sender})")):
        verdict, entry = acls.verdict(subnet, egress, peer, protocol, port)
        if verdict == "deny":
            denied.append(f"{text} is denied by {_entry_text(acls, subnet, entry)}")
        elif verdict == "unknown" and subnet in acls.acl_of:
            undecided.append(f"{text}: {_entry_text(acls, subnet, entry)} may decide it")
    return denied, undecided


def _entry_text(acls: Acls, subnet: str, entry: Optional[AclEntry]) -> str:
    acl = acls.acl_of[subnet]  # only a subnet with a stated ACL has a verdict to explain
    if entry is None:
        return f"network ACL {acl}'s default '*' rule (no numbered entry allows it)"
    if entry.unread:
        return (f"network ACL {acl} entry {entry.declared_in} (its {', '.join(entry.unread)} not decided by the "
                "template)")
    action = "allow" if entry.allow else "deny"
    return f"network ACL {acl} rule {entry.number} ({action} protocol {entry.protocol} {entry.cidr})"


def _not_judged(rule: Rule, resource: str, what: str, undecided: list[str], *path: str | int) -> Finding:
    """INFO1 for a verdict an entry or a CIDR of a stated ACL's path leaves open: never a silent pass."""
    return UNRESOLVED.finding(resource, f"{rule.id} not judged for {what}: " + "; ".join(dict.fromkeys(undecided)), *path)


def _unread_cidr(subnet: str) -> str:
    return f"subnet {subnet}'s CidrBlock is not decided by the template"


def check_between_training_subnets(world: World) -> list[Finding]:
    acls = _acls(world)
    findings = []
    for placement in placements(world):
        if placement.efa is not True or not placement.subnets:
            continue
        subnets = [s for s in (_subnet(world, ref) for ref in placement.subnets) if s is not None]
        problems: list[str] = []
        undecided: list[str] = []
        for a in subnets:
            for b in subnets:
                ca, cb = _cidr(world, a), _cidr(world, b)
                if a.logical_id == b.logical_id or ca is None or cb is None:
                    continue
                denied, open_ = _crossing(acls, a.logical_id, ca, b.logical_id, cb, SRD, None)
                problems += denied
                undecided += open_
        if problems:
            findings.append(ACL_DENIES.finding(
                placement.resource,
                f"{placement.what} runs in {len(subnets)} subnets and its EFA traffic between them (SRD, neither TCP nor "
                "UDP: only an all-protocol entry matches it) crosses network ACLs: " + "; ".join(dict.fromkeys(problems))
                + ": add an all-protocol (-1) allow entry for the other training subnet's CIDR, numbered below the deny, "
                  "in both directions (or place the job in one subnet)", *placement.path))
        elif undecided:
            findings.append(_not_judged(ACL_DENIES, placement.resource, f"{placement.what}'s EFA traffic between its subnets", undecided,
                                        *placement.path))
    return findings


@dataclass(frozen=True)
class LustrePath:
    """A Lustre file system and the training subnets (other than its own) whose clients cross ACLs to it."""

    fs: Resource
    subnet: str
    cidr: Any
    clients: tuple[tuple[str, Any], ...]  # (training subnet, its CIDR)
    #: subnets of the path whose CIDR the template does not decide, when an ACL on the path is stated
    #: (the file system's own: then ``cidr`` is None and no client is judged)
    unread: tuple[str, ...] = ()


def lustre_paths(world: World) -> list[LustrePath]:
    training = {s.logical_id for p in placements(world) for s in (_subnet(world, r) for r in p.subnets or ()) if s is not None}
    stated = _acls(world).acl_of
    out = []
    for fs in lustre_file_systems(world):
        ids = world.get(fs, "SubnetIds")
        fs_subnet = _subnet(world, ids[0]) if isinstance(ids, list) and ids else None
        if fs_subnet is None or world.exists(fs) is not True:
            continue
        fs_cidr = _cidr(world, fs_subnet)
        others = sorted(training - {fs_subnet.logical_id})
        cidrs = {name: _cidr(world, world.resources[name]) for name in others}
        clients = tuple((name, cidr) for name, cidr in cidrs.items() if cidr is not None and fs_cidr is not None)
        unread = tuple(name for name, cidr in cidrs.items() if cidr is None and {name, fs_subnet.logical_id} & stated.keys())
        if fs_cidr is None and others and ({fs_subnet.logical_id, *others} & stated.keys()):
            unread = (fs_subnet.logical_id, *unread)
        if clients or unread:
            out.append(LustrePath(fs, fs_subnet.logical_id, fs_cidr, clients, unread))
    return out


def _ports(ports: tuple[int, int]) -> str:
    return f"port {ports[0]}" if ports[0] == ports[1] else f"ports {ports[0]}-{ports[1]}"


def check_file_system_path(world: World) -> list[Finding]:
    acls = _acls(world)
    findings = []
    for path in lustre_paths(world):
        problems: list[str] = []
        undecided = [_unread_cidr(subnet) for subnet in path.unread]
        for name, cidr in path.clients:
            denied, open_ = _crossing(acls, name, cidr, path.subnet, path.cidr, _TCP, LUSTRE_PORT)
            problems += denied
            undecided += open_
        fs = path.fs.logical_id
        if problems:
            findings.append(ACL_DENIES.finding(
                fs, f"file system {fs} is in subnet {path.subnet}, another subnet than its training clients, "
                f"and Lustre's {describe_ports(LUSTRE_PORT)} is blocked at the subnet boundary: " + "; ".join(dict.fromkeys(problems))
                + f": allow {describe_ports(LUSTRE_PORT)} (and the return traffic) between the two subnets' CIDRs in both ACLs",
                "Properties", "SubnetIds"))
        elif undecided:
            findings.append(_not_judged(ACL_DENIES, fs, f"Lustre's {describe_ports(LUSTRE_PORT)} to file system {fs}", undecided,
                                        "Properties", "SubnetIds"))
    return findings


def check_lustre_ports(world: World) -> list[Finding]:
    """TCP 1018-1023 from the clients' subnets to the file system's, and the replies back.

    FSx names 1018-1023 beside 988 for the file system's groups, but what fails without them is
    not documented (SMDDP-FSX4/FSX8 are warnings for the same reason), so a certain deny here is
    a warning too. The replies cross both ACLs again (stateless): to the client's source port,
    which for Lustre is a privileged port 1018-1023 (UNCONFIRMED), or an ephemeral one, and to
    988 when the server connects back. A return ACL that allows only 1024-65535, the usual
    advice, drops replies to 1018-1023: a warning that says what it depends on."""
    acls = _acls(world)
    findings = []
    for path in lustre_paths(world):
        forward: list[str] = []
        back: list[str] = []
        undecided = [_unread_cidr(subnet) for subnet in path.unread]
        for name, cidr in path.clients:
            denied, open_ = _crossing(acls, name, cidr, path.subnet, path.cidr, _TCP, LUSTRE_EXTRA_PORTS)
            forward += denied
            undecided += [f"TCP 1018-1023 {u}" for u in open_]
            for ports in (LUSTRE_PORT, LUSTRE_EXTRA_PORTS, EPHEMERAL):
                denied, open_ = _crossing(acls, path.subnet, path.cidr, name, cidr, _TCP, ports)
                back += [f"to {_ports(ports)}: {p}" for p in denied]
                undecided += [f"the reply to {_ports(ports)}: {u}" for u in open_]
        parts = []
        if forward:
            parts.append("TCP 1018-1023 (which FSx lists beside 988 for Lustre clients) is blocked: "
                         + "; ".join(dict.fromkeys(forward)))
        if back:
            parts.append("the file system's replies may be dropped, depending on the Lustre client's source ports "
                         "(privileged ports 1018-1023, or ephemeral ones; an ACL that allows only 1024-65535 back drops "
                         "replies to 1018-1023): " + "; ".join(dict.fromkeys(back)))
        if parts:
            findings.append(LUSTRE_PORTS.finding(
                path.fs.logical_id,
                f"file system {path.fs.logical_id} is in subnet {path.subnet}, another subnet than its training clients: "
                + "; and ".join(parts) + ": allow TCP 988, 1018-1023 and 1024-65535 both ways between the training and "
                "file-system subnets' CIDRs in both network ACLs, numbered below the deny (or put the file system in the "
                "training subnet)", "Properties", "SubnetIds"))
        elif undecided:
            findings.append(_not_judged(LUSTRE_PORTS, path.fs.logical_id, f"Lustre's TCP 1018-1023 and the replies between "
                                        f"file system {path.fs.logical_id} and its training clients", undecided,
                                        "Properties", "SubnetIds"))
    return findings


#: Ports a client's return traffic comes back to: the VPC User Guide's ephemeral range for ACLs.
EPHEMERAL = (1024, 65535)
HTTPS = 443
_ANYWHERE = ipaddress.ip_network("0.0.0.0/0")


def check_traffic_leaving(world: World) -> list[Finding]:
    """HTTPS to S3 out of each subnet where SageMaker trains, and its return traffic in.

    S3 (through a gateway endpoint or NAT) answers from its public ranges, which an ACL cannot
    name (a prefix list is not an ACL peer): only entries covering 0.0.0.0/0 decide for certain.
    Entries for private (RFC 1918) CIDRs never match S3's public addresses and are passed over;
    entries for narrower public CIDRs in front of the deciding one are not compared with S3's
    ranges: "not evaluated", never guessed."""
    acls = _acls(world)
    findings: list[Finding] = []
    for name, why in sorted(training_subnets(world).items()):
        if not why.sagemaker or name not in acls.acl_of:
            continue
        problems: list[str] = []
        undecided: list[str] = []
        for egress, ports, what in ((True, HTTPS, f"egress TCP {HTTPS} to S3"),
                                    (False, EPHEMERAL, "ingress of the return traffic from S3 (TCP 1024-65535)")):
            verdict, entry = acls.verdict(name, egress, _ANYWHERE, _TCP, ports, public_peer=True)
            if verdict == "deny":
                problems.append(f"{what} is denied by {_entry_text(acls, name, entry)}")
            elif verdict == "unknown" and entry is not None:
                undecided.append(f"{what}: {_entry_text(acls, name, entry)}" + (
                    "" if entry.unread else f" names {entry.cidr}, which cannot be checked against S3's prefix list "
                    "(its public ranges)" if entry.cidr.prefixlen else " decides only part of the ports"))
        if problems:
            findings.append(LEAVING_DENIED.finding(
                name, f"subnet {name} ({why.reason}): the job's data comes from S3 over HTTPS, which leaves the subnet and "
                "crosses its network ACL (a gateway endpoint or NAT is outside it): " + "; ".join(problems)
                + f": allow TCP {HTTPS} outbound and TCP 1024-65535 inbound for 0.0.0.0/0 (or S3's ranges) in "
                f"network ACL {acls.acl_of[name]}, numbered below the deny", "Properties"))
        elif undecided:
            findings.append(UNRESOLVED.finding(name, f"{LEAVING_DENIED.id} not judged for subnet {name}: " + "; ".join(undecided),
                                               "Properties"))
    return findings


@dataclass(frozen=True)
class EndpointReach:
    """Interface endpoints a training subnet reaches only in other subnets, and the ACL entries that drop it."""

    subnet: str
    reason: str
    endpoints: tuple[str, ...]  # "Sts (com.amazonaws.us-east-1.sts)"
    endpoint_subnets: tuple[str, ...]
    denied: tuple[tuple[str, tuple[str, ...]], ...]  # (endpoint subnet, what denies it)
    undecided: tuple[str, ...] = ()  # what an unread entry or CIDR leaves open
    unsure: tuple[str, ...] = ()  # the endpoint subnets such an entry or CIDR leaves open

    @property
    def unreachable(self) -> bool:
        """Every subnet of the endpoints is denied for certain: no address DNS hands out answers."""
        return len(self.denied) == len(self.endpoint_subnets)

    def not_judged(self) -> str:
        """The rules an undecided subnet leaves open, where none is denied for certain: NET7 (an error)
        if every subnet may be denied, NET10 if the endpoint has two subnets or more."""
        rules = [LEAVING_DENIED.id] if len(self.unsure) == len(self.endpoint_subnets) else []
        return " and ".join(rules + [ENDPOINT_PARTLY_DENIED.id] * (len(self.endpoint_subnets) > 1))

    def text(self) -> str:
        return (f"subnet {self.subnet} ({self.reason}): interface endpoint(s) {', '.join(self.endpoints)} have their network "
                f"interfaces in subnet(s) {', '.join(self.endpoint_subnets)}, not in {self.subnet}, so HTTPS to them leaves "
                f"{self.subnet} and crosses both subnets' network ACLs (stateless: the reply comes back on an ephemeral port): "
                + "; ".join(p for _, problems in self.denied for p in problems))

    def fix(self) -> str:
        denied = ", ".join(other for other, _ in self.denied)
        return (f": allow TCP {HTTPS} from {self.subnet}'s CIDR into {denied} and TCP 1024-65535 back, in both subnets' "
                f"network ACLs, numbered below the deny (or add {self.subnet} to the endpoint's SubnetIds)")


def _interface_endpoints(world: World) -> dict[tuple[str, ...], list[str]]:
    """The endpoint subnets -> the interface endpoints there. An endpoint one of whose subnets is
    not in the template is left out: it could be the training subnet itself."""
    out: dict[tuple[str, ...], list[str]] = {}
    for endpoint in world.of_type(ENDPOINT):
        ids = world.get(endpoint, "SubnetIds")
        if world.get(endpoint, "VpcEndpointType") != "Interface" or world.exists(endpoint) is not True \
                or not isinstance(ids, list) or not ids:
            continue
        subnets = [_subnet(world, ref) for ref in ids]
        if any(s is None for s in subnets):
            continue
        name = world.get(endpoint, "ServiceName")
        service = name if isinstance(name, str) else service_name(world, endpoint) or "?"
        out.setdefault(tuple(sorted({s.logical_id for s in subnets if s is not None})), []).append(
            f"{endpoint.logical_id} ({service})")
    return out


def endpoint_reach(world: World) -> list[EndpointReach]:
    """For each subnet where SageMaker trains and each group of interface endpoints with no network
    interface in it: TCP 443 out of it and into the endpoint's subnet, the return on 1024-65535."""

    def build(w: World) -> list[EndpointReach]:
        acls, out = _acls(w), []
        groups = _interface_endpoints(w)
        for name, why in sorted(training_subnets(w).items()):
            cidr = _cidr(w, w.resources[name])
            if not why.sagemaker:
                continue
            vpc = w.get(w.resources[name], "VpcId")
            for subnets, endpoints in sorted(groups.items()):
                if name in subnets or not isinstance(vpc, ResourceRef) or w.get(w.resources[subnets[0]], "VpcId") != vpc:
                    continue
                denied, undecided, unsure = [], [], []
                for other in subnets:
                    other_cidr = _cidr(w, w.resources[other])
                    if cidr is None or other_cidr is None:
                        if {name, other} & acls.acl_of.keys():
                            undecided += [_unread_cidr(s) for s, c in ((name, cidr), (other, other_cidr)) if c is None]
                            unsure.append(other)
                        continue
                    there, open_there = _crossing(acls, name, cidr, other, other_cidr, _TCP, HTTPS)
                    back, open_back = _crossing(acls, other, other_cidr, name, cidr, _TCP, EPHEMERAL)
                    problems = [f"TCP {HTTPS} {p}" for p in there] + [f"the return (TCP 1024-65535) {p}" for p in back]
                    if problems:
                        denied.append((other, tuple(problems)))
                    elif open_there or open_back:
                        undecided += [f"TCP {HTTPS} {u}" for u in open_there] + [f"the return (TCP 1024-65535) {u}"
                                                                                 for u in open_back]
                        unsure.append(other)
                if denied or undecided:
                    out.append(EndpointReach(name, why.reason, tuple(endpoints), subnets, tuple(denied),
                                             tuple(dict.fromkeys(undecided)), tuple(unsure)))
        return out

    result: list[EndpointReach] = world.memo("endpoint_reach", build)
    return result


def check_leaving(world: World) -> list[Finding]:
    """SMDDP-NET7: S3, and interface endpoints every subnet of which the ACLs deny for certain."""
    return check_traffic_leaving(world) + [
        LEAVING_DENIED.finding(r.subnet, r.text() + r.fix(), "Properties") for r in endpoint_reach(world) if r.unreachable]


def check_endpoint_partly_denied(world: World) -> list[Finding]:
    """SMDDP-NET10: some of an endpoint's subnets are denied, some are not (or not decided).
    Where none is denied for certain and an entry or a CIDR leaves one open: "not judged"."""
    findings = []
    for r in endpoint_reach(world):
        if r.denied and not r.unreachable:
            findings.append(ENDPOINT_PARTLY_DENIED.finding(
                r.subnet, r.text() + ". The other subnet(s) of the endpoint are not denied" + (
                    f" for certain ({'; '.join(r.undecided)})" if r.undecided else "") + ", but its DNS name may hand out "
                f"the address of the interface in {', '.join(o for o, _ in r.denied)}, and a call to that address times "
                "out" + r.fix(), "Properties"))
        elif not r.denied:
            findings.append(UNRESOLVED.finding(r.subnet, f"{r.not_judged()} not judged for HTTPS from subnet {r.subnet} to "
                                               f"interface endpoint(s) {', '.join(r.endpoints)} in subnet(s) "
                                               f"{', '.join(r.endpoint_subnets)}: " + "; ".join(r.undecided), "Properties"))
    return findings


def check_network_acls(world: World) -> list[Finding]:
    return check_between_training_subnets(world) + check_file_system_path(world)


ACL_DENIES = Rule(
    id="SMDDP-NET6",
    severity=Severity.ERROR,
    cfn_lint_id="E9306",
    title="A network ACL denies traffic between a job's training subnets, or Lustre's port to its file system",
    explanation="Allow all protocols between the job's subnets (and TCP 988 to the file system's subnet) in both network ACLs.",
    symptom="job stalls at initialization on EFA instances: traffic between its subnets is dropped at the subnet boundary",
    check=check_network_acls,
    source=("Amazon VPC User Guide, 'Control subnet traffic with network access control lists': ACLs are stateless, "
            "evaluate entries in ascending rule number (first match decides) and deny what no entry allows; EFA traffic "
            "(SRD) is matched only by an all-protocol entry. Amazon EC2 User Guide, 'Elastic Fabric Adapter' (security "
            "group must allow all traffic between the instances); FSx for Lustre User Guide, 'File system access control "
            "with Amazon VPC' (TCP 988)."),
)

LEAVING_DENIED = Rule(
    id="SMDDP-NET7",
    severity=Severity.ERROR,
    cfn_lint_id="E9307",
    title="A training subnet's network ACL denies HTTPS to S3 or to an interface endpoint's subnets, or its return traffic",
    explanation="Allow TCP 443 outbound and TCP 1024-65535 inbound for 0.0.0.0/0 (S3's ranges) in the training subnet's "
                "network ACL, and the same to and from an interface endpoint's subnets in both ACLs: ACLs are stateless.",
    symptom="the job fails downloading its data from S3 (or uploading artifacts), or its calls to an interface endpoint's "
            "service time out: the subnet's ACL drops the traffic",
    check=check_leaving,
    source=("Amazon VPC User Guide, 'Control subnet traffic with network access control lists': ACLs filter traffic "
            "where it enters or leaves a subnet, are stateless (return traffic on ephemeral ports 1024-65535 must be "
            "allowed) and deny what no entry allows; SageMaker Developer Guide, 'Give SageMaker AI Training Jobs Access to "
            "Resources in Your Amazon VPC' (the job reads S3 through the VPC: an S3 endpoint or NAT); AWS PrivateLink "
            "Guide, 'Access an AWS service using an interface VPC endpoint' (the endpoint's network interfaces are in the "
            "subnets you choose)."),
)

LUSTRE_PORTS = Rule(
    id="SMDDP-NET9",
    severity=Severity.WARNING,
    cfn_lint_id="W9309",
    title="A network ACL drops Lustre's TCP 1018-1023, or may drop the file system's replies, across subnets",
    explanation="Allow TCP 988, 1018-1023 and 1024-65535 both ways between the training subnet's and the file "
                "system's CIDRs in both network ACLs (or put the file system in the training subnet).",
    symptom="clients may fail to mount or reconnect to the file system: Lustre traffic or its replies are dropped at "
            "the subnet boundary",
    check=check_lustre_ports,
    source=("UNCONFIRMED: what fails without TCP 1018-1023, and that Lustre clients' replies come back to privileged "
            "ports 1018-1023 (not stated by AWS for ACLs). FSx for Lustre User Guide, 'File system access control with "
            "Amazon VPC' (the file system's security groups must allow inbound TCP 988 and 1018-1023 from clients); "
            "Amazon VPC User Guide, 'Control subnet traffic with network access control lists' (ACLs are stateless: "
            "return traffic must be allowed explicitly)."),
)

ENDPOINT_PARTLY_DENIED = Rule(
    id="SMDDP-NET10",
    severity=Severity.WARNING,
    cfn_lint_id="W9310",
    title="A network ACL denies HTTPS from a training subnet to some of an interface endpoint's subnets",
    explanation="Allow TCP 443 to and TCP 1024-65535 back from every subnet of the endpoint in both network ACLs, or "
                "add the training subnet to the endpoint's SubnetIds.",
    symptom="calls to the endpoint's service from the training subnet time out when its DNS name hands out a denied "
            "subnet's address",
    check=check_endpoint_partly_denied,
    source=("Amazon VPC User Guide, 'Control subnet traffic with network access control lists' (ACLs filter traffic "
            "where it enters or leaves a subnet, stateless, return traffic on ephemeral ports); AWS PrivateLink Guide, "
            "'Access an AWS service using an interface VPC endpoint' (the endpoint's network interfaces are in the "
            "subnets you choose). Which address a caller gets is DNS's choice: a warning."),
)

RULES = (ACL_DENIES, LEAVING_DENIED, LUSTRE_PORTS, ENDPOINT_PARTLY_DENIED)
