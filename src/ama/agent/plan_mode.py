"""Plan mode of one ``AgentSession``: state entries, reminders, proposals and approval.

``agent.plans`` (a ``PlanController``) listens to the agent's events:

- ``before_agent_start``: records entering / leaving plan mode (``ama.plan_state``), then the
  plan-mode note (``ama.plan_mode``: full on the first prompt after entering or after a
  compaction, short every ``REMIND_EVERY`` prompts) or ``ama.plan_mode_exit``;
- ``agent_before_settle``: a run in plan mode that ended in plain text with a
  ``<proposed_plan>`` block proposes a plan (``ama.plan`` entry, ``.ama/plans/<title>-v<n>.md``,
  ``plan_proposed``), before ``agent_settled``;
- ``turn_end``: ``[DONE:<step>]`` lines advance the approved plan's todo list.

What may run in plan mode is decided by the permission pipeline (mode ``plan`` denies every
call that is not read-only), never by the prompt.  A plan is approved only through
``respond`` (the user's or client's answer) or ``plan.unattended: approve``.
"""

from __future__ import annotations

import asyncio
import os
import secrets
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ama.agent import plans as P
from ama.agent.events import event
from ama.errors import AmaError, Busy, InvalidArguments
from ama.messages import AssistantMessage, TextContent, ToolCall, UserMessage
from ama.session.entries import CustomEntry, CustomMessageEntry, MessageEntry

if TYPE_CHECKING:
    from ama.agent.session import AgentSession


