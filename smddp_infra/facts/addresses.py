"""Private IPv4 addresses one HyperPod node takes in its subnet, per instance type (PURE).

A subnet's ``CidrBlock`` is create-only, so the network is sized before the first deploy for the
largest cluster; the figure per node decides whether a /20 holds 400 p5 nodes or 50. What a node
takes, each part cited:

- **Its interfaces.** EC2 gives every instance type network cards (DescribeInstanceTypes
  ``NetworkInfo.NetworkCards``), and for an EFA type recommends one EFA interface per card: the
  primary on card 0, the next card for each further one (EC2 User Guide, "Maximize network
  bandwidth on Amazon EC2 instances with multiple network cards"; P5/P5e "support up to 32 network
  cards"). An ``efa`` interface (EFA with ENA) takes a private IP; an ``efa-only`` one has no ENA
  device and EC2 assigns it none ("You can't assign an IP address to an EFA-only network
  interface": EC2 User Guide, "Create and attach an Elastic Fabric Adapter"; What's New 2024-10-28:
  "the EFA device is not assigned an IP address"), and the primary cannot be EFA-only. HyperPod's
  networking guidance (awslabs/agent-plugins, HyperPod networking patterns) counts the same way:
  about 32 per p5 node on Slurm, "primary ENI + EFA ENIs".
- **On EKS, the pods' addresses.** The Amazon VPC CNI gives pods VPC addresses from network card 0
  only (its ``eni-max-pods.txt``: multi-card types are counted on the default card); max pods =
  interfaces x (IPv4 per interface - 1) + 2 (the +2 run on the host network). Its default,
  ``WARM_ENI_TARGET=1``, holds one full interface of free addresses from the start (the CNI's
  ``docs/eni-and-ip-target.md``): the primary's secondary addresses, 49 on a p5, so a p5 node takes
  32 + 49 = 81 as soon as it joins, HyperPod's "about 81". Once pods take addresses the CNI keeps a
  further interface warm, up to every interface of card 0 full (131 on a p5): :attr:`NodeAddresses.most`.
  With prefix delegation (``ENABLE_PREFIX_DELEGATION``, ``WARM_PREFIX_TARGET=1``) a node starts with
  one /28 prefix, 16 addresses (the CNI's ``docs/prefix-and-ip-target.md``; EKS User Guide, "Assign
  more IP addresses to Amazon EKS nodes with prefixes"), and a prefix needs 16 contiguous free
  addresses in the subnet.

The planned figure (:attr:`NodeAddresses.addresses`) is what a node certainly takes, so a subnet
check built on it is an error only when the cluster cannot fit. The per-type figures are EC2's
(``DescribeInstanceTypes``) as the Amazon VPC CNI's generated limits table records them
(aws/amazon-vpc-cni-k8s ``pkg/vpc/vpc_ip_resource_limit.go``, 2026-08-11, 17 Regions), for every
type in botocore 1.44's HyperPod ``ClusterInstanceType`` enum but ``ml.p6e-gb200.36xlarge``, which
that table lacks (its figure is UNCONFIRMED).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping

from smddp_infra.errors import ConfigError

#: Who schedules the nodes, and the interface types of a HyperPod instance group
#: (``NetworkInterface.InterfaceType`` in the CloudFormation schema).
ORCHESTRATORS: tuple[str, ...] = ("slurm", "eks")
INTERFACES: tuple[str, ...] = ("efa", "efa-only")
#: Addresses in one prefix the VPC CNI assigns with prefix delegation (a /28).
PREFIX_ADDRESSES = 16

#: Where the per-type figures come from (the module's docstring says more).
EC2_FIGURES = ("EC2 DescribeInstanceTypes NetworkInfo, as the Amazon VPC CNI's generated limits table records it "
               "(aws/amazon-vpc-cni-k8s pkg/vpc/vpc_ip_resource_limit.go, 2026-08-11)")


@dataclass(frozen=True)
class NetworkInfo:
    """EC2's network figures of one instance type."""

    #: ``NetworkInfo.MaximumNetworkCards``: one interface with a private IP per card with ``efa``.
    network_cards: int
    #: ``NetworkCards[0].MaximumNetworkInterfaces``: the interfaces the VPC CNI may use for pods.
    interfaces_on_card_0: int
    #: ``Ipv4AddressesPerInterface``: an interface's primary address and its secondary ones.
    ipv4_per_interface: int

    @property
    def max_pods(self) -> int:
        """The VPC CNI's max pods without prefix delegation (its ``eni-max-pods.txt`` formula)."""
        return self.interfaces_on_card_0 * (self.ipv4_per_interface - 1) + 2


