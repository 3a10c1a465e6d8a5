"""Conversations without Qt: what a conversation shows (items, the two-level state, banners), the
sidebar's list from the backend's history, one open conversation and its runtime calls, and the one
helper every call from the window goes through. The window (:mod:`desktop.app`) only draws them.
"""
