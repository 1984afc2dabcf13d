"""``smddp-infra size``: the cheapest FSx for Lustre file system that keeps every accelerator fed.

Prints the chosen plan next to the best plan of each other deployment type, so the
trade-off (scratch vs persistent, capacity-bound vs throughput-bound) is visible; ``--json``
prints the chosen plan for scripts. Numbers are parsed here rather than by argparse so a
bad value is one line naming the flag (argparse would add a usage block). Only pure rooms
are imported: the command must start without aws_cdk/jsii.
"""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any, Optional

from smddp_infra.commands import instance_flags
from smddp_infra.commands._output import print_json
from smddp_infra.errors import SizingError

#: What ``--deployment-type`` offers: the types the default price table prices (SCRATCH_1 has no
#: default price). Written out so the parser needs no import; a test compares it with the table.
PRICED_TYPES = ("SCRATCH_2", "PERSISTENT_1", "PERSISTENT_1_HDD", "PERSISTENT_2")

HELP = "Size an FSx for Lustre file system from the cluster and its data (cheapest valid plan)."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    cluster = parser.add_argument_group("workload (aggregate read throughput = instances x accelerators x MB/s)")
    cluster.add_argument("--instance-type", metavar="TYPE", help="SageMaker EFA training type, e.g. ml.p5.48xlarge")
    cluster.add_argument("--instance-count", metavar="N", help="number of training instances")
    cluster.add_argument(
        "--read-mbps-per-gpu",
        "--read-mbps-per-accelerator",
        dest="read_mbps_per_gpu",
        metavar="MBPS",
        help="MB/s each GPU (or Trainium chip) reads from the file system",
    )
    cluster.add_argument("--dataset-gib", metavar="GIB", help="dataset size: the file system must hold it")
    cluster.add_argument(
        "--epoch-seconds",
        metavar="S",
        help="also require reading the whole dataset once in this many seconds (needs --dataset-gib)",
    )
    cluster.add_argument("--required-mbps", metavar="MBPS", help="required aggregate MB/s (overrides the workload figures)")
    choice = parser.add_argument_group("file system")
    many: dict[str, Any] = {"action": "extend", "nargs": "+"}  # a flag given once or more, each with one or more values
    choice.add_argument("--efa", action="store_true", help="EFA-enabled PERSISTENT_2 only (EFA capacity steps)")
    choice.add_argument(
        "--deployment-type",
        dest="deployment_types",
        **many,
        metavar="TYPE",
        help=f"consider only these: {', '.join(PRICED_TYPES)} "
        "(default: SCRATCH_2 PERSISTENT_1 PERSISTENT_2)",
    )
    choice.add_argument("--max-capacity-gib", metavar="GIB", help="largest file system you accept")
    choice.add_argument(
        "--storage-class",
        dest="storage_classes",
        **many,
        metavar="CLASS",
        help="SSD and/or INTELLIGENT_TIERING (default: SSD); Intelligent-Tiering is costed only with --prices",
    )
    choice.add_argument("--prices", metavar="FILE",
                        help="JSON price file: INTELLIGENT_TIERING prices (no published figures) and/or SSD tier prices "
                             "that replace the defaults (docs/sizing.md)")
    choice.add_argument("--hot-gib", metavar="GIB",
                        help="the working set an epoch re-reads, for Intelligent-Tiering's read cache (default: the "
                             "whole --dataset-gib)")
    parser.add_argument("--json", action="store_true", help="print the chosen plan as JSON")


def _number(flag: str, text: Optional[str], *, allow_zero: bool = False) -> Optional[float]:
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        allowed = ">= 0" if allow_zero else "> 0"
        raise SizingError(f"{flag} must be a number {allowed}, got {text!r}")
    return value


