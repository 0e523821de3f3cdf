"""Instruction templates per level, written for imaginebench (none copied from the original).

Fields: ``{src}``/``{dst}`` colour of the moved and the reference ball, ``{rel}`` the side as a
preposition ("behind", "to the left of", "in front of", "to the right of"); one-step tasks use
``{color}`` and ``{way}`` ("backward", "to the left", "forward", "to the right"); combined
relations use ``{clauses}`` ("the red ball behind the blue ball and the green ball to the left of
the cyan ball"). Train and rephrase are disjoint; rephrase mixes synonyms, haste, dislike,
pleasure and indirect requests as the KALM rephrasings do (docs/original-benchmark.md#clevr-robot).
"""

from __future__ import annotations

import numpy as np

from imaginebench.envs.clevr.layout import COLORS
from imaginebench.envs.clevr.tasks import LEVEL_TASKS, TASKS, Goal

RELATION_WORDS = {"behind": "behind", "left": "to the left of", "front": "in front of", "right": "to the right of"}
STEP_WORDS = {"behind": "backward", "left": "to the left", "front": "forward", "right": "to the right"}

_TRAIN_RELATION = (
    "Push the {src} ball {rel} the {dst} ball.",
    "Move the {src} ball {rel} the {dst} ball.",
    "Can you push the {src} ball {rel} the {dst} ball?",
    "Can you move the {src} ball {rel} the {dst} ball?",
    "Help me push the {src} ball {rel} the {dst} ball.",
    "Help me keep the {src} ball {rel} the {dst} ball.",
    "Keep the {src} ball {rel} the {dst} ball.",
    "Put the {src} ball {rel} the {dst} ball.",
    "Please push the {src} ball {rel} the {dst} ball.",
    "Please move the {src} ball {rel} the {dst} ball.",
    "Place the {src} ball {rel} the {dst} ball.",
    "Get the {src} ball {rel} the {dst} ball.",
    "Could you put the {src} ball {rel} the {dst} ball?",
    "The {src} ball should be {rel} the {dst} ball.",
    "I want the {src} ball {rel} the {dst} ball.",
    "Push the {src} ball until it is {rel} the {dst} ball.",
    "Make the {src} ball end up {rel} the {dst} ball.",
    "Bring the {src} ball {rel} the {dst} ball.",
)

