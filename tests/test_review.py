"""docs/review/ is regenerated from a fresh synth of the default app and must match the committed copy.

The review is written from the session's default synth (``default_app.assembly.directory``
is a cdk.out). Only the SVG (its bytes depend on the Graphviz version) and the one summary
line that says whether it was drawn are left out of the staleness comparison.
"""

from __future__ import annotations

import difflib
import json
import shutil
import subprocess
import sys
import xml.dom.minidom
from pathlib import Path

import pytest

from smddp_infra.review import load_assembly, write_review
from smddp_infra.review.summary import IMAGE_LINE_PREFIX
from smddp_infra.sizing.lustre_rules import find_tier
from smddp_infra.sizing.prices import DEFAULT_PRICES

ROOT = Path(__file__).resolve().parent.parent
COMMITTED = ROOT / "docs" / "review"
REGENERATE = "make review  (or: cdk synth -o cdk.out && smddp-infra review cdk.out --out docs/review)"


@pytest.fixture(scope="module")
def fresh(default_app, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("review")
    write_review(default_app.assembly.directory, out)
    return out


@pytest.fixture(scope="module")
def summary(fresh) -> str:
    return (fresh / "README.md").read_text()


@pytest.fixture(scope="module")
def template(default_app) -> dict:
    return default_app.json


def _comparable(path: Path) -> str:
    text = path.read_text()
    if path.name == "README.md":
        text = "\n".join(IMAGE_LINE_PREFIX + "<masked>" if line.startswith(IMAGE_LINE_PREFIX) else line for line in text.splitlines())
    return text


def test_committed_review_is_not_stale(fresh):
    fresh_files = {p.name for p in fresh.iterdir() if p.suffix != ".svg"}
    committed_files = {p.name for p in COMMITTED.iterdir() if p.suffix != ".svg"} if COMMITTED.is_dir() else set()
    assert committed_files == fresh_files, f"docs/review has {sorted(committed_files)}, a fresh review has {sorted(fresh_files)}: run {REGENERATE}"
    stale = []
    for name in sorted(fresh_files):
        new, old = _comparable(fresh / name), _comparable(COMMITTED / name)
        if new != old:
            diff = difflib.unified_diff(old.splitlines(), new.splitlines(), f"committed/{name}", f"fresh/{name}", lineterm="", n=1)
            stale.append("\n".join(list(diff)[:30]))
    assert not stale, f"docs/review is stale; regenerate with: {REGENERATE}\n" + "\n\n".join(stale)


def test_review_command_never_imports_aws_cdk(default_app, tmp_path):
    code = (
        "import sys\n"
        "from smddp_infra.cli import main\n"
        f"rc = main(['review', {str(default_app.assembly.directory)!r}, '--out', {str(tmp_path)!r}, '--no-image'])\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('aws_cdk', 'jsii', 'constructs', 'cdk_nag')"
        " or m.startswith('smddp_infra.constructs'))\n"
        "print(rc, heavy)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "0 []"
    assert (tmp_path / "TrainingNetworkStack.template.yaml").is_file()


def test_review_of_a_directory_without_manifest_is_one_line_exit_2(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "smddp_infra.cli", "review", str(tmp_path / "nope")], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert result.returncode == 2
    assert result.stderr.strip().startswith("smddp-infra review: error: CDK_OUT_DIR must be a cloud assembly directory")
    assert len(result.stderr.strip().splitlines()) == 1


def test_counts_by_type_match_the_template(summary, template):
    counts: dict[str, int] = {}
    for resource in template["Resources"].values():
        if resource["Type"] != "AWS::CDK::Metadata":
            counts[resource["Type"]] = counts.get(resource["Type"], 0) + 1
    assert f"## What is created ({sum(counts.values())} resources)" in summary
    for kind, n in counts.items():
        assert f"| `{kind}` | {n} |" in summary


def test_efa_self_rules_are_listed_with_their_reasons(summary, template):
    rows = [line for line in summary.splitlines() if line.startswith("| TrainingNetwork/Efa/Group |")]
    self_rules = [r for r in rows if "| group TrainingNetwork/Efa/Group | group TrainingNetwork/Efa/Group | all | all |" in r]
    assert any("| ingress |" in r and "all traffic from itself" in r for r in self_rules), rows
    assert any("| egress |" in r and "all traffic to itself" in r for r in self_rules), rows
    descriptions = [r["Properties"]["Description"] for r in template["Resources"].values() if r["Type"].startswith("AWS::EC2::SecurityGroup") and "Description" in r["Properties"]]
    for description in descriptions:
        assert description in summary


def test_file_system_sizing_comes_from_the_rule_table_and_price_table(summary, template):
    (fs,) = [r for r in template["Resources"].values() if r["Type"] == "AWS::FSx::FileSystem"]
    props = fs["Properties"]
    lustre = props["LustreConfiguration"]
    tier = find_tier(lustre["DeploymentType"], lustre.get("PerUnitStorageThroughput"), storage_type=props.get("StorageType", "SSD"))
    capacity = props["StorageCapacity"]
    required = float({t["Key"]: t["Value"] for t in props["Tags"]}["smddp:requiredThroughputMBps"])
    baseline = tier.throughput_mbps(capacity)
    row = next(line for line in summary.splitlines() if line.startswith("| TrainingNetwork/Lustre/FileSystem |"))
    assert f"{required:,.0f} MB/s" in row
    assert f"{capacity:,} GiB" in row
    assert f"{baseline:,.1f} MB/s" in row
    assert f"{baseline / required - 1:+.1%}" in row
    assert f"${capacity * DEFAULT_PRICES[tier.key]:,.2f}" in row
    assert baseline >= required


def test_every_acknowledgement_is_listed_with_its_reason(summary, default_app):
    directory = Path(default_app.assembly.directory)
    manifest = json.loads((directory / "manifest.json").read_text())
    entries = []
    for artifact in manifest["artifacts"].values():
        metadata = dict(artifact.get("metadata") or {})
        if artifact.get("additionalMetadataFile"):
            metadata.update(json.loads((directory / artifact["additionalMetadataFile"]).read_text()))
        entries += [(p, e) for p, es in metadata.items() for e in es if e["type"] == "aws:cdk:acknowledged-rules"]
    assert entries, "the default app acknowledges at least the IAM5 wildcards"
    lines = summary.splitlines()
    for path, entry in entries:
        short = "/".join(path.strip("/").split("/")[1:]) or path
        for rule_id, reason in entry["data"].items():
            rows = [row for row in lines if row.startswith(f"| `{rule_id.removeprefix('Annotation::')}` | `{short}` |")]
            assert len(rows) == 1, f"acknowledgement {rule_id} on {path} missing from the summary"
            assert rows[0].endswith(f"| {reason.replace('|', chr(92) + '|')} |")


def test_rule_pack_results_and_endpoints_are_reported(summary):
    assert "no rule pack reported an unacknowledged violation" in summary
    for rule_id in ("SMDDP-SG1", "SMDDP-SG2", "SMDDP-FSX2", "SMDDP-NET2"):
        assert f"| {rule_id} |" in summary and "pass |" in summary
    for service in ("s3", "sagemaker.api", "sts", "logs", "monitoring", "ecr.api", "ecr.dkr"):
        assert f"| `{service}` |" in summary
    assert "| DescribeFileSystem | Allow | fsx:DescribeFileSystems |" in summary


def test_mermaid_diagram_draws_the_network(summary):
    block = summary.split("```mermaid\n", 1)[1].split("```", 1)[0]
    assert block.startswith("flowchart LR")
    assert "Training subnet · 10.0.0.0/20 · us-east-1a" in block
    assert 'TrainingInstances -->|"all traffic to and from itself"| TrainingInstances' in block
    assert "FSx for Lustre" in block and "interface endpoints" in block
    assert block.count("subgraph ") == block.count("\n  end") + block.count("\n    end") + block.count("\n      end")


def test_graphviz_draws_the_image_and_the_summary_links_it(fresh, summary):
    """The Graphviz branch must run, not pass silently where `dot` is missing (a fresh machine):
    `make test` installs Graphviz with tools/install_graphviz.sh first; elsewhere this fails and
    says how to get it. The branch without Graphviz is the next test, on every machine."""
    assert shutil.which("dot"), ("Graphviz `dot` is not installed, so the review pack's image branch cannot be "
                                 "tested: run `sh tools/install_graphviz.sh` (`make test` runs it; it needs root "
                                 "and apt-get) or install Graphviz yourself (e.g. `brew install graphviz`)")
    svg = fresh / "TrainingNetworkStack.network.svg"
    assert xml.dom.minidom.parse(str(svg)).documentElement.tagName == "svg"
    assert f"{IMAGE_LINE_PREFIX}[TrainingNetworkStack.network.svg]" in summary


def test_without_graphviz_the_review_succeeds_and_says_why_there_is_no_image(default_app, tmp_path):
    (tmp_path / "TrainingNetworkStack.network.svg").write_text("<svg/>")  # a stale image is removed
    result = write_review(default_app.assembly.directory, tmp_path, dot="")
    text = (tmp_path / "README.md").read_text()
    assert result.images == ()
    assert not (tmp_path / "TrainingNetworkStack.network.svg").exists()
    assert f"{IMAGE_LINE_PREFIX}not drawn: Graphviz `dot` is not installed here" in text
    assert (tmp_path / "TrainingNetworkStack.network.dot").read_text().startswith("digraph network {")


def test_yaml_template_is_the_synthesized_template_without_cdk_bookkeeping(fresh, template, default_app):
    import yaml

    loaded = yaml.safe_load((fresh / "TrainingNetworkStack.template.yaml").read_text())
    assert "CDKMetadata" not in loaded["Resources"]
    expected = {k: v for k, v in template["Resources"].items() if v["Type"] != "AWS::CDK::Metadata"}
    assert set(loaded["Resources"]) == set(expected)
    for logical_id, resource in expected.items():
        got = dict(loaded["Resources"][logical_id])
        metadata = {k: v for k, v in (got.pop("Metadata", None) or {}).items() if k != "aws:cdk:path"}
        want = dict(resource)
        want_metadata = {k: v for k, v in (want.pop("Metadata", None) or {}).items() if k != "aws:cdk:path"}
        assert got == want and metadata == want_metadata, logical_id
    paths = {v["Metadata"]["aws:cdk:path"] for v in loaded["Resources"].values()}
    assert "TrainingNetworkStack/TrainingNetwork/Lustre/FileSystem/Resource" in paths
    assert load_assembly(default_app.assembly.directory).stacks[0].display_name == "TrainingNetworkStack"
