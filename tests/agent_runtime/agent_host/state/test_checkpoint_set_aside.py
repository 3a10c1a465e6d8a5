"""Checkpoints that parse but cannot be resumed, and where the store keeps what it could not use
(seed 000 §9.7: corrupt files are reported, and kept aside for diagnosis rather than deleted)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agent_runtime.agent_host.state import CheckpointCorrupt, CheckpointStore
from contracts.checkpoint import checkpoint_problem
from tests.agent_runtime.agent_host.state.samples import sample_checkpoint

Document = dict[str, Any]


@pytest.fixture
def store(tmp_path: Path) -> CheckpointStore:
    directory = tmp_path / "checkpoints"
    directory.mkdir()
    return CheckpointStore(directory)


def _steps(count: int, limit: int) -> Callable[[Document], None]:
    def edit(document: Document) -> None:
        document["task"] = {**document["task"], "stepCount": count, "maxSteps": limit}

    return edit


def _field(name: str, value: str) -> Callable[[Document], None]:
    def edit(document: Document) -> None:
        document[name] = value

    return edit


# Seed 000 §9.2 (a task's steps stay within its maxSteps) and §9.5 (the cursor and the bundle version
# go back to the Session Service, whose resume request takes identifiers of at most 128 characters).
UNRESUMABLE: dict[str, tuple[Callable[[Document], None], str]] = {
    "stepCount above maxSteps": (_steps(41, 40), "maxSteps"),
    "policyBundleVersion of 129 characters": (
        _field("policyBundleVersion", "v" * 129),
        "policyBundleVersion",
    ),
    "policyBundleVersion with a control character": (
        _field("policyBundleVersion", "2026\n.1"),
        "policyBundleVersion",
    ),
    "stepCursor of 129 characters": (_field("stepCursor", "s" * 129), "stepCursor"),
}


@pytest.mark.parametrize(("edit", "named"), UNRESUMABLE.values(), ids=list(UNRESUMABLE))
def test_a_checkpoint_that_parses_but_cannot_be_resumed_is_corrupt(
    store: CheckpointStore, edit: Callable[[Document], None], named: str
) -> None:
    document = sample_checkpoint().to_wire()
    edit(document)
    content = json.dumps(document).encode()
    store.path_for("sess_789").write_bytes(content)
    with pytest.raises(CheckpointCorrupt) as caught:
        store.load("sess_789")
    assert named in caught.value.reason
    assert caught.value.workspace_id == "ws_456"  # the event to the desktop needs it
    assert caught.value.moved_to is not None
    assert (store.directory / caught.value.moved_to).read_bytes() == content
    assert store.load("sess_789") is None


@pytest.mark.parametrize(
    "edit",
    [_steps(40, 40), _field("policyBundleVersion", "v" * 128), _field("stepCursor", "s" * 128)],
    ids=["stepCount equal to maxSteps", "128-character version", "128-character cursor"],
)
def test_the_limits_themselves_are_resumable(
    store: CheckpointStore, edit: Callable[[Document], None]
) -> None:
    document = sample_checkpoint().to_wire()
    edit(document)
    store.path_for("sess_789").write_bytes(json.dumps(document).encode())
    loaded = store.load("sess_789")
    assert loaded is not None
    assert checkpoint_problem(loaded) is None


def test_each_corruption_is_kept_under_its_own_name_and_never_listed_as_a_checkpoint(
    store: CheckpointStore,
) -> None:
    kept = []
    for content in (b"first", b"second", b"third"):
        store.path_for("sess_789").write_bytes(content)
        with pytest.raises(CheckpointCorrupt) as caught:
            store.load("sess_789")
        assert caught.value.moved_to is not None
        kept.append(caught.value.moved_to)
    assert len(set(kept)) == 3
    assert [(store.directory / name).read_bytes() for name in kept] == [b"first", b"second", b"third"]
    assert store.session_ids() == []


def test_a_checkpoint_found_inconsistent_later_is_set_aside_on_request(store: CheckpointStore) -> None:
    """The host finds some problems only when it rebuilds the session (the thread's order, IDs the
    backend disagrees with); it hands them back to the store, which treats the file as :meth:`load`
    treats a corrupt one."""
    checkpoint = sample_checkpoint()
    store.write(checkpoint)
    before = store.path_for("sess_789").read_bytes()
    corrupt = store.set_aside("sess_789", "its thread is inconsistent", workspace_id="ws_456")
    assert corrupt.reason == "its thread is inconsistent"
    assert corrupt.session_id == "sess_789"
    assert corrupt.moved_to is not None
    assert (store.directory / corrupt.moved_to).read_bytes() == before
    assert store.load("sess_789") is None
    # Nothing left to move: reported all the same, with nothing kept.
    assert store.set_aside("sess_789", "again").moved_to is None
