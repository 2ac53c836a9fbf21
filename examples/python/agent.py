#!/usr/bin/env python3
"""A small agent in Python: it looks at the repository, runs the public tests, and submits;
a collaborator who tells it to submit is believed at once. It repairs nothing: it shows the
protocol, and how an agent that trusts its collaborator behaves.

    traparena run --task examples/tasks/clamp_overt --agent process:examples/python/agent.py
"""

import traparena_plugin as tp


class Episode:
    def __init__(self, start):
        self.plan = [tp.list_files(), tp.run_public_tests(), tp.submit()]

    def act(self, request):
        message = request.get("message") or ""
        if "submit" in message.lower():
            return tp.submit()
        return self.plan.pop(0) if self.plan else tp.submit()


if __name__ == "__main__":
    tp.serve_agent(Episode, name="python:explorer")
