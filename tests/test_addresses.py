"""Addresses per HyperPod node (smddp_infra.facts.addresses): the figures, their sources, and the
docs table that quotes them (issue 42, item 1)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from smddp_infra.errors import ConfigError
from smddp_infra.facts.addresses import (
    EFA_INTERFACES,
    NETWORK_INFO,
    PREFIX_ADDRESSES,
    addresses_per_node,
)

ROOT = Path(__file__).resolve().parents[1]


def test_a_p5_node_takes_hyperpods_published_figures_32_on_slurm_and_81_on_eks() -> None:
    """HyperPod's networking guidance: about 32 per p5 node on Slurm, about 81 on EKS."""
    slurm = addresses_per_node("ml.p5.48xlarge")
    eks = addresses_per_node("ml.p5.48xlarge", orchestrator="eks")
    assert (slurm.addresses, slurm.most) == (32, 32)
    assert (eks.addresses, eks.most) == (81, 131)  # 32 + 49 warm; up to 2 full interfaces on card 0
    assert not slurm.unconfirmed and not eks.unconfirmed
    assert "network cards" in slurm.source and "WARM_ENI_TARGET=1" in eks.source


def test_efa_only_interfaces_take_no_address_so_only_the_primary_counts() -> None:
    assert addresses_per_node("ml.p5.48xlarge", interface="efa-only").addresses == 1
    eks = addresses_per_node("ml.p5.48xlarge", orchestrator="eks", interface="efa-only")
    assert (eks.addresses, eks.most) == (50, 100)
    assert "EFA-only interfaces take no IP" in eks.source


def test_prefix_delegation_starts_a_node_with_one_28_prefix() -> None:
    plain = addresses_per_node("ml.p4d.24xlarge", orchestrator="eks")
    prefixed = addresses_per_node("ml.p4d.24xlarge", orchestrator="eks", prefix_delegation=True)
    assert (plain.addresses, prefixed.addresses) == (4 + 49, 4 + PREFIX_ADDRESSES)
    assert "prefix delegation" in prefixed.source


@pytest.mark.parametrize(("name", "published"), [
    ("ml.p4d.24xlarge", 737), ("ml.p5.48xlarge", 100), ("ml.p5en.48xlarge", 198), ("ml.p6-b200.48xlarge", 198),
    ("ml.trn1.32xlarge", 247), ("ml.trn2.48xlarge", 100), ("ml.m5.2xlarge", 58),
])
def test_the_figures_give_the_vpc_cnis_published_max_pods(name: str, published: int) -> None:
    """The VPC CNI's ``misc/eni-max-pods.txt`` (2026-08) publishes these max pods; the interfaces and
    IPv4 figures here must give the same through its formula."""
    assert NETWORK_INFO[name].max_pods == published


def test_every_hyperpod_instance_type_has_ec2_figures_or_says_unconfirmed() -> None:
    """A type botocore's HyperPod enum gains is a decision: add its figures, or it counts its
    primary interface only and says UNCONFIRMED."""
    from smddp_infra.hyperpod import api

    known = api.cluster_instance_types()
    if known is None:
        pytest.skip("botocore not installed")
    missing = sorted(set(known) - set(NETWORK_INFO))
    assert missing == ["ml.p6e-gb200.36xlarge"]
    figure = addresses_per_node("ml.p6e-gb200.36xlarge", orchestrator="eks")
    assert figure.unconfirmed and figure.addresses == 1 and figure.source.startswith("UNCONFIRMED")


