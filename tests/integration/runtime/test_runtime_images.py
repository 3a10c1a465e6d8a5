"""Images attached to a prompt, end to end: the real runtime sends them to the scripted gateway as each
dialect's image content, keeps them with the user message, stores them as ``attachment`` artifacts and
names them (without their bytes) in the uploaded history; bad images are refused at ``StartTask``. A
checkpoint names each image and keeps its bytes once, in a file beside it, read back on resume."""

from __future__ import annotations

import base64
import hashlib
import json
import struct
import zlib
from pathlib import Path
from typing import Any

import pytest

from agent_runtime.agent_host.llm.conversation import UNAVAILABLE_IMAGE_TEXT
from agent_runtime.scripted_gateway import ScriptedGateway
from contracts.errors import ErrorCode
from contracts.images import MAX_IMAGE_BYTES, MAX_IMAGES_PER_MESSAGE, MAX_PROMPT_CHARS, attachment_name
from contracts.ipc.client_core import RpcCallError
from tests.integration.runtime.harness import Backend, Launch, Runtime, open_session, rpc_error


def png(width: int = 2, height: int = 2) -> bytes:
    """A real PNG of ``width`` × ``height`` grey pixels."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + b"\x80" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


IMAGE = png()
DATA = base64.b64encode(IMAGE).decode("ascii")


async def start_with_image(rt: Runtime, prompt: str, images: list[dict[str, Any]]) -> dict[str, Any]:
    params = {"sessionId": rt.session_id, "taskId": "task_1", "prompt": prompt, "images": images}
    await rt.call("StartTask", params)
    return await rt.task_end("task_1")


async def test_an_image_reaches_an_anthropic_gateway_as_an_image_block_and_the_history_names_it(
    launch: Launch, backend: Backend, workspace: Path
) -> None:
    async with ScriptedGateway([{"text": "A grey square."}]) as gateway:
        rt = await open_session(launch, gateway.url, backend, workspace)
        end = await start_with_image(
            rt, "What is in this picture?", [{"mediaType": "image/png", "data": DATA, "name": "grey.png"}]
        )
        gateway.assert_done()
        body = gateway.requests[0].body
        history = await backend.session_history(rt.workspace_id or "", rt.session_id or "")
        attachments = await backend.get_json(
            f"/workspaces/{rt.workspace_id}/artifacts",
            sessionId=rt.session_id or "",
            artifactType="attachment",
        )

    assert end["eventType"] == "task_completed", end
    assert body is not None
    user = body["messages"][0]
    assert user["role"] == "user"
    assert user["content"][0] == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": DATA},
    }
    assert user["content"][1]["type"] == "text"
    assert user["content"][1]["text"] == "What is in this picture?"

    # The history names the image's artifact instead of carrying its bytes.
    assert history is not None
    stored = history.messages[0].images
    assert stored is not None
    assert len(stored) == 1
    assert stored[0].data is None
    assert stored[0].name == "grey.png"
    assert stored[0].artifact_name == attachment_name(IMAGE, stored[0].media_type)
    names = [artifact["artifactName"] for artifact in attachments["artifacts"]]
    assert names == [stored[0].artifact_name]
    assert attachments["artifacts"][0]["contentType"] == "image/png"


async def test_an_image_reaches_an_openai_gateway_as_an_image_url_part(
    launch: Launch, backend: Backend, workspace: Path
) -> None:
    async with ScriptedGateway([{"text": "A grey square."}]) as gateway:
        rt = await open_session(launch, gateway.url, backend, workspace, extra={"LLM_GATEWAY_API": "openai"})
        end = await start_with_image(rt, "Describe it", [{"mediaType": "image/png", "data": DATA}])
        gateway.assert_done()
        body = gateway.requests[0].body

    assert end["eventType"] == "task_completed", end
    assert body is not None
    user = next(message for message in body["messages"] if message["role"] == "user")
    assert user["content"] == [
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{DATA}"}},
        {"type": "text", "text": "Describe it"},
    ]


@pytest.mark.parametrize(
    ("image", "field", "problem"),
    [
        ({"mediaType": "image/bmp", "data": DATA}, "images[0].mediaType", "must be one of"),
        ({"mediaType": "image/png", "data": "not base64!"}, "images[0].data", "is not valid base64"),
        ({"mediaType": "image/jpeg", "data": DATA}, "images[0].data", "is image/png data, not image/jpeg"),
        (
            {"mediaType": "image/png", "data": base64.b64encode(b"plain text").decode()},
            "images[0].data",
            "is not a PNG, JPEG, GIF or WebP image",
        ),
    ],
)
async def test_start_task_refuses_a_bad_image_naming_it(
    launch: Launch, backend: Backend, workspace: Path, image: dict[str, str], field: str, problem: str
) -> None:
    async with ScriptedGateway([]) as gateway:
        rt = await open_session(launch, gateway.url, backend, workspace)
        params = {"sessionId": rt.session_id, "taskId": "task_1", "prompt": "Look", "images": [image]}
        with pytest.raises(RpcCallError) as raised:
            await rt.call("StartTask", params)
        assert gateway.requests == []

    error = rpc_error(raised.value).data
    assert error is not None
    assert error.code is ErrorCode.INVALID_REQUEST, error
    assert error.details["field"] == field
    assert problem in error.details["problem"]


async def test_a_gateway_that_refuses_images_fails_the_task_and_the_conversation_goes_on_without_them(
    launch: Launch, backend: Backend, workspace: Path
) -> None:
    refusal = "This model does not support image input."
    script = [{"kind": "error", "status": 400, "message": refusal}, {"text": "Happy to help in words."}]
    async with ScriptedGateway(script) as gateway:
        rt = await open_session(launch, gateway.url, backend, workspace)
        end = await start_with_image(rt, "What is this?", [{"mediaType": "image/png", "data": DATA}])
        second = await rt.run_task("Describe it in words then", task_id="task_2")
        gateway.assert_done()
        retried = gateway.requests[1].body

    assert end["eventType"] == "task_failed", end
    assert refusal in json.dumps(end["payload"])
    # The next prompt is answered: the image is not sent again, the model reads a note in its place.
    assert second["eventType"] == "task_completed", second
    assert retried is not None
    # Both prompts make one user turn (no answer came between them), with no image block in it.
    first_turn = retried["messages"][0]["content"]
    assert [block["type"] for block in first_turn] == ["text", "text"]
    assert first_turn[0]["text"] == f"What is this?\n{UNAVAILABLE_IMAGE_TEXT}"
    assert first_turn[1]["text"] == "Describe it in words then"


async def test_the_largest_message_the_limits_allow_fits_the_wire(
    launch: Launch, backend: Backend, workspace: Path
) -> None:
    # MAX_IMAGES_PER_MESSAGE images of MAX_IMAGE_BYTES each and a prompt of MAX_PROMPT_CHARS
    # characters that JSON escapes (6 bytes each): one StartTask frame, one request to the gateway.
    big = base64.b64encode(IMAGE + b"\0" * (MAX_IMAGE_BYTES - len(IMAGE))).decode()
    images = [{"mediaType": "image/png", "data": big}] * MAX_IMAGES_PER_MESSAGE
    prompt = "\x01" * MAX_PROMPT_CHARS
    async with ScriptedGateway([{"text": "Seen."}]) as gateway:
        rt = await open_session(launch, gateway.url, backend, workspace)
        params = {"sessionId": rt.session_id, "taskId": "task_1", "prompt": prompt, "images": images}
        await rt.call("StartTask", params, timeout=60)
        end = await rt.task_end("task_1", timeout=60)
        body = gateway.requests[0].body

    assert end["eventType"] == "task_completed", end
    assert body is not None
    blocks = body["messages"][0]["content"]
    assert [block["type"] for block in blocks] == ["image"] * MAX_IMAGES_PER_MESSAGE + ["text"]


# ---------------------------------------------------------------- checkpoints

# An image of about a megabyte: inline, every checkpoint and journal record would carry 1.3 MB of it.
LARGE_IMAGE = IMAGE + b"\0" * 1_000_000
LARGE_DATA = base64.b64encode(LARGE_IMAGE).decode("ascii")


def image_files(data_dir: Path, session_id: str) -> Path:
    return data_dir / "checkpoints" / f"{session_id}.images"


async def checkpointed_with_an_image(
    launch: Launch, gateway_url: str, backend: Backend, workspace: Path
) -> str:
    """A session whose task_1 carried :data:`LARGE_IMAGE`, its runtime killed after the task; its id."""
    rt = await open_session(launch, gateway_url, backend, workspace)
    image = {"mediaType": "image/png", "data": LARGE_DATA, "name": "large.png"}
    assert (await start_with_image(rt, "What is this?", [image]))["eventType"] == "task_completed"
    await rt.kill()
    return rt.session_id or ""


async def test_an_image_is_kept_once_beside_the_checkpoint_and_sent_again_after_a_resume(
    launch: Launch, backend: Backend, workspace: Path, data_dir: Path
) -> None:
    async with ScriptedGateway([{"text": "A grey square."}, {"text": "Still grey."}]) as gateway:
        session_id = await checkpointed_with_an_image(launch, gateway.url, backend, workspace)
        checkpoints = data_dir / "checkpoints"
        # The checkpoint and its step journal name the image; its bytes are one file beside them.
        written = {path.name: path.stat().st_size for path in checkpoints.iterdir() if path.is_file()}
        assert written, "no checkpoint was written"
        assert all(size < 64 * 1024 for size in written.values()), written
        files = list(image_files(data_dir, session_id).iterdir())
        assert [(path.name, path.read_bytes()) for path in files] == [
            (hashlib.sha256(LARGE_IMAGE).hexdigest(), LARGE_IMAGE)
        ]

        second = await launch(gateway.url)
        await second.resume(session_id)
        end = await second.run_task("Is it still there?", task_id="task_2")
        gateway.assert_done()
        resent = gateway.requests[1].body
        await second.shutdown()
        assert await second.wait_exit(timeout=30) == 0

    assert end["eventType"] == "task_completed", end
    assert resent is not None
    assert resent["messages"][0]["content"][0] == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": LARGE_DATA},
    }
    # A clean end removes the checkpoint, and its image files with it.
    assert not (checkpoints / f"{session_id}.json").exists()
    assert not image_files(data_dir, session_id).exists()


async def test_a_missing_image_file_resumes_the_session_with_a_note_in_the_images_place(
    launch: Launch, backend: Backend, workspace: Path, data_dir: Path
) -> None:
    async with ScriptedGateway([{"text": "A grey square."}, {"text": "I can no longer see it."}]) as gateway:
        session_id = await checkpointed_with_an_image(launch, gateway.url, backend, workspace)
        for path in image_files(data_dir, session_id).iterdir():
            path.unlink()

        second = await launch(gateway.url)
        resumed = await second.resume(session_id)
        end = await second.run_task("Is it still there?", task_id="task_2")
        gateway.assert_done()
        resent = gateway.requests[1].body

    assert resumed["sessionStatus"] == "SESSION_RUNNING"
    assert end["eventType"] == "task_completed", end
    assert resent is not None
    first_turn = resent["messages"][0]["content"]
    assert [block["type"] for block in first_turn] == ["text"]
    assert first_turn[0]["text"] == f"What is this?\n{UNAVAILABLE_IMAGE_TEXT}"
    assert "Traceback" not in second.output_text()
