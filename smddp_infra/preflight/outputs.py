"""Subnets and their Availability Zones from a ``cdk deploy --outputs-file`` document.

Read through the one reader, :func:`smddp_infra.contract.read_outputs_file`: every network's
job document names its training AZ (``availabilityZone``) and may list one AZ per subnet
(``subnetAvailabilityZones``, same order as ``subnets``); without that list every subnet of
the document is taken to be in ``availabilityZone``, which is where the network puts it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from smddp_infra.contract import read_outputs_file
from smddp_infra.errors import ConfigError
from smddp_infra.preflight.errors import PreflightInputError


@dataclass(frozen=True)
class StackSubnets:
    stack: str
    subnets: tuple[str, ...]
    availability_zones: Mapping[str, str]  # subnet -> AZ
    stack_availability_zone: str


def read_outputs(path: Path) -> tuple[StackSubnets, ...]:
    try:
        networks = read_outputs_file(path)
    except ConfigError as exc:
        raise PreflightInputError(str(exc)) from None
    found = []
    for network in networks:
        doc = network.document
        if doc is None:
            continue  # individual outputs only: they carry no AZ
        found.append(StackSubnets(stack=network.label, subnets=doc.subnets,
                                  availability_zones={s: doc.zone_of(s) for s in doc.subnets},
                                  stack_availability_zone=doc.availability_zone))
    if not found:
        raise PreflightInputError(f"outputs file {path} has no network with a TrainingJobConfig output; write it "
                                  f"with `cdk deploy --outputs-file {path.name}` for a TrainingNetworkStack")
    return tuple(found)
