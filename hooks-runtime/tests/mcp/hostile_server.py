#!/usr/bin/env python3
"""A hostile MCP server over stdio for the H3-H5 tests: raw JSON-RPC, one message a line, no
packages. The first argument picks what it does wrong:

    big-result BYTES   its tool `big` answers a text of BYTES bytes
    huge-line BYTES    its tool `huge` answers one message of BYTES bytes
    bad-names          it lists tools whose names a provider rejects, and `ok_tool`
    many-tools COUNT   it lists COUNT tools in one page
    endless-pages      every `tools/list` page has one tool and a next cursor
    env                its tool `env` answers its environment as JSON
    error TEXT         its tool `fail` answers a JSON-RPC error whose message is TEXT
    silent             it never answers anything, `initialize` included

When $MCP_MARKER_DIR is set, each start appends a line to its `starts`, and each `tools/list`
request a line to its `lists`.
"""

import json
import os
import sys

MODE = sys.argv[1]
ARG = sys.argv[2] if len(sys.argv) > 2 else ""


def send(message):
    sys.stdout.write(json.dumps(message, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def tool(name):
    return {"name": name, "description": "A tool.", "inputSchema": {"type": "object"}}


def tools_page(cursor):
    if MODE == "bad-names":
        names = ["ok_tool", "two words", "<b>bold</b>", "esc\u001b[31mred", "x" * 308, ""]
        return {"tools": [tool(name) for name in names]}
    if MODE == "many-tools":
        return {"tools": [tool(f"t{n}") for n in range(int(ARG))]}
    if MODE == "endless-pages":
        page = int(cursor or "0")
        return {"tools": [tool(f"page{page}")], "nextCursor": str(page + 1)}
    return {"tools": [tool({"big-result": "big", "huge-line": "huge", "env": "env", "error": "fail"}[MODE])]}


def call(request_id, name):
    if name == "big":
        send({"jsonrpc": "2.0", "id": request_id, "result": {"content": [{"type": "text", "text": "b" * int(ARG)}]}})
    elif name == "huge":
        send({"jsonrpc": "2.0", "id": request_id, "result": {"content": [{"type": "text", "text": "h" * int(ARG)}]}})
    elif name == "env":
        text = json.dumps(dict(os.environ))
        send({"jsonrpc": "2.0", "id": request_id, "result": {"content": [{"type": "text", "text": text}]}})
    elif name == "fail":
        send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32000, "message": ARG}})
    else:
        send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32602, "message": f"no tool {name}"}})


if os.environ.get("MCP_MARKER_DIR"):
    with open(os.path.join(os.environ["MCP_MARKER_DIR"], "starts"), "a") as marker:
        marker.write("start\n")

for line in sys.stdin:
    if MODE == "silent":
        continue
    message = json.loads(line)
    request_id, method = message.get("id"), message.get("method")
    if request_id is None or method is None:
        continue
    params = message.get("params") or {}
    if method == "initialize":
        send(
            {
                "jsonrpc": "2.0",
                "id": request_id,
                "result": {
                    "protocolVersion": params.get("protocolVersion", "2025-06-18"),
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "hostile", "version": "1"},
                },
            }
        )
    elif method == "tools/list":
        if os.environ.get("MCP_MARKER_DIR"):
            with open(os.path.join(os.environ["MCP_MARKER_DIR"], "lists"), "a") as marker:
                marker.write("list\n")
        send({"jsonrpc": "2.0", "id": request_id, "result": tools_page(params.get("cursor"))})
    elif method == "tools/call":
        call(request_id, params.get("name"))
    else:
        send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": f"no method {method}"}})
