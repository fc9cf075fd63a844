"""Words: word lists, lexicon editions, compiled lexicons and profiles, the console's search."""
