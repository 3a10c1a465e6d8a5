"""The root public keys this desktop trusts for runtime releases (pinned in the app, never configurable).

Release manifests are trusted only through a key delegation signed by ``threshold`` of these keys
(``contracts.release``), so a release signing key can be rotated or revoked without a new desktop
app, while replacing the roots themselves takes a desktop release. The private halves are kept
offline by the release engineers. Tests pass their own root set to ``UpdateService(root_keys=…)``;
there is deliberately no environment variable or setting that could swap these for a user — anyone
able to set one could then serve that user any program as "the runtime".
"""

from __future__ import annotations

from contracts.release import RootKeySet

__all__ = ["PINNED_ROOT_KEYS"]

PINNED_ROOT_KEYS = RootKeySet(
    keys=[
        "cnMmQqF0jAi5npcmAvj35GwTYtIEO8ziDjNMC3c5w2Q",  # key id lVspDtIrIH3OuQli
        "y8ohmFoJUdxzA9vvcaAiCl29Sw3oPd8FUpDs0MsLuqQ",  # key id cv_SQ0k25CJD6fO3
        "f-b1J75ocVwmYtWKCQpDRENAO34LRefTWq1JMiMheHk",  # key id QEigEToNnLD0vp9P
    ],
    threshold=2,
)
