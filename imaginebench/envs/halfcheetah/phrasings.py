"""Instruction texts per level and task, written for imaginebench (docs/original-benchmark.md#what-we-require-of-every-domain: our own phrasings, in
the original's categories). Rephrase texts never occur in train (a test checks it); each instruction
names the task it is used for (the original swapped the jump instructions, quirk 7 of docs/original-benchmark.md)."""

from __future__ import annotations

TRAIN: dict[str, list[str]] = {
    "run-forward": [
        "Run forward.",
        "Run forwards.",
        "Run ahead.",
        "Move forward.",
        "Go forward at a run.",
        "Run toward the front.",
        "Keep running forward.",
        "Head forward at a steady run.",
        "Run in the forward direction.",
        "Move ahead at a run.",
        "Go forward.",
        "Run to the front.",
    ],
    "run-backward": [
        "Run backward.",
        "Run backwards.",
        "Run in reverse.",
        "Move backward.",
        "Go backward at a run.",
        "Run toward the back.",
        "Keep running backward.",
        "Head backward at a steady run.",
        "Run in the backward direction.",
        "Move back at a run.",
        "Go backward.",
        "Run to the rear.",
    ],
    "jump-forward": [
        "Jump forward.",
        "Jump forwards.",
        "Hop forward.",
        "Jump ahead.",
        "Make jumps going forward.",
        "Leap forward.",
        "Bound forward with jumps.",
        "Jump toward the front.",
        "Keep jumping forward.",
        "Jump in the forward direction.",
        "Hop ahead.",
        "Move forward by jumping.",
    ],
    "jump-backward": [
        "Jump backward.",
        "Jump backwards.",
        "Hop backward.",
        "Jump back.",
        "Make jumps going backward.",
        "Leap backward.",
        "Bound backward with jumps.",
        "Jump toward the back.",
        "Keep jumping backward.",
        "Jump in the backward direction.",
        "Hop back.",
        "Move backward by jumping.",
    ],
}

REPHRASE: dict[str, list[str]] = {
    "run-forward": [
        "Sprint to the front.",
        "Dash onward.",
        "Race ahead of where you are.",
        "Please jog forward.",
        "I would like you to advance at a run.",
        "Gallop onward.",
        "Take off running to the front, quickly now.",
        "Charge ahead.",
        "Your job is to cover ground toward the front.",
        "Don't stay put, run onward.",
    ],
    "run-backward": [
        "Sprint to the rear.",
        "Dash in reverse.",
        "Race away behind you.",
        "Please jog in reverse.",
        "I would like you to retreat at a run.",
        "Gallop rearward.",
        "Take off running to the rear, quickly now.",
        "Charge in reverse.",
        "Your job is to cover ground toward the rear.",
        "Don't stay put, run rearward.",
    ],
    "jump-forward": [
        "Leap one step ahead.",
        "Spring onward.",
        "Bounce to the front.",
        "Please hop onward.",
        "I would like you to advance in leaps.",
        "Vault ahead.",
        "Spring up and travel to the front.",
        "Pounce ahead.",
        "Your job is to get airborne and go onward.",
        "Don't walk, leap onward.",
    ],
    "jump-backward": [
        "Leap one step to the rear.",
        "Spring rearward.",
        "Bounce to the rear.",
        "Please hop in reverse.",
        "I would like you to retreat in leaps.",
        "Vault backwards.",
        "Spring up and travel to the rear.",
        "Pounce rearward.",
        "Your job is to get airborne and go rearward.",
        "Don't walk, leap rearward.",
    ],
}

EASY: dict[str, list[str]] = {
    "run-forward-faster": [
        "Run forward faster.",
        "Run forward as fast as you can.",
        "Sprint forward at full speed.",
        "Move forward quicker than a normal run.",
        "Run ahead at top speed.",
        "Go forward very fast.",
    ],
    "run-backward-faster": [
        "Run backward faster.",
        "Run backward as fast as you can.",
        "Sprint backward at full speed.",
        "Move backward quicker than a normal run.",
        "Run in reverse at top speed.",
        "Go backward very fast.",
    ],
}

HARD: dict[str, list[str]] = {
    "forward-then-backward": [
        "Run forward, then run backward.",
        "Move forward first and then come back.",
        "Go ahead, then turn around and run back to where you started.",
        "Run forward and then backward.",
        "First run to the front, then run back.",
        "Advance a few meters, then return by running backward.",
    ],
    "backward-then-forward": [
        "Run backward, then run forward.",
        "Move backward first and then come back.",
        "Go back, then run forward to where you started.",
        "Run backward and then forward.",
        "First run to the rear, then run forward again.",
        "Retreat a few meters, then return by running forward.",
    ],
    "jump-in-place": [
        "Jump in place.",
        "Jump without moving away.",
        "Jump on the spot.",
        "Keep jumping where you are.",
        "Hop in place.",
        "Jump up and down in the original position.",
    ],
}

PHRASINGS: dict[str, dict[str, list[str]]] = {"train": TRAIN, "rephrase": REPHRASE, "easy": EASY, "hard": HARD}
