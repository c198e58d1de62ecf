"""The multi-turn agent loop of docs/design.md §2.4 as a small state machine.

An `Episode` knows nothing about how text is generated: a caller reads
`messages` and `tools`, produces the assistant's reply however it likes (a
local model, an endpoint, a script) and hands it to `advance`. The episode
parses the reply's tool calls, runs them in its own environment (`rods.envs.contract`), appends
the `tool` results and, when the turn is over, scores it and appends the next
user turn. Many episodes (K rollouts of a task, many tasks) step side by side
in `run_episodes`.

A turn ends when the reply holds no tool call (a text answer) or after
`max_steps_per_turn` replies with calls (the step cap: BFCL's is 20). With
``on_step_cap="force_quit"`` the cap ends the whole episode, as BFCL's
inference does (the entry then fails); the default, for training, only ends
the turn. Unreadable calls are answered with error tool results; they never
end a turn nor raise.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import Literal

from rods.envs.calls import format_call
from rods.envs.contract import RolloutEnvironment
from rods.envs.schemas import function_docs, task_tool_schemas
from rods.reward import ProgressScorer
from rods.rollout.parse import ParsedReply, parse_tool_calls
from rods.rollout.prompt import ToolDocs, ToolFormat, reveal_message, system_message
from rods.rollout.trajectory import Trajectory, TurnRecord
from rods.tasks import Task

log = logging.getLogger(__name__)

#: BFCL's per-turn step limit (`MAXIMUM_STEP_LIMIT`).
DEFAULT_MAX_STEPS = 20
#: Prefix of the tool result answering a call that could not be read.
PARSE_ERROR_PREFIX = "Error during parsing: "


class EpisodeDone(RuntimeError):
    """`advance` was called on a finished episode."""


@dataclass(frozen=True)
class EpisodeOptions:
    """How an episode talks to the policy; one value handed from the command line down to `Episode`.

    Attributes:
        max_steps_per_turn: replies with tool calls allowed per user turn.
        system_prompt: replaces the default system prompt (for `pythonic`, a
            ``{functions}`` placeholder receives the tool descriptions).
        tool_format: how the policy writes calls: ``hermes`` (``<tool_call>``
            JSON blocks) or ``pythonic`` (BFCL's ``[f(a=1)]``). Both are read
            in either case; the format decides prompts and how calls are shown.
        tools_in_prompt: write the tool descriptions into the messages (for
            chat templates without tool support; always true for `pythonic`);
            None: whatever the policy needs (``not policy.native_tools``).
        on_step_cap: ``end_turn`` (training) or ``force_quit`` (BFCL's eval).
        tool_docs: ``full`` tool descriptions, ``compact`` signature lines (a
            quarter of the tokens) or ``signatures`` (a short prompt of bare
            signatures in place of the system prompt; for tiny models on CPU).
    """

    max_steps_per_turn: int = DEFAULT_MAX_STEPS
    system_prompt: str | None = None
    tool_format: ToolFormat = "hermes"
    tools_in_prompt: bool | None = None
    on_step_cap: Literal["end_turn", "force_quit"] = "end_turn"
    tool_docs: ToolDocs = "full"

    def __post_init__(self) -> None:
        if self.tool_format not in ("hermes", "pythonic"):
            raise ValueError(f"unknown tool_format {self.tool_format!r}; expected 'hermes' or 'pythonic'")
        if self.max_steps_per_turn < 1:
            raise ValueError(f"max_steps_per_turn must be >= 1, got {self.max_steps_per_turn}")
        if self.on_step_cap not in ("end_turn", "force_quit"):
            raise ValueError(f"unknown on_step_cap {self.on_step_cap!r}; expected 'end_turn' or 'force_quit'")
        if self.tool_docs not in ("full", "compact", "signatures"):
            raise ValueError(f"unknown tool_docs {self.tool_docs!r}; expected 'full', 'compact' or 'signatures'")

    def for_policy(self, native_tools: bool) -> EpisodeOptions:
        """These options with `tools_in_prompt` decided: in the prompt unless the policy passes tools natively."""
        if self.tools_in_prompt is not None:
            return self
        return replace(self, tools_in_prompt=not native_tools)


class Episode:
    """One rollout of one task: messages so far, tools now, and the environment.

    Args:
        task: the task to play.
        options: how to talk to the policy (`EpisodeOptions`; tools stay out of
            the prompt unless `tools_in_prompt` says so).
        sample_index: which of the K rollouts of the task this is.
    """

    def __init__(self, task: Task, options: EpisodeOptions | None = None, *, sample_index: int = 0):
        options = options or EpisodeOptions()
        self.options = options
        self.task = task
        self.max_steps_per_turn = options.max_steps_per_turn
        self.tool_format: ToolFormat = options.tool_format
        self.tools_in_prompt = bool(options.tools_in_prompt) or options.tool_format == "pythonic"
        self.on_step_cap = options.on_step_cap
        self.tool_docs: ToolDocs = options.tool_docs
        self.sample_index = sample_index
        self._scorer = ProgressScorer(task)
        self.env: RolloutEnvironment = self._scorer.new_env()
        self._turns = [TurnRecord() for _ in range(task.num_turns)]
        self._turn = 0
        self._done = False
        self._force_quit = False
        self._call_counter = 0
        self._tools = task_tool_schemas(task, 0)
        self._messages: list[dict] = [
            system_message(
                self._described(self._tools), self.tool_format, self.tools_in_prompt, options.system_prompt,
                self.tool_docs,
            )
        ]
        self._messages += self._user_turn(0)

    # -- what the policy sees --------------------------------------------------

    @property
    def messages(self) -> list[dict]:
        """The chat so far (system, user, assistant and tool messages), ready for a chat template."""
        return self._messages

    @property
    def tools(self) -> list[dict]:
        """OpenAI tool schemas available now (held-out functions join at their reveal turn)."""
        return self._tools

    @property
    def done(self) -> bool:
        return self._done

    @property
    def turn(self) -> int:
        """Index of the current user turn."""
        return self._turn

    # -- stepping ----------------------------------------------------------------

    def advance(self, assistant_text: str) -> list[dict]:
        """Take the assistant's reply; return the messages the environment appends.

        These are the tool results of the reply's calls and, if the turn ended,
        the next user turn's messages (none when the episode is over).
        """
        if self._done:
            raise EpisodeDone(f"episode of task {self.task.id} is finished; no more replies expected")
        if not isinstance(assistant_text, str):
            raise TypeError(f"assistant_text must be a str, got {type(assistant_text).__name__}")
        record = self._turns[self._turn]
        record.replies.append(assistant_text)
        reply = parse_tool_calls(assistant_text)
        start = len(self._messages)
        self._messages.append(self._assistant_message(assistant_text, reply))
        if not reply.has_calls:
            self._end_turn("answer")
            return self._messages[start + 1 :]
        self._run_calls(reply, record)
        if len(record.steps) >= self.max_steps_per_turn:
            if self.on_step_cap == "force_quit":
                self._force_quit = True
                self._end_turn("force_quit")
            else:
                self._end_turn("step_cap")
        return self._messages[start + 1 :]

    def trajectory(self) -> Trajectory:
        """The rollout so far, with per-turn verdicts, progress RP and the binary verdict."""
        reward = self._scorer.result()
        return Trajectory(
            task_id=self.task.id,
            category=self.task.category,
            messages=[dict(m) for m in self._messages],
            turns=[t.model_copy(deep=True) for t in self._turns],
            progress=reward.progress,
            binary=reward.binary,
            force_quit=self._force_quit,
            sample_index=self.sample_index,
        )

    # -- internals -----------------------------------------------------------------

    def _assistant_message(self, text: str, reply: ParsedReply) -> dict:
        if self.tool_format == "pythonic" or self.tools_in_prompt or not reply.calls:
            return {"role": "assistant", "content": text}
        calls = []
        for call in reply.calls:
            self._call_counter += 1
            calls.append(
                {
                    "id": f"call_{self._call_counter}",
                    "type": "function",
                    "function": {"name": call.name, "arguments": dict(call.arguments)},
                }
            )
        return {"role": "assistant", "content": reply.content, "tool_calls": calls}

    def _run_calls(self, reply: ParsedReply, record: TurnRecord) -> None:
        results = [self.env.execute(call) for call in reply.calls]
        record.steps.append([format_call(call) for call in reply.calls])
        record.results.append(results)
        record.parse_errors.extend(reply.errors)
        tool_calls = self._messages[-1].get("tool_calls", [])
        for index, (call, result) in enumerate(zip(reply.calls, results)):
            message = {"role": "tool", "name": call.name, "content": result}
            if index < len(tool_calls):
                message["tool_call_id"] = tool_calls[index]["id"]
            self._messages.append(message)
        for error in reply.errors:
            self._messages.append({"role": "tool", "name": "error", "content": PARSE_ERROR_PREFIX + error})

    def _end_turn(self, how: str) -> None:
        record = self._turns[self._turn]
        record.end = how  # type: ignore[assignment]
        verdict = self._scorer.end_turn(self.env, [r for step in record.results for r in step])
        record.state_pass, record.exec_pass = verdict.state_pass, verdict.exec_pass
        if self._force_quit or self._turn + 1 >= self.task.num_turns:
            self._done = True
            return
        self._turn += 1
        self._messages += self._user_turn(self._turn)

    def _described(self, tools: list[dict]) -> list[dict]:
        """What the prompt lists: BFCL's function docs for `pythonic` or bare signatures, else the OpenAI schemas."""
        if self.tool_format != "pythonic" and self.tool_docs != "signatures":
            return tools
        names = {t["function"]["name"] for t in tools}
        docs = function_docs(self.task.involved_classes).values()
        return [doc for class_docs in docs for doc in class_docs if doc["name"] in names]

    def _user_turn(self, turn: int) -> list[dict]:
        revealed = self.task.reveal_turns().get(turn)
        if revealed:
            self._turns[turn].revealed = list(revealed)
            self._tools = task_tool_schemas(self.task, turn)
            names = set(revealed)
            new_tools = [t for t in self._tools if t["function"]["name"] in names]
            return [reveal_message(
                    self._described(new_tools), self.tool_format, self.tools_in_prompt, self.tool_docs
                )]
        return [m.model_dump() for m in self.task.question[turn]]
