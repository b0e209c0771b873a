"""The one serde-error translator: the same pydantic failure in each framing the servers answer with."""

from __future__ import annotations

from typing import Any, Literal

import pytest
from pydantic import BaseModel, ValidationError

from pycodex.jsonrpc.errors import INVALID_PARAMS, InvalidParams
from pycodex.jsonrpc.serde import (
    Framing,
    bare_params_message,
    codex_error_message,
    request_params_message,
    validate,
)


class Inner(BaseModel):
    mode: Literal["read", "write", "append"]
    flag: bool = False


class Params(BaseModel):
    name: str
    count: int = 0
    inner: Inner | None = None


def _error(params: Any) -> ValidationError:
    with pytest.raises(ValidationError) as caught:
        Params.model_validate(params, strict=True)
    return caught.value


@pytest.mark.parametrize(
    ("params", "codex", "framed", "bare"),
    [
        ({}, "missing field `name`", "Invalid request: missing field `name`", "missing field `name`"),
        (
            {"name": 5},
            "invalid type: integer `5`, expected a string",
            "Invalid request: invalid type: integer `5` for `name`, expected a string",
            "invalid type: integer, expected a string",
        ),
        (
            {"name": "n", "inner": {"mode": "x"}},
            "unknown variant `x`, expected one of `read`, `write`, `append`",
            "Invalid request: unknown variant `x` for `inner.mode`, expected one of `read`, `write`, `append`",
            "unknown variant `x`, expected one of `read`, `write`, `append`",
        ),
        (
            {"name": "n", "inner": {"mode": "read", "flag": "yes"}},
            'invalid type: string "yes", expected a boolean',
            'Invalid request: invalid type: string "yes" for `inner.flag`, expected a boolean',
            'invalid type: string "yes", expected a boolean',
        ),
    ],
)
def test_one_problem_three_framings(params: Any, codex: str, framed: str, bare: str) -> None:
    error = _error(params)
    assert codex_error_message(error) == codex
    assert request_params_message(error, params) == framed
    assert bare_params_message(Params, error) == bare


def test_validate_raises_invalid_params_in_the_chosen_framing() -> None:
    with pytest.raises(InvalidParams) as request:
        validate(Params, {"name": "n", "count": "5"}, Framing.REQUEST)  # strict: no coercion
    assert request.value.wire_code == INVALID_PARAMS
    assert request.value.message == 'Invalid request: invalid type: string "5" for `count`, expected an integer'
    with pytest.raises(InvalidParams) as bare:
        validate(Params, None, Framing.BARE)
    assert bare.value.message == "invalid type: null, expected struct Params"
    assert validate(Params, {"name": "n", "count": "5"}, Framing.BARE).count == 5  # the exec-server is lax


def test_two_variants_read_as_serde_writes_them_on_the_exec_server() -> None:
    class Two(BaseModel):
        kind: Literal["read", "replace"]

    with pytest.raises(InvalidParams, match=r"^unknown variant `x`, expected `read` or `replace`$"):
        validate(Two, {"kind": "x"}, Framing.BARE)
