#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes numaprobe's Helm chart, rendered from the same source as the
kustomize bundle (deploy/kubernetes/make-bundle.py): the base manifests and
the TLS overlay as `kubectl kustomize` renders them, the PrometheusRule and the
dashboards of the monitoring mixin.

    deploy/helm/make-chart.py --image registry.example.com/numaprobe:0.2.0 /tmp/chart
    helm install numaprobe /tmp/chart/numaprobe -n monitoring
    helm package /tmp/chart/numaprobe          # numaprobe-0.2.0.tgz, for a chart repository

Its README.md documents every value from the comments in values.yaml
(values_readme.py).

How: the two renders are read as data; where the chart takes a value (image,
pull secrets, resources, priority class, tolerations, node selector, the configuration,
TLS, the node feature file, the PodMonitor, PrometheusRule and dashboards on or
off and their labels)
a marker replaces the rendered value, and the marker becomes the template
expression; where the TLS overlay differs from the base (the container's args
and probes, the mounts and volumes, the scrape endpoint) the template holds
both renders under `if .Values.tls.enabled`; what the node feature overlay adds
(an init container, a volume, its mount, the configuration's last lines)
follows under `if .Values.nodeFeatures.enabled`. Everything else in the templates is
the kustomize output itself. The rules and dashboards are chart files, read
with .Files.Get: their own {{ }} are not Helm's. tests/deploy/test_helm.py
checks with helm that `helm template` gives what `kubectl kustomize` does.

The chart's version and appVersion are the image's tag, which must be semver
(0.2.0, 0.2.0-dev.5: the image's tag spelling, deploy/container/build-image.py).
Needs kubectl (kustomize), jsonnet and PyYAML.
"""
import argparse
import copy
import importlib.util
import json
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

import values_readme  # beside this script

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]
K8S = REPO / "deploy" / "kubernetes"
SEMVER = re.compile(r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?")
# Kustomize writes this image name; the templates replace it.
IMAGE_MARK = "helmhole.invalid/numaprobe"
TAG_MARK = "HELMHOLETAG"
LABELS_HELPER = "numaprobe.labels"
NFD_ENABLED = ".Values.nodeFeatures.enabled"
# The pod template's annotation that changes with the ConfigMap.
CONFIG_CHECKSUM = "checksum/config"


def _bundle_module():
    spec = importlib.util.spec_from_file_location("make_bundle", K8S / "make-bundle.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def kustomize(directory):
    kubectl = shutil.which("kubectl")
    if not kubectl:
        raise SystemExit("make-chart: kubectl is not installed (it renders the kustomization)")
    p = subprocess.run([kubectl, "kustomize", str(directory)], capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise SystemExit(f"make-chart: kubectl kustomize {directory} failed:\n{p.stderr}")
    return [d for d in yaml.safe_load_all(p.stdout) if d]


def renders(mixin, workdir, runbook_ref):
    """(base, tls, nfd): the bundle's objects alone, with the TLS overlay and
    with the Node Feature Discovery overlay; the runbook links open
    `runbook_ref` (the chart's image is a placeholder here)."""
    bundle = _bundle_module()
    out = []
    for name, options in (("base", {}), ("tls", {"tls": True}), ("nfd", {"node_features": True})):
        directory = workdir / name
        bundle.write_bundle(directory, mixin, image=f"{IMAGE_MARK}:{TAG_MARK}", runbook_ref=runbook_ref, **options)
        out.append({(d["kind"], d["metadata"]["name"]): d for d in kustomize(directory)})
    return out


class Holes:
    """Markers put into the rendered objects, each standing for a piece of
    template: `key: HELMHOLE_n` lines become that piece at the line's indent."""

    def __init__(self):
        self.pieces = {}

    def mark(self, render):
        """`render(indent, key) -> text` replaces the line `<indent>key: marker`."""
        marker = f"HELMHOLE{len(self.pieces)}"
        self.pieces[marker] = render
        return marker

    def fill(self, text):
        def replace(m):
            indent, dash, key, marker = m.group(1), m.group(2), m.group(3), m.group(4)
            if dash:  # a marker as the first key of a list item: none are made so
                raise SystemExit(f"make-chart: marker {marker} in a list item")
            return self.pieces[marker](indent, key)
        text = re.sub(r"^( *)(- )?([^\s:][^:\n]*): (HELMHOLE\d+)$", replace, text, flags=re.M)
        left = re.findall(r"HELMHOLE\d+", text)
        if left:
            raise SystemExit(f"make-chart: markers left in a template: {left}")
        return text


def dump(value, indent):
    """`value` as block YAML at `indent` spaces (a sequence at the key's own
    indent, as the renders write them)."""
    text = yaml.safe_dump(name_first(value), sort_keys=False, default_flow_style=False, width=1000)
    return "\n".join((" " * indent + line) if line else line for line in text.rstrip("\n").split("\n"))


def scalar(expression):
    return lambda indent, key: f"{indent}{key}: {expression}"


def block(expression):
    """key: then a value from the values as YAML (toYaml), or nothing when empty."""
    def render(indent, key):
        n = len(indent)
        return (f"{indent}{{{{- with {expression} }}}}\n{indent}{key}:\n"
                f"{indent}  {{{{- toYaml . | nindent {n + 2} }}}}\n{indent}{{{{- end }}}}")
    return render


def choice(condition, when, otherwise):
    """key: the TLS overlay's render when `condition`, the base's otherwise."""
    def render(indent, key):
        n = len(indent) if isinstance(when, list) else len(indent) + 2
        return (f"{indent}{key}:\n{indent}{{{{- if {condition} }}}}\n{dump(when, n)}\n"
                f"{indent}{{{{- else }}}}\n{dump(otherwise, n)}\n{indent}{{{{- end }}}}")
    return render


def prepended(render, condition, items):
    """key: when `condition` the list `items`, then what `render` gives (a list
    is dumped at its key's indent, so both are one list). First, as kustomize
    merges an overlay's new items of a named list: the renders then agree."""
    def render_prepended(indent, key):
        key_line, rest = render(indent, key).split("\n", 1)
        return f"{key_line}\n{indent}{{{{- if {condition} }}}}\n{dump(items, len(indent))}\n{indent}{{{{- end }}}}\n{rest}"
    return render_prepended


def plain(value):
    """key: value as the render has it."""
    return lambda indent, key: f"{indent}{key}:\n{dump(value, len(indent) if isinstance(value, list) else len(indent) + 2)}"


def added(base_items, overlay_items):
    """The overlay's list items that the base lacks (by name), which kustomize
    puts first; anything else an overlay did to the list stops the chart."""
    names = {item["name"] for item in base_items}
    extra = [item for item in overlay_items if item["name"] not in names]
    if overlay_items != extra + base_items:
        raise SystemExit("make-chart: the node feature overlay changes a list of the base beyond adding first: "
                         "teach make-chart.py")
    return extra


def metadata(holes, doc, extra_labels=None):
    """Namespace and the chart's labels (and values' labels) on an object."""
    meta = doc["metadata"]
    meta["namespace"] = holes.mark(scalar("{{ .Release.Namespace }}"))
    labels = meta.setdefault("labels", {})

    def render(indent, key):
        n = len(indent)
        text = f"{indent}{{{{- include \"{LABELS_HELPER}\" . | nindent {n} }}}}"
        if extra_labels:
            text += f"\n{indent}{{{{- with {extra_labels} }}}}\n{indent}{{{{- toYaml . | nindent {n} }}}}\n{indent}{{{{- end }}}}"
        return text
    labels["helmholelabels"] = holes.mark(render)


def name_first(obj):
    """The same data with each list item's `name` as its first key, so that a
    marker is never on an item's "- " line (kustomize sorts keys: args first)."""
    if isinstance(obj, dict):
        return {k: name_first(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [name_first({"name": item["name"], **item} if isinstance(item, dict) and "name" in item else item)
                for item in obj]
    return obj


def template(holes, doc, condition=None):
    text = holes.fill(yaml.safe_dump(name_first(doc), sort_keys=False, default_flow_style=False, width=1000))
    header = "# Generated by deploy/helm/make-chart.py from the kustomize render of deploy/kubernetes; do not edit.\n"
    if condition:
        return f"{header}{{{{- if {condition} }}}}\n{text}{{{{- end }}}}\n"
    return header + text


def daemonset(holes, base, tls, nfd):
    ds, tls_ds = copy.deepcopy(base), copy.deepcopy(tls)
    metadata(holes, ds)
    pod, tls_pod = ds["spec"]["template"]["spec"], tls_ds["spec"]["template"]["spec"]
    nfd_pod = copy.deepcopy(nfd["spec"]["template"]["spec"])
    # The node feature overlay only adds: an init container, a volume and its
    # mount in the daemon's container, each under nodeFeatures.enabled.
    if {k: v for k, v in nfd_pod.items() if k not in ("initContainers", "containers", "volumes")} != \
            {k: v for k, v in base["spec"]["template"]["spec"].items() if k not in ("initContainers", "containers", "volumes")}:
        raise SystemExit("make-chart: the node feature overlay changes the pod beyond its lists: teach make-chart.py")
    nfd_inits = added(pod["initContainers"], nfd_pod["initContainers"])
    nfd_volumes = added(pod["volumes"], nfd_pod["volumes"])
    nfd_mounts = added(pod["containers"][0]["volumeMounts"], nfd_pod["containers"][0]["volumeMounts"])
    # Init containers are a whole piece (the overlay's continues the list), so
    # their image and pull policy are words replaced in the text afterwards.
    for c in pod["initContainers"] + nfd_inits:
        assert c["image"] == f"{IMAGE_MARK}:{TAG_MARK}", c["image"]
        c["image"], c["imagePullPolicy"] = "HELMIMAGE", "HELMPULLPOLICY"
    pod["initContainers"] = holes.mark(prepended(plain(pod["initContainers"]), NFD_ENABLED, nfd_inits))
    for c in pod["containers"]:
        assert c["image"] == f"{IMAGE_MARK}:{TAG_MARK}", c["image"]
        c["image"] = holes.mark(scalar('{{ include "numaprobe.image" . | quote }}'))
        c["imagePullPolicy"] = holes.mark(scalar("{{ .Values.image.pullPolicy }}"))
    c, tls_c = pod["containers"][0], tls_pod["containers"][0]
    c["resources"] = holes.mark(block(".Values.resources"))
    pod["imagePullSecrets"] = holes.mark(block(".Values.imagePullSecrets"))
    # The daemon reads its configuration at start (and on SIGHUP, which
    # Kubernetes never sends): a changed ConfigMap must roll the pods.
    ds["spec"]["template"]["metadata"].setdefault("annotations", {})[CONFIG_CHECKSUM] = holes.mark(
        scalar('{{ include (print $.Template.BasePath "/configmap.yaml") . | sha256sum }}'))
    pod["priorityClassName"] = holes.mark(block(".Values.priorityClassName"))
    pod["tolerations"] = holes.mark(block(".Values.tolerations"))
    pod["nodeSelector"] = holes.mark(block(".Values.nodeSelector"))
    # The TLS overlay's Secrets, named by values.
    for volume in tls_pod["volumes"]:
        if "secret" in volume:
            key = {"numaprobe-web": "webConfigSecret", "numaprobe-tls": "certificateSecret"}[volume["secret"]["secretName"]]
            volume["secret"]["secretName"] = f"HELMTLS_{key}"
    for key in sorted(set(c) | set(tls_c)):
        if c.get(key) != tls_c.get(key) and key in ("args", "startupProbe", "livenessProbe", "readinessProbe",
                                                      "volumeMounts"):
            c[key] = holes.mark(choice(".Values.tls.enabled", tls_c[key], c[key]) if key != "volumeMounts" else
                                prepended(choice(".Values.tls.enabled", tls_c[key], c[key]), NFD_ENABLED, nfd_mounts))
    pod["volumes"] = holes.mark(prepended(choice(".Values.tls.enabled", tls_pod["volumes"], pod["volumes"]),
                                         NFD_ENABLED, nfd_volumes))
    leftover = {k for k in set(c) | set(tls_c) if k not in c or (c[k] != tls_c.get(k) and not str(c[k]).startswith("HELM"))}
    if leftover:
        raise SystemExit(f"make-chart: the TLS overlay changes the container's {sorted(leftover)}: teach make-chart.py")
    text = template(holes, ds)
    for key in ("webConfigSecret", "certificateSecret"):
        text = text.replace(f"HELMTLS_{key}", f"{{{{ .Values.tls.{key} }}}}")
    return text.replace("HELMIMAGE", '{{ include "numaprobe.image" . | quote }}').replace(
        "HELMPULLPOLICY", "{{ .Values.image.pullPolicy }}")


def podmonitor(holes, base, tls):
    pm, tls_pm = copy.deepcopy(base), copy.deepcopy(tls)
    metadata(holes, pm, ".Values.podMonitor.labels")
    endpoint = tls_pm["spec"]["podMetricsEndpoints"][0]
    endpoint["tlsConfig"]["ca"]["secret"]["name"] = "HELMTLS_certificateSecret"
    endpoint["tlsConfig"]["serverName"] = "HELMTLS_serverName"
    for part in ("username", "password"):
        endpoint["basicAuth"][part]["name"] = "HELMTLS_scrapeSecret"
    pm["spec"]["podMetricsEndpoints"] = holes.mark(choice(".Values.tls.enabled", tls_pm["spec"]["podMetricsEndpoints"],
                                                          pm["spec"]["podMetricsEndpoints"]))
    if {k: v for k, v in pm["spec"].items() if k != "podMetricsEndpoints"} != \
            {k: v for k, v in tls_pm["spec"].items() if k != "podMetricsEndpoints"}:
        raise SystemExit("make-chart: the TLS overlay changes more of the PodMonitor than its endpoints")
    text = template(holes, pm, ".Values.podMonitor.enabled")
    for key in ("certificateSecret", "serverName", "scrapeSecret"):
        text = text.replace(f"HELMTLS_{key}", f"{{{{ .Values.tls.{key} }}}}")
    return text


def configmap(holes, doc, nfd_doc):
    """The configuration is a value; the node feature overlay's lines follow it
    under nodeFeatures.enabled (the overlay repeats the base's text, then adds)."""
    cm = copy.deepcopy(doc)
    metadata(holes, cm)
    (key, value), = cm["data"].items()
    nfd_value = nfd_doc["data"][key]
    if not nfd_value.startswith(value):
        raise SystemExit("make-chart: deploy/kubernetes-nfd/configmap-nfd.yaml does not repeat the base's configuration")
    # The value's own last newline, indented by nindent, ends in a blank line
    # once the `if` line's newline follows: that is the overlay's blank line.
    extra = nfd_value[len(value):].rstrip("\n").split("\n")
    if extra[0] != "":
        raise SystemExit("make-chart: configmap-nfd.yaml must add a blank line before its own lines")
    extra = extra[1:]

    def render(indent, k):
        n = len(indent) + 2
        lines = "\n".join(" " * n + line if line else "" for line in extra)
        return (f"{indent}{k}: |\n{indent}  {{{{- .Values.config | nindent {n} }}}}\n"
                f"{indent}  {{{{- if {NFD_ENABLED} }}}}\n{lines}\n{indent}  {{{{- end }}}}")
    cm["data"][key] = holes.mark(render)
    return template(holes, cm), value


def prometheusrule(holes, doc, files):
    rule = copy.deepcopy(doc)
    metadata(holes, rule, ".Values.prometheusRule.labels")
    files["files/prometheusrule-spec.yaml"] = yaml.safe_dump(rule["spec"], sort_keys=False, width=1000)
    rule["spec"] = holes.mark(lambda indent, key: f'{indent}{key}:\n{indent}  {{{{- .Files.Get "files/prometheusrule-spec.yaml" | nindent {len(indent) + 2} }}}}')
    return template(holes, rule, ".Values.prometheusRule.enabled")


def dashboard(holes, doc, files):
    cm = copy.deepcopy(doc)
    metadata(holes, cm, ".Values.dashboards.labels")
    for name, text in list(cm["data"].items()):
        files[f"files/dashboards/{name}"] = text
        cm["data"][name] = holes.mark(scalar(f'{{{{ .Files.Get "files/dashboards/{name}" | toJson }}}}'))
    return template(holes, cm, ".Values.dashboards.enabled")


HELPERS = f"""{{{{/* Generated by deploy/helm/make-chart.py; do not edit. */}}}}
{{{{- define "numaprobe.image" -}}}}
{{{{- if not .Values.image.repository -}}}}
{{{{- fail "image.repository: name the numaprobe image your nodes pull (deploy/README.md, Kubernetes: build it, push it, set it)" -}}}}
{{{{- end -}}}}
{{{{ .Values.image.repository }}}}:{{{{ .Values.image.tag | default .Chart.AppVersion }}}}
{{{{- end }}}}

{{{{- define "{LABELS_HELPER}" -}}}}
helm.sh/chart: {{{{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}}}
app.kubernetes.io/managed-by: {{{{ .Release.Service }}}}
app.kubernetes.io/instance: {{{{ .Release.Name }}}}
app.kubernetes.io/version: {{{{ .Chart.AppVersion | quote }}}}
{{{{- end }}}}
"""

NOTES = """numaprobe runs on every Linux node of the cluster ({{ .Release.Namespace }}).

Pods turn ready after their first complete probe round (minutes at the default
duty cycle); Prometheus scrapes them before that:
  kubectl -n {{ .Release.Namespace }} get pods -l app.kubernetes.io/name=numaprobe -o wide
{{- if .Values.tls.enabled }}

TLS is on: create the Secrets {{ .Values.tls.webConfigSecret }}, {{ .Values.tls.certificateSecret }} and
{{ .Values.tls.scrapeSecret }} in this namespace (deploy/README.md, "TLS and basic auth").
{{- end }}
{{- if .Values.podMonitor.enabled }}

kube-prometheus-stack selects PodMonitors and PrometheusRules by its release
label: set podMonitor.labels and prometheusRule.labels to {release: <its release name>}.
{{- end }}
"""


def values_yaml(image_repository, resources, priority, tolerations, node_selector, config, tls):
    y = lambda value, indent=2: dump(value, indent)  # noqa: E731
    return f"""# numaprobe's chart values. Generated by deploy/helm/make-chart.py from the
# kustomize base (deploy/kubernetes): the defaults are the base's, so that
# `helm template` gives what `kubectl kustomize` does (tests/deploy/test_helm.py).

# The daemon's container image (its init container runs the same).
image:
  # The image the nodes pull; no registry serves numaprobe's: build it, push it
  # to yours and name it here (deploy/README.md, "Kubernetes").
  repository: {image_repository}
  # Default: the chart's appVersion, the version it was made for.
  tag: ""
  # Kubernetes' imagePullPolicy of the daemon and its init container.
  pullPolicy: IfNotPresent

# Secrets (kubernetes.io/dockerconfigjson) the nodes pull the image with, for
# a private registry: e.g. [{{name: regcred}}].
imagePullSecrets: []

# The daemon container's resources. The memory limit must be at least the
# configuration's memory.budget + 64Mi; no CPU limit (CFS throttling would
# corrupt the measurements; the daemon keeps its own duty cycle).
resources:
{y(resources)}

# Evicted last; it can preempt workload pods to fit its memory request, and
# some platforms allow system-* classes only in kube-system: "" drops it.
priorityClassName: {priority}

# Measure every node, tainted ones included.
tolerations:
{y(tolerations, 0)}

# The nodes the DaemonSet runs on: every Linux node.
nodeSelector:
{y(node_selector)}

# /etc/numaprobe/numaprobe.yaml (every key: numaprobe.reference.yaml in the
# docs; `numaprobe check-config FILE` checks it). A change rolls the pods on
# `helm upgrade` (the pod template carries its checksum).
config: |
{chr(10).join('  ' + line if line else line for line in config.rstrip(chr(10)).split(chr(10)))}

# HTTPS with basic auth, scraped so (the deploy/kubernetes-tls overlay). The
# Secrets are made outside the chart (deploy/README.md, "TLS and basic auth").
tls:
  # On: HTTPS, with the Secrets below.
  enabled: false
  # web.yml: the web config (tls_server_config naming /etc/numaprobe-tls/tls.crt and tls.key, basic_auth_users)
  webConfigSecret: {tls['webConfigSecret']}
  # kubernetes.io/tls: tls.crt, tls.key, ca.crt
  certificateSecret: {tls['certificateSecret']}
  # username, password: what Prometheus sends
  scrapeSecret: {tls['scrapeSecret']}
  # The name Prometheus verifies the certificate for (it connects to pod IPs).
  serverName: {tls['serverName']}

# Node Feature Discovery labels from the figures measured on each node
# (numaprobe.io/latency-local-ns, ...: the deploy/kubernetes-nfd overlay;
# deploy/README.md, "Node features"): the node's
# /etc/kubernetes/node-feature-discovery/features.d is mounted, made writable
# for group 65534 by an init container, and named in the configuration.
nodeFeatures:
  # On: the feature file and its mount.
  enabled: false

# The Prometheus Operator's PodMonitor (job="numaprobe", instance = node name).
podMonitor:
  # Off for a Prometheus without the Operator: scrape the pods with
  # kubernetes_sd_configs instead (deploy/prometheus/kubernetes-scrape.yml).
  enabled: true
  # e.g. release: kube-prometheus-stack
  labels: {{}}

# The alerting and recording rules of the monitoring mixin (grafana/).
prometheusRule:
  # Off for a Prometheus without the Operator: load grafana/rules/*.yaml.
  enabled: true
  # e.g. release: kube-prometheus-stack
  labels: {{}}

# The mixin's dashboards as ConfigMaps labelled grafana_dashboard: "1" for the
# Grafana sidecar.
dashboards:
  # Off when the dashboards come from elsewhere (grafana/dashboards/*.json).
  enabled: true
  # Labels besides grafana_dashboard: "1".
  labels: {{}}
"""


def write_chart(out, image, mixin):
    name, tag = _bundle_module().split_image(image)
    if not tag or not SEMVER.fullmatch(tag):
        raise SystemExit(f"make-chart: --image {image!r}: the tag must be a version (semver, e.g. 0.2.0 or "
                         "0.2.0-dev.5): it is the chart's version")
    if tag.endswith("-dev.0"):
        # cmake/version.cmake: a build without a commit count, which sorts
        # before every earlier one; build-image.py makes no such image.
        raise SystemExit(f"make-chart: --image {image!r}: version {tag} does not sort after earlier builds "
                         "(a shallow clone or a tree without git history built it): use an image built from a "
                         "clone with its whole history (`git fetch --unshallow`)")
    homepage = re.search(r"^ *homepage: '([^']+)',$", (REPO / "grafana" / "config.libsonnet").read_text(), re.M).group(1)
    chart = pathlib.Path(out) / "numaprobe"
    if chart.exists():
        shutil.rmtree(chart)
    (chart / "templates").mkdir(parents=True)
    with tempfile.TemporaryDirectory(prefix="numaprobe-chart-") as tmp:
        base, tls, nfd = renders(pathlib.Path(mixin), pathlib.Path(tmp), _bundle_module().release_ref(tag))
    holes, files, templates = Holes(), {}, {}
    templates["daemonset.yaml"] = daemonset(holes, base[("DaemonSet", "numaprobe")], tls[("DaemonSet", "numaprobe")],
                                            nfd[("DaemonSet", "numaprobe")])
    templates["podmonitor.yaml"] = podmonitor(holes, base[("PodMonitor", "numaprobe")], tls[("PodMonitor", "numaprobe")])
    templates["configmap.yaml"], config = configmap(holes, base[("ConfigMap", "numaprobe-config")],
                                                    nfd[("ConfigMap", "numaprobe-config")])
    templates["prometheusrule.yaml"] = prometheusrule(holes, base[("PrometheusRule", "numaprobe")], files)
    dashboards = sorted(key for key in base if key[0] == "ConfigMap" and key[1] != "numaprobe-config")
    for key in dashboards:
        templates[f"{key[1]}.yaml"] = dashboard(holes, base[key], files)
    known = {("DaemonSet", "numaprobe"), ("PodMonitor", "numaprobe"), ("ConfigMap", "numaprobe-config"),
             ("PrometheusRule", "numaprobe"), *dashboards}
    if set(base) != known or set(tls) != known or set(nfd) != known:
        raise SystemExit(f"make-chart: the bundle holds objects it does not know: {sorted(set(base) ^ known)}")
    for rel, text in templates.items():
        (chart / "templates" / rel).write_text(text)
    (chart / "templates" / "_helpers.tpl").write_text(HELPERS)
    (chart / "templates" / "NOTES.txt").write_text(NOTES)
    for rel, text in files.items():
        (chart / rel).parent.mkdir(parents=True, exist_ok=True)
        (chart / rel).write_text(text)
    pod = base[("DaemonSet", "numaprobe")]["spec"]["template"]["spec"]
    tls_endpoint = tls[("PodMonitor", "numaprobe")]["spec"]["podMetricsEndpoints"][0]
    tls_volumes = {v["name"]: v for v in tls[("DaemonSet", "numaprobe")]["spec"]["template"]["spec"]["volumes"]}
    values_text = values_yaml(
        name, pod["containers"][0]["resources"], pod.get("priorityClassName", '""'), pod.get("tolerations", []),
        pod.get("nodeSelector", {}), config,
        {"webConfigSecret": tls_volumes["web"]["secret"]["secretName"],
         "certificateSecret": tls_volumes["tls"]["secret"]["secretName"],
         "scrapeSecret": tls_endpoint["basicAuth"]["password"]["name"],
         "serverName": tls_endpoint["tlsConfig"]["serverName"]})
    (chart / "values.yaml").write_text(values_text)
    (chart / "README.md").write_text(values_readme.readme(values_text, "numaprobe", tag))
    (chart / "Chart.yaml").write_text(yaml.safe_dump({
        "apiVersion": "v2", "name": "numaprobe",
        "description": "NUMA memory latency, bandwidth and core-to-core latency exporter for Prometheus",
        "type": "application", "version": tag, "appVersion": tag,
        "home": homepage, "sources": [homepage], "keywords": ["numa", "memory", "prometheus", "exporter"],
        "annotations": {"artifacthub.io/license": "Apache-2.0"},
    }, sort_keys=False))
    (chart / ".helmignore").write_text("# Nothing to leave out: every file is the chart's.\n")
    return chart


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir", help="directory to write the chart into (as <outdir>/numaprobe; replaced)")
    ap.add_argument("--image", required=True, metavar="REGISTRY/NAME:TAG",
                    help="the image the nodes pull; its tag is the chart's version (deploy/README.md)")
    ap.add_argument("--mixin", type=pathlib.Path, default=REPO / "grafana" / "mixin.libsonnet",
                    help="the mixin, or a jsonnet file overriding its _config (default grafana/mixin.libsonnet)")
    args = ap.parse_args(argv)
    print(write_chart(args.outdir, args.image, args.mixin))


if __name__ == "__main__":
    sys.exit(main())
