"""Reading ``deploy/aws/backend.yaml``: CloudFormation's YAML with its short-form tags (``!Ref``,
``!Sub``, ``!GetAtt``…) turned into the long form (``{"Ref": …}``, ``{"Fn::Sub": …}``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "deploy" / "aws" / "backend.yaml"


class _Loader(yaml.SafeLoader):
    pass


def _tag(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> dict[str, Any]:
    value: Any
    if isinstance(node, yaml.ScalarNode):
        value = loader.construct_scalar(node)
        if suffix == "GetAtt":
            value = value.split(".", 1)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    else:
        value = loader.construct_mapping(node, deep=True)  # type: ignore[arg-type]
    return {"Ref" if suffix == "Ref" else f"Fn::{suffix}": value}


_Loader.add_multi_constructor("!", _tag)


def load_template(path: Path = TEMPLATE) -> dict[str, Any]:
    document: dict[str, Any] = yaml.load(path.read_text(encoding="utf-8"), Loader=_Loader)
    return document
