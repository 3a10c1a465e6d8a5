"""``cowork-release``: the release engineer's tooling for agent-runtime bundles.

Seed 001 §9 (Phase 4) and §11 "Agent-runtime download model". It freezes the runtime with PyInstaller
(``build``), packs the onedir tree into ``agent-runtime-{version}-{platform}.tar.gz`` with its inner
file list (``package``), and maintains the signed release manifest that installed desktop apps update
from (``contracts.release``): keys, signatures, publishing, promotion, staged rollout and revocation.

It also builds the desktop app around a runtime bundle (``app``; the spec is ``installer/cowork.spec``).

Modules: ``cli`` (the commands), ``keys`` (key files), ``freeze`` (PyInstaller), ``bundle`` (packing
and checking bundles), ``app`` (the desktop app and its Linux tarball), ``appinfo`` (the app's names,
version and metadata), ``qt_trim`` (the Qt files the app keeps), ``sites`` (where releases are
published: a directory, S3, or read-only HTTP), ``s3`` (the S3 site), ``edits`` (changes to a
release document, signed and verified before they are written). It imports ``contracts`` and
nothing else of Cowork.
"""
