"""Why code looks the way it does (git breadcrumbs) and what depends on it (impact).

``changes.GitHistory`` asks the local git history, through ``git.run_git``, which changes shaped a
set of lines; ``impact`` walks the index's edges backwards from a definition. Retrieval calls
``impact`` directly (a pure function over a read-only snapshot) and receives git history only
through the ``ChangeHistory`` protocol, so it never starts a process itself.
"""