_REPHRASE_RELATION = (
    # synonyms
    "Drive the {src} orb {rel} the {dst} orb.",
    "Nudge the {src} sphere {rel} the {dst} sphere.",
    "Shove the {src} one {rel} the {dst} one.",
    "Relocate the {src} sphere so that it rests {rel} the {dst} sphere.",
    "Roll the {src} orb over {rel} the {dst} orb.",
    "Slide the {src} ball across until it sits {rel} the {dst} ball.",
    "Position the {src}-coloured ball {rel} the {dst}-coloured ball.",
    "Guide the ball that is {src} {rel} the ball that is {dst}.",
    "Steer the {src} marble {rel} the {dst} marble.",
    "Transfer the {src} sphere to a spot {rel} the {dst} sphere.",
    # haste
    "Swiftly propel the {src} ball {rel} the {dst} ball.",
    "Quickly, get the {src} ball {rel} the {dst} ball!",
    "Hurry and shove the {src} ball {rel} the {dst} ball.",
    "Without delay, move the {src} ball {rel} the {dst} ball.",
    "As fast as you can, bring the {src} orb {rel} the {dst} orb.",
    "Rapidly nudge the {src} ball into place {rel} the {dst} ball.",
    "Be quick: the {src} ball goes {rel} the {dst} ball.",
    # dislike
    "I really dislike where the {src} ball is; it belongs {rel} the {dst} ball.",
    "The {src} ball is in the wrong place. It should sit {rel} the {dst} ball.",
    "It bothers me that the {src} ball is not {rel} the {dst} ball. Fix that, please.",
    "I can't stand the {src} ball where it is now; park it {rel} the {dst} ball.",
    "The current spot of the {src} sphere annoys me, so move it {rel} the {dst} sphere.",
    "Ugh, the {src} ball is misplaced. Set it {rel} the {dst} ball.",
    # pleasure
    "Seeing the {src} ball {rel} the {dst} ball would make me happy.",
    "It would delight me to find the {src} ball {rel} the {dst} ball.",
    "I'd love it if the {src} orb ended up {rel} the {dst} orb.",
    "Nothing would please me more than the {src} ball resting {rel} the {dst} ball.",
    "I'd be thrilled to see the {src} sphere sitting {rel} the {dst} sphere.",
    # indirect
    "The {dst} ball looks lonely; could the {src} ball keep it company {rel} it?",
    "Wouldn't the {src} ball look better {rel} the {dst} ball?",
    "I think the {src} ball would be nicer {rel} the {dst} ball.",
    "Is it possible to have the {src} ball {rel} the {dst} ball?",
    "Let's see the {src} ball {rel} the {dst} ball next.",
    "The table needs the {src} ball {rel} the {dst} ball.",
    "Arrange things so that the {src} sphere is {rel} the {dst} sphere.",
    "The spot {rel} the {dst} ball is where the {src} ball should go.",
    "My plan has the {src} ball {rel} the {dst} ball; make it so.",
    "For the next picture, the {src} ball stands {rel} the {dst} ball.",
    "How about moving the {src} one so it is {rel} the {dst} one?",
    "Would you mind getting the {src} orb {rel} the {dst} orb?",
)

_EASY_STEP = (
    "Shift the {color} ball {way}.",
    "Please push the {color} ball {way}.",
    "Kindly nudge the {color}-coloured ball {way}.",
    "Move the ball that has the colour {color} {way}.",
    "Give the {color} ball a push {way}.",
    "Move the {color} ball one step {way}.",
    "Push the {color} sphere a little {way}.",
    "Roll the {color} ball {way} once.",
    "Slide the {color} orb {way} by one push.",
    "Nudge the {color} ball {way}, leaving the others where they are.",
    "Only the {color} ball should move, and only {way}.",
    "Bump the {color} ball {way}.",
    "Can you move the {color} ball {way} a bit?",
    "The {color} ball needs to go {way} a step.",
    "Just push the {color} ball {way}.",
    "Take the {color} ball one step {way}.",
    "Send the {color} sphere {way} a short way.",
    "Edge the {color} ball {way}.",
    "Tap the {color} ball {way}.",
    "Give the {color} orb a single shove {way}.",
)

_HARD_COMBINED = (
    "Push {clauses}.",
    "Move {clauses}.",
    "Keep {clauses}.",
    "Help me put {clauses}.",
    "Arrange the table with {clauses}.",
    "Please place {clauses}.",
)

_HARD_LINE = (
    "Line up the balls from left to right: red, blue, green, purple, cyan.",
    "Arrange the balls in a horizontal line, left to right, in the order red, blue, green, purple, cyan.",
    "Put all five balls in a row going right: red first, then blue, green, purple and cyan.",
    "Form a left-to-right line of red, blue, green, purple and cyan balls.",
    "Order the balls along a line from left to right as red, blue, green, purple, cyan.",
    "Make a horizontal row with the red ball on the left, then blue, green, purple, and the cyan ball on the right.",
    "Sort the balls left to right by colour: red, blue, green, purple, cyan, in one line.",
    "Place the balls side by side from left to right: red, blue, green, purple, cyan.",
    "Line the spheres up horizontally in this order from the left: red, blue, green, purple, cyan.",
    "Build a row of balls running rightward: red, blue, green, purple, cyan.",
    "Could you line the balls up left to right as red, blue, green, purple and cyan?",
    "I'd like the balls in a single horizontal line: red, blue, green, purple, cyan from left to right.",
    "Set the five balls in a line with red leftmost, followed by blue, green, purple and cyan.",
    "Push the balls into a left-to-right line ordered red, blue, green, purple, cyan.",
    "Arrange red, blue, green, purple and cyan balls in that order along a horizontal line.",
    "Get the balls into one row from left to right: red, blue, green, purple, cyan.",
    "Line up every ball horizontally so that red, blue, green, purple and cyan go from left to right.",
    "Make the balls stand in a line, red on the far left and cyan on the far right, with blue, green and purple in between in that order.",
    "Please put the balls in a horizontal line, ordered red, blue, green, purple, cyan from the left.",
    "Organise the balls in a row from left to right: red, blue, green, purple, cyan.",
)

