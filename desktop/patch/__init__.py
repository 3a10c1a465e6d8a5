"""The patch preview (``GetPatchPreview``, seed 000 §3.1): the files a conversation changed and their
diffs. ``model`` is Qt-free (files, markers, display limits, what "Open in editor" opens);
``highlight`` is the diff view both the preview and the approval dialog use; ``dialog`` the window;
``revert`` its Revert buttons (``RevertChanges``: a file, or a task's files, back to before the agent
changed them).
"""
