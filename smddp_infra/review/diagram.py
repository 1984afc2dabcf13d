"""An architecture diagram of the network, drawn from the template alone.

One graph model, two renderings: Mermaid (a code block that GitHub/GitLab render with no
tools) and Graphviz ``dot`` source (rendered to SVG where Graphviz is installed). Boxes
nest as AWS draws them: VPC > subnet (with its AZ) > security group > what carries the
group. Edges are the security-group rules between groups, the S3 route through the
gateway endpoint, flow and access logs, and the file system's dataset link.

"SageMaker training instances" is not a template resource: it stands for the job's
network interfaces and is drawn inside every group tagged ``smddp:role=training``
(the tag :class:`~smddp_infra.constructs.efa.EfaSecurityGroup` writes).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

from smddp_infra.review.filesystems import file_system_sizing
from smddp_infra.review.network import endpoints, group_members, security_group_rules
from smddp_infra.review.permissions import role_permissions
from smddp_infra.review.template import TemplateView, as_list

INSTANCES = "TrainingInstances"


@dataclass
class Cluster:
    id: str
    label: str
    parent: Optional[str] = None
    style: str = "solid"


@dataclass
class Node:
    id: str
    label: str
    cluster: Optional[str] = None
    shape: str = "box"  # box | cylinder | stadium


@dataclass
class Edge:
    src: str
    dst: str
    labels: list[str] = field(default_factory=list)
    dashed: bool = False


@dataclass
class Graph:
    clusters: list[Cluster] = field(default_factory=list)
    nodes: list[Node] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)

    def edge(self, src: str, dst: str, label: str, *, dashed: bool = False) -> None:
        for edge in self.edges:
            if edge.src == src and edge.dst == dst and edge.dashed == dashed:
                if label not in edge.labels:
                    edge.labels.append(label)
                return
        self.edges.append(Edge(src, dst, [label], dashed))

    def nested_lines(self, node_line: Callable[[Node], str], opening: Callable[[Cluster], list[str]], closing: str) -> list[str]:
        """The boxes as both renderers nest them: in each cluster its nodes, then its clusters, each
        between its opening and closing lines, two spaces deeper per level. What sits in no cluster
        of the graph (also a parent that is not one of its clusters) is at the top level."""
        ids = {c.id for c in self.clusters}
        children: dict[Optional[str], list[Cluster]] = {}
        for cluster in self.clusters:
            children.setdefault(cluster.parent if cluster.parent in ids else None, []).append(cluster)
        nodes_in: dict[Optional[str], list[Node]] = {}
        for node in self.nodes:
            nodes_in.setdefault(node.cluster if node.cluster in ids else None, []).append(node)

        def inside(parent: Optional[str], indent: str) -> list[str]:
            lines = [indent + node_line(node) for node in nodes_in.get(parent, [])]
            for cluster in children.get(parent, []):
                lines += [indent + line for line in opening(cluster)]
                lines += inside(cluster.id, indent + "  ")
                lines.append(indent + closing)
            return lines

        return inside(None, "  ")


def build_graph(view: TemplateView) -> Graph:
    graph = Graph()
    node_ids: set[str] = set()

    def add_node(node: Node) -> None:
        if node.id not in node_ids:
            node_ids.add(node.id)
            graph.nodes.append(node)

    subnet_of_vpc: dict[str, list[str]] = {}
    for vpc_id, vpc_resource in view.of_type("AWS::EC2::VPC"):
        cidr = view.render((vpc_resource.get("Properties") or {}).get("CidrBlock"))
        graph.clusters.append(Cluster(vpc_id, f"VPC {view.label(vpc_id)} · {cidr}"))
    for subnet_id, subnet in view.of_type("AWS::EC2::Subnet"):
        props = subnet.get("Properties") or {}
        az = view.render(props.get("AvailabilityZone") or props.get("AvailabilityZoneId"))
        vpc = view.referenced_id(props.get("VpcId"))
        name = view.tags(subnet_id).get("aws-cdk:subnet-name") or view.label(subnet_id)
        graph.clusters.append(Cluster(subnet_id, f"{name} subnet · {view.render(props.get('CidrBlock'))} · {az}", vpc))
        subnet_of_vpc.setdefault(vpc or "", []).append(subnet_id)

    members = group_members(view)
    training_groups = _training_groups(view)
    subnet_of: dict[str, Optional[str]] = {}
    for logical_id, resource in view.resources.items():
        subnets = [view.referenced_id(s) for s in as_list((resource.get("Properties") or {}).get("SubnetIds"))]
        subnet_of[logical_id] = subnets[0] if len(subnets) == 1 else None
    training_subnet = next((subnet_of[m] for g in training_groups for m in members.get(g, []) if subnet_of.get(m)), None)

    # Security groups as boxes, placed in the subnet all their members share.
    anchor: dict[str, str] = {}
    for group_id, group in view.of_type("AWS::EC2::SecurityGroup"):
        carried_by = members.get(group_id, [])
        group_subnets = {subnet_of.get(m) for m in carried_by}
        if group_id in training_groups:
            group_subnets.add(training_subnet)
        parent = group_subnets.pop() if len(group_subnets) == 1 else None
        if parent is None:
            parent = view.referenced_id((group.get("Properties") or {}).get("VpcId"))
        graph.clusters.append(Cluster(f"sg_{group_id}", f"security group {view.label(group_id)}", parent, "dashed"))
        if group_id in training_groups:
            add_node(Node(INSTANCES, "SageMaker training instances<br/>(the job's EFA network interfaces)", f"sg_{group_id}", "stadium"))
            anchor[group_id] = INSTANCES
        if not carried_by and group_id not in training_groups:
            add_node(Node(f"g_{group_id}", "(no members in this template)", f"sg_{group_id}"))
            anchor[group_id] = f"g_{group_id}"

    sizing = {s.logical_id: s for s in file_system_sizing(view)}
    for fs_id, _ in view.of_type("AWS::FSx::FileSystem"):
        plan = sizing.get(fs_id)
        detail = (f"{plan.deployment_type} · {plan.capacity_gib} GiB · {plan.baseline_mbps:.0f} MB/s"
                  if plan and plan.baseline_mbps else "")
        groups = [g for g, m in members.items() if fs_id in m]
        add_node(Node(fs_id, f"FSx for Lustre<br/>{detail}", f"sg_{groups[0]}" if groups else subnet_of.get(fs_id), "cylinder"))
        for g in groups:
            anchor.setdefault(g, fs_id)
            if g in training_groups:
                graph.edge(INSTANCES, fs_id, "Lustre mounts (TCP 988, 1018-1023) under the same group's self rules")

    # Interface endpoints: one node per (group, subnet) with the service names.
    grouped: dict[tuple[str, str], list[str]] = {}
    for endpoint in endpoints(view):
        if endpoint.kind == "Interface":
            key = (endpoint.security_groups[0] if endpoint.security_groups else "", endpoint.subnets[0] if endpoint.subnets else "")
            grouped.setdefault(key, []).append(endpoint.service)
        else:
            endpoint_vpc = view.referenced_id(view.props(endpoint.logical_id).get("VpcId"))
            add_node(Node(endpoint.logical_id, f"{endpoint.service} gateway endpoint", endpoint_vpc))
    for index, ((endpoint_group, endpoint_subnet), services) in enumerate(sorted(grouped.items())):
        node_id = f"Endpoints{index + 1}"
        cluster = f"sg_{endpoint_group}" if endpoint_group in view.resources else endpoint_subnet or None
        add_node(Node(node_id, f"{len(services)} interface endpoints, private DNS<br/>{', '.join(services)}", cluster))
        if endpoint_group in view.resources:
            anchor.setdefault(endpoint_group, node_id)

    # Rules between groups, to prefix lists and from CIDRs.
    s3_gateway = next((e.logical_id for e in endpoints(view) if e.kind == "Gateway" and e.service == "s3"), None)
    for rule in security_group_rules(view):
        if rule.protocol == "-":
            continue
        me = anchor.get(rule.group)
        if me is None:
            continue
        label = "all traffic" if rule.protocol == "all" else f"{rule.protocol} {rule.ports}"
        if rule.peer_group:
            other = anchor.get(rule.peer_group)
            if other is None:
                continue
            if rule.peer_group == rule.group:
                graph.edge(me, me, f"{label} to and from itself")
            elif rule.direction == "egress":
                graph.edge(me, other, label)
            else:
                graph.edge(other, me, label)
        elif rule.peer_prefix_list:
            prefix_target = s3_gateway or f"pl_{rule.peer_prefix_list}"
            if prefix_target != s3_gateway:
                add_node(Node(prefix_target, f"prefix list {rule.peer_prefix_list}"))
            graph.edge(me, prefix_target, f"{label} (prefix list)")
        elif rule.peer_cidr:
            peer_subnet = next((sid for sid, r in view.of_type("AWS::EC2::Subnet")
                                if view.render((r.get("Properties") or {}).get("CidrBlock")) == rule.peer_cidr), None)
            source = (anchor.get(training_groups[0])
                      if peer_subnet and peer_subnet == training_subnet and training_groups else None)
            if source is None:
                source = f"cidr_{_id(rule.peer_cidr)}"
                add_node(Node(source, rule.peer_cidr if rule.peer_cidr != "0.0.0.0/0" else "internet (0.0.0.0/0)"))
            if rule.direction == "ingress":
                graph.edge(source, me, f"{label} from {rule.peer_cidr}")
            else:
                graph.edge(me, source, f"{label} to {rule.peer_cidr}")
    # Collapse the Lustre self rule into the all-traffic self rule it is part of.
    for edge in graph.edges:
        if edge.src == edge.dst and any(label.startswith("all traffic") for label in edge.labels):
            edge.labels = [label for label in edge.labels if label.startswith("all traffic")]

    # Buckets, logs, dataset link, role.
    # Buckets the job reaches (named in an IAM policy) sit behind the S3 gateway endpoint.
    policy_text = " ".join(r for p in role_permissions(view) for r in p.resources)
    for bucket_id, bucket in view.of_type("AWS::S3::Bucket"):
        add_node(Node(bucket_id, f"S3 bucket {view.label(bucket_id)}", None, "cylinder"))
        if s3_gateway and "{" + view.label(bucket_id) + "." in policy_text:
            graph.edge(s3_gateway, bucket_id, "S3 API (training job)", dashed=True)
        logging = (bucket.get("Properties") or {}).get("LoggingConfiguration") or {}
        target = view.referenced_id(logging.get("DestinationBucketName"))
        if target:
            graph.edge(bucket_id, target, "access logs", dashed=True)
    for log_id, flow in view.of_type("AWS::EC2::FlowLog"):
        props = flow.get("Properties") or {}
        target = _first_ref(view, props.get("LogDestination"))
        vpc = view.referenced_id(props.get("ResourceId"))
        add_node(Node(log_id, "VPC flow log (all traffic)", vpc))
        if target:
            graph.edge(log_id, target, "flow logs", dashed=True)
    for dra_id, dra in view.of_type("AWS::FSx::DataRepositoryAssociation"):
        props = dra.get("Properties") or {}
        fs = view.referenced_id(props.get("FileSystemId"))
        path = view.render(props.get("DataRepositoryPath"))
        node = _first_ref(view, props.get("DataRepositoryPath")) or f"repo_{dra_id}"
        if node not in view.resources:
            add_node(Node(node, f"dataset {path}", None, "cylinder"))
        if fs:
            graph.edge(fs, node, f"{view.render(props.get('FileSystemPath'))} (data repository association)", dashed=True)
    for role_id, _ in view.of_type("AWS::IAM::Role"):
        add_node(Node(role_id, f"IAM role {view.label(role_id)}"))
        if training_groups:
            graph.edge(role_id, INSTANCES, "execution role", dashed=True)
    return graph


def to_mermaid(graph: Graph) -> str:
    lines = ["flowchart LR"]
    lines += graph.nested_lines(_mermaid_node, lambda c: [f'subgraph {_id(c.id)}["{_mermaid_text(c.label)}"]'], "end")
    for edge in graph.edges:
        arrow = "-.->" if edge.dashed else "-->"
        lines.append(f'  {_id(edge.src)} {arrow}|"{_mermaid_text("; ".join(edge.labels))}"| {_id(edge.dst)}')
    for cluster in graph.clusters:
        if cluster.style == "dashed":
            lines.append(f"  style {_id(cluster.id)} stroke-dasharray: 5 5")
    return "\n".join(lines) + "\n"


def to_dot(graph: Graph, *, title: str) -> str:
    lines = [
        "digraph network {",
        f'  label="{_dot_text(title)}"; labelloc=t; fontname="Helvetica"; rankdir=LR; compound=true;',
        '  node [fontname="Helvetica" fontsize=10]; edge [fontname="Helvetica" fontsize=9];',
    ]
    lines += graph.nested_lines(_dot_node, lambda c: [f"subgraph cluster_{_id(c.id)} {{",
                                                      f'  label="{_dot_text(c.label)}"; style="{c.style}";'], "}")
    for edge in graph.edges:
        style = ", style=dashed" if edge.dashed else ""
        lines.append(f'  {_id(edge.src)} -> {_id(edge.dst)} [label="{_dot_text("; ".join(edge.labels))}"{style}];')
    lines.append("}")
    return "\n".join(lines) + "\n"


_DOT_SHAPES = {"box": "box", "cylinder": "cylinder", "stadium": "box"}


def _dot_node(node: Node) -> str:
    style = ', style="rounded"' if node.shape == "stadium" else ""
    return f'{_id(node.id)} [label="{_dot_text(node.label)}", shape={_DOT_SHAPES[node.shape]}{style}];'


def _mermaid_node(node: Node) -> str:
    text = _mermaid_text(node.label)
    if node.shape == "cylinder":
        return f'{_id(node.id)}[("{text}")]'
    if node.shape == "stadium":
        return f'{_id(node.id)}(["{text}"])'
    return f'{_id(node.id)}["{text}"]'


def _mermaid_text(text: str) -> str:
    return text.replace('"', "#quot;")


def _dot_text(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("<br/>", "\\n")


def _id(value: str) -> str:
    return "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in value)


def _training_groups(view: TemplateView) -> list[str]:
    """Groups the rules treat as training groups (strong evidence, parameter defaults), in
    template order: the diagram and SMDDP-SG1/SG2 read the same attachments."""
    from smddp_infra.rules.training import attachments

    strong = {g for a in attachments(view.model.world()) if a.evidence == "strong" for g in a.template_groups}
    return [g for g, _ in view.of_type("AWS::EC2::SecurityGroup") if g in strong]


def _first_ref(view: TemplateView, value: object) -> Optional[str]:
    found = view.referenced_id(value)
    if found:
        return found
    if isinstance(value, dict):
        for inner in value.values():
            for item in as_list(inner) if isinstance(inner, list) else [inner]:
                if isinstance(item, (dict, list)):
                    found = _first_ref(view, item if isinstance(item, dict) else {"x": item})
                    if found:
                        return found
    if isinstance(value, list):
        for item in value:
            found = _first_ref(view, item)
            if found:
                return found
    return None
