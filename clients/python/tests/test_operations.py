"""Every operation of the OpenAPI document the server serves has a method on both clients, taking
each of its parameters and answering the schema's fields as a typed dict."""

from __future__ import annotations

import inspect
import re
import typing
from typing import Any, Dict, List, Tuple

import pytest

from agent_memory import AsyncClient, Client

from .conftest import Server


def snake(operation_id: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", operation_id).lower()


@pytest.fixture(scope="module")
def document(server: Server) -> Dict[str, Any]:
    with Client(server.url) as client:
        return client.get_open_api()


def operations(document: Dict[str, Any]) -> List[Tuple[str, Dict[str, Any]]]:
    return [(op["operationId"], op) for methods in document["paths"].values() for op in methods.values()]


def resolve(document: Dict[str, Any], schema: Dict[str, Any]) -> Dict[str, Any]:
    while "$ref" in schema:
        schema = document["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return schema


def test_every_operation_has_a_method_on_both_clients(document: Dict[str, Any]) -> None:
    ops = operations(document)
    assert len(ops) > 30
    missing = [f"{op_id} -> {snake(op_id)}" for op_id, _ in ops if not hasattr(Client, snake(op_id))]
    assert missing == [], "operations without a Client method"
    for op_id, _ in ops:
        method = getattr(AsyncClient, snake(op_id))
        assert inspect.iscoroutinefunction(method) or inspect.isasyncgenfunction(method), op_id


def test_every_method_takes_every_parameter_of_its_operation(document: Dict[str, Any]) -> None:
    lacking: List[str] = []
    for op_id, op in operations(document):
        for cls in (Client, AsyncClient):
            if not hasattr(cls, snake(op_id)):
                continue  # the test above names it
            params = list(inspect.signature(getattr(cls, snake(op_id))).parameters.values())[1:]
            names = {p.name for p in params}
            named = [p["name"] for p in op.get("parameters", []) if p["in"] == "query"]
            # async=true answers a job, not the operation's body: a method of its own sends it.
            if "async" in named:
                named.remove("async")
                if not hasattr(cls, f"{snake(op_id)}_async"):
                    lacking.append(f"{cls.__name__}.{snake(op_id)}_async: the async=true variant")
            body = op.get("requestBody", {}).get("content", {}).get("application/json")
            if body is not None:
                named += list(resolve(document, body["schema"]).get("properties", {}))
            lacking += [f"{cls.__name__}.{snake(op_id)}: {name}" for name in named if name not in names]
            # Path parameters come first, in order, under the name of what they identify.
            in_path = [p for p in op.get("parameters", []) if p["in"] == "path"]
            positional = [p for p in params if p.kind is p.POSITIONAL_OR_KEYWORD and p.name not in named]
            if len(positional) < len(in_path):
                lacking.append(f"{cls.__name__}.{snake(op_id)}: path parameter {in_path[0]['name']}")
    assert lacking == []


def success_schema(op: Dict[str, Any]) -> Tuple[str, Any]:
    for status, response in sorted(op["responses"].items()):
        if status.startswith("2"):
            content = response.get("content")
            if not content:
                return status, None
            media, body = next(iter(content.items()))
            return status, body["schema"] if "json" in media else None
    raise AssertionError(f"{op['operationId']} has no 2xx answer")


def strip_optional(hint: Any) -> Any:
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    return args[0] if typing.get_origin(hint) is typing.Union and len(args) == 1 else hint


def compare(document: Dict[str, Any], schema: Dict[str, Any], hint: Any, where: str, out: List[str]) -> None:
    """The differences between a JSON schema and the typed dict (or list of them) said to hold it."""
    schema = resolve(document, schema)
    hint = strip_optional(hint)
    if schema.get("type") == "array" and typing.get_origin(hint) in (list, List):
        compare(document, schema["items"], typing.get_args(hint)[0], f"{where}[]", out)
        return
    if "properties" not in schema:
        return
    if not typing.is_typeddict(hint):
        out.append(f"{where}: {hint!r} is not a TypedDict")
        return
    fields = typing.get_type_hints(hint)
    if set(fields) != set(schema["properties"]):
        out.append(f"{where} ({hint.__name__}): fields {sorted(fields)} != {sorted(schema['properties'])}")
    if set(hint.__required_keys__) != set(schema.get("required", [])):
        out.append(f"{where} ({hint.__name__}): required {sorted(hint.__required_keys__)}")
    for name, prop in schema["properties"].items():
        if name in fields:
            compare(document, prop, fields[name], f"{where}.{name}", out)


def test_every_answer_is_typed_as_the_document_says(document: Dict[str, Any]) -> None:
    differences: List[str] = []
    for op_id, op in operations(document):
        if op_id == "exportTenant" or not hasattr(Client, snake(op_id)):
            continue  # a stream of records (test_export.py); a missing method (the first test)
        status, schema = success_schema(op)
        returns = typing.get_type_hints(getattr(Client, snake(op_id)))["return"]
        if status == "204":
            assert returns is type(None), op_id
        elif schema is None:
            assert returns in (str, Dict[str, Any]), op_id
        else:
            compare(document, schema, returns, op_id, differences)
    assert differences == []
