"""``wordjudge lexicon`` and ``wordjudge profile``: compile the TD's word lists and amend them, at the server."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from wordjudge.base.errors import Message, render
from wordjudge.cli.folder import say_folder
from wordjudge.cli.language import cli_language
from wordjudge.cli.options import setting_options
from wordjudge.model.records import Verdict, verdict_message
from wordjudge.service.settings import load_settings
from wordjudge.tournament.served import unverified_claims
from wordjudge.words.editions import load_registry, short
from wordjudge.words.profile import Catalog
from wordjudge.words.sources import read_source
from wordjudge.words.tiles import builtin_sets
from wordjudge.words.tiles import find as find_tiles
from wordjudge.words.wordlist import TEXT_FORMATS, Progress, SourceFormat, WordList, read_word_list

if TYPE_CHECKING:
    from wordjudge.words.lexicon import Lexicon, Manifest

_PROGRESS_MIN_LINES = 50_000


@click.group()
def lexicon() -> None:
    """Compile, list, inspect, compare and query lexicons (TD tools on the server machine)."""


@lexicon.command("add")
@click.argument("source", type=click.Path(path_type=Path, exists=True, dir_okay=False))
@click.option("--name", required=True, help="Name to serve it under, e.g. CSW24.")
@click.option(
    "--format",
    "source_format",
    type=click.Choice([f.value for f in SourceFormat]),
    default="auto",
    show_default=True,
    help="plain: one word per line; zyzzyva: WORD definition...; playability: score WORD; kwg: an engine's word "
    "graph (wolges, macondo); zyzzyva-db: a Zyzzyva lexicon database. auto: told from the file.",
)
@click.option(
    "--tiles",
    "tile_set",
    metavar="SET|FILE",
    help=f"The board's tiles, where a tile can be several letters: {builtin_sets()}, or a tile set file (.toml)."
    " Default: one letter a tile.",
)
@click.option("--skip-invalid", is_flag=True, help="Leave out lines that are not words (and count them).")
@click.option("--replace", is_flag=True, help="Replace a compiled lexicon of the same name.")
@click.option(
    "--force",
    is_flag=True,
    help="Add it although its name claims an edition (CSW24, NWL2023...) its words are not: "
    "every screen then shows it as UNVERIFIED.",
)
@click.option(
    "--force-tiles",
    is_flag=True,
    help="Compile a KWG with its tile set although its words do not look like that set's language (tiles never "
    "used, tile frequencies of another language): the lexicon records it, and lexicon info and list show it.",
)
@setting_options("data_dir")
def lexicon_add(
    source: Path,
    name: str,
    source_format: str,
    tile_set: str | None,
    skip_invalid: bool,
    replace: bool,
    force: bool,
    force_tiles: bool,
    data_dir: Path | None,
) -> None:
    """Compile the word list SOURCE (plain, Zyzzyva or playability, optionally gzipped; a KWG; a Zyzzyva database).

    A KWG is read with the tile set --tiles gives, else the one its name says as the engines name their files
    (CSW21.kwg, NWL2020.kwg English; FILE2017.kwg, FISE2.kwg Spanish; DISC2.kwg Catalan), else the one the registry
    of known editions gives for the file; else it is refused."""
    catalog = open_catalog(data_dir)
    catalog.lexicons.path(name)  # a bad name fails before the file is read
    tiles = find_tiles(tile_set) if tile_set else None
    say_folder(catalog.data_dir)
    chosen = SourceFormat(source_format)
    word_list = read_source(
        source,
        format=chosen,
        tiles=tiles,
        skip_invalid=skip_invalid,
        progress=_progress_bar("Reading"),
        force_tiles=force_tiles,
    )
    click.echo(_reading_summary(word_list))
    said = word_list.tiles_said
    if word_list.tiles is not None and said is not None and said.key != "error.kwg.how.given":
        tiles = word_list.tiles  # a KWG numbers its tiles: the set that read them, said and named
        click.echo(f"Tiles: {tiles.name}, {said.text('en')} (give --tiles to choose another)")
    if word_list.tiles_forced:
        click.echo(f"WARNING: --force-tiles: {word_list.tiles_forced}. Compiled anyway; lexicon info and list say so.")
    manifest = catalog.lexicons.add(word_list, name, replace=replace, force=force)
    unit = "letters" if tiles is None or not tiles.multi else "tiles"
    click.echo(f"Compiled {name}: {manifest.word_count:,} words, {manifest.min_length}-{manifest.max_length} {unit}")
    if tiles is not None:
        click.echo(f"Tiles ({tiles.name}, {len(tiles.tiles)}): {tiles.shown()}")
    click.echo(f"Alphabet ({len(manifest.alphabet)} letters): {manifest.alphabet}")
    click.echo(f"Fingerprint: {manifest.fingerprint}")
    click.echo(f"Edition: {_identify(manifest)}")
    claim = load_registry().claim(name, manifest.word_count, manifest.fingerprint)
    if claim is not None and claim.unverified:
        click.echo(
            f"WARNING: {claim.badge}: {claim.problem()}. Added anyway (--force): kiosks, handhelds, "
            "dockets, the console and /api/health show it with this badge."
        )
    elif claim is not None:
        click.echo(f"Name: {claim.problem()}")
    click.echo(
        f"Saved in {catalog.lexicons.path(name)} (trie {manifest.trie_bytes:,} bytes, sha256 {manifest.trie_sha256})"
    )


@lexicon.command("list")
@setting_options("data_dir")
def lexicon_list(data_dir: Path | None) -> None:
    """List the compiled lexicons and profiles, with their fingerprints and editions."""
    catalog = open_catalog(data_dir)
    names = catalog.names()
    if not names:
        click.echo(f"No lexicons in {catalog.data_dir}. Add one with: wordjudge lexicon add FILE --name NAME")
        return
    rows = [("NAME", "KIND", "WORDS", "FINGERPRINT", "EDITION")]
    for name in names:
        spec = catalog.spec(name)
        if spec is None:
            manifest = catalog.lexicons.manifest(name)
            kind = "demo" if manifest.demo else "lexicon"
            edition = _identify(manifest) + ("; TILES FORCED (--force-tiles)" if manifest.tiles_forced else "")
            rows.append((name, kind, f"{manifest.word_count:,}", short(manifest.fingerprint), edition))
        else:
            amended = catalog.open(name)
            amendments = f"+{len(amended.additions.words)} -{len(amended.removals.words)} errata"
            if amended.secondary:
                amendments += f", {amended.secondary.name} for {amended.secondary_min_length}+ letters"
            edition = f"{spec.base} ({_identify(amended.base.manifest)}) {amendments}"
            claim = load_registry().claim(name, amended.base.manifest.word_count, amended.base.fingerprint)
            if claim is not None and claim.unverified:
                edition += f"; {claim.badge}"
            rows.append((name, "profile", "", short(amended.fingerprint), edition))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    for row in rows:
        click.echo("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False)) + "  " + row[-1])


@lexicon.command("info")
@click.argument("name")
@setting_options("data_dir")
def lexicon_info(name: str, data_dir: Path | None) -> None:
    """Show a lexicon or profile in full, after verifying its files and recomputing its fingerprint."""
    profile = open_catalog(data_dir).open(name)
    for lexicon in filter(None, (profile.base, profile.secondary)):
        lexicon.verify_content()
    if profile.amended:
        click.echo(f"Profile {profile.name}")
        click.echo(f"  fingerprint: {profile.fingerprint} (covers the base and every amendment)")
        click.echo(f"  alphabet: {profile.alphabet}")
        for label, errata in (("errata additions", profile.additions), ("errata removals", profile.removals)):
            if errata.words:
                click.echo(
                    f"  {label}: {len(errata.words)} word(s) from {errata.source_name} (sha256 {errata.source_sha256})"
                )
                click.echo(f"    {', '.join(errata.words[:20])}{' ...' if len(errata.words) > 20 else ''}")
        if profile.secondary:
            click.echo(
                f"  secondary source: {profile.secondary.name}, for words of {profile.secondary_min_length}+ letters"
            )
        for claim in unverified_claims(profile, load_registry()):
            click.echo(f"  {claim['badge']}: {claim['description']}")
        click.echo("")
    for lexicon in filter(None, (profile.base, profile.secondary)):
        _echo_manifest(lexicon)


@lexicon.command("check")
@click.argument("name")
@click.argument("words", nargs=-1, required=True)
@setting_options("data_dir", "language")
def lexicon_check(name: str, words: tuple[str, ...], data_dir: Path | None, language: str | None) -> None:
    """Look WORDS up in a lexicon or profile, word by word, with the source that accepted each (TD only).

    The lines are in the event's language (or --language's)."""
    settings = load_settings(data_dir=data_dir, language=language)
    lang = cli_language(settings)
    profile = Catalog(settings.data_dir).open(name)
    typed = [word for argument in words for word in re.split(r"[\s,]+", argument) if word]
    # Every reading of every word (one, but for a lexicon of a tile set), looked up; a word is acceptable when a
    # reading is (the adjudication asks the players which where several are, and judges that one).
    readings = [profile.readings(entry, position) for position, entry in enumerate(typed, start=1)]
    results = [[profile.lookup(reading) for reading in options] for options in readings]
    width = max(len(result.word) for found in results for result in found)
    said = {True: render("cli.word.acceptable", lang=lang), False: render("cli.word.not_acceptable", lang=lang)}
    column = max(14, *(len(text) for text in said.values()))
    for found in results:
        for result in found:
            reason = profile.reason_message(result.word).text(lang)
            click.echo(f"{result.word.ljust(width)}  {said[result.acceptable].ljust(column)}  {reason}")
    acceptable = all(any(result.acceptable for result in found) for found in results)
    verdict = Verdict.ACCEPTABLE if acceptable else Verdict.UNACCEPTABLE
    line = Message(
        "cli.verdict",
        verdict=verdict_message(verdict),
        n=len(results),
        lexicon=profile.name,
        fingerprint=short(profile.fingerprint),
    )
    click.echo(line.text(lang))


@lexicon.command("diff")
@click.argument("old")
@click.argument("new")
@setting_options("data_dir")
def lexicon_diff(old: str, new: str, data_dir: Path | None) -> None:
    """List the words added (+WORD) and removed (-WORD) from lexicon OLD to lexicon NEW."""
    store = open_catalog(data_dir).lexicons
    before, after = set(store.open(old).words()), set(store.open(new).words())
    added, removed = sorted(after - before), sorted(before - after)
    for word in removed:
        click.echo(f"-{word}")
    for word in added:
        click.echo(f"+{word}")
    click.echo(f"{old} -> {new}: {len(added):,} added, {len(removed):,} removed", err=True)


@click.group()
def profile() -> None:
    """Define lexicon profiles: a base lexicon with errata and a secondary source for long words."""


@profile.command("add")
@click.argument("name")
@click.option("--base", required=True, help="The compiled lexicon the profile amends, e.g. CSW24.")
@click.option(
    "--additions",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    help="Errata: a word list of words to accept.",
)
@click.option(
    "--removals",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    help="Errata: a word list of words to refuse.",
)
@click.option("--secondary", metavar="LEXICON", help="A compiled lexicon consulted for long words not in the base.")
@click.option(
    "--secondary-min-length",
    type=click.IntRange(min=2),
    help="Consult the secondary source for words of at least this many letters (NSA: 9).",
)
@click.option("--replace", is_flag=True, help="Replace a profile of the same name.")
@click.option(
    "--force",
    is_flag=True,
    help="Add it although its name claims an edition (CSW24-errata: CSW24) its base is not: "
    "every screen then shows it as UNVERIFIED.",
)
@setting_options("data_dir")
def profile_add(
    name: str,
    base: str,
    additions: Path | None,
    removals: Path | None,
    secondary: str | None,
    secondary_min_length: int | None,
    replace: bool,
    force: bool,
    data_dir: Path | None,
) -> None:
    """Define the profile NAME and show its fingerprint."""
    catalog = open_catalog(data_dir)
    tiles = catalog.lexicons.open(base).tiles  # errata words are read as the base's words are
    errata = {
        key: read_word_list(path, tiles=tiles) if path else None
        for key, path in (("additions", additions), ("removals", removals))
    }
    say_folder(catalog.data_dir)
    created, notes = catalog.add_profile(
        name,
        base,
        additions=errata["additions"],
        removals=errata["removals"],
        secondary=secondary,
        secondary_min_length=secondary_min_length,
        replace=replace,
        force=force,
    )
    click.echo(
        f"Profile {name}: base {base}, "
        f"{len(created.additions.words)} addition(s), {len(created.removals.words)} removal(s)"
    )
    if created.secondary:
        click.echo(f"Secondary source {created.secondary.name} for words of {created.secondary_min_length}+ letters")
    for note in notes:
        click.echo(f"Note: {note}")
    for claim in unverified_claims(created, load_registry()):
        click.echo(f"WARNING: {claim['badge']}: {claim['description']}; every screen shows it with this badge.")
    click.echo(f"Fingerprint: {created.fingerprint}")


def open_catalog(data_dir: Path | None) -> Catalog:
    return Catalog(load_settings(data_dir=data_dir).data_dir)


def _identify(manifest: Manifest) -> str:
    registry = load_registry()
    description = registry.identify(manifest.word_count, manifest.fingerprint).describe()
    claim = registry.claim(manifest.name, manifest.word_count, manifest.fingerprint)
    if claim is not None and claim.unverified:
        description += f"; {claim.badge}"
    return f"DEMO list, {description}" if manifest.demo else description


def _echo_manifest(lexicon: Lexicon) -> None:
    m = lexicon.manifest
    click.echo(f"Lexicon {m.name}{' (DEMO: not an official lexicon)' if m.demo else ''}")
    click.echo(f"  edition: {_identify(m)}")
    tiles = lexicon.tiles
    unit = "letters" if tiles is None or not tiles.multi else "tiles"
    click.echo(f"  words: {m.word_count:,}, {m.min_length}-{m.max_length} {unit}")
    if tiles is not None:
        click.echo(f"  tiles ({tiles.name}, {len(tiles.tiles)}): {tiles.shown()} (fingerprint {tiles.fingerprint})")
    if m.tiles_forced:
        click.echo(f"  TILES FORCED (--force-tiles): {m.tiles_forced}")
    click.echo(f"  alphabet ({len(m.alphabet)}): {m.alphabet}")
    click.echo(f"  fingerprint: {m.fingerprint}")
    click.echo("  verified: trie file matches the manifest; fingerprint recomputed from the words it holds")
    click.echo(f"  trie: {lexicon.directory / 'words.marisa'} ({m.trie_bytes:,} bytes, sha256 {m.trie_sha256})")
    click.echo(f"  source: {m.source_name} ({m.source_format}, sha256 {m.source_sha256})")
    click.echo(f"  source had: {m.duplicates:,} duplicate(s), {m.skipped_lines:,} invalid line(s) skipped")
    click.echo(f"  built: {m.built_at} by wordjudge {m.tool_version}")


def _reading_summary(word_list: WordList) -> str:
    if word_list.format not in TEXT_FORMATS:  # a KWG, a database: words, no lines
        what = f"Read {word_list.source_name}, {word_list.format.description}: {len(word_list.words):,} words"
        what += f", {word_list.duplicates:,} duplicate(s)"
        if word_list.invalid:  # --skip-invalid: the words no tile makes, left out
            left = word_list.invalid[0]
            what += f", {len(word_list.invalid):,} left out (first: {left.content!r}: {left.reason})"
        return what
    summary = (
        f"Read {word_list.source_name} ({word_list.format.value} list): {len(word_list.words):,} words, "
        f"{word_list.duplicates:,} duplicate(s), {word_list.comments:,} comment line(s) skipped"
    )
    if word_list.marked:
        first = ", ".join(f"line {number} {content!r}" for number, content in word_list.marked_lines)
        summary += f", {word_list.marked:,} word(s) marked with '#' read without the mark (first: {first})"
    if word_list.invalid:
        first = word_list.invalid[0].describe(word_list.source_name)
        summary += f", {len(word_list.invalid):,} invalid line(s) skipped (first: {first})"
    return summary


def _progress_bar(label: str) -> Progress | None:
    """A progress callback drawing a bar on a terminal, for big lists only; None elsewhere."""
    if not sys.stderr.isatty():
        return None
    state: dict[str, Any] = {}

    def update(done: int, total: int) -> None:
        if total < _PROGRESS_MIN_LINES:
            return
        bar = state.get("bar")
        if bar is None:
            bar = state["bar"] = click.progressbar(length=total, label=label, file=sys.stderr)
            bar.__enter__()
        bar.update(done - bar.pos)
        if done >= total:
            bar.__exit__(None, None, None)

    return update