class PlanController:
    def __init__(self, agent: AgentSession) -> None:
        self.agent = agent
        #: True when a client (RPC ``plans`` capability, the UI) answers proposals
        self.client_answers: Callable[[], bool] = lambda: False
        #: the execution run started by ``plan.unattended: approve`` (the CLI awaits it)
        self.followup: asyncio.Task | None = None
        self._pre_plan_mode = "default"
        self._exit_note_due = False
        self._approving = False
        #: (model ref, thinking level) that ``plan.model`` replaced while in plan mode
        self._execution: tuple[str, str] | None = None
        state = agent.session.latest_custom(P.STATE_TYPE)
        if isinstance(state, dict) and state.get("active"):  # resume: back into plan mode
            self._pre_plan_mode = str(state.get("prePlanMode") or "default")
            if state.get("executionModel"):
                thinking = str(state.get("executionThinking") or agent.thinking_level)
                self._execution = (str(state["executionModel"]), thinking)
            if agent.permissions.mode != "plan" and not agent.explicit_mode:
                agent.permissions.set_mode("plan")
        if agent.permissions.mode == "plan":
            self._enter_model()
        agent.subscribe(self._on_event)

    # --- reading ----------------------------------------------------------------------

    def _records(self) -> list[P.PlanData]:
        return [
            P.PlanData.from_json(e.data)
            for e in self.agent.session.branch()
            if isinstance(e, CustomEntry) and e.custom_type == P.PLAN_TYPE and isinstance(e.data, dict)
        ]

    def get(self, plan_id: str | None = None) -> P.PlanData | None:
        """The latest record of plan ``plan_id`` (default: of the latest plan) on the branch."""
        recs = self._records()
        if plan_id is not None:
            recs = [r for r in recs if r.id == plan_id]
        return recs[-1] if recs else None

    def pending(self) -> P.PlanData | None:
        latest = self.get()
        return latest if latest is not None and latest.status == "proposed" else None

    # --- mode and notes ---------------------------------------------------------------

    def pre_plan_mode(self) -> str:
        """The mode to return to when plan mode ends (never ``plan``)."""
        return self._pre_plan_mode if self._pre_plan_mode != "plan" else "default"

    def on_mode_change(self, old: str, new: str) -> None:
        if new == "plan" and old != "plan":
            self._pre_plan_mode = old
            self._enter_model()
        if self.agent.session.entries:  # a new session records them after its first entries
            self._sync_state()
        if old == "plan" and new != "plan":
            self._exit_model()

    # --- plan.model -------------------------------------------------------------------

    def _enter_model(self) -> None:
        """Switch to ``plan.model`` (if set and not already in use), remembering the model and
        thinking level to execute with."""
        cfg = self.agent.config
        ref = cfg.get("plan.model") if cfg is not None else None
        if not ref or self._execution is not None:
            return
        a = self.agent
        try:
            planning = a.registry.get(str(ref))
        except AmaError as err:
            a.emit(event("notification", level="warn", message=f"plan.model {ref!r} is not usable: {err.message}"))
            return
        if planning.ref == a.model.ref:
            return
        self._execution = (a.model.ref, a.thinking_level)
        a.set_model(planning.ref)

    def _exit_model(self) -> None:
        """Back to the model (and thinking level) that was in use before ``plan.model``."""
        if self._execution is None:
            return
        ref, thinking = self._execution
        self._execution = None
        a = self.agent
        try:
            if a.model.ref != ref:
                a.set_model(ref)
            if thinking != a.thinking_level:
                a.set_thinking_level(thinking)
        except AmaError as err:
            a.emit(event("notification", level="warn", message=f"could not switch back to {ref}: {err.message}"))

    def _sync_state(self) -> None:
        active = self.agent.permissions.mode == "plan"
        state = self.agent.session.latest_custom(P.STATE_TYPE)
        was = isinstance(state, dict) and bool(state.get("active"))
        if active == was:
            return
        data: dict[str, Any] = {"active": active, "prePlanMode": self._pre_plan_mode}
        latest = self.get()
        if latest is not None:
            data["planId"] = latest.id
        if active and self._execution is not None:
            data["executionModel"], data["executionThinking"] = self._execution
        self.agent.session.append_custom(P.STATE_TYPE, data)
        self._exit_note_due = not active and not self._approving

    def _mode_note(self) -> str | None:
        """Full note, short reminder, or None, for the prompt about to start in plan mode."""
        prompts = 0
        for e in reversed(self.agent.session.branch()):
            if isinstance(e, CustomMessageEntry) and e.custom_type == P.MODE_NOTE:
                return P.PLAN_MODE_SHORT if prompts >= P.REMIND_EVERY else None
            if e.type == "compaction":
                return P.PLAN_MODE_FULL
            if isinstance(e, CustomEntry) and e.custom_type == P.STATE_TYPE:
                return P.PLAN_MODE_FULL
            if isinstance(e, MessageEntry) and isinstance(e.message, UserMessage):
                prompts += 1
        return P.PLAN_MODE_FULL

    def _before_prompt(self) -> None:
        self._sync_state()
        s = self.agent.session
        if self.agent.permissions.mode == "plan":
            note = self._mode_note()
            if note is not None:
                s.append_custom_message(P.MODE_NOTE, note, display=False)
        elif self._exit_note_due:
            s.append_custom_message(P.EXIT_NOTE, P.PLAN_MODE_EXIT, display=False)
        self._exit_note_due = False

    # --- events -----------------------------------------------------------------------

    def _on_event(self, ev: dict[str, Any]) -> None:
        kind = ev.get("type")
        if kind == "before_agent_start":
            self._before_prompt()
        elif kind == "agent_before_settle" and self.agent.permissions.mode == "plan":
            self._maybe_propose()
        elif kind == "turn_end":
            self._progress(ev.get("message") or {})

    def _maybe_propose(self) -> None:
        entry = next(
            (e for e in reversed(self.agent.session.branch())
             if isinstance(e, MessageEntry) and isinstance(e.message, AssistantMessage)),
            None,
        )  # fmt: skip
        if entry is None or not isinstance(entry.message, AssistantMessage):
            return
        msg = entry.message
        if msg.stop_reason != "stop" or any(isinstance(b, ToolCall) for b in msg.content):
            return
        if any(r.source_entry_id == entry.id for r in self._records()):
            return
        block = P.find_plan_block("".join(b.text for b in msg.content if isinstance(b, TextContent)))
        if block is None:
            return
        plan = self.propose(block, entry.id)
        if not self.client_answers() and self._unattended() == "approve":
            asyncio.get_running_loop().call_soon(self._approve_unattended, plan.id)

    def _unattended(self) -> str:
        cfg = self.agent.config
        value = cfg.get("plan.unattended", "stop") if cfg is not None else "stop"
        return value if value in P.UNATTENDED else "stop"

    def _approve_unattended(self, plan_id: str) -> None:
        if self.agent.busy or self.pending() is None:
            return
        _data, task = self.respond(plan_id, "approve")
        self.followup = task

    def _progress(self, message: dict[str, Any]) -> None:
        content = message.get("content")
        if not isinstance(content, list):
            return
        text = "".join(str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text")
        marks = P.done_marks(text)
        if not marks:
            return
        latest = self.agent.session.latest_custom(P.TODO_TYPE)
        items = latest.get("items") if isinstance(latest, dict) else None
        if not isinstance(items, list) or not any(isinstance(i, dict) and i.get("planStep") for i in items):
            return
        updated = P.advance(items, marks)
        if updated is not None:
            self._set_todos(updated)

    # --- proposing and answering ------------------------------------------------------

    def propose(self, markdown: str, source_entry_id: str | None) -> P.PlanData:
        """Save ``markdown`` as a plan: a new version of the pending plan (which becomes
        superseded), else a new plan; writes its file and emits ``plan_proposed``."""
        s = self.agent.session
        old = self.pending()
        if old is not None:
            plan_id = old.id
            version = max(r.version for r in self._records() if r.id == old.id) + 1
            s.append_custom(P.PLAN_TYPE, {**old.to_json(), "status": "superseded"})
        else:
            plan_id, version = f"plan-{secrets.token_hex(4)}", 1
        title = P.title_of(markdown)
        plan = P.PlanData(plan_id, version, "proposed", title, markdown, P.parse_steps(markdown), source_entry_id)
        plan.file_path = self._write_file(plan)
        s.append_custom(P.PLAN_TYPE, plan.to_json())
        self.agent.emit(
            event(
                "plan_proposed", planId=plan.id, version=plan.version, title=plan.title, markdown=plan.markdown,
                steps=[st.to_json() for st in plan.steps], filePath=plan.file_path,
            )
        )  # fmt: skip
        return plan

    def _write_file(self, plan: P.PlanData) -> str | None:
        """``<cwd>/.ama/plans/<slug>-v<n>.md``; an existing file is never overwritten (a
        ``-2``, ``-3`` … suffix is added)."""
        from ama.agent.plan_files import header, plans_dir

        folder = plans_dir(self.agent.cwd)
        base = P.plan_file_name(plan.title, plan.version)[: -len(".md")]
        body = f"{header(plan.id, plan.version)}\n{plan.markdown.rstrip()}\n"
        try:
            os.makedirs(folder, exist_ok=True)
            for n in range(1, 100):
                path = os.path.join(folder, base + (f"-{n}" if n > 1 else "") + ".md")
                try:
                    with open(path, "x", encoding="utf-8") as f:
                        f.write(body)
                    return path
                except FileExistsError:
                    continue
        except OSError as exc:
            self.agent.emit(event("notification", level="warn", message=f"could not write the plan file: {exc}"))
        return None

    def _set_todos(self, items: list[dict[str, Any]]) -> None:
        self.agent.session.append_custom(P.TODO_TYPE, {"items": items})
        self.agent.emit(event("todo_updated", items=items))

    def respond(
        self,
        plan_id: str,
        decision: str,
        *,
        mode: str | None = None,
        feedback: str | None = None,
        edited_markdown: str | None = None,
        allow_fresh: bool = False,
    ) -> tuple[dict[str, Any], asyncio.Task | None]:
        """Answer the pending plan (see ``_respond``); ``approve_compact`` needs ``answer``."""
        if decision == "approve_compact":
            raise AmaError("unsupported", "plan_response: approve_compact compacts first; call it through `await plans.answer(...)`")
        return self._respond(plan_id, decision, mode, feedback, edited_markdown, allow_fresh)

    def _respond(
        self,
        plan_id: str,
        decision: str,
        mode: str | None,
        feedback: str | None,
        edited_markdown: str | None,
        allow_fresh: bool,
    ) -> tuple[dict[str, Any], asyncio.Task | None]:
        """Answer the pending plan: ``approve`` | ``revise`` | ``reject``.  Returns the
        response data and the run it started (approve: the execution turn; revise with
        feedback: the revision turn).  ``approve_fresh`` (only with ``allow_fresh``: the host
        opens a new session and calls ``begin_fresh`` there) marks the plan approved and
        leaves plan mode here, and starts nothing; so does ``approve_compact``, whose
        compaction and execution turn ``answer`` adds."""
        from ama.permissions import MODES

        if decision == "approve_fresh" and not allow_fresh:
            raise AmaError("unsupported", "plan_response: approve_fresh needs a host that can open a new session; use approve")
        if decision not in P.DECISIONS:
            raise InvalidArguments(f"plan_response: unknown decision {decision!r}; expected one of {', '.join(P.DECISIONS)}")
        if mode is not None and (mode not in MODES or mode == "plan"):
            raise InvalidArguments(f"plan_response: mode must be one of {', '.join(m for m in MODES if m != 'plan')}, got {mode!r}")
        if self.agent.busy:
            raise Busy("plan_response: a run is in progress; wait for agent_settled")
        plan = self.pending()
        if plan is None or plan.id != plan_id:
            have = f"the pending plan is {plan.id}" if plan is not None else "no plan is pending"
            raise AmaError("plan_not_found", f"plan_response: {plan_id!r} is not a plan awaiting an answer ({have})")
        if edited_markdown is not None and edited_markdown.strip() and edited_markdown.strip() != plan.markdown.strip():
            plan = self.propose(edited_markdown.strip(), plan.source_entry_id)
        s = self.agent.session
        data: dict[str, Any] = {"planId": plan.id, "decision": decision, "version": plan.version}
        if decision == "reject":
            s.append_custom(P.PLAN_TYPE, {**plan.to_json(), "status": "rejected"})
            self.agent.emit(event("plan_resolved", planId=plan.id, decision=decision))
            return data, None
        if decision == "revise":
            self.agent.emit(event("plan_resolved", planId=plan.id, decision=decision))
            if feedback and feedback.strip():
                return data, self.agent.start(feedback)
            return data, None
        target = mode or self.pre_plan_mode()
        plan.status = "approved"
        s.append_custom(P.PLAN_TYPE, plan.to_json())
        fresh = decision == "approve_fresh"
        if plan.steps and not fresh:  # approve_compact: before the compaction, so its summary lists them
            self._set_todos(P.todo_items(plan.steps))
        self.agent.emit(event("plan_resolved", planId=plan.id, decision=decision, mode=target))
        self._leave(target)
        data["mode"] = target
        if fresh or decision == "approve_compact":
            return data, None
        return data, self._execute(plan, P.APPROVED_PROMPT)

    async def answer(
        self,
        plan_id: str,
        decision: str,
        *,
        mode: str | None = None,
        feedback: str | None = None,
        edited_markdown: str | None = None,
        allow_fresh: bool = False,
    ) -> tuple[dict[str, Any], asyncio.Task | None]:
        """``respond``, plus ``approve_compact`` (an ama extension): approve as ``approve``,
        compact the conversation (``AgentSession.compact``; the todo list of the plan is in the
        summary's post-compact state and the ``ama.plan_approved`` note follows it), then start
        the execution turn.  A compaction that fails or has nothing to compact is a warning
        (``notification``) and the turn starts anyway; ``data["compacted"]`` says which.  An
        aborted compaction starts nothing (the plan stays approved)."""
        data, task = self._respond(plan_id, decision, mode, feedback, edited_markdown, allow_fresh)
        if decision != "approve_compact":
            return data, task
        plan = self.get(data["planId"])
        assert plan is not None
        focus = f"what the implementation of the approved plan '{plan.title}' needs: findings, files, decisions"
        try:
            await self.agent.compact(focus)
            data["compacted"] = True
        except AmaError as err:
            data["compacted"] = False
            if err.code == "aborted":
                return data, None
            self.agent.emit(event("notification", level="warn", message=f"not compacted before the plan: {err.message}"))
        return data, self._execute(plan, P.APPROVED_PROMPT)

    def _leave(self, target: str) -> None:
        self._approving = True
        try:
            self.agent.set_permission_mode(target)
        finally:
            self._approving = False

    def _execute(self, plan: P.PlanData, prompt: str) -> asyncio.Task | None:
        note = P.approved_note(plan, has_todo_tool="todo" in self.agent.tools_by_name)
        self.agent.session.append_custom_message(P.APPROVED_NOTE, note, display=False)
        return self.agent.start(prompt, origin="plan")

    def begin_fresh(self, plan: P.PlanData, mode: str, *, model: str | None = None) -> asyncio.Task | None:
        """In the new session of ``approve_fresh``: the mode, the model the old session
        executes with (``model``, its ref), the plan (approved), its todo list, and a run
        whose first user message is the plan."""
        if self.agent.permissions.mode != mode:
            self._leave(mode)
        if model and model != self.agent.model.ref:
            self.agent.set_model(model)
        self.agent.ensure_started()
        self.agent.session.append_custom(P.PLAN_TYPE, plan.to_json())
        if plan.steps:
            self._set_todos(P.todo_items(plan.steps))
        return self._execute(plan, plan.markdown)