#: "network cards, interfaces on card 0, IPv4 per interface: types" (EC2_FIGURES; types without ``ml.``).
_FIGURES = """
1 2 4: c6g.medium c7g.medium c8g.medium m6g.medium m7g.medium m8g.medium
1 2 15: trn2.3xlarge
1 3 6: t3.medium
1 3 10: c5.large c5n.large c6a.large c6g.large c6i.large c7g.large c8g.large g4dn.2xlarge
    g4dn.4xlarge g4dn.xlarge i3en.large m5.large m6a.large m6g.large m6i.large m7g.large m7i.large
    m8g.large r6i.large r7i.large
1 3 12: t3.large
1 4 15: c5.2xlarge c5.xlarge c5n.2xlarge c6a.2xlarge c6a.xlarge c6g.2xlarge c6g.xlarge c6i.2xlarge
    c6i.xlarge c7g.2xlarge c7g.xlarge c8g.2xlarge c8g.xlarge g4dn.16xlarge g4dn.8xlarge g5.2xlarge
    g5.xlarge g6.2xlarge g6.xlarge g6e.2xlarge g6e.xlarge i3en.2xlarge i3en.3xlarge i3en.xlarge
    m5.2xlarge m5.xlarge m6a.2xlarge m6a.xlarge m6g.2xlarge m6g.xlarge m6i.2xlarge m6i.xlarge
    m7g.2xlarge m7g.xlarge m7i.2xlarge m7i.xlarge m8g.2xlarge m8g.xlarge r6i.2xlarge r6i.xlarge
    r7i.2xlarge r7i.xlarge t3.2xlarge t3.xlarge
1 4 30: p5.4xlarge
1 4 64: g7.2xlarge g7e.2xlarge
1 7 50: g5.48xlarge
1 8 30: c5.12xlarge c5.4xlarge c5.9xlarge c5n.4xlarge c5n.9xlarge c6a.12xlarge c6a.4xlarge
    c6a.8xlarge c6g.12xlarge c6g.4xlarge c6g.8xlarge c6i.12xlarge c6i.4xlarge c6i.8xlarge
    c7g.12xlarge c7g.4xlarge c7g.8xlarge c8g.12xlarge c8g.4xlarge c8g.8xlarge g4dn.12xlarge
    g5.16xlarge g5.4xlarge g5.8xlarge g6.12xlarge g6.4xlarge g6.8xlarge g6e.4xlarge g6e.8xlarge
    gr6.4xlarge gr6.8xlarge i3en.12xlarge i3en.6xlarge m5.12xlarge m5.4xlarge m5.8xlarge
    m6a.12xlarge m6a.4xlarge m6a.8xlarge m6g.12xlarge m6g.4xlarge m6g.8xlarge m6i.12xlarge
    m6i.4xlarge m6i.8xlarge m7g.12xlarge m7g.4xlarge m7g.8xlarge m7i.12xlarge m7i.4xlarge
    m7i.8xlarge m8g.12xlarge m8g.4xlarge m8g.8xlarge r6i.12xlarge r6i.4xlarge r6i.8xlarge
    r7i.12xlarge r7i.4xlarge r7i.8xlarge
1 8 64: g7.4xlarge g7e.4xlarge g7e.8xlarge
1 10 30: g6e.12xlarge
1 10 64: g7.8xlarge g7e.12xlarge
1 12 64: g7.12xlarge
1 15 50: c5.18xlarge c5.24xlarge c5n.18xlarge c6a.16xlarge c6a.24xlarge c6a.32xlarge c6a.48xlarge
    c6g.16xlarge c6i.16xlarge c6i.24xlarge c6i.32xlarge c7g.16xlarge c8g.16xlarge c8g.24xlarge
    c8g.48xlarge g5.12xlarge g5.24xlarge g6.16xlarge g6.24xlarge g6.48xlarge g6e.16xlarge
    i3en.24xlarge m5.16xlarge m5.24xlarge m6a.16xlarge m6a.24xlarge m6a.32xlarge m6a.48xlarge
    m6g.16xlarge m6i.16xlarge m6i.24xlarge m6i.32xlarge m7g.16xlarge m7i.16xlarge m7i.24xlarge
    m7i.48xlarge m8g.16xlarge m8g.24xlarge m8g.48xlarge r5d.16xlarge r6i.16xlarge r6i.24xlarge
    r6i.32xlarge r7i.16xlarge r7i.24xlarge r7i.48xlarge
1 16 64: c8a.16xlarge m8a.16xlarge
1 24 64: g7.24xlarge
2 10 50: g6e.24xlarge
2 10 64: g7e.24xlarge
2 12 64: g7.48xlarge
4 10 50: g6e.48xlarge
4 10 64: g7e.48xlarge
4 15 50: p4d.24xlarge p4de.24xlarge
8 4 50: p6-b200.48xlarge
8 5 50: trn1.32xlarge
16 2 50: trn2.48xlarge
16 4 50: p5en.48xlarge
16 5 50: trn1n.32xlarge
17 4 50: p6-b300.48xlarge
32 2 50: p5.48xlarge p5e.48xlarge
"""


