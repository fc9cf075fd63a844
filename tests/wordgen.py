"""Generated word lists for tests and benchmarks: realistic in shape, copyrighted by nobody.

Official lexicons cannot be shipped, so large lists are made by a character-level
Markov chain trained on the demo list: the words look like English (shared
prefixes and suffixes, realistic lengths), which matters for trie size and speed.

The default order, 5, gives a list as compressible as real English word lists
(xz -9 packs it to about 22% of its text, as it packs ENABLE): about 107,000 of its
280,000 words are ENABLE words and the rest plausible inventions, much as CSW holds
most of the North American list plus its own. Order 3 gives a harder, less
realistic list (xz -9: about 29%), which the benchmark shows as a stress case.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterable

_START, _END = "^", "$"


def markov_words(
    training: Iterable[str], count: int, *, seed: int = 2024, order: int = 5, min_length: int = 2, max_length: int = 15
) -> list[str]:
    """Return ``count`` unique pseudo-words, sorted, generated from ``training`` (deterministic for a seed)."""
    transitions: dict[str, list[str]] = defaultdict(list)
    for word in training:
        padded = _START * order + word + _END
        for i in range(order, len(padded)):
            transitions[padded[i - order : i]].append(padded[i])
    rng = random.Random(seed)
    choice = rng.choice
    words: set[str] = set()
    while len(words) < count:
        context, letters = _START * order, list[str]()
        while True:
            char = choice(transitions[context])
            if char == _END or len(letters) > max_length:
                break
            letters.append(char)
            context = context[1:] + char
        if min_length <= len(letters) <= max_length:
            words.add("".join(letters))
    return sorted(words)


def near_misses(words: list[str], alphabet: str, count: int, *, seed: int = 7) -> list[str]:
    """Return ``count`` strings one edit away from a word of ``words`` (a letter changed, added or
    dropped) that are not themselves in ``words``."""
    rng = random.Random(seed)
    known = set(words)
    misses: list[str] = []
    while len(misses) < count:
        word = rng.choice(words)
        position = rng.randrange(len(word) + 1)
        edit = rng.randrange(3)
        if edit == 0 and position < len(word):
            candidate = word[:position] + rng.choice(alphabet) + word[position + 1 :]
        elif edit == 1:
            candidate = word[:position] + rng.choice(alphabet) + word[position:]
        elif position < len(word):
            candidate = word[:position] + word[position + 1 :]
        else:
            continue
        if candidate and candidate not in known:
            misses.append(candidate)
    return misses
