"""The composer on real widgets: the send keys, files and images dropped or pasted in as removable
chips, the note about files outside the project folder, and the refusals of what cannot be sent."""

from __future__ import annotations

import random
from pathlib import Path

from PySide6.QtCore import QMimeData, Qt, QUrl
from PySide6.QtGui import QColor, QImage
from pytestqt.qtbot import QtBot

from contracts.images import MAX_IMAGE_BYTES, MAX_IMAGES_PER_MESSAGE, MAX_PROMPT_CHARS, ImageMediaType
from desktop.app.attachments_view import ThumbnailRow, encode_pasted_image
from desktop.app.composer import Composer, PromptEdit
from desktop.conversation.attachments import (
    AttachedFile,
    Attachments,
    ShownImage,
    prompt_problem,
    prompt_with_files,
)
from desktop.settings.send_key import SendKeyBox
from desktop.settings.store import SettingsStore
from tests.integration.runtime.test_runtime_images import IMAGE


def composer(qtbot: QtBot, folder: Path | None = None) -> Composer:
    made = Composer()
    qtbot.addWidget(made)
    made.set_folder(str(folder) if folder else None)
    made.show()
    return made


def drop_files(edit: PromptEdit, *paths: Path) -> None:
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path)) for path in paths])
    assert edit.canInsertFromMimeData(mime)
    edit.insertFromMimeData(mime)