def _parse(text: str) -> Mapping[str, NetworkInfo]:
    found: dict[str, NetworkInfo] = {}
    for entry in text.replace("\n    ", " ").strip().splitlines():
        figures, _, names = entry.partition(":")
        cards, interfaces, ipv4 = (int(x) for x in figures.split())
        found.update({f"ml.{name}": NetworkInfo(cards, interfaces, ipv4) for name in names.split()})
    return MappingProxyType(found)


#: EC2's figures per HyperPod instance type (``ml.`` names).
NETWORK_INFO: Mapping[str, NetworkInfo] = _parse(_FIGURES)

#: ``EfaInfo.MaximumEfaInterfaces`` of the EFA training types, informational (the address count
#: follows the network cards). p5/p5e: 32 (EC2 User Guide, EFA on P5). The others equal their
#: network cards but p6-b300's (17 cards, 16 EFA: UNCONFIRMED, card 0 read as the ENA card), all
#: UNCONFIRMED until read from DescribeInstanceTypes.
EFA_INTERFACES: Mapping[str, int] = MappingProxyType({
    "ml.p4d.24xlarge": 4, "ml.p4de.24xlarge": 4, "ml.p5.48xlarge": 32, "ml.p5e.48xlarge": 32, "ml.p5en.48xlarge": 16,
    "ml.p6-b200.48xlarge": 8, "ml.p6-b300.48xlarge": 16, "ml.trn1.32xlarge": 8, "ml.trn1n.32xlarge": 16,
    "ml.trn2.48xlarge": 16,
})
EFA_INTERFACES_CONFIRMED: frozenset[str] = frozenset({"ml.p5.48xlarge", "ml.p5e.48xlarge"})


@dataclass(frozen=True)
class NodeAddresses:
    """The private IPv4 addresses one node takes in its subnet, and why."""

    #: What the node certainly takes once it joins (the figure to plan and check with).
    addresses: int
    #: The most it can take (on EKS, every interface of card 0 full; on Slurm the same figure).
    most: int
    #: Where the figure comes from, in a few words with its sources.
    source: str
    #: True when the figure rests on something not cited (the source says what).
    unconfirmed: bool = False


def addresses_per_node(instance_type: str, *, orchestrator: str = "slurm", interface: str = "efa",
                       prefix_delegation: bool = False) -> NodeAddresses:
    """The private IPv4 addresses one HyperPod node of ``instance_type`` takes (the module's
    docstring has each fact and its source). ``prefix_delegation``: the EKS VPC CNI's
    ``ENABLE_PREFIX_DELEGATION``. A type without EC2 figures here counts its primary interface only,
    UNCONFIRMED: override the figure for it."""
    if orchestrator not in ORCHESTRATORS:
        raise ConfigError(f"orchestrator must be one of {', '.join(map(repr, ORCHESTRATORS))}, got {orchestrator!r}")
    if interface not in INTERFACES:
        raise ConfigError(f"interface must be one of {', '.join(map(repr, INTERFACES))}, got {interface!r}")
    if prefix_delegation and orchestrator != "eks":
        raise ConfigError("prefix_delegation is the EKS VPC CNI's setting (ENABLE_PREFIX_DELEGATION), "
                          f"got it with orchestrator={orchestrator!r}")
    info = NETWORK_INFO.get(instance_type)
    if info is None:
        return NodeAddresses(1, 1, f"UNCONFIRMED: no EC2 network figures for {instance_type} here, only its primary "
                                   "interface's address is counted; override the figure", True)
    if interface == "efa-only" and info.network_cards > 1:
        interfaces, why = 1, "the primary interface only, EFA-only interfaces take no IP (EC2 User Guide, Create and attach an EFA)"
    elif info.network_cards > 1:
        interfaces, why = info.network_cards, (f"{info.network_cards} network cards, an interface with an IP on each "
                                               "(EC2 NetworkInfo; HyperPod networking patterns)")
    else:
        interfaces, why = 1, "the primary interface (EC2 NetworkInfo: 1 network card)"
    if orchestrator == "slurm":
        return NodeAddresses(interfaces, interfaces, why)
    ipv4, cards_0 = info.ipv4_per_interface, info.interfaces_on_card_0
    if prefix_delegation:
        warm, full = PREFIX_ADDRESSES, cards_0 * (1 + (ipv4 - 1) * PREFIX_ADDRESSES) - 1
        pods = "a /28 prefix the VPC CNI holds from the start (prefix delegation, WARM_PREFIX_TARGET=1"
    else:
        warm, full = ipv4 - 1, cards_0 * ipv4 - 1
        pods = f"{warm} pod addresses the VPC CNI holds from the start (WARM_ENI_TARGET=1"
    return NodeAddresses(interfaces + warm, interfaces + full,
                         f"{why} + {pods}; up to {interfaces + full} with network card 0 full)")


__all__ = ["EC2_FIGURES", "EFA_INTERFACES", "EFA_INTERFACES_CONFIRMED", "INTERFACES", "NETWORK_INFO", "ORCHESTRATORS",
           "PREFIX_ADDRESSES", "NetworkInfo", "NodeAddresses", "addresses_per_node"]
