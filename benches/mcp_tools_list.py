#!/usr/bin/env python3
"""mcp_tools_list.py - what an MCP host pays to list a server's tools: the size of the whole
`tools/list` result and, per tool, of its model-facing part (name + description + inputSchema,
what a host puts in the model's context), for lanser and any peer, listed by the same client
(the official Python SDK, `mcp` in tests/requirements.txt).

    python benches/mcp_tools_list.py -- LANSER_BIN mcp --workspace fixtures/demo
    python benches/mcp_tools_list.py -- agent-lsp python:pyright-langserver,--stdio

Each `--`-separated command is one server over stdio; prints one JSON line per server.
"""
import asyncio
import json
import statistics
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def measure(cmd: list[str]) -> dict:
    params = StdioServerParameters(command=cmd[0], args=cmd[1:])
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            listed = await s.list_tools()
    whole = len(listed.model_dump_json(by_alias=True, exclude_none=True))
    facing = [len(json.dumps({"name": t.name, "description": t.description, "inputSchema": t.input_schema}))
              for t in listed.tools]
    return {"server": cmd[0], "tools": len(listed.tools), "listBytes": whole,
            "modelFacingMedian": statistics.median(facing), "modelFacingMax": max(facing),
            "modelFacingTotal": sum(facing)}


def main():
    args = sys.argv[1:]
    cmds, cur = [], []
    for a in args + ["--"]:
        if a == "--":
            if cur:
                cmds.append(cur)
            cur = []
        else:
            cur.append(a)
    for cmd in cmds:
        print(json.dumps(asyncio.run(measure(cmd))))


if __name__ == "__main__":
    main()
