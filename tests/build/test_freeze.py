"""The runtime's PyInstaller lists on macOS: a framework-build Python becomes a plain ``Python``, so a
bundle (regular files only) never holds a framework binary torn out of its framework."""

from __future__ import annotations

from cowork_release.freeze import flatten_python_framework

LIBRARY = "/Library/Frameworks/Python.framework/Versions/3.11/Python"


def test_a_framework_python_is_collected_as_a_plain_library() -> None:
    binaries = [
        ("Python.framework/Versions/3.11/Python", LIBRARY, "BINARY"),
        ("lib-dynload/_ssl.cpython-311-darwin.so", "/x/_ssl.so", "EXTENSION"),
        ("libcrypto.3.dylib", "/x/libcrypto.3.dylib", "BINARY"),
    ]
    datas = [
        ("Python", "Python.framework/Versions/3.11/Python", "SYMLINK"),
        ("Python.framework/Versions/Current", "3.11", "SYMLINK"),
        ("Python.framework/Python", "Versions/Current/Python", "SYMLINK"),
        ("Python.framework/Resources", "Versions/Current/Resources", "SYMLINK"),
        ("Python.framework/Versions/3.11/Resources/Info.plist", "/x/Info.plist", "DATA"),
        ("certifi/cacert.pem", "/x/cacert.pem", "DATA"),
    ]
    new_binaries, new_datas = flatten_python_framework(binaries, datas)
    assert sorted(new_binaries) == sorted(
        [
            ("Python", LIBRARY, "BINARY"),
            ("lib-dynload/_ssl.cpython-311-darwin.so", "/x/_ssl.so", "EXTENSION"),
            ("libcrypto.3.dylib", "/x/libcrypto.3.dylib", "BINARY"),
        ]
    )
    assert new_datas == [("certifi/cacert.pem", "/x/cacert.pem", "DATA")]


def test_lists_without_a_framework_python_are_left_alone() -> None:
    binaries = [("libpython3.11.so.1.0", "/usr/lib/libpython3.11.so.1.0", "BINARY")]
    datas = [("certifi/cacert.pem", "/x/cacert.pem", "DATA")]
    assert flatten_python_framework(binaries, datas) == (binaries, datas)
