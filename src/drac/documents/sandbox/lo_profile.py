"""LibreOffice settings that stop it following links, written into each call's private profile.

These are the second layer behind `references`: they hold for what the sanitizer cannot
rewrite (XLS) or might miss. Each setting is kept because a test showed it stopping a request
or a read on LibreOffice 7.4 (tests/reliability/test_exfiltration.py); SECURITY.md lists the
ones tried that did not.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ProfileSetting:
    """One registrymodifications.xcu item: what it is for and its XML."""

    name: str
    purpose: str
    items: tuple[str, ...]


def _prop(path: str, name: str, value: str) -> str:
    return (
        f'<item oor:path="{path}"><prop oor:name="{name}" oor:op="fuse">'
        f"<value>{value}</value></prop></item>"
    )


def _remove_provider(name: str) -> str:
    return (
        '<item oor:path="/org.openoffice.ucb.Configuration/ContentProviders/Local/SecondaryKeys/'
        f'Office/ProviderData"><node oor:name="{name}" oor:op="remove"/></item>'
    )


NO_NETWORK_PROVIDERS = ProfileSetting(
    "no-network-providers",
    "the content providers for http, https, WebDAV, FTP and CMIS are removed, so no URL "
    "of those schemes can be opened at all",
    tuple(
        _remove_provider(name)
        for name in (
            "Provider3",
            "Provider4",
            "Provider4a",
            "Provider12",
            "Provider12a",
            "Provider12b",
            "Provider6",
            "Provider43",
        )
    ),
)
DEAD_PROXY = ProfileSetting(
    "dead-proxy",
    "every http, https and FTP request goes to a proxy on 127.0.0.1 port 9, where nothing listens",
    (
        _prop("/org.openoffice.Inet/Settings", "ooInetProxyType", "2"),
        _prop("/org.openoffice.Inet/Settings", "ooInetNoProxy", ""),
        _prop("/org.openoffice.Inet/Settings", "ooInetHTTPProxyName", "127.0.0.1"),
        _prop("/org.openoffice.Inet/Settings", "ooInetHTTPProxyPort", "9"),
        _prop("/org.openoffice.Inet/Settings", "ooInetHTTPSProxyName", "127.0.0.1"),
        _prop("/org.openoffice.Inet/Settings", "ooInetHTTPSProxyPort", "9"),
        _prop("/org.openoffice.Inet/Settings", "ooInetFTPProxyName", "127.0.0.1"),
        _prop("/org.openoffice.Inet/Settings", "ooInetFTPProxyPort", "9"),
    ),
)
BLOCK_UNTRUSTED_REFERER_LINKS = ProfileSetting(
    "block-untrusted-referer-links",
    "linked resources of a document from an untrusted location are not loaded",
    (
        _prop(
            "/org.openoffice.Office.Common/Security/Scripting",
            "BlockUntrustedRefererLinks",
            "true",
        ),
    ),
)
CANDIDATE_SETTINGS = (
    NO_NETWORK_PROVIDERS,
    DEAD_PROXY,
    BLOCK_UNTRUSTED_REFERER_LINKS,
)
"""The settings every conversion runs with: each stopped a probe on LibreOffice 7.4 that the
others let through or that no other setting stopped alone (SECURITY.md has the table).
Tried and dropped, as they changed nothing on any probe: Writer and Calc `Content/Update/Link`
set to never (7.4 already refuses external Calc data, Err:540, and updates no Writer link
headless), macro security level 3 with `DisableMacrosExecution`."""

LINK_SETTINGS = CANDIDATE_SETTINGS

_HEADER = (
    '<?xml version="1.0" encoding="UTF-8"?>\n<oor:items xmlns:oor="http://openoffice.org/2001/'
    'registry" xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/'
    'XMLSchema-instance">\n'
)
_FOOTER = "</oor:items>\n"
_ITEM_KEY = re.compile(r'<item oor:path="([^"]*)"><(?:prop|node) oor:name="([^"]*)"')


def write_settings(profile: Path, settings: tuple[ProfileSetting, ...]) -> None:
    """Write `settings` into the profile's registrymodifications.xcu, replacing any item the
    profile already had for the same path and name (a cached profile keeps LibreOffice's own
    first-start items, which make starting faster)."""
    file = profile / "user" / "registrymodifications.xcu"
    ours = [item for setting in settings for item in setting.items]
    keys = {_ITEM_KEY.match(item).groups() for item in ours}  # type: ignore[union-attr]
    kept: list[str] = []
    if file.is_file():
        for line in file.read_text(encoding="utf-8", errors="replace").splitlines():
            match = _ITEM_KEY.match(line.strip())
            if line.strip().startswith("<item") and not (match and match.groups() in keys):
                kept.append(line.strip())
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(_HEADER + "".join(f"{item}\n" for item in [*kept, *ours]) + _FOOTER)