def _required_mbps(args: argparse.Namespace, count: Optional[int], dataset_gib: Optional[float]) -> float:
    """The largest of the needs given: --required-mbps (which replaces the instance figures), the
    instance figures, and reading --dataset-gib once in --epoch-seconds."""
    from smddp_infra.sizing.workload import throughput_from_cluster, throughput_from_epoch

    explicit = _number("--required-mbps", args.required_mbps)
    per_gpu = _number("--read-mbps-per-gpu", args.read_mbps_per_gpu)
    epoch = _number("--epoch-seconds", args.epoch_seconds)
    given = {"--instance-type": args.instance_type, "--instance-count": count, "--read-mbps-per-gpu": per_gpu}
    needs: list[float] = []
    if explicit is not None:
        needs.append(explicit)
    elif any(v is not None for v in given.values()):
        missing = [flag for flag, v in given.items() if v is None]
        if missing:
            raise SizingError(f"{', '.join(missing)} must be given with the other workload flags ({', '.join(given)})")
        needs.append(throughput_from_cluster(args.instance_type, count, per_gpu))  # type: ignore[arg-type]
    if epoch is not None:
        if dataset_gib is None:
            raise SizingError("--epoch-seconds needs --dataset-gib (the data read once per epoch)")
        needs.append(throughput_from_epoch(dataset_gib, epoch))
    if not needs:
        raise SizingError(
            "no throughput to size for: give --instance-type, --instance-count and --read-mbps-per-gpu, "
            "or --dataset-gib with --epoch-seconds, or --required-mbps"
        )
    return max(needs)


def _deployment_types(names: Optional[list[str]]) -> Optional[list[str]]:
    """The types the CLI can price: a type without a default price (SCRATCH_1) is one line naming the flag,
    not the planner's ``prices`` parameter, which the CLI cannot set."""
    from smddp_infra.sizing.planner import TIER_GROUPS
    from smddp_infra.sizing.prices import DEFAULT_PRICES

    if names is None:
        return None
    for name in names:
        tiers = TIER_GROUPS.get(name)
        if tiers and any(t.key not in DEFAULT_PRICES for t in tiers):
            raise SizingError(
                f"--deployment-type {name} has no default price, so the CLI cannot cost it; choose among "
                f"{', '.join(PRICED_TYPES)} (price {name} with plan_lustre(..., prices=...) in Python)"
            )
    return names


#: planner parameter -> the flag that sets it (for error messages)
_FLAG_OF = {
    "required_throughput_mbps": "required MB/s",
    "max_capacity_gib": "--max-capacity-gib",
    "deployment_types": "--deployment-type",
    "efa_enabled": "--efa",
}


def run(args: argparse.Namespace) -> int:
    from smddp_infra.sizing.planner import best_per_deployment_type

    count = instance_flags(args)
    dataset_gib = _number("--dataset-gib", args.dataset_gib, allow_zero=True)
    max_capacity = _number("--max-capacity-gib", args.max_capacity_gib)
    required = _required_mbps(args, count, dataset_gib)
    classes, tiering_prices, ssd_prices, not_compared = _storage_classes(args)
    hot_gib = _number("--hot-gib", args.hot_gib, allow_zero=True)
    try:
        plans = best_per_deployment_type(
            required,
            dataset_gib or 0,
            efa_enabled=args.efa,
            deployment_types=_deployment_types(args.deployment_types),
            max_capacity_gib=max_capacity,
            clients=count,
            prices=ssd_prices,
            storage_classes=classes or ["SSD"],
            tiering_prices=tiering_prices,
            hot_gib=hot_gib,
        )
    except SizingError as exc:  # name the flags, not the Python parameters behind them
        message = str(exc)
        for name, flag in _FLAG_OF.items():
            message = message.replace(name, flag)
        raise SizingError(message) from None
    chosen = next(iter(plans.values()))
    # The same quota and spend alerts the constructs raise as synth warnings, on stderr so
    # that --json stays a clean document.
    from smddp_infra.sizing.guards import plan_alerts

    for alert in plan_alerts(chosen, cost_setting="the default threshold; smddp:monthlyCostWarningUSD in an app"):
        message = alert.message.replace("max_capacity_gib (smddp:maxCapacityGiB)", "--max-capacity-gib")
        sys.stderr.write(f"smddp-infra size: warning: {message}\n")
    if not_compared and args.json:
        sys.stderr.write(f"smddp-infra size: note: {not_compared}\n")
    if args.efa:
        # The same fact the network's synth warning states (one text, sizing.guards).
        from smddp_infra.sizing.guards import EFA_OVER_TCP_FOR_TRAINING_JOBS

        sys.stderr.write(f"smddp-infra size: warning: --efa: if {EFA_OVER_TCP_FOR_TRAINING_JOBS}\n")
    if args.json:
        print_json(chosen.to_dict())
        return 0
    _print_table(required, dataset_gib or 0, plans)
    if not_compared:
        print(not_compared)
    return 0


