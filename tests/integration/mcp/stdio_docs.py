"""The docs test server as a local (stdio) MCP program: ``python stdio_docs.py LOG``."""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.integration.mcp.servers import DocsLog, docs_server


class FileLog(DocsLog):
    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path

    def record(self, name: str) -> None:
        super().record(name)
        with self.path.open("a") as handle:
            handle.write(f"{name} {os.environ.get('DOCS_MARK', '')}\n")


if __name__ == "__main__":
    log = FileLog(Path(sys.argv[1]))
    secret = "LLM_GATEWAY_AUTH_TOKEN" in os.environ
    log.path.write_text(f"started {os.environ.get('DOCS_MARK', '')} secret={secret} cwd={os.getcwd()}\n")
    server, _ = docs_server(log)
    server.run("stdio")
