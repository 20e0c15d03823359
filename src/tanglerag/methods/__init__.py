"""Methods, one folder per family (typically a paper's method with its baselines). Each folder holds its
methods, prompts, parsers, settings section, trace steps and inspector view, and declares the family in its
``family.py`` (``FAMILY = Family(...)``, see ``tanglerag.family``); the family is registered through the
``tanglerag.families`` entry points in ``pyproject.toml``, as a plug-in's would be. ``base`` is the methods'
contract."""
