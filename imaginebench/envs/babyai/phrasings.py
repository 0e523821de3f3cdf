"""Instruction templates per level and task, written for imaginebench (none copied from the original).

Fields: ``{color} {obj}`` name the first thing the goal names, ``{color2} {obj2}`` and
``{color3} {obj3}`` the second and third (PutLine/PutPile: ball, box, key in that order);
``{ns}``/``{ew}`` are GoWall's corner ("north"/"south", "west"/"east"). The train and rephrase
sets are disjoint; rephrase mixes synonyms, haste, dislike, pleasure and indirect requests
(as the KALM rephrasings do) and every one of its templates is used.
"""

from __future__ import annotations

# ----------------------------------------------------------------------------- train

_TRAIN_GOTO = (
    "go to the {color} {obj}",
    "walk to the {color} {obj}",
    "move to the {color} {obj}",
    "head to the {color} {obj}",
    "head toward the {color} {obj}",
    "navigate to the {color} {obj}",
    "make your way to the {color} {obj}",
    "get to the {color} {obj}",
    "go over to the {color} {obj}",
    "walk over to the {color} {obj}",
    "approach the {color} {obj}",
    "reach the {color} {obj}",
    "travel to the {color} {obj}",
    "proceed to the {color} {obj}",
    "find the {color} {obj} and go to it",
    "please go to the {color} {obj}",
    "can you go to the {color} {obj}?",
    "could you walk to the {color} {obj}?",
    "go find the {color} {obj}",
    "the {color} {obj} is your destination",
    "move yourself to the {color} {obj}",
    "walk up to the {color} {obj}",
    "go right up to the {color} {obj}",
    "get yourself to the {color} {obj}",
    "go where the {color} {obj} is",
    "step over to the {color} {obj}",
    "head over to the {color} {obj}",
    "move toward the {color} {obj} until you reach it",
    "your goal is to reach the {color} {obj}",
    "go to the {obj} that is {color}",
    "walk to the {color}-colored {obj}",
    "please head to the {color} {obj}",
)

_TRAIN_OPEN = (
    "open the {color} door",
    "open up the {color} door",
    "swing open the {color} door",
    "push open the {color} door",
    "pull open the {color} door",
    "get the {color} door open",
    "make the {color} door open",
    "go open the {color} door",
    "please open the {color} door",
    "can you open the {color} door?",
    "could you open the {color} door?",
    "walk to the {color} door and open it",
    "go to the {color} door and open it",
    "find the {color} door and open it",
    "the {color} door should be open",
    "leave the {color} door open",
    "toggle the {color} door open",
    "throw open the {color} door",
    "fling open the {color} door",
    "open the door that is {color}",
    "the {color} door needs to be opened",
    "your task is to open the {color} door",
    "get that {color} door opened",
    "head over and open the {color} door",
    "open the {color} door for me",
    "i want the {color} door open",
    "make sure the {color} door is open",
    "open the {color}-colored door",
    "go over to the {color} door and open it up",
    "set the {color} door open",
    "please get the {color} door open",
    "have the {color} door opened",
)

_TRAIN_PICKUP = (
    "pick up the {color} {obj}",
    "grab the {color} {obj}",
    "take the {color} {obj}",
    "collect the {color} {obj}",
    "get the {color} {obj}",
    "fetch the {color} {obj}",
    "lift the {color} {obj}",
    "snatch the {color} {obj}",
    "pick the {color} {obj} up",
    "take hold of the {color} {obj}",
    "grab hold of the {color} {obj}",
    "go and pick up the {color} {obj}",
    "go get the {color} {obj}",
    "please pick up the {color} {obj}",
    "can you pick up the {color} {obj}?",
    "could you grab the {color} {obj}?",
    "find the {color} {obj} and pick it up",
    "walk to the {color} {obj} and pick it up",
    "go to the {color} {obj} and take it",
    "hold the {color} {obj}",
    "carry the {color} {obj}",
    "pick up the {obj} that is {color}",
    "take the {color}-colored {obj}",
    "your task is to pick up the {color} {obj}",
    "get hold of the {color} {obj}",
    "i want you to hold the {color} {obj}",
    "retrieve the {color} {obj}",
    "obtain the {color} {obj}",
    "lift up the {color} {obj}",
    "please take the {color} {obj}",
    "get the {color} {obj} in your hands",
    "go fetch the {color} {obj}",
)

