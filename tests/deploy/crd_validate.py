# SPDX-License-Identifier: Apache-2.0
"""Validates prometheus-operator objects (PodMonitor, PrometheusRule, ...) in
rendered manifests against the CRDs' schemas, strictly: an unknown field is an
error, as with `kubectl apply --validate=strict`.

Run by tests/deploy/test_kubernetes.py with the tools venv's Python (see
.ci/install-deps), which has cloudcoil-models-prometheus-operator: pydantic
models generated from the operator's CRDs. Their JSON schema carries the CRDs'
field names, types and enums; pydantic itself ignores unknown fields, so every
object schema without an explicit additionalProperties is closed here.

    python crd_validate.py --dump-schemas schemas.json   # once (imports the models: slow)
    python crd_validate.py --schemas schemas.json rendered.yaml...
    python crd_validate.py rendered.yaml...               # both in one go

Exit 1 and one ERROR line per problem. Objects of other API groups are skipped
(kubernetes-validate checks those); an object of this group whose kind has no
schema is an error.
"""
import argparse
import json
import sys

import jsonschema
import yaml

GROUP = "monitoring.coreos.com"
KINDS = {"monitoring.coreos.com/v1": ("PodMonitor", "ServiceMonitor", "PrometheusRule", "Probe",
                                      "Prometheus", "Alertmanager", "ThanosRuler"),
         "monitoring.coreos.com/v1alpha1": ("AlertmanagerConfig", "ScrapeConfig", "PrometheusAgent")}


def close_objects(node):
    """additionalProperties: false on every object schema listing properties."""
    if isinstance(node, dict):
        if "properties" in node and "additionalProperties" not in node:
            node["additionalProperties"] = False
        for value in node.values():
            close_objects(value)
    elif isinstance(node, list):
        for value in node:
            close_objects(value)
    return node


def strict_schemas():
    """{"<apiVersion> <kind>": closed JSON schema} from the generated models."""
    from cloudcoil.models.prometheus_operator import v1, v1alpha1
    modules = {"monitoring.coreos.com/v1": v1, "monitoring.coreos.com/v1alpha1": v1alpha1}
    schemas = {}
    for api, kinds in KINDS.items():
        for kind in kinds:
            model = getattr(modules[api], kind, None)
            if model is not None:
                schemas[f"{api} {kind}"] = close_objects(model.model_json_schema(by_alias=True, mode="validation"))
    return schemas


def validate(docs, schemas):
    errors, checked = [], []
    for doc in docs:
        if not isinstance(doc, dict):
            continue
        api = doc.get("apiVersion", "")
        if not api.startswith(GROUP + "/"):
            continue
        what = f"{doc.get('kind')}/{doc.get('metadata', {}).get('name')}"
        schema = schemas.get(f"{api} {doc.get('kind')}")
        if schema is None:
            errors.append(f"{what}: no schema for {api} {doc.get('kind')}")
            continue
        validator = jsonschema.Draft202012Validator(schema)
        found = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
        for e in found:
            # Optional fields are anyOf [schema, null]: report the deepest
            # branch, not the whole list that failed to match.
            e = jsonschema.exceptions.best_match([e])
            path = ".".join(str(p) for p in e.absolute_path) or "<root>"
            errors.append(f"{what}: {path}: {e.message[:300]}")
        if not found:
            checked.append(what)
    return checked, errors


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dump-schemas", metavar="FILE", help="write the closed schemas as JSON and exit")
    ap.add_argument("--schemas", metavar="FILE", help="use schemas written by --dump-schemas")
    ap.add_argument("manifests", nargs="*")
    args = ap.parse_args(argv[1:])
    if args.dump_schemas:
        with open(args.dump_schemas, "w") as f:
            json.dump(strict_schemas(), f)
        return 0
    if args.schemas:
        with open(args.schemas) as f:
            schemas = json.load(f)
    else:
        schemas = strict_schemas()
    docs = []
    for path in args.manifests:
        with open(path) as f:
            docs += list(yaml.safe_load_all(f))
    checked, errors = validate(docs, schemas)
    for what in checked:
        print(f"valid: {what}")
    for line in errors:
        print(f"ERROR {line}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
