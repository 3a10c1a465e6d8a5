"""The attachments of the message being written, as removable chips above the prompt, and the images
of a sent message as thumbnails in the conversation. The decisions live in
:mod:`desktop.conversation.attachments`; these widgets only draw them."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, Qt, Signal
from PySide6.QtGui import QImage, QImageWriter, QPixmap
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QToolButton, QVBoxLayout, QWidget

from contracts.images import MAX_IMAGE_BYTES
from desktop.conversation.attachments import AttachedFile, AttachedImage, Attachments, ShownImage
from desktop.i18n import translate

__all__ = ["AttachmentChip", "AttachmentsView", "ThumbnailRow", "encode_pasted_image", "thumbnail"]

CHIP_THUMBNAIL = 28
MESSAGE_THUMBNAIL = 96


def thumbnail(data: bytes, size: int) -> QPixmap | None:
    """The image scaled to fit ``size`` × ``size``; None when Qt cannot decode it."""
    image = QImage.fromData(data)
    if image.isNull():
        return None
    scaled = image.scaled(
        size, size, Qt.AspectRatioMode.KeepAspectRatio, Qt.TransformationMode.SmoothTransformation
    )
    return QPixmap.fromImage(scaled)


def encode_pasted_image(image: QImage) -> bytes:
    """A pasted picture (a screenshot has no file) as PNG, or as JPEG when the PNG would be over the
    size limit: photos and large screenshots compress far better so, and still read well."""
    png = _encode(image, b"PNG", -1)
    if len(png) <= MAX_IMAGE_BYTES:
        return png
    return _encode(image.convertToFormat(QImage.Format.Format_RGB888), b"JPEG", 85)


def _encode(image: QImage, kind: bytes, quality: int) -> bytes:
    array = QByteArray()
    buffer = QBuffer(array)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    writer = QImageWriter(buffer, QByteArray(kind))
    writer.setQuality(quality)
    writer.write(image)
    buffer.close()
    return bytes(array.data())


class AttachmentChip(QFrame):
    """One attached file or image: its thumbnail or a file mark, its name, and a remove button."""

    removed = Signal(object)

    def __init__(self, attached: AttachedFile | AttachedImage, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.attached = attached
        self.setObjectName("attachmentChip")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(6, 2, 2, 2)
        layout.setSpacing(4)
        self.icon = QLabel()
        pixmap = thumbnail(attached.data, CHIP_THUMBNAIL) if isinstance(attached, AttachedImage) else None
        if pixmap is not None:
            self.icon.setPixmap(pixmap)
        else:
            self.icon.setText("📄")
        self.label = QLabel(attached.name)
        if isinstance(attached, AttachedFile):
            self.label.setToolTip(str(attached.path))
            if attached.outside:
                self.label.setText(f"⚠ {attached.name}")
        self.remove_button = QToolButton()
        self.remove_button.setText("✕")
        self.remove_button.setAutoRaise(True)
        self.remove_button.setToolTip(translate("Composer", "Remove this attachment"))
        self.remove_button.setAccessibleName(
            translate("Composer", "Remove {name}").format(name=attached.name)
        )
        self.remove_button.clicked.connect(lambda: self.removed.emit(self.attached))
        layout.addWidget(self.icon)
        layout.addWidget(self.label)
        layout.addWidget(self.remove_button)


class AttachmentsView(QWidget):
    """The chips of :class:`Attachments`, a note about files outside the project folder, and the
    last problem with something the user tried to attach. Hidden while there is nothing to show."""

    removed = Signal(object)
    """A chip's remove button: the :class:`AttachedFile` or :class:`AttachedImage` to drop."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.chips: list[AttachmentChip] = []
        self._row = QHBoxLayout()
        self._row.setContentsMargins(0, 0, 0, 0)
        self._row.addStretch(1)
        self.note = QLabel()
        self.note.setObjectName("attachmentNote")
        self.note.setWordWrap(True)
        self.error = QLabel()
        self.error.setObjectName("attachmentError")
        self.error.setWordWrap(True)
        self.error.setStyleSheet("color: #c62828;")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 4)
        layout.setSpacing(2)
        layout.addLayout(self._row)
        layout.addWidget(self.note)
        layout.addWidget(self.error)
        self.show_attachments(Attachments())

    def show_attachments(self, attachments: Attachments) -> None:
        for chip in self.chips:
            self._row.removeWidget(chip)
            chip.deleteLater()
        self.chips = []
        shown: list[AttachedFile | AttachedImage] = [*attachments.images, *attachments.files]
        for attached in shown:
            chip = AttachmentChip(attached, self)
            chip.removed.connect(self.removed.emit)
            self._row.insertWidget(self._row.count() - 1, chip)
            self.chips.append(chip)
        outside = attachments.outside
        if outside:
            names = ", ".join(file.name for file in outside)
            if attachments.folder is None:
                text = translate(
                    "Composer",
                    "This conversation has no project folder: the agent may not be allowed to read {names}"
                    " (your policy decides).",
                )
            else:
                text = translate(
                    "Composer",
                    "Outside the project folder: the agent may not be allowed to read {names}"
                    " (your policy decides).",
                )
            self.note.setText(text.format(names=names))
        self.note.setVisible(bool(outside))
        self._update_visibility()

    def show_error(self, text: str | None) -> None:
        self.error.setText(text or "")
        self._update_visibility()

    def _update_visibility(self) -> None:
        self.error.setVisible(bool(self.error.text()))
        self.setVisible(bool(self.chips) or bool(self.error.text()))


class ThumbnailRow(QWidget):
    """The images of a sent message, as thumbnails; an image whose bytes are not here (yet) shows its
    name instead."""

    def __init__(self, images: Sequence[ShownImage] = (), parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.labels: list[QLabel] = []
        self._layout = QHBoxLayout(self)
        self._layout.setContentsMargins(0, 4, 0, 0)
        self._layout.addStretch(1)
        self._shown: tuple[ShownImage, ...] = ()
        self.show_images(images)

    def show_images(self, images: Sequence[ShownImage]) -> None:
        if tuple(images) == self._shown:
            return
        self._shown = tuple(images)
        for label in self.labels:
            self._layout.removeWidget(label)
            label.deleteLater()
        self.labels = []
        for image in images:
            label = QLabel()
            label.setObjectName("messageImage")
            name = image.name or translate("Conversation", "Image")
            pixmap = thumbnail(image.data, MESSAGE_THUMBNAIL) if image.data is not None else None
            if pixmap is not None:
                label.setPixmap(pixmap)
                label.setToolTip(name)
            else:
                label.setText(translate("Conversation", "🖼 {name} (not available)").format(name=name))
            label.setAccessibleName(translate("Conversation", "Attached image {name}").format(name=name))
            self._layout.insertWidget(self._layout.count() - 1, label)
            self.labels.append(label)
        self.setVisible(bool(images))
