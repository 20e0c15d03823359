"""The commands families add to ``tanglerag``, one module per family, named by its ``Family.commands``.

They live here rather than in the family's folder because driving a family from the command line means loading
settings, the runtime and eval runs, all of which sit above ``methods/``; the family logic they call stays there.
"""
