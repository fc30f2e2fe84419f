"""The settings package's errors."""

from drac.errors import DracError


class SettingsError(DracError, ValueError):
    """Settings that cannot be used; the message names the field and the reason."""