_TRAIN_PUTNEXT = (
    "put the {color} {obj} next to the {color2} {obj2}",
    "place the {color} {obj} next to the {color2} {obj2}",
    "put the {color} {obj} beside the {color2} {obj2}",
    "place the {color} {obj} beside the {color2} {obj2}",
    "move the {color} {obj} next to the {color2} {obj2}",
    "move the {color} {obj} beside the {color2} {obj2}",
    "set the {color} {obj} down next to the {color2} {obj2}",
    "drop the {color} {obj} next to the {color2} {obj2}",
    "bring the {color} {obj} next to the {color2} {obj2}",
    "carry the {color} {obj} over to the {color2} {obj2}",
    "put the {color} {obj} by the {color2} {obj2}",
    "place the {color} {obj} by the {color2} {obj2}",
    "put the {color} {obj} alongside the {color2} {obj2}",
    "position the {color} {obj} next to the {color2} {obj2}",
    "leave the {color} {obj} next to the {color2} {obj2}",
    "put the {color} {obj} adjacent to the {color2} {obj2}",
    "please put the {color} {obj} next to the {color2} {obj2}",
    "can you put the {color} {obj} next to the {color2} {obj2}?",
    "could you place the {color} {obj} beside the {color2} {obj2}?",
    "pick up the {color} {obj} and put it next to the {color2} {obj2}",
    "take the {color} {obj} and drop it beside the {color2} {obj2}",
    "grab the {color} {obj} and set it next to the {color2} {obj2}",
    "the {color} {obj} should be next to the {color2} {obj2}",
    "make the {color} {obj} touch the {color2} {obj2}",
    "move the {color} {obj} so it is next to the {color2} {obj2}",
    "put the {color} {obj} right next to the {color2} {obj2}",
    "place the {color} {obj} close to the {color2} {obj2}",
    "bring the {color} {obj} over beside the {color2} {obj2}",
    "set the {color} {obj} beside the {color2} {obj2}",
    "put the {color} {obj} down beside the {color2} {obj2}",
)

# ----------------------------------------------------------------------------- rephrase

_REPHRASE_GOTO = (
    "wander over to the {color} {obj}",
    "stroll to the {color} {obj}",
    "make a beeline for the {color} {obj}",
    "pay a visit to the {color} {obj}",
    "journey over to the {color} {obj}",
    "maneuver toward the {color} {obj}",
    "hurry to the {color} {obj}",
    "quickly dash to the {color} {obj}",
    "rush over to the {color} {obj} as fast as you can",
    "swiftly make your way to the {color} {obj}",
    "i hate how far you are from the {color} {obj}, fix that",
    "i don't like you standing so far away from the {color} {obj}",
    "being away from the {color} {obj} bothers me",
    "it would make me happy to see you by the {color} {obj}",
    "i'd love for you to be at the {color} {obj}",
    "nothing would please me more than you reaching the {color} {obj}",
    "the {color} {obj} is waiting for you",
    "your next stop is the {color} {obj}",
    "i need you over at the {color} {obj}",
    "close the distance between you and the {color} {obj}",
)

_REPHRASE_OPEN = (
    "pry open the {color} door",
    "unseal the {color} door",
    "crack the {color} door open",
    "set the {color} door ajar",
    "quickly yank the {color} door open",
    "hurry and get the {color} door open",
    "open the {color} door as fast as you can",
    "swiftly swing the {color} door wide",
    "i can't stand the {color} door being shut",
    "i dislike seeing the {color} door closed",
    "the closed {color} door really annoys me",
    "it would delight me to see the {color} door open",
    "i'd be so pleased if the {color} door were open",
    "an open {color} door would make my day",
    "let some air in through the {color} door",
    "the {color} door is shut, change that",
    "don't leave the {color} door closed",
    "the way through the {color} door should be clear",
    "give the {color} door a push so it stands open",
    "i want to see past the {color} door",
)

_REPHRASE_PICKUP = (
    "clasp the {color} {obj}",
    "seize the {color} {obj}",
    "nab the {color} {obj}",
    "scoop up the {color} {obj}",
    "hoist the {color} {obj}",
    "claim the {color} {obj}",
    "quickly snap up the {color} {obj}",
    "hurry and grab the {color} {obj}",
    "swiftly lift the {color} {obj} off the floor",
    "i'm tired of the {color} {obj} lying on the floor",
    "i dislike the {color} {obj} just sitting there",
    "the {color} {obj} on the ground bothers me",
    "i'd be happy to see the {color} {obj} in your hands",
    "holding the {color} {obj} would please me",
    "it would delight me if you held the {color} {obj}",
    "the {color} {obj} belongs in your hands",
    "your hands should not be empty, the {color} {obj} is for you",
    "keep the {color} {obj} with you",
    "take possession of the {color} {obj}",
    "pluck the {color} {obj} from the floor",
)

