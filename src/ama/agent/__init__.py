"""The agent: ``AgentSession`` runs prompts through the model and tools over a session.

This is the one place that composes the parts (``compose.py``); the CLI, the RPC mode and
the SDK all drive the same ``AgentSession``.
"""
