"""Images in the thread: kept with the user message, counted at the documented per-image figure, sent
in each dialect, and named (not inlined) in the uploaded history; a history's image whose bytes are
not at hand reaches the model as a note rather than a broken block."""

from __future__ import annotations

from agent_runtime.agent_host.llm import anthropic, openai
from agent_runtime.agent_host.llm.conversation import UNAVAILABLE_IMAGE_TEXT, UserTurn, build_turns
from agent_runtime.agent_host.llm.errors import LlmRejected, LlmServerError
from agent_runtime.agent_host.llm.images import refuses_images
from agent_runtime.agent_host.thread import ConversationThread, TokenBudget
from agent_runtime.agent_host.thread.tokens import MESSAGE_OVERHEAD_TOKENS
from contracts.images import IMAGE_TOKEN_ESTIMATE, ImageContent
from tests.agent_runtime.agent_host.thread.support import Clock, WordTokenizer, ids
from tests.integration.runtime.test_runtime_images import IMAGE


def thread() -> ConversationThread:
    return ConversationThread("sess_1", WordTokenizer(), Clock(), ids(), budget=TokenBudget(100_000))


def test_an_image_is_kept_with_the_prompt_and_counted_at_the_per_image_estimate() -> None:
    conversation = thread()
    image = ImageContent.from_bytes(IMAGE, name="grey.png")
    message = conversation.add_user_message("what is this", task_id="task_1", images=[image, image])
    assert message.images == [image, image]
    assert message.token_count == MESSAGE_OVERHEAD_TOKENS + 3 + 2 * IMAGE_TOKEN_ESTIMATE
    assert conversation.thread_token_count == message.token_count
    # The checkpoint keeps the bytes; the history names the artifact instead.
    assert conversation.to_checkpoint_thread()[0].images == [image, image]
    history = conversation.to_session_history(workspace_id="ws_1", snapshot_after_task_id="task_1")
    assert [stored.data for stored in history.messages[0].images or []] == [None, None]
    assert history.messages[0].images == [image.stored(), image.stored()]


def test_both_dialects_put_the_images_before_the_text_of_their_turn() -> None:
    conversation = thread()
    image = ImageContent.from_bytes(IMAGE)
    conversation.add_user_message("describe", task_id="task_1", images=[image])
    turns = build_turns(conversation.messages)
    assert anthropic.turn_messages(turns[0], final=True)[0]["content"] == [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": image.data}},
        {"type": "text", "text": "describe"},
    ]
    assert openai.turn_messages(turns[0])[0]["content"] == [
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{image.data}"}},
        {"type": "text", "text": "describe"},
    ]


def test_an_image_known_only_by_its_artifact_becomes_a_note_for_the_model() -> None:
    conversation = thread()
    conversation.add_user_message("look", task_id="task_1", images=[ImageContent.from_bytes(IMAGE)])
    history = conversation.to_session_history(workspace_id="ws_1", snapshot_after_task_id="task_1")
    continued = ConversationThread.from_session_history(
        history, session_id="sess_2", tokenizer=WordTokenizer(), budget=TokenBudget(100_000)
    )
    turn = build_turns(continued.messages)[0]
    assert isinstance(turn, UserTurn)
    assert turn.images == []
    assert turn.texts == [f"look\n{UNAVAILABLE_IMAGE_TEXT}"]
    assert openai.turn_messages(turn)[0]["content"] == f"look\n{UNAVAILABLE_IMAGE_TEXT}"


def test_only_a_refusal_of_the_images_withdraws_them_from_the_thread() -> None:
    conversation = thread()
    image = ImageContent.from_bytes(IMAGE, name="grey.png")
    conversation.add_user_message("look", task_id="task_1", images=[image])
    sent = conversation.messages
    assert not refuses_images(LlmRejected("The prompt is too long for the model."), sent)
    assert not refuses_images(LlmServerError("image service overloaded"), sent)
    assert refuses_images(LlmRejected("llama3.1 is not a multimodal model"), sent)
    assert conversation.withdraw_images() == 1
    assert conversation.messages[0].images == [image.stored()]
    assert not refuses_images(LlmRejected("image input is not supported"), conversation.messages)
    assert conversation.withdraw_images() == 0
