"""What a running server holds: the settings, the verified lexicon profiles it serves, the registry.

Opened once at start-up (by the web app's lifespan, or by ``wordjudge serve``
just before it, so that a bad lexicon stops the start with a clear message) and
shared by every request. Nothing here imports the web framework.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from .demo import open_demo
from .editions import Registry, load_registry, short
from .profile import Catalog, Profile
from .settings import Settings

log = logging.getLogger(__name__)


@dataclass
class Resources:
    settings: Settings
    registry: Registry
    profiles: dict[str, Profile]  # by name, in the order configured

    @classmethod
    def open(cls, settings: Settings) -> Resources:
        """Open and verify every lexicon the settings name, or the demo list if they name none.

        Each lexicon's trie file is checked against its manifest and its words
        against its fingerprint before the server answers anything. Raises
        :class:`~wordjudge.errors.LexiconNotFound`, :class:`~wordjudge.errors.LexiconIntegrityError`
        or :class:`~wordjudge.errors.ProfileError`, naming the lexicon or file at fault.
        """
        catalog = Catalog(settings.data_dir)
        if settings.lexicons:
            profiles = {name: catalog.open(name) for name in settings.lexicons}
        else:
            demo = open_demo(catalog.lexicons)
            profiles = {demo.name: Profile(demo.name, demo)}
        for profile in profiles.values():
            for lexicon in filter(None, (profile.base, profile.secondary)):
                lexicon.verify_content()
        resources = cls(settings=settings, registry=load_registry(), profiles=profiles)
        for profile in profiles.values():
            log.info("serving %s", resources.describe(profile)["label"])
        return resources

    def describe(self, profile: Profile) -> dict[str, Any]:
        """What screens show of a served profile: name, fingerprint, edition, DEMO flag (never word results)."""
        base = profile.base.manifest
        identification = self.registry.identify(base.word_count, base.fingerprint)
        edition = identification.describe()
        if profile.amended:
            edition = f"{profile.base.name} ({edition}) with amendments"
        shown_name = "DEMO" if profile.demo else profile.name
        label = f"{shown_name}: {edition}, fingerprint {short(profile.fingerprint)}"
        return {
            **profile.describe(),
            "short_fingerprint": short(profile.fingerprint),
            "edition": edition,
            "identification": identification.as_dict(),
            "shown_name": shown_name,  # what screens show as the lexicon's name
            "label": label,
        }
