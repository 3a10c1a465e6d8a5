"""Images in a prompt (contracts.images): what is accepted, and the clear error for what is not."""

from __future__ import annotations

import base64
import hashlib

import pytest
from pydantic import ValidationError

from contracts.errors import ErrorCode
from contracts.images import (
    MAX_IMAGE_BYTES,
    MAX_IMAGES_PER_MESSAGE,
    MAX_PROMPT_CHARS,
    ImageContent,
    ImageMediaType,
    ImageRejected,
    attachment_name,
)
from contracts.methods import StartTaskParams
from contracts.validation import invalid_request, validate_json_value
from tests.integration.runtime.test_runtime_images import IMAGE, png

DATA = base64.b64encode(IMAGE).decode("ascii")
GIF = b"GIF89a" + b"\x01\x00\x01\x00\x00\x00\x00;"
WEBP = b"RIFF\x1a\x00\x00\x00WEBPVP8L" + b"\x00" * 14
JPEG = b"\xff\xd8\xff\xe0" + b"\x00" * 16


def start_task(images: list[object], prompt: str = "Look") -> StartTaskParams:
    return validate_json_value(
        StartTaskParams, {"sessionId": "s", "taskId": "t", "prompt": prompt, "images": images}
    )


def problem(images: list[object], prompt: str = "Look") -> tuple[str, str]:
    with pytest.raises(ValidationError) as raised:
        start_task(images, prompt)
    shape = invalid_request(raised.value)
    assert shape.code is ErrorCode.INVALID_REQUEST
    return shape.details["field"], shape.details["problem"]


@pytest.mark.parametrize(
    ("data", "media_type"),
    [
        (IMAGE, ImageMediaType.PNG),
        (JPEG, ImageMediaType.JPEG),
        (GIF, ImageMediaType.GIF),
        (WEBP, ImageMediaType.WEBP),
    ],
)
def test_each_accepted_format_is_read_from_its_bytes(data: bytes, media_type: ImageMediaType) -> None:
    image = ImageContent.from_bytes(data, name="picture")
    assert image.media_type is media_type
    assert image.raw_bytes() == data
    assert start_task([image.to_wire()]).images == [image]


def test_a_bad_media_type_is_refused_naming_the_accepted_ones() -> None:
    field, text = problem([{"mediaType": "image/bmp", "data": DATA}])
    assert field == "images[0].mediaType"
    assert "'image/png', 'image/jpeg', 'image/gif' or 'image/webp'" in text


def test_bad_base64_is_refused() -> None:
    assert problem([{"mediaType": "image/png", "data": "iVBOR w0K!"}]) == (
        "images[0].data",
        "is not valid base64",
    )


def test_bytes_that_are_not_the_declared_image_are_refused() -> None:
    assert problem([{"mediaType": "image/gif", "data": DATA}]) == (
        "images[0].data",
        "is image/png data, not image/gif",
    )
    text = base64.b64encode(b"just some text").decode()
    assert problem([{"mediaType": "image/png", "data": text}])[1] == "is not a PNG, JPEG, GIF or WebP image"


def test_an_image_over_the_limit_is_refused_with_the_limit() -> None:
    big = base64.b64encode(png() + b"\x00" * MAX_IMAGE_BYTES).decode()
    field, text = problem([{"mediaType": "image/png", "data": big}])
    assert field == "images[0].data"
    assert "3.75 MB" in text
    assert "FILE_TOO_LARGE" in text
    with pytest.raises(ImageRejected) as raised:
        ImageContent.from_bytes(IMAGE + b"\x00" * (6 * 1024 * 1024 - len(IMAGE)), name="shot.png")
    assert raised.value.code is ErrorCode.FILE_TOO_LARGE
    assert raised.value.shape.message == "shot.png is 6 MB; images are limited to 3.75 MB."
    # Just over: rounded to MB both would read the same, so the bytes are shown.
    with pytest.raises(ImageRejected) as raised:
        ImageContent.from_bytes(IMAGE + b"\x00" * (MAX_IMAGE_BYTES + 1 - len(IMAGE)), name="shot.png")
    assert raised.value.shape.message == "shot.png is 3,932,161 bytes; images are limited to 3,932,160 bytes."


def test_too_many_images_or_too_long_a_prompt_are_refused() -> None:
    image = {"mediaType": "image/png", "data": DATA}
    assert problem([image] * (MAX_IMAGES_PER_MESSAGE + 1)) == (
        "images",
        f"must have at most {MAX_IMAGES_PER_MESSAGE} items",
    )
    assert problem([], prompt="x" * (MAX_PROMPT_CHARS + 1)) == (
        "prompt",
        f"must be at most {MAX_PROMPT_CHARS} characters long",
    )


def test_a_new_prompt_carries_the_bytes_and_a_history_only_the_artifact_name() -> None:
    image = ImageContent.from_bytes(IMAGE, name="grey.png")
    stored = image.stored()
    assert stored.data is None
    assert stored.artifact_name == attachment_name(IMAGE, ImageMediaType.PNG)
    assert stored.artifact_name.endswith(".png")
    field, text = problem([stored.to_wire()])
    assert field == "(root)"
    assert "carry their data" in text


def test_a_checkpoint_names_an_image_by_its_digest_and_a_history_by_the_same_artifact() -> None:
    digest = hashlib.sha256(IMAGE).hexdigest()
    referenced = ImageContent(media_type=ImageMediaType.PNG, sha256=digest, name="grey.png")
    assert referenced.stored() == ImageContent.from_bytes(IMAGE, name="grey.png").stored()
    with pytest.raises(ValidationError, match="one of its data, its artifactName or its sha256"):
        ImageContent(media_type=ImageMediaType.PNG, sha256=digest, data=DATA)
    with pytest.raises(ValidationError, match="sha256"):
        ImageContent(media_type=ImageMediaType.PNG, sha256="not-a-digest")
    # a new prompt carries its bytes, never a reference to a file of the runtime's
    field, text = problem([referenced.to_wire()])
    assert field == "(root)"
    assert "carry their data" in text