_REPHRASE_PUTNEXT = (
    "nestle the {color} {obj} against the {color2} {obj2}",
    "station the {color} {obj} alongside the {color2} {obj2}",
    "park the {color} {obj} next to the {color2} {obj2}",
    "deposit the {color} {obj} beside the {color2} {obj2}",
    "lay the {color} {obj} down near the {color2} {obj2}",
    "relocate the {color} {obj} to the side of the {color2} {obj2}",
    "quickly shift the {color} {obj} up against the {color2} {obj2}",
    "hurry and plant the {color} {obj} beside the {color2} {obj2}",
    "swiftly carry the {color} {obj} to the {color2} {obj2} and set it down there",
    "i dislike how far the {color} {obj} is from the {color2} {obj2}",
    "the {color} {obj} and the {color2} {obj2} are too far apart for my taste",
    "it bothers me that the {color} {obj} is nowhere near the {color2} {obj2}",
    "seeing the {color} {obj} beside the {color2} {obj2} would make me happy",
    "i'd love the {color} {obj} to keep the {color2} {obj2} company",
    "it would please me to find the {color} {obj} touching the {color2} {obj2}",
    "reunite the {color} {obj} with the {color2} {obj2}",
    "the {color} {obj} wants to be neighbors with the {color2} {obj2}",
    "make the {color} {obj} and the {color2} {obj2} neighbors by moving the {color} {obj}",
    "the {color2} {obj2} needs the {color} {obj} right beside it",
    "shift the {color} {obj} so that it borders the {color2} {obj2}",
)

# ----------------------------------------------------------------------------- easy

_EASY_OPENGO = (
    "open the {color} door, then go to any object",
    "open the {color} door and then go stand on the ball, the box or the key",
    "first open the {color} door, then walk to one of the objects",
    "after opening the {color} door, go to an object",
    "get the {color} door open and then step onto any item",
    "open the {color} door, then go to whichever object you like",
    "once the {color} door is open, walk over to any object",
    "open the {color} door and afterwards move onto one of the objects",
)

_EASY_OPENPICK = (
    "open the {color} door, then pick up any object",
    "open the {color} door and then pick something up",
    "first open the {color} door, then grab one of the objects",
    "after opening the {color} door, pick up an object",
    "get the {color} door open and then take any item",
    "open the {color} door, then pick up whichever object you like",
    "once the {color} door is open, grab the ball, the box or the key",
    "open the {color} door and afterwards hold one of the objects",
)

_EASY_GOWALL = (
    "go to the {ns}-{ew} corner",
    "go to the corner where the {ns} wall meets the {ew} wall",
    "walk to the {ew} end of the {ns} wall",
    "stand in the {ns}-{ew} corner of the room",
    "head for the corner between the {ns} and {ew} walls",
    "move into the {ns}-{ew} corner",
    "go along the walls to the {ns}-{ew} corner",
    "go to the {ns} wall, all the way to its {ew} end",
)

_EASY_GOCENTER = (
    "carry the {color} {obj} to the center of the room",
    "bring the {color} {obj} to the middle of the room",
    "take the {color} {obj} to the center of the room",
    "pick up the {color} {obj} and go to the center of the room",
    "go to the middle of the room holding the {color} {obj}",
    "walk to the center of the room with the {color} {obj} in hand",
    "get the {color} {obj} and bring it to the room's center",
    "holding the {color} {obj}, go stand in the middle of the room",
)

# ----------------------------------------------------------------------------- hard

_HARD_OPENLOCK = (
    "pick up the {color} key, then open the {color} door",
    "use the {color} key to unlock the {color} door",
    "unlock the {color} door with the {color} key",
    "get the {color} key and open the locked {color} door",
    "the {color} door is locked, fetch the {color} key and open it",
    "grab the {color} key and unlock the {color} door",
    "open the locked {color} door using the {color} key",
    "take the {color} key to the {color} door and open it",
)

_THREE = "the {color} {obj}, the {color2} {obj2} and the {color3} {obj3}"

_HARD_PUTLINE = tuple(
    template.replace("THREE", _THREE)
    for template in (
        "put THREE in a line",
        "line up THREE",
        "arrange THREE in a straight line",
        "place THREE in one row or one column",
        "make a straight line out of THREE",
        "set THREE down in a line",
        "align THREE along one row or column",
        "move THREE so they form a line",
    )
)

_HARD_PUTPILE = tuple(
    template.replace("THREE", _THREE)
    for template in (
        "gather THREE into a pile",
        "put THREE together in a pile",
        "pile up THREE",
        "bring THREE together in a tight cluster",
        "group THREE next to each other in a heap",
        "cluster THREE in one corner-shaped pile",
        "heap THREE together",
        "collect THREE into one pile",
    )
)

_TRAIN = {"GoTo": _TRAIN_GOTO, "Open": _TRAIN_OPEN, "PickUp": _TRAIN_PICKUP, "PutNext": _TRAIN_PUTNEXT}

PHRASINGS: dict[str, dict[str, tuple[str, ...]]] = {
    "train": _TRAIN,
    "rephrase": {
        "GoTo": _REPHRASE_GOTO,
        "Open": _REPHRASE_OPEN,
        "PickUp": _REPHRASE_PICKUP,
        "PutNext": _REPHRASE_PUTNEXT,
    },
    "easy": {"OpenGo": _EASY_OPENGO, "OpenPick": _EASY_OPENPICK, "GoWall": _EASY_GOWALL, "GoCenter": _EASY_GOCENTER},
    "hard": {"OpenLock": _HARD_OPENLOCK, "PutLine": _HARD_PUTLINE, "PutPile": _HARD_PUTPILE},
}
"""level → task → templates; one is drawn uniformly per episode."""
