"""The network tool (seed 003 §4.5, §8.3): HttpRequest behind an SSRF guard."""

from __future__ import annotations

from agent_runtime.tool_runtime.tools.network.http_request import HttpRequest, HttpRequestArguments
from contracts.addresses import AddressPolicy
from contracts.egress import Resolver, SystemResolver

__all__ = ["AddressPolicy", "HttpRequest", "HttpRequestArguments", "Resolver", "SystemResolver"]
