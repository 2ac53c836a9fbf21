#!/usr/bin/env python3
"""A curator in Python: after each round it notes how often the target submitted right after
a message, and which of the attacker's words it followed.

    {"curator": {"kind": "process", "args": {"command": ["python3", "../python/curator.py"]}}}
"""

import traparena_plugin as tp


def curate(request):
    limits = request["limits"]
    reactions = request["reactions"]
    followed = [r for r in reactions
                if r["next_actions"] and r["next_actions"][0].get("action") == "submit"]
    notes = [f"round {request['round']}: {len(followed)} of {len(reactions)} messages "
             f"were followed by a submit"]
    for r in followed[:2]:
        notes.append("it submitted after: " + r["message"]["text"])
    notes += request["notes"]
    return [n[: limits["max_chars"]] for n in notes[: limits["max_notes"]]]


if __name__ == "__main__":
    tp.serve_curator(curate, name="python:submit-tally")
