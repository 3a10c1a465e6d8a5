"""MCP servers in the window: the form a server's request for input is answered in, the sign-in notice,
the servers' list in Settings and the words the conversation uses about them.

The Qt-free logic (:mod:`.form`, :mod:`.elicitations`, :mod:`.servers`, :mod:`.authorization`,
:mod:`.notices`) is what the conversation's logic imports; the widgets (:mod:`.elicitation_dialog`,
:mod:`.servers_view`, :mod:`.sign_in_view`) only draw it. This ``__init__`` imports nothing, so the
conversation's logic stays free of Qt.
"""
