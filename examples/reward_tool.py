#!/usr/bin/env python3
"""A trainer's tool loop scoring an agent's patches with lanser's process reward.

`lanser.reward.LanserRewardTool` has verl's `BaseTool` shape (create / execute / calc_reward
/ release, plus the OpenAI function schema), so a verl tool config can name it directly
(`class_name: lanser.reward.LanserRewardTool`, `config: {workspace: ...}`); any other loop can
call it as below. One warm lanser session per workspace serves every rollout.

Run: python3 examples/reward_tool.py [WORKSPACE]   (default: the bundled demo)
"""
import asyncio
import difflib
import sys
from pathlib import Path

import lanser

WS = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent / "fixtures" / "demo")

# Two candidate patches an agent might propose for the demo's cli.py: one breaks a call
# (wrong arity), one is harmless.
def patch(old: str, new: str, rel: str = "cli.py") -> str:
    before = (WS / rel).read_text()
    after = before.replace(old, new, 1)
    return "".join(difflib.unified_diff(before.splitlines(True), after.splitlines(True),
                                        f"a/{rel}", f"b/{rel}"))


BROKEN = patch("store.add_item(name, price, quantity)", "store.add_item(name)")
NEUTRAL = patch("for name, price, quantity in STOCK:", "for name, price, quantity in list(STOCK):")


async def main():
    tool = lanser.reward.LanserRewardTool({"workspace": str(WS)})
    print("tool:", tool.get_openai_tool_schema()["function"]["name"])
    try:
        for label, patch in [("breaks a call", BROKEN), ("harmless", NEUTRAL)]:
            rollout = await tool.create()
            text, reward, meta = await tool.execute(rollout, {"patch": patch})
            print(f"{label:14} reward {reward:+.2f}  {text}  ({meta['bundleId'][:19]})")
            await tool.release(rollout)
    finally:
        tool.close()


if __name__ == "__main__":
    asyncio.run(main())
