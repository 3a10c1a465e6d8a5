"""Artifact content is strict RFC 4648 base64: exactly what the standard library's strict decoder
accepts, less non-canonical encodings (backend.common.encoding)."""

from __future__ import annotations

import base64
import binascii
import random

import pytest

from backend.common.encoding import decode_base64


@pytest.mark.parametrize("size", [0, 1, 2, 3, 4, 5, 63, 64, 65, 1000, 65536])
def test_what_a_standard_encoder_writes_decodes_to_the_same_bytes(size: int) -> None:
    data = random.Random(size).randbytes(size)
    assert decode_base64(base64.b64encode(data).decode("ascii")) == data


@pytest.mark.parametrize(
    "text",
    [
        "YQ",  # padding left out
        "YQ=",
        "-_8=",  # the URL-safe alphabet
        "YW Jj",
        "YWJj\n",
        " YWJj",
        "YQ==YQ==",  # data after the padding
        "====",
        "YR==",  # unused bits that are not zero (not what any encoder writes)
        "YWJ=",
        "YQ\u00e9=",
        'YQ"=',
        "YQ\\=",
    ],
)
def test_anything_but_canonical_padded_standard_base64_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="base64"):
        decode_base64(text)


def test_it_accepts_nothing_the_standard_librarys_strict_decoder_refuses() -> None:
    rng = random.Random(7)
    alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=-_ \n\\"é'
    for _ in range(20_000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 13)))
        try:
            ours = decode_base64(text)
        except ValueError:
            continue
        assert binascii.a2b_base64(text, strict_mode=True) == ours, text