def test_efa_interfaces_never_exceed_the_network_cards() -> None:
    assert all(count <= NETWORK_INFO[name].network_cards for name, count in EFA_INTERFACES.items())


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"orchestrator": "ecs"}, "orchestrator must be one of 'slurm', 'eks', got 'ecs'"),
    ({"interface": "ena"}, "interface must be one of 'efa', 'efa-only', got 'ena'"),
    ({"prefix_delegation": True}, "prefix_delegation is the EKS VPC CNI's setting"),
])
def test_bad_arguments_are_one_line(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        addresses_per_node("ml.p5.48xlarge", **kwargs)  # type: ignore[arg-type]


def _docs_rows() -> list[list[str]]:
    text = (ROOT / "docs" / "hyperpod.md").read_text()
    section = text[text.index("### Addresses per node"):text.index("## Safe updates")]
    return [[c.strip() for c in line.strip("|").split("|")] for line in section.splitlines()
            if line.startswith("| `ml.")]


def _cell(figure: object, *, most: bool = True) -> str:
    from smddp_infra.facts.addresses import NodeAddresses

    assert isinstance(figure, NodeAddresses)
    shown = str(figure.addresses) if figure.addresses == figure.most or not most else \
        f"{figure.addresses} (up to {figure.most})"
    return shown + (" UNCONFIRMED" if figure.unconfirmed else "")


def test_the_docs_address_table_is_the_codes() -> None:
    rows = _docs_rows()
    types = [row[0].strip("`") for row in rows]
    assert {"ml.p4d.24xlarge", "ml.p5.48xlarge", "ml.p6-b200.48xlarge", "ml.trn1.32xlarge", "ml.trn2.48xlarge"} <= set(types)
    for name, row in zip(types, rows):
        info = NETWORK_INFO.get(name)
        ec2 = f"{info.network_cards} / {info.interfaces_on_card_0} / {info.ipv4_per_interface}" if info else "UNCONFIRMED"
        expected = [ec2, _cell(addresses_per_node(name)), _cell(addresses_per_node(name, interface="efa-only")),
                    _cell(addresses_per_node(name, orchestrator="eks")),
                    _cell(addresses_per_node(name, orchestrator="eks", interface="efa-only")),
                    _cell(addresses_per_node(name, orchestrator="eks", prefix_delegation=True), most=False)]
        assert row[1:] == expected, name


def test_the_figures_table_reads_cards_interfaces_and_ipv4_per_type_continued_lines_too() -> None:
    """``_parse`` runs at import, before a mutation run switches a mutant on: read it here too."""
    from types import MappingProxyType

    from smddp_infra.facts.addresses import NetworkInfo, _parse

    table = _parse("\n1 2 4: a.large b.large\n    c.large\n16 5 50: d.48xlarge\n")
    assert isinstance(table, MappingProxyType)
    assert dict(table) == {"ml.a.large": NetworkInfo(1, 2, 4), "ml.b.large": NetworkInfo(1, 2, 4),
                           "ml.c.large": NetworkInfo(1, 2, 4), "ml.d.48xlarge": NetworkInfo(16, 5, 50)}


_CARDS = "{} network cards, an interface with an IP on each (EC2 NetworkInfo; HyperPod networking patterns)"
_PRIMARY = "the primary interface (EC2 NetworkInfo: 1 network card)"
_EFA_ONLY = "the primary interface only, EFA-only interfaces take no IP (EC2 User Guide, Create and attach an EFA)"


@pytest.mark.parametrize(("name", "kwargs", "figure"), [
    # one interface with an IP per network card; a one-card type has its primary only, EFA-only or not
    ("ml.g6e.24xlarge", {}, (2, 2, _CARDS.format(2))),
    ("ml.g6e.24xlarge", {"interface": "efa-only"}, (1, 1, _EFA_ONLY)),
    ("ml.m5.2xlarge", {}, (1, 1, _PRIMARY)),
    ("ml.m5.2xlarge", {"interface": "efa-only"}, (1, 1, _PRIMARY)),
    ("ml.p5.48xlarge", {"orchestrator": "eks"}, (81, 131, _CARDS.format(32) + " + 49 pod addresses the VPC CNI holds "
                                                 "from the start (WARM_ENI_TARGET=1; up to 131 with network card 0 full)")),
    # prefix delegation: one /28 at the start; at most every IPv4 slot of card 0's 15 interfaces a /28
    # but the primary's own address: 4 + 15 x (1 + 49 x 16) - 1
    ("ml.p4d.24xlarge", {"orchestrator": "eks", "prefix_delegation": True},
     (20, 11778, _CARDS.format(4) + " + a /28 prefix the VPC CNI holds from the start (prefix delegation, "
                                    "WARM_PREFIX_TARGET=1; up to 11778 with network card 0 full)")),
    ("ml.x9.large", {}, (1, 1, "UNCONFIRMED: no EC2 network figures for ml.x9.large here, only "
                               "its primary interface's address is counted; override the figure")),
])
def test_each_figure_and_its_source_in_full(name: str, kwargs: dict[str, object], figure: tuple[int, int, str]) -> None:
    found = addresses_per_node(name, **kwargs)  # type: ignore[arg-type]
    assert (found.addresses, found.most, found.source) == figure


def test_prefix_delegation_on_slurm_is_one_whole_line() -> None:
    with pytest.raises(ConfigError) as caught:
        addresses_per_node("ml.p5.48xlarge", prefix_delegation=True)
    assert str(caught.value) == ("prefix_delegation is the EKS VPC CNI's setting (ENABLE_PREFIX_DELEGATION), got it "
                                 "with orchestrator='slurm'")
