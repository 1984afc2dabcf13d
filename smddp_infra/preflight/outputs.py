"""Subnets and their Availability Zones from a ``cdk deploy --outputs-file`` document.

Each stack built with :class:`~smddp_infra.stack.TrainingNetworkStack` has an output
``TrainingJobConfig`` whose value is a JSON string (:mod:`smddp_infra.jobconfig`). The
document names the stack's training AZ (``availabilityZone``) and may list one AZ per
subnet (``subnetAvailabilityZones``, same order as ``subnets``); without that list every
subnet of the document is taken to be in ``availabilityZone``, which is where the stack
puts its training subnets.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from smddp_infra.jobconfig import TrainingJobSettings
from smddp_infra.preflight.errors import PreflightInputError
from smddp_infra.preflight.job import read_document

OUTPUT_KEY = "TrainingJobConfig"


@dataclass(frozen=True)
class StackSubnets:
    stack: str
    subnets: tuple[str, ...]
    availability_zones: Mapping[str, str]  # subnet -> AZ
    stack_availability_zone: str


def read_outputs(path: Path) -> tuple[StackSubnets, ...]:
    document = read_document(path, what="outputs file")
    if not isinstance(document, Mapping):
        raise PreflightInputError(f"outputs file {path} must map stack names to their outputs, got {type(document).__name__}")
    found = []
    for stack, outputs in document.items():
        if isinstance(outputs, Mapping) and OUTPUT_KEY in outputs:
            found.append(_stack_subnets(path, str(stack), outputs[OUTPUT_KEY]))
    if not found:
        raise PreflightInputError(
            f"outputs file {path} has no stack with a {OUTPUT_KEY} output; write it with "
            f"`cdk deploy --outputs-file {path.name}` for a TrainingNetworkStack"
        )
    return tuple(found)


def _stack_subnets(path: Path, stack: str, raw: Any) -> StackSubnets:
    where = f"{path}: {stack}.{OUTPUT_KEY}"
    if isinstance(raw, str):
        try:
            doc = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise PreflightInputError(f"{where} is not a JSON document: {exc.msg}") from None
    else:
        doc = raw
    if not isinstance(doc, Mapping):
        raise PreflightInputError(f"{where} must be a JSON object, got {type(doc).__name__}")
    try:
        settings = TrainingJobSettings.from_document(doc)
    except KeyError as exc:
        raise PreflightInputError(f"{where} lacks the key {exc.args[0]!r}") from None
    except (TypeError, ValueError) as exc:
        raise PreflightInputError(f"{where} is malformed: {exc}") from None

    per_subnet = doc.get("subnetAvailabilityZones")
    if per_subnet is None:
        zones = {subnet: settings.availability_zone for subnet in settings.subnets}
    elif isinstance(per_subnet, list) and len(per_subnet) == len(settings.subnets) and all(isinstance(z, str) for z in per_subnet):
        zones = dict(zip(settings.subnets, per_subnet))
    else:
        raise PreflightInputError(
            f"{where}: subnetAvailabilityZones must list one AZ per subnet "
            f"({len(settings.subnets)}), got {per_subnet!r}"
        )
    return StackSubnets(stack=stack, subnets=settings.subnets, availability_zones=zones,
                        stack_availability_zone=settings.availability_zone)
