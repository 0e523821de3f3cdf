"""Instructions per level and task, written for imaginebench (none copied from the original).

As in the original (docs/original-benchmark.md#libero): one phrasing per train, easy and hard task, ten unseen rephrasings
per train task (synonyms, haste, dislike, pleasure and indirect requests). Every string is used.
"""

from __future__ import annotations

from itertools import permutations

from imaginebench.envs.libero.layout import NAMES, OBJECTS, SHORT

_REPHRASE_PICK = (
    "Use the robot hand to take hold of the {o}.",
    "Grab the {o} with the gripper.",
    "Lift the {o} off the floor.",
    "Quickly, get a firm grip on the {o}!",
    "I would really like you to pick up the {o}.",
    "Close the fingers around the {o} and raise it.",
    "The {o} should end up in the gripper's grasp.",
    "Please take the {o} up in the claw.",
    "Could you hold the {o} up for me?",
    "Hurry and snatch the {o} from the ground.",
)
_REPHRASE_PLACE = (
    "Put the {o} into the basket.",
    "Drop the {o} inside the basket.",
    "Quickly, get the {o} into the basket!",
    "I hate seeing the {o} lying around; stow it in the basket.",
    "It would make me happy to see the {o} in the basket.",
    "Move the {o} over the basket and let go of it.",
    "The basket is where the {o} belongs.",
    "Deposit the {o} in the basket, please.",
    "Could you load the {o} into the basket?",
    "Set the {o} down inside the basket right away.",
)


def _phrasings() -> dict[str, dict[str, tuple[str, ...]]]:
    train, rephrase, easy, hard = {}, {}, {}, {}
    for obj in OBJECTS:
        name, short = NAMES[obj], SHORT[obj]
        train[f"pick-{short}"] = (f"Pick up the {name} with the gripper.",)
        train[f"place-{short}"] = (f"Place the {name} in the basket.",)
        rephrase[f"pick-{short}"] = tuple(text.format(o=name) for text in _REPHRASE_PICK)
        rephrase[f"place-{short}"] = tuple(text.format(o=name) for text in _REPHRASE_PLACE)
        easy[f"pick-and-place-{short}"] = (f"Pick up the {name} and place it in the basket.",)
        easy[f"reach-{short}"] = (f"Move the gripper right next to the {name}.",)
        hard[f"pick-and-place-aside-{short}"] = (f"Pick up the {name} and set it down a little to the side.",)
        hard[f"pick-out-of-{short}"] = (
            f"The basket is on fire: pick the {name} up out of the basket and hold it well away.",
        )
    for a, b in permutations(OBJECTS, 2):
        easy[f"pick-{SHORT[a]}-and-place-to-{SHORT[b]}"] = (f"Pick up the {NAMES[a]} and place it on the {NAMES[b]}.",)
        hard[f"sequential-pick-and-place-{SHORT[a]}-and-{SHORT[b]}"] = (
            f"Pick up the {NAMES[a]} and place it in the basket, then pick up the {NAMES[b]} and place it in the basket too.",
        )
    hard["sequential-pick-and-place-all"] = (
        "Put the alphabet soup, the cream cheese and the salad dressing in the basket, one after another.",
    )
    return {"train": train, "rephrase": rephrase, "easy": easy, "hard": hard}


PHRASINGS: dict[str, dict[str, tuple[str, ...]]] = _phrasings()
