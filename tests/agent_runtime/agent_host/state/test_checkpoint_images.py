"""A thread's images are kept once, in files beside the checkpoint: the checkpoint and its step journal
stay small, a crash never leaves a checkpoint naming a file that is not there, a load reads them back,
and a missing one costs only that image."""

from __future__ import annotations

import hashlib
import logging
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from agent_runtime.agent_host.state import CheckpointStore
from agent_runtime.agent_host.state.journal import JOURNAL_SUFFIX
from contracts.enums import Role
from contracts.images import ImageContent
from contracts.messages import ConversationMessage
from contracts.session_runtime import SessionRuntimeSnapshot
from tests.agent_runtime.agent_host.state.test_step_journal import golden, with_tool_call

PNG_HEAD = b"\x89PNG\r\n\x1a\n"


def picture(fill: bytes, size: int = 600_000) -> bytes:
    """Bytes the image checks take for a PNG (its signature), ``size`` long."""
    return PNG_HEAD + fill * (size - len(PNG_HEAD))


@pytest.fixture
def store(tmp_path: Path) -> CheckpointStore:
    return CheckpointStore(tmp_path / "checkpoints")


def with_prompt(snapshot: SessionRuntimeSnapshot, number: int, *images: bytes) -> SessionRuntimeSnapshot:
    message = ConversationMessage(
        message_id=f"msg_prompt_{number}",
        session_id=snapshot.session_id,
        task_id="task_1",
        step_id=f"step_prompt_{number}",
        role=Role.USER,
        content="What is in these pictures?",
        timestamp=datetime(2026, 11, 25, 16, number, tzinfo=UTC),
        images=[ImageContent.from_bytes(data, name=f"picture-{i}.png") for i, data in enumerate(images)],
    )
    transcript = snapshot.transcript.model_copy(update={"messages": [*snapshot.transcript.messages, message]})
    return snapshot.model_copy(update={"transcript": transcript})


def image_dir(store: CheckpointStore, snapshot: SessionRuntimeSnapshot) -> Path:
    return store.directory / f"{snapshot.session_id}.images"


def test_the_checkpoint_names_each_image_and_its_bytes_are_one_file_read_back_on_load(
    store: CheckpointStore,
) -> None:
    one, two = picture(b"a"), picture(b"b")
    snapshot = with_prompt(golden(), 1, one, two, one)
    written = store.write(snapshot)

    assert len(written) < 16 * 1024
    assert sorted(os.listdir(image_dir(store, snapshot))) == sorted(
        hashlib.sha256(data).hexdigest() for data in (one, two)
    )
    stored = SessionRuntimeSnapshot.model_validate_json(written).transcript.messages[-1].images
    assert stored is not None
    assert [(image.data, image.sha256, image.name) for image in stored] == [
        (None, hashlib.sha256(one).hexdigest(), "picture-0.png"),
        (None, hashlib.sha256(two).hexdigest(), "picture-1.png"),
        (None, hashlib.sha256(one).hexdigest(), "picture-2.png"),
    ]
    # A new process after a crash gets the thread back with the images' bytes.
    assert CheckpointStore(store.directory).load(snapshot.session_id) == snapshot


def test_step_journal_records_after_an_image_stay_small_and_restore_it(store: CheckpointStore) -> None:
    base = with_prompt(golden(), 1, picture(b"c"))
    store.write(base)
    state = base
    for number in range(1, 6):
        state = with_tool_call(state, number)
        assert store.write_step(state) is False
    journal = store.directory / f"{base.session_id}{JOURNAL_SUFFIX}"
    before = journal.stat().st_size

    later = with_prompt(state, 2, picture(b"d"))
    assert store.write_step(later) is False  # a record, naming the new image written just before it
    # the record repeats the messages since the checkpoint, the new prompt among them: not its image
    assert journal.stat().st_size - before < 16 * 1024
    assert CheckpointStore(store.directory).load(base.session_id) == later


def test_an_image_that_cannot_be_written_fails_the_write_and_the_previous_checkpoint_stands(
    store: CheckpointStore,
) -> None:
    base = golden()
    store.write(base)
    with_image = with_prompt(base, 1, picture(b"e"))
    image_dir(store, base).write_bytes(b"")  # a file where the folder of image files goes

    with pytest.raises(NotADirectoryError):
        store.write(with_image)
    with pytest.raises(NotADirectoryError):
        store.write_step(with_image)
    assert CheckpointStore(store.directory).load(base.session_id) == base

    # Once the disk lets it, the image is written (not taken as done by the failed attempts).
    image_dir(store, base).unlink()
    store.write(with_image)
    assert CheckpointStore(store.directory).load(base.session_id) == with_image


def test_a_missing_image_file_leaves_that_image_unavailable_and_the_rest_restored(
    store: CheckpointStore, caplog: pytest.LogCaptureFixture
) -> None:
    kept, lost = picture(b"f"), picture(b"g")
    snapshot = with_prompt(golden(), 1, kept, lost)
    store.write(snapshot)
    (image_dir(store, snapshot) / hashlib.sha256(lost).hexdigest()).unlink()

    with caplog.at_level(logging.WARNING):
        loaded = CheckpointStore(store.directory).load(snapshot.session_id)

    assert isinstance(loaded, SessionRuntimeSnapshot)
    images = loaded.transcript.messages[-1].images
    assert images is not None
    assert images[0].raw_bytes() == kept
    assert images[1].data is None
    assert images[1].artifact_name == f"image-{hashlib.sha256(lost).hexdigest()}.png"
    assert images[1].name == "picture-1.png"
    assert "an image of the thread is no longer available: its file is missing" in caplog.text


def test_a_damaged_image_file_is_not_sent_as_the_image(store: CheckpointStore) -> None:
    data = picture(b"h")
    snapshot = with_prompt(golden(), 1, data)
    store.write(snapshot)
    (image_dir(store, snapshot) / hashlib.sha256(data).hexdigest()).write_bytes(picture(b"x"))

    loaded = CheckpointStore(store.directory).load(snapshot.session_id)

    assert isinstance(loaded, SessionRuntimeSnapshot)
    images = loaded.transcript.messages[-1].images
    assert images is not None
    assert images[0].data is None


def test_deleting_the_checkpoint_deletes_its_image_files(store: CheckpointStore) -> None:
    snapshot = with_prompt(golden(), 1, picture(b"i"))
    store.write(snapshot)
    assert image_dir(store, snapshot).is_dir()
    store.delete(snapshot.session_id)
    assert os.listdir(store.directory) == []