def test_enter_sends_and_shift_enter_starts_a_new_line(qtbot: QtBot) -> None:
    edit = PromptEdit()
    qtbot.addWidget(edit)
    sent: list[bool] = []
    edit.submitted.connect(lambda: sent.append(True))
    qtbot.keyClicks(edit, "line one")
    qtbot.keyClick(edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    qtbot.keyClicks(edit, "line two")
    assert edit.toPlainText() == "line one\nline two"
    assert sent == []
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    assert sent == [True]
    qtbot.keyClick(edit, Qt.Key.Key_Enter, Qt.KeyboardModifier.KeypadModifier)  # the keypad's Enter
    assert sent == [True, True]
    assert "Enter to send" in edit.placeholderText()


def test_the_ctrl_enter_setting_makes_enter_a_new_line(qtbot: QtBot) -> None:
    box = composer(qtbot)
    box.set_send_key("ctrl_enter")
    sent: list[bool] = []
    box.edit.submitted.connect(lambda: sent.append(True))
    qtbot.keyClicks(box.edit, "a")
    qtbot.keyClick(box.edit, Qt.Key.Key_Return)
    qtbot.keyClicks(box.edit, "b")
    assert box.edit.toPlainText() == "a\nb"
    assert sent == []
    qtbot.keyClick(box.edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert sent == [True]
    assert "to send" in box.edit.placeholderText()
    assert "Enter to send" not in box.edit.placeholderText()


def test_settings_offers_the_send_key_and_keeps_it(qtbot: QtBot, tmp_path: Path) -> None:
    store = SettingsStore(tmp_path / "settings.json")
    assert store.send_key() == "enter"
    box = SendKeyBox(store)
    qtbot.addWidget(box)
    assert box.combo.accessibleName() == "Key that sends a message"
    box.combo.setCurrentIndex(box.combo.findData("ctrl_enter"))
    problems: list[object] = []
    assert box.save(store, problems.append)
    assert problems == []
    assert SettingsStore(tmp_path / "settings.json").send_key() == "ctrl_enter"
    assert SendKeyBox(store).send_key == "ctrl_enter"


def test_whitespace_is_not_something_to_send(qtbot: QtBot) -> None:
    box = composer(qtbot)
    changes: list[bool] = []
    box.changed.connect(lambda: changes.append(box.has_text()))
    qtbot.keyClicks(box.edit, "   ")
    assert not box.has_text()
    qtbot.keyClicks(box.edit, "x")
    assert box.has_text()
    assert changes[-1] is True


def test_a_dropped_file_becomes_a_chip_and_its_path_goes_with_the_prompt(
    qtbot: QtBot, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    notes = project / "notes.txt"
    notes.write_text("hello\n")
    box = composer(qtbot, project)
    drop_files(box.edit, notes)
    assert box.edit.toPlainText() == ""  # attached, not inserted as text
    assert [chip.label.text() for chip in box.attachments_view.chips] == ["notes.txt"]
    assert box.attachments_view.isVisible()
    assert not box.attachments_view.note.isVisible()  # inside the project folder
    qtbot.keyClicks(box.edit, "Summarise this")
    message = box.take_message()
    assert message.text == "Summarise this"
    assert message.file_paths == [notes.resolve()]
    assert prompt_with_files(message.text, message.file_paths) == (
        f"Summarise this\n\nAttached files:\n- {notes.resolve()}"
    )
    assert box.attachments_view.chips == []
    assert not box.attachments_view.isVisible()


def test_a_file_outside_the_project_folder_is_marked_and_the_policy_named(
    qtbot: QtBot, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    elsewhere = tmp_path / "secret.txt"
    elsewhere.write_text("x")
    box = composer(qtbot, project)
    drop_files(box.edit, elsewhere)
    assert box.attachments_view.note.isVisible()
    note = box.attachments_view.note.text()
    assert "Outside the project folder" in note
    assert "may not be allowed to read secret.txt" in note
    assert "policy decides" in note
    assert box.attachments_view.chips[0].label.text() == "⚠ secret.txt"


def test_a_chip_is_removed_with_its_button_which_is_named_for_screen_readers(
    qtbot: QtBot, tmp_path: Path
) -> None:
    first, second = tmp_path / "a.txt", tmp_path / "b.txt"
    first.write_text("a")
    second.write_text("b")
    box = composer(qtbot, tmp_path)
    drop_files(box.edit, first, second)
    chip = box.attachments_view.chips[0]
    assert chip.remove_button.accessibleName() == "Remove a.txt"
    qtbot.mouseClick(chip.remove_button, Qt.MouseButton.LeftButton)
    assert [attached.name for attached in box.attachments.files] == ["b.txt"]
    assert [chip.label.text() for chip in box.attachments_view.chips] == ["b.txt"]


def test_a_dropped_image_file_is_attached_as_an_image_with_a_thumbnail(qtbot: QtBot, tmp_path: Path) -> None:
    picture = tmp_path / "grey.png"
    picture.write_bytes(IMAGE)
    box = composer(qtbot, tmp_path)
    drop_files(box.edit, picture)
    assert box.attachments.files == []
    [attached] = box.attachments.images
    assert attached.image.media_type is ImageMediaType.PNG
    assert attached.image.name == "grey.png"
    chip = box.attachments_view.chips[0]
    assert chip.icon.pixmap() is not None
    assert not chip.icon.pixmap().isNull()
    message = box.take_message()
    assert message.image_contents == [attached.image]


def test_a_pasted_screenshot_is_attached_as_a_png(qtbot: QtBot) -> None:
    box = composer(qtbot)
    picture = QImage(40, 30, QImage.Format.Format_RGB32)
    picture.fill(QColor("#3366cc"))
    mime = QMimeData()
    mime.setImageData(picture)
    assert box.edit.canInsertFromMimeData(mime)
    box.edit.insertFromMimeData(mime)
    [attached] = box.attachments.images
    assert attached.image.media_type is ImageMediaType.PNG
    assert attached.name == "Pasted image"
    assert QImage.fromData(attached.data).size() == picture.size()


def test_a_large_screenshot_is_sent_as_jpeg_to_fit_the_limit() -> None:
    width, height = 1400, 1000
    pixels = random.Random(7).randbytes(width * height * 3)  # noise: PNG cannot compress it
    noisy = QImage(pixels, width, height, width * 3, QImage.Format.Format_RGB888).copy()
    encoded = encode_pasted_image(noisy)
    assert len(encoded) <= MAX_IMAGE_BYTES
    assert encoded.startswith(b"\xff\xd8\xff")
    assert QImage.fromData(encoded).size() == noisy.size()


def test_images_that_cannot_be_sent_are_refused_with_the_reason(qtbot: QtBot, tmp_path: Path) -> None:
    box = composer(qtbot, tmp_path)
    huge = tmp_path / "huge.png"
    huge.write_bytes(IMAGE + b"\0" * (5 * 1024 * 1024))
    drop_files(box.edit, huge)
    assert box.attachments.images == []
    assert box.attachments_view.error.isVisible()
    assert box.attachments_view.error.text() == "huge.png is 5.0 MB; images are limited to 3.75 MB."
    picture = tmp_path / "ok.png"
    picture.write_bytes(IMAGE)
    drop_files(box.edit, picture)
    assert not box.attachments_view.error.isVisible()  # the next good attachment clears the error
    for _ in range(MAX_IMAGES_PER_MESSAGE - 1):
        box.attach_image(IMAGE)
    box.attach_image(IMAGE)
    assert len(box.attachments.images) == MAX_IMAGES_PER_MESSAGE
    assert (
        box.attachments_view.error.text() == f"A message can carry at most {MAX_IMAGES_PER_MESSAGE} images."
    )
    folder = tmp_path / "folder"
    folder.mkdir()
    drop_files(box.edit, folder)
    assert box.attachments_view.error.text() == "folder is a folder; attach files one by one."


def test_a_message_that_could_not_be_sent_comes_back_with_its_attachments(
    qtbot: QtBot, tmp_path: Path
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("x")
    box = composer(qtbot, tmp_path)
    drop_files(box.edit, notes)
    box.attach_image(IMAGE)
    qtbot.keyClicks(box.edit, "look")
    message = box.take_message()
    box.restore(message)
    assert box.edit.toPlainText() == "look"
    assert len(box.attachments_view.chips) == 2


def test_a_prompt_over_the_runtime_limit_is_refused_with_both_figures() -> None:
    assert prompt_problem("x" * MAX_PROMPT_CHARS) is None
    assert prompt_problem("x" * (MAX_PROMPT_CHARS + 5)) == (
        f"Your message is {MAX_PROMPT_CHARS + 5:,} characters; the limit is {MAX_PROMPT_CHARS:,}."
    )


def test_sent_images_show_as_thumbnails_or_by_name_when_not_at_hand(qtbot: QtBot) -> None:
    row = ThumbnailRow([ShownImage("grey.png", "image/png", IMAGE), ShownImage("gone.png", "image/png")])
    qtbot.addWidget(row)
    shown, missing = row.labels
    assert not shown.pixmap().isNull()
    assert shown.accessibleName() == "Attached image grey.png"
    assert missing.text() == "🖼 gone.png (not available)"


def test_attachments_resolve_links_so_a_link_into_the_project_is_not_outside(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    target = tmp_path / "outside.txt"
    target.write_text("x")
    (project / "link.txt").symlink_to(target)
    attachments = Attachments(folder=project)
    attached = attachments.add_path(project / "link.txt")
    assert isinstance(attached, AttachedFile)
    assert attached.outside  # the file it points to is outside: that is what ReadFile would check


def test_switching_to_a_general_chat_marks_the_attached_files_as_outside(
    qtbot: QtBot, tmp_path: Path
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("x")
    box = composer(qtbot, tmp_path)
    drop_files(box.edit, notes)
    assert not box.attachments_view.note.isVisible()
    box.set_folder(None)
    assert box.attachments_view.note.isVisible()
    assert "no project folder" in box.attachments_view.note.text()
    assert [file.path for file in box.attachments.files] == [notes.resolve()]