_HARD_GATHER = (
    "Gather the other balls around the green ball.",
    "Arrange the other balls around the green ball as the centre of a circle.",
    "Bring every other ball close to the green ball.",
    "Cluster the red, blue, purple and cyan balls around the green ball.",
    "Make the green ball the centre and put the rest around it.",
    "Collect all the other balls near the green ball.",
    "Push the other four balls in close around the green ball.",
    "Surround the green ball with the other balls.",
    "Group the remaining balls tightly around the green one.",
    "Put the green ball in the middle of a circle formed by the other balls.",
    "Could you gather the other spheres around the green sphere?",
    "I'd like all the other balls huddled around the green ball.",
    "Form a ring of balls around the green ball.",
    "Move the other balls so they encircle the green ball.",
    "Crowd the other four balls around the green ball.",
    "Assemble the other balls around the green ball.",
    "Let the green ball be the hub, with the other balls gathered around it.",
    "Pull all the other balls in close to the green ball.",
    "Round up the other balls next to the green ball.",
    "Place the rest of the balls in a circle around the green ball.",
)

PHRASINGS: dict[str, dict[str, tuple[str, ...]]] = {
    "train": {task: _TRAIN_RELATION for task in LEVEL_TASKS["train"]},
    "rephrase": {task: _REPHRASE_RELATION for task in LEVEL_TASKS["rephrase"]},
    "easy": {task: _EASY_STEP for task in LEVEL_TASKS["easy"]},
    "hard": {
        "two-relations": _HARD_COMBINED,
        "three-relations": _HARD_COMBINED,
        "line-up": _HARD_LINE,
        "gather": _HARD_GATHER,
    },
}
"""level → task → templates (each drawn uniformly at reset)."""


def _clause(src: int, dst: int, side: str) -> str:
    return f"the {COLORS[src]} ball {RELATION_WORDS[side]} the {COLORS[dst]} ball"


def slots(goal: Goal) -> dict[str, str]:
    """Values for a template's fields given the episode's goal."""
    if goal.ball >= 0:
        return {"color": COLORS[goal.ball], "way": STEP_WORDS[goal.side]}
    if len(goal.relations) == 1:
        (r,) = goal.relations
        return {"src": COLORS[r.src], "dst": COLORS[r.dst], "rel": RELATION_WORDS[r.side]}
    clauses = [_clause(r.src, r.dst, r.side) for r in goal.relations]
    return {"clauses": ", ".join(clauses[:-1]) + " and " + clauses[-1]} if clauses else {}


def instruction(level: str, goal: Goal, rng: np.random.Generator) -> str:
    """One instruction for ``goal``, its template drawn from ``rng``."""
    templates = PHRASINGS[level][goal.task]
    return templates[int(rng.integers(len(templates)))].format(**slots(goal))


def all_instructions(level: str) -> list[str]:
    """Every instruction the level can emit (each task's templates × every goal of the task)."""
    texts = [
        template.format(**slots(goal))
        for task in LEVEL_TASKS[level]
        for goal in TASKS[task].goals
        for template in PHRASINGS[level][task]
    ]
    return list(dict.fromkeys(texts))
