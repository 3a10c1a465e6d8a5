"""What a conversation does with the images of its messages, without Qt: a sent image keeps its bytes
when the conversation is drawn again from its history (which names the image instead of holding it),
and an opened history's images get their bytes once fetched from their artifacts."""

from __future__ import annotations

from contracts.images import ImageContent
from desktop.conversation.attachments import ShownImage
from desktop.conversation.items import UserMessage
from desktop.conversation.state import ConversationState
from tests.integration.runtime.test_runtime_images import IMAGE


def history_message(image: ImageContent) -> dict[str, object]:
    return {"role": "user", "content": "look", "taskId": "task_1", "images": [image.stored().to_wire()]}


def shown(state: ConversationState) -> list[ShownImage]:
    return [image for item in state.items if isinstance(item, UserMessage) for image in item.images]


def test_a_sent_image_keeps_its_bytes_when_the_view_is_drawn_from_the_history() -> None:
    image = ImageContent.from_bytes(IMAGE, name="grey.png")
    state = ConversationState()
    state.add_user_message("look", None, images=[ShownImage.of_content(image)])
    state.load_history([history_message(image)])
    [again] = shown(state)
    assert again.data == IMAGE
    assert again.name == "grey.png"
    assert state.missing_images() == set()


def test_an_opened_history_shows_its_images_once_fetched() -> None:
    image = ImageContent.from_bytes(IMAGE, name="grey.png")
    state = ConversationState()
    state.load_history([history_message(image)])
    [missing] = shown(state)
    assert missing.data is None
    name = image.stored().artifact_name
    assert state.missing_images() == {name}
    state.fill_images({"another.png": b"x"})
    assert shown(state)[0].data is None
    assert name is not None
    state.fill_images({name: IMAGE})
    assert shown(state)[0].data == IMAGE
    assert state.missing_images() == set()


def test_a_history_image_that_is_not_an_image_record_is_skipped() -> None:
    state = ConversationState()
    state.load_history([{"role": "user", "content": "look", "images": ["junk", {"name": "no type"}]}])
    assert shown(state) == []