def _storage_classes(args: argparse.Namespace) -> tuple[Optional[list[str]], Any, Any, Optional[str]]:
    """(classes to plan, Intelligent-Tiering prices, SSD prices, why Intelligent-Tiering is not compared).

    Intelligent-Tiering has no published prices: asked for beside SSD without them, it is left
    out with the reason; asked for alone, it is an error naming --prices. Without any of the
    three flags nothing is imported (the command's cold start).
    """
    if args.storage_classes is None and args.prices is None and args.hot_gib is None:
        return None, None, None, None
    from smddp_infra.sizing.prices import DEFAULT_PRICES
    from smddp_infra.sizing.tiering import INTELLIGENT_TIERING, NO_PRICES_WHY, STORAGE_CLASSES, load_price_file

    classes = list(dict.fromkeys(args.storage_classes or ["SSD"]))
    for name in classes:
        if name not in STORAGE_CLASSES:
            raise SizingError(f"--storage-class must be among {', '.join(STORAGE_CLASSES)}, got {name!r}")
    price_file = load_price_file(args.prices) if args.prices is not None else None
    tiering = price_file.intelligent_tiering if price_file is not None else None
    ssd = {**DEFAULT_PRICES, **price_file.ssd} if price_file is not None and price_file.ssd is not None else None
    not_compared = None
    if INTELLIGENT_TIERING in classes and tiering is None:
        if classes == [INTELLIGENT_TIERING]:
            raise SizingError(f"--storage-class INTELLIGENT_TIERING needs --prices FILE with an INTELLIGENT_TIERING "
                              f"section: {NO_PRICES_WHY}")
        classes.remove(INTELLIGENT_TIERING)
        not_compared = NO_PRICES_WHY
    if args.hot_gib is not None and INTELLIGENT_TIERING not in classes:
        raise SizingError("--hot-gib sizes Intelligent-Tiering's read cache: it needs --storage-class INTELLIGENT_TIERING "
                          "and --prices")
    return classes, tiering, ssd, not_compared


def _print_table(required: float, dataset_gib: float, plans: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    # An Intelligent-Tiering row is wider (its GiB cell holds data + cache): widen the table
    # rather than let rich truncate the cost; SSD-only tables keep the terminal's width.
    wide = any(getattr(p, "storage_type", "") == "INTELLIGENT_TIERING" for p in plans.values())
    console = Console(width=max(Console().width, 104)) if wide else Console()
    title = f"FSx for Lustre for {required:,.0f} MB/s and {dataset_gib:,.0f} GiB"
    table = Table(title=title, title_justify="left")
    table.add_column("Deployment type", no_wrap=True)
    for column in ("Tier", "GiB", "MB/s", "Headroom", "$/month"):
        table.add_column(column, justify="right")
    def tiered(plan: Any) -> bool:  # without importing the tiering module on the SSD-only path
        return bool(plan.storage_type == "INTELLIGENT_TIERING")

    for index, (group, plan) in enumerate(plans.items()):
        label = group + (" + EFA" if plan.efa_enabled else "") + (" (chosen)" if index == 0 else "")
        if tiered(plan):
            tier, size = "IT", f"{plan.dataset_gib:,.0f} + {plan.read_cache_gib:,}"
        else:
            tier, size = str(plan.per_unit_storage_throughput or "200*"), f"{plan.storage_capacity_gib:,}"
        table.add_row(
            label,
            tier,
            size,
            f"{plan.baseline_throughput_mbps:,.0f}",
            f"{plan.headroom:+.1%}",
            f"{plan.monthly_cost_usd:,.2f}",
            style="bold" if index == 0 else None,
        )
    it_note = "; IT: Intelligent-Tiering, GiB stored + read cache, MB/s its ThroughputCapacity" if wide else ""
    table.caption = (f"Tier: MB/s per TiB (*scratch baseline, not settable{it_note}). MB/s: baseline disk throughput, "
                     "burst not counted.")
    console.print(table)
    chosen = next(iter(plans.values()))
    console.print(chosen.explanation, highlight=False)
    shown = [chosen] + [p for p in plans.values() if tiered(p) and p is not chosen]
    for plan in shown:
        for warning in plan.warnings:
            console.print(f"[yellow]warning:[/] {warning}", highlight=False)
