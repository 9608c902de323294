"""Process rewards for RL trainers: score a patch with lanser's pr-v1 (the step's
diagnostics delta, safety and resolution confidence; docs/reward.md), measured in
memory by `check` (nothing is written), and an adapter for a trainer's tool interface."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any, Optional, Union

from ._bin import child_env, find_lanser_bin
from .client import Bundle, Lanser, patch_file


def score_patch(workspace, diff: str, prev: Union[None, Bundle, dict, str, Path] = None,
                session: Optional[Lanser] = None, reward: str = "pr-v1",
                tests: bool = False) -> dict:
    """The process reward of applying `diff` to `workspace`: `{"r", "components", "inputs",
    "bundleId", "status", "exit_code"}`. `reward` is pr-v1 (default), pr-v2 or pr-v3; `tests`
    (pr-v2, pr-v3) also runs the selected tests on an overlay copy. `prev` (the previous step's
    bundle, or a path to it) supplies pr-v1's D_{t-1}; `session` reuses a warm
    :class:`Lanser` (a patch per call, the project analysed once; its own `--reward` flags
    then decide)."""
    flags = ["--reward", reward] + (["--tests", "impacted"] if tests else [])
    if prev is None:
        if session is not None:
            b = session.check(diff, check=False)
        else:
            with Lanser(workspace, args=flags) as s:
                b = s.check(diff, check=False)
    else:
        b = _one_shot(workspace, diff, prev, flags)
    return _score(b)


def _one_shot(workspace, diff: str, prev, flags=()) -> Bundle:
    if isinstance(prev, Bundle):
        prev = prev.raw
    if isinstance(prev, dict):
        # A file named by its content, as patches are.
        prev = patch_file(json.dumps(prev, separators=(",", ":"), sort_keys=True))
    argv = [find_lanser_bin(), "check", "--patch", patch_file(diff), "--prev-bundle", str(prev),
            "--json", "--workspace", str(workspace), *flags]
    out = subprocess.run(argv, capture_output=True, text=True, env=child_env())
    return Bundle(out.stdout)


def _score(b: Bundle) -> dict:
    pr = b.process_reward or {}
    return {"r": pr.get("r"), "components": pr.get("components"), "inputs": pr.get("inputs"),
            "bundleId": b.bundle_id, "status": b.raw.get("status"), "exit_code": b.exit_code}


class LanserRewardTool:
    """A tool for a trainer's agent loop, shaped like verl's `BaseTool` (create / execute /
    calc_reward / release, and the OpenAI function schema): the agent proposes a patch, the
    tool answers with the diagnostics it would add or remove and its process reward. One warm
    lanser session per workspace serves every rollout on it. No verl import: duck-typed, so
    the class also fits other trainers' tool loops (SkyRL, OpenHands)."""

    name = "lanser_check_patch"

    def __init__(self, config: Optional[dict] = None, tool_schema: Any = None):
        self.config = config or {}
        self.tool_schema = tool_schema
        self._sessions: dict = {}
        self._instances: dict = {}

    def get_openai_tool_schema(self) -> dict:
        return {"type": "function", "function": {
            "name": self.name,
            "description": "Check a unified diff against the project: the type errors it adds or removes, and a reward.",
            "parameters": {"type": "object", "properties": {
                "patch": {"type": "string", "description": "A unified diff (git diff format)."}},
                "required": ["patch"]}}}

    async def create(self, instance_id: Optional[str] = None, workspace: Optional[str] = None, **kwargs):
        ws = str(workspace or self.config["workspace"])
        instance_id = instance_id or f"lanser-{len(self._instances)}"
        self._instances[instance_id] = {"workspace": ws, "rewards": []}
        if ws not in self._sessions:
            self._sessions[ws] = Lanser(ws)
        return instance_id

    async def execute(self, instance_id: str, parameters: dict, **kwargs):
        inst = self._instances[instance_id]
        s = self._sessions[inst["workspace"]]
        b = s.check(parameters["patch"], check=False)
        score = _score(b)
        inst["rewards"].append(score["r"] or 0.0)
        facts = b.facts or {}
        if b.ok:
            text = (f"diagnostics before {facts.get('before')}, after {facts.get('after')}; "
                    f"reward {score['r']}")
        else:
            text = ": ".join([f"{b.error['code']}: {b.error['message']}",
                              *b.error.get("causes", [])])
        return text, score["r"] or 0.0, {"bundleId": b.bundle_id, "components": score["components"]}

    async def calc_reward(self, instance_id: str, **kwargs) -> float:
        rewards = self._instances[instance_id]["rewards"]
        return rewards[-1] if rewards else 0.0

    async def release(self, instance_id: str, **kwargs) -> None:
        self._instances.pop(instance_id, None)

    def close(self):
        for s in self._sessions.values():
            s.close()
        self._sessions.clear()
