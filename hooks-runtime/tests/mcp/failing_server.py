"""An MCP server (fastmcp, stdio) for the failure cases of hooks-runtime's MCP tests (P3-P5).

Tools:
- `hang` writes $MCP_MARKER_DIR/hanging, sleeps until cancelled, then writes
  $MCP_MARKER_DIR/cancelled when the client cancels it;
- `fail` raises (an `isError` result);
- `exit_now` makes the process exit in the middle of the call;
- `steps` reports progress, then answers;
- `record` appends its text to $MCP_MARKER_DIR/records;
- `unlock` adds the tool `secret` and announces `notifications/tools/list_changed`.
"""

import asyncio
import os
import pathlib

import mcp.types as mcp_types
from fastmcp import Context, FastMCP
from fastmcp.exceptions import ToolError

mcp = FastMCP("failing")
MARKERS = pathlib.Path(os.environ.get("MCP_MARKER_DIR", "."))


@mcp.tool
async def hang() -> str:
    """Never answers; records that it started, and its cancellation."""
    (MARKERS / "hanging").write_text("hanging")
    try:
        await asyncio.sleep(3600)
    except asyncio.CancelledError:
        (MARKERS / "cancelled").write_text("cancelled")
        raise
    return "woke up"


@mcp.tool
def fail(reason: str = "it failed on purpose") -> str:
    """Fails with an error result."""
    raise ToolError(reason)


@mcp.tool
def exit_now() -> str:
    """The server's process exits during the call."""
    os._exit(3)


@mcp.tool
async def steps(count: int, ctx: Context) -> str:
    """Reports `count` progress steps, then answers."""
    for step in range(1, count + 1):
        await ctx.report_progress(step, count, f"step {step} of {count}")
        await asyncio.sleep(0.02)
    return f"did {count} steps"


@mcp.tool
def record(text: str) -> str:
    """Appends `text` to $MCP_MARKER_DIR/records: how many times a call ran."""
    with open(MARKERS / "records", "a") as records:
        records.write(text + "\n")
    return f"recorded {text}"


def secret() -> str:
    """A tool that exists once `unlock` ran."""
    return "the secret"


@mcp.tool
async def unlock(ctx: Context) -> str:
    """Adds the tool `secret` and tells the client its tool list changed."""
    mcp.add_tool(secret)
    await ctx.send_notification(mcp_types.ToolListChangedNotification())
    return "unlocked"


if __name__ == "__main__":
    mcp.run(show_banner=False)
